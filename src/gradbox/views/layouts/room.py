"""Every view's readable size, and the room a view too small to read asks for.

Each view of the main window gets a `TooSmall` overlay at its readable size (READABLE):
while the layout leaves it less, the overlay says so, with an Enlarge button. Enlarge
puts away the panels beside the view -- not the lesson, whose text says what to look
at -- and says which in the message bar (the View menu brings any back). A main view's
panels come back when another tab shows, as for the tabs that put panels away
themselves (see docks.DockRoom); in teacher mode the next step arranges the window anew.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QWidget

from gradbox.views.layouts.docks import DockRoom
from gradbox.views.layouts.host import Frame
from gradbox.views.layouts.presentation import Presentation
from gradbox.views.layouts.workspaces import Workspaces
from gradbox.views.panels.lesson_panel import LessonPanel, presented
from gradbox.views.too_small import TooSmall

# (what it is called, width, height): the smallest each view can be read at, in pixels.
# A plot needs its axes' labels and some curve between them; a table three rows.
READABLE: dict[str, tuple[str, int, int]] = {
    "boundary": ("The decision boundary", 220, 170),
    "loss": ("The loss curve", 220, 170),
    "layers": ("The gradient plot", 220, 170),
    "landscape": ("The loss landscape", 240, 200),
    "graph": ("The computation graph", 260, 160),
    "parameters": ("The parameter table", 200, 90),
    "pg_graph": ("The expression graph", 240, 140),
}
LESSONS = "Lessons"


class Room:
    """The main window's views, each watched against its readable size."""

    def __init__(self, frame: Frame, views: Mapping[str, QWidget | None], lessons: LessonPanel,
                 workspaces: Workspaces, presentation: Presentation, dock_room: DockRoom,
                 ) -> None:
        """`views`: what each READABLE key names (None: not in this window); Enlarge
        never puts away what the `lessons`' step points at."""
        self.frame = frame
        self.window = frame.window
        self.docks = frame.docks
        self.views = views
        self.lessons = lessons
        self.workspaces = workspaces
        self.presentation = presentation
        self.dock_room = dock_room
        self.guards: dict[str, TooSmall] = {}
        self.away: list[QDockWidget] = []  # what the last Enlarge put away

    def guard_views(self) -> None:
        """Watch every view of the window; connect every overlay's Enlarge (the layer
        plots' own included)."""
        for key, view in self.views.items():
            if view is None:
                continue
            what, width, height = READABLE[key]
            self.guards[key] = TooSmall(view, QSize(width, height), what)
        for overlay in self.window.findChildren(TooSmall):
            overlay.enlarge_requested.connect(self.give)

    def shown_too_small(self) -> list[TooSmall]:
        """The overlays on show: views the layout leaves too small (for tests and walks)."""
        return [g for g in self.window.findChildren(TooSmall) if g.isVisible()]

    def grow_docks(self) -> None:
        """Each dock whose view is under its readable size grows to it, taking from its
        neighbours and putting nothing away (a workspace's new arrangement settles)."""
        for overlay in self.shown_too_small():
            own = _dock_of(overlay.view)
            if own is not None and not own.isFloating():
                self._grow(overlay.view, own, passes=4)

    def give(self, view: QWidget) -> None:
        """Put away the panels beside `view` (the lesson stays), and give a view in a
        dock the window's height or width."""
        own = _dock_of(view)
        lesson = self.lessons.lesson
        named = set(presented(lesson, self.lessons.step)) if lesson is not None else set()
        space = self.workspaces.current
        if (own is not None and own.objectName() in named and not self.presentation.active
                and (space is None or space.key != "lesson")):
            # Beside the lesson's column a dock cannot grow (the lesson keeps the height
            # its step needs); the Lesson workspace places the step's panels at their
            # readable sizes, as teacher mode does.
            self.workspaces.switch("lesson")
            back = space.title.replace("&", "") if space is not None else "Train"
            self.frame.messages.show_message("The Lesson workspace gives this step's panels room "
                                    f"(View › Workspace › {back} goes back)",
                                    lambda: self.workspaces.current is not None
                                    and self.workspaces.current.key == "lesson")
            return
        # Never what the lesson's step points at: "watch the Training loop panel" with
        # the loop put away was a lesson pointing at nothing.
        away = [d for title, d in self.docks.items()
                if d.isVisible() and not d.isFloating() and d is not own and title != LESSONS
                and d.objectName() not in named]
        if self.presentation.active or own is not None:
            for dock in away:
                dock.hide()
        else:
            self.dock_room.put_away_now(away)
        self.away = away
        if own is not None and not own.isFloating():
            self._grow(view, own, passes=8)
        names = ", ".join(d.windowTitle().replace("&&", "&") for d in away)
        if names:
            self.frame.messages.show_message(f"Put away to give it room: {names} (the View menu "
                                    "brings any of them back)",
                                    lambda: all(d.isHidden() for d in away))
        elif own is None:
            self.frame.messages.show_message("Nothing beside it to put away: a bigger window (or "
                                    "closing the lesson) gives it room")


    def _grow(self, view: QWidget, own: QDockWidget, passes: int) -> None:
        """The dock grows the way the view is short of, a little past what it needs
        (its neighbours, the lesson or the main view, keep the rest). Again after each
        turn of the event loop: the panels put away and the message said move the
        docks once more when laid out."""
        w = self.window
        overlay = next((g for g in w.findChildren(TooSmall) if g.view is view), None)
        if overlay is None:
            return
        need = overlay.minimum
        extra = 24  # pixels beyond the need: the panel around it may re-wrap
        w.layout().activate()
        if view.height() < need.height():
            w.resizeDocks([own], [own.height() + need.height() - view.height() + extra],
                          Qt.Orientation.Vertical)
        if view.width() < need.width():
            w.resizeDocks([own], [own.width() + need.width() - view.width() + extra],
                          Qt.Orientation.Horizontal)
        # The view may get only part of what its dock gains (the parameters' table
        # shares it with the plot under it): again until it has what it needs.
        if passes > 1:
            QTimer.singleShot(0, lambda: self._grow(view, own, passes - 1))


def _dock_of(widget: QWidget) -> QDockWidget | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QDockWidget):
        parent = parent.parentWidget()
    return parent
