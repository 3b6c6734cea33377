"""What a table cell shows: its delegate's text for the cell's width (the delegate, not
Qt's painter, shortens a number to fit, so the text is read from it)."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex
from PySide6.QtWidgets import QStyleOptionViewItem, QTableView


def shown_text(table: QTableView, index: QModelIndex) -> tuple[str, QStyleOptionViewItem]:
    """The text `table` shows at `index`, and the style option it was fitted to."""
    option = QStyleOptionViewItem()
    option.initFrom(table.viewport())
    option.rect = table.visualRect(index)
    option.widget = table
    option.font = table.font()
    option.fontMetrics = table.fontMetrics()
    delegate = table.itemDelegateForColumn(index.column()) or table.itemDelegate()
    delegate.initStyleOption(option, index)
    return option.text, option
