"""A combo box that asks for its longest item's width and, given less, elides its text.

A QComboBox narrower than its text cuts the text off at the frame ("0 (orang",
"1. The chain rule, one nc"), which reads as a word and hides that more is there. This
one asks the layout for the width of its longest item (it gets it where there is room)
and can be squeezed to `minimum_chars` characters; squeezed, it shows the current text
with "…" and its tooltip adds the whole text.

`set_texts` shows a long list without copying it (a 1000x1000 network's million
parameter names, in the landscape's axis boxes: filling two boxes item by item took 0.7 s
of the UI thread, and sizing them measured every item again).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QPaintEvent, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)

from gradbox.views.named import plain_tip

# How many of the longest texts (by characters) `set_texts` keeps for the width: in a
# proportional font the widest is among the longest.
WIDEST_CANDIDATES = 16


_longest: tuple[Sequence[str], list[str]] | None = None  # the last list asked about


def longest_texts(texts: Sequence[str]) -> list[str]:
    """The WIDEST_CANDIDATES longest of `texts` (the same tuple asked about again, as by
    the landscape's two axis boxes, is not read twice: a million names took 30 ms)."""
    global _longest
    if not isinstance(texts, tuple):  # (a list may change under the same identity)
        return heapq.nlargest(WIDEST_CANDIDATES, texts, key=len)
    if _longest is None or _longest[0] is not texts:
        _longest = (texts, heapq.nlargest(WIDEST_CANDIDATES, texts, key=len))
    return list(_longest[1])


class TextListModel(QAbstractListModel):
    """A read-only list of texts, read where they are (no copy into Qt's items)."""

    def __init__(self, texts: Sequence[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.texts = texts

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()  # noqa: N802, B008
                 ) -> int:
        return 0 if parent.isValid() else len(self.texts)

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if index.isValid() and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return self.texts[index.row()]
        return None


class FittingComboBox(QComboBox):
    """Sized to its contents where the room allows; elided, with a tooltip, where not."""

    def __init__(self, minimum_chars: int = 6, size_to_contents: bool = True,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tip = ""
        self._widest: list[str] | None = None  # set_texts' longest texts (None: measure all)
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
        texts = ([self.itemText(i) for i in range(self.count())] if self._widest is None
                 else list(self._widest)) + [self.placeholderText()]
        widest = max((metrics.horizontalAdvance(t) for t in texts), default=0)
        short = metrics.horizontalAdvance("x") * self.minimumContentsLength()
        return QSize(max(base.width(), base.width() - short + widest), base.height())

    def set_texts(self, texts: Sequence[str], current: int = 0) -> None:
        """Show `texts` (kept, not copied) with item `current` chosen, without signals."""
        self.blockSignals(True)
        self.setModel(TextListModel(texts, self))  # (Qt deletes the one it replaces)
        self.setCurrentIndex(min(current, len(texts) - 1))
        self.blockSignals(False)
        self.view().setUniformItemSizes(True)  # a million rows scroll without measuring each
        self._widest = longest_texts(texts)
        self.updateGeometry()
        self._update_tip()

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
        super().setToolTip(plain_tip(tip))  # the item may be a lesson's title, from a file
