"""How a widget is named, once for each of its readers: its objectName (lessons and
teacher mode find it by it), its accessible name (a screen reader says it) and its
tooltip (what a person hovering reads) -- which shows text from a file as it is
(`plain_tip`)."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtGui
from PySide6.QtWidgets import QWidget

W = TypeVar("W", bound=QWidget)


def named(widget: W, object_name: str, accessible: str, tooltip: str) -> W:
    """`widget`, named for lessons, screen readers and people; returned for chaining."""
    widget.setObjectName(object_name)
    widget.setAccessibleName(accessible)
    widget.setToolTip(tooltip)
    return widget


def plain_tip(text: str) -> str:
    """A tooltip that shows `text` as it is: Qt renders a tip as rich text whenever it
    looks like markup, so a file's name or a lesson's title holding <img src=...> would
    show the picture; escaped in a paragraph, it shows the characters. (Text that does
    not look like markup is shown as it is already, and kept so.)"""
    if not QtGui.mightBeRichText(text):
        return text
    return QtGui.convertFromPlainText(text, Qt.WhiteSpaceMode.WhiteSpaceNormal)
