"""A combo box that asks for its longest item's width and, given less, elides its text.

A QComboBox narrower than its text cuts the text off at the frame ("0 (orang",
"1. The chain rule, one nc"), which reads as a word and hides that more is there. This
one asks the layout for the width of its longest item (it gets it where there is room)
and can be squeezed to `minimum_chars` characters; squeezed, it shows the current text
with "…" and its tooltip adds the whole text.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)


class FittingComboBox(QComboBox):
    """Sized to its contents where the room allows; elided, with a tooltip, where not."""

    def __init__(self, minimum_chars: int = 6, size_to_contents: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tip = ""
        # False where a panel takes its width from its contents' hints (the Designer's
        # scrolling form): the box then asks for `minimum_chars` only.
        self.size_to_contents = size_to_contents
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(minimum_chars)
        self.currentTextChanged.connect(lambda _text: self._update_tip())

    # --- size -------------------------------------------------------------------------------
    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """The longest item's width (and the placeholder's), as AdjustToContents asks."""
        base = super().sizeHint()
        if not self.size_to_contents:
            return base
        metrics = self.fontMetrics()
        texts = [self.itemText(i) for i in range(self.count())] + [self.placeholderText()]
        widest = max((metrics.horizontalAdvance(t) for t in texts), default=0)
        short = metrics.horizontalAdvance("x") * self.minimumContentsLength()
        return QSize(max(base.width(), base.width() - short + widest), base.height())

    # --- the text -------------------------------------------------------------------------
    def shown_text(self) -> str:
        """The current text as drawn: whole, or elided to the box's text field."""
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        room = field.width() - (self.iconSize().width() + 4 if not self.itemIcon(
            self.currentIndex()).isNull() else 0)
        return self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideRight,
                                             max(room, 0))

    def is_elided(self) -> bool:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        return self.shown_text() != option.currentText

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        if self.isEditable():
            super().paintEvent(event)
            return
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.shown_text()
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._update_tip()

    # --- the tooltip: what the box is for, and the whole text when elided ----------------------
    def setToolTip(self, tip: str) -> None:  # noqa: N802 (Qt's name)
        self._tip = tip
        self._update_tip()

    def _update_tip(self) -> None:
        text = self.currentText()
        whole = self.is_elided() and bool(text)
        tip = f"{text}\n\n{self._tip}" if whole and self._tip else (text if whole else self._tip)
        super().setToolTip(tip)
