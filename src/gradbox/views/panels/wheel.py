"""The mouse wheel scrolls the panel, not the value under the pointer.

A desktop convention: a spin box or combo changes with the wheel only once it has the
focus (clicked or tabbed into). Without this, scrolling the Designer changed a layer from
8 to 6 neurons under the pointer and replaced the run, and Ctrl+Z then did nothing
because the focus stayed in the box.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QWidget,
)


class WheelGuard(QObject):
    """Sends the wheel of an unfocused spin box or combo to the panel that scrolls."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget):
            return False
        if watched.hasFocus():
            return False  # focused: the wheel changes the value, as the user expects
        area = watched.parentWidget()
        while area is not None and not isinstance(area, QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QApplication.sendEvent(area.verticalScrollBar(), event)
        return True  # the value stays


def guard_wheel(widget: QWidget) -> QWidget:
    """`widget` (a spin box or combo) changes with the wheel only when focused; the
    wheel no longer gives it the focus either. Returns `widget`."""
    if isinstance(widget, QAbstractSpinBox | QComboBox):
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # Each widget owns its guard: one shared module-level QObject outlived the
        # QApplication at exit and the app died of a segfault (SIGTERM test, -11).
        guard = widget.findChild(WheelGuard)
        if guard is None:
            guard = WheelGuard(widget)
            widget.installEventFilter(guard)
    return widget


def guard_wheels(root: QWidget) -> None:
    """Every spin box and combo under `root`."""
    for widget in root.findChildren(QAbstractSpinBox) + root.findChildren(QComboBox):
        guard_wheel(widget)
