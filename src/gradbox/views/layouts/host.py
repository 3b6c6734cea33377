"""What a layout is given of the main window: the `Frame` it arranges.

Each layout (docks, presentation, room, workspaces) is given the frame -- the
`QMainWindow` as Qt makes it (its dock-arranging methods), the docks by title, the
main views' tabs, the message bar -- and, as arguments, the few panels and fellow
layouts it works with. A layout never imports the main window and reads none of its
members: the window builds its layouts and nothing reaches back.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import QDockWidget, QMainWindow, QTabWidget

from gradbox.views.window.message_bar import MessageBar


@dataclass(frozen=True)
class Frame:
    """The main window as its layouts arrange it."""

    window: QMainWindow  # Qt's own methods only (the docks' places, findChildren)
    docks: dict[str, QDockWidget]  # by title ("Parameters && gradients"); filled as built
    tabs: QTabWidget  # the main views
    messages: MessageBar  # where a layout says what it put away
    layout_version: int  # of the dock layouts saved in the settings
