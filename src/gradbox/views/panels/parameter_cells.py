"""How the parameter table's cells are drawn and edited: numbers written to fit (never
elided mid-digit), a gradient as a bar coloured by its sign, a weight typed in place."""

from __future__ import annotations

import math

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPointF,
    QRectF,
    Qt,
    Signal,
)
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from gradbox.views.fit_text import fitted_number, name_form, name_forms
from gradbox.views.panels.parameter_table import (
    BAR_ROLE,
    NAME,
    NUMBER_ROLE,
    PREFIX_ROLE,
    WIDEST_ROLE,
)
from gradbox.views.panels.typed import parse_number as parse_weight
from gradbox.views.plots.plotting import NEGATIVE, POSITIVE

_STARTED_WITH = "gradbox_started_with"  # editor property: the text it was opened with


def text_room(option: QStyleOptionViewItem) -> float:
    """The width a cell's text may take: the cell less the style's margins."""
    style = option.widget.style() if option.widget is not None else QApplication.style()
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None,
                               option.widget) + 1
    # Less one pixel: the text is measured in whole pixels (horizontalAdvance), but Qt
    # lays it out in fractions and elides past the room -- '+0.274' measures 44 px and
    # takes 44.36, and a 44 px room showed it as '+…4' (seen in the Lesson workspace).
    return option.rect.width() - 2 * margin - 1


class FittedTextDelegate(QStyledItemDelegate):
    """A cell's text written to fit, never elided mid-digit: a number with fewer digits
    (then scientific), a name without its shared prefix (then short). The tooltip keeps
    the full value. `prefix` goes before a number ('×')."""

    def __init__(self, parent: QObject | None = None, prefix: str = "") -> None:
        super().__init__(parent)
        self.prefix = prefix
        # The names' form for a column's width: measured once per width, not per cell
        # (a paint asks for some 300 cells a frame while running).
        self._name_form: tuple[tuple[object, ...], int] | None = None

    def shown_name(self, name: str, prefix: str) -> str:
        """`name` in the form the column shows its names in now (whole before the column
        is first drawn): the summary above the table names a parameter the same way
        (it said 'layers.2.neurons.0.w.5' over a column of 'L0 n0 w0')."""
        if self._name_form is None:
            return name
        forms = name_forms(name, prefix)
        return forms[min(self._name_form[1], len(forms) - 1)]

    def initStyleOption(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt's name)
                        index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        if not option.text:
            return
        room = text_room(option)
        metrics = option.fontMetrics

        def fits(text: str) -> bool:
            return metrics.horizontalAdvance(text) <= room

        if index.column() == NAME:
            # One form for the whole column, whichever fits this name.
            prefix = index.data(PREFIX_ROLE) or ""
            widest = tuple(index.data(WIDEST_ROLE) or ())
            key = (room, metrics.averageCharWidth(), prefix, widest)
            if self._name_form is None or self._name_form[0] != key:
                self._name_form = (key, name_form(fits, widest, prefix))
            forms = name_forms(option.text, prefix)
            level = self._name_form[1]
            option.text = forms[min(level, len(forms) - 1)]
            return
        if fits(option.text):
            return
        value = index.data(NUMBER_ROLE)
        if isinstance(value, float) and math.isfinite(value):
            option.text = fitted_number(value, fits, signed=not self.prefix,
                                        prefix=self.prefix,
                                        digits=3 if self.prefix else 4)


class ValueEditDelegate(FittedTextDelegate):
    """The editor for a weight: a labelled line edit that refuses to close on a non-number.

    Enter with text that is no number keeps the editor open (the model says why), so the
    typing is not lost; Esc leaves the weight as it was, and so does Enter on the text
    the editor started with (it is the value rounded, not a new one).
    """

    text_edited = Signal()  # the user typed: a complaint about the old text is stale

    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem,  # noqa: N802
                     index: QModelIndex | QPersistentModelIndex) -> QWidget:
        editor = QLineEdit(parent)
        name = index.siblingAtColumn(NAME).data()
        editor.setAccessibleName(f"New value of {name}")
        editor.setToolTip(f"Type a new value for {name} and press Enter (Esc cancels). "
                          "The next step trains with it; rewinding to before it undoes it")
        # Where the number stood in the cell, so it does not jump when editing starts.
        editor.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        editor.textEdited.connect(self.text_edited)
        return editor

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex  # noqa: N802
                      ) -> None:
        assert isinstance(editor, QLineEdit)
        text = index.data(Qt.ItemDataRole.EditRole)
        editor.setText(text)
        editor.setProperty(_STARTED_WITH, text)
        editor.selectAll()  # typing replaces the old value, as in a spreadsheet

    def setModelData(self, editor: QWidget, model: QAbstractItemModel,  # noqa: N802
                     index: QModelIndex | QPersistentModelIndex) -> None:
        assert isinstance(editor, QLineEdit)
        if editor.text() != editor.property(_STARTED_WITH):
            super().setModelData(editor, model, index)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if (isinstance(watched, QLineEdit) and event.type() == QEvent.Type.KeyPress
                and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)):  # type: ignore[attr-defined]
            try:
                parse_weight(watched.text())
            except ValueError:
                # Committing lets the model explain what is wrong; the editor stays.
                self.commitData.emit(watched)
                return True
        return super().eventFilter(watched, event)


