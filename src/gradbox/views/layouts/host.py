"""What a layout is given of the main window: the window's own dock-arranging methods.

Each layout (docks, presentation, room, workspaces) declares, beside itself, the parts of
the window it arranges (a `Protocol`: the docks, the tabs, the panels it reads) on top of
`DockedWindow`, the `QMainWindow` methods it calls. The main window has them all; a
layout never imports the main window, so the window builds its layouts and nothing
reaches back.
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QByteArray, QObject, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QLayout, QStyle, QWidget


class DockedWindow(Protocol):
    """The `QMainWindow` methods the layouts call."""

    def addDockWidget(self, area: Qt.DockWidgetArea, dock: QDockWidget) -> None: ...  # noqa: N802
    def centralWidget(self) -> QWidget: ...  # noqa: N802
    def dockWidgetArea(self, dock: QDockWidget) -> Qt.DockWidgetArea: ...  # noqa: N802
    def findChild(self, kind: type, name: str = "") -> QObject: ...  # noqa: N802
    def findChildren(self, kind: type, name: str = "") -> list: ...  # noqa: N802
    def height(self) -> int: ...
    def width(self) -> int: ...
    def layout(self) -> QLayout: ...
    def resize(self, size: QSize) -> None: ...
    def resizeDocks(self, docks: list[QDockWidget], sizes: list[int],  # noqa: N802
                    orientation: Qt.Orientation) -> None: ...
    def restoreState(self, state: QByteArray, version: int = 0) -> bool: ...  # noqa: N802
    def saveGeometry(self) -> QByteArray: ...  # noqa: N802
    def saveState(self, version: int = 0) -> QByteArray: ...  # noqa: N802
    def size(self) -> QSize: ...
    def splitDockWidget(self, first: QDockWidget, second: QDockWidget,  # noqa: N802
                        orientation: Qt.Orientation) -> None: ...
    def style(self) -> QStyle: ...
    def tabifiedDockWidgets(self, dock: QDockWidget) -> list[QDockWidget]: ...  # noqa: N802
