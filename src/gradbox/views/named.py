"""How a widget is named, once for each of its readers: its objectName (lessons and
teacher mode find it by it), its accessible name (a screen reader says it) and its
tooltip (what a person hovering reads)."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtWidgets import QWidget

W = TypeVar("W", bound=QWidget)


def named(widget: W, object_name: str, accessible: str, tooltip: str) -> W:
    """`widget`, named for lessons, screen readers and people; returned for chaining."""
    widget.setObjectName(object_name)
    widget.setAccessibleName(accessible)
    widget.setToolTip(tooltip)
    return widget