class GradientBarDelegate(FittedTextDelegate):
    """The number on the right; on the left a bar from a zero line, blue right if positive.

    Bar and number get separate parts of the cell, so neither hides the other.
    """

    def paint(self, painter: QPainter, option: QStyleOptionViewItem,
              index: QModelIndex | QPersistentModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text = opt.text
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else QApplication.style()
        # Background and selection highlight exactly as an ordinary cell draws them.
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        cell = QRectF(opt.rect).adjusted(4, 3, -4, -3)
        # The number always gets its full width (a clipped sign would lie), at least that
        # of a typical "-0.001234" so the numbers line up; the bar gets the rest.
        metrics = opt.fontMetrics
        value = index.data(NUMBER_ROLE)
        if (isinstance(value, float) and math.isfinite(value)
                and metrics.horizontalAdvance(text) + 4 > cell.width()):
            # Too narrow for the number: fewer digits, never a clipped one (the bar goes).
            text = fitted_number(value, lambda t: metrics.horizontalAdvance(t) + 4
                                 <= cell.width(), signed=True)
        text_width = min(max(metrics.horizontalAdvance("-0.0012345"),
                             metrics.horizontalAdvance(text)) + 4, cell.width())
        text_rect = QRectF(cell.right() - text_width, cell.top(), text_width, cell.height())
        bar_area = QRectF(cell.left(), cell.top(), cell.width() - text_width - 6,
                          cell.height())
        painter.save()
        fraction = index.data(BAR_ROLE) or 0.0
        if bar_area.width() > 4:
            middle = bar_area.center().x()
            length = fraction * bar_area.width() / 2
            bar = QRectF(min(middle, middle + length), bar_area.top() + 1, abs(length),
                         bar_area.height() - 2)
            painter.fillRect(bar, POSITIVE if fraction > 0 else NEGATIVE)
            if opt.state & QStyle.StateFlag.State_Selected:
                # A blue bar on the blue selection highlight needs an edge to be seen.
                painter.setPen(QColor("white"))
                painter.drawRect(bar)
            painter.setPen(QColor(0, 0, 0, 90))
            painter.drawLine(QPointF(middle, bar_area.top()), QPointF(middle, bar_area.bottom()))
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        group = (QPalette.ColorGroup.Active if opt.state & QStyle.StateFlag.State_Active
                 else QPalette.ColorGroup.Inactive)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        painter.setPen(opt.palette.color(group, role))
        painter.setFont(opt.font)
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignRight
                                        | Qt.AlignmentFlag.AlignVCenter), text)
        painter.restore()
