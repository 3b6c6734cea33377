"""Teacher mode in the main window: a presentation of the current lesson step.

Each step names the regions it points at (gradbox.teaching.lessons.Step.panels). Teacher
mode shows those, large, beside the lesson, and puts the rest away; the window keeps the
size it had (a window that grew past a 1024 x 700 screen hid the lesson's Next button).
Turning it off gives back exactly what was there before: geometry, docks and their sizes,
the tab. The layout saved at exit is that one too, never the presentation's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QSize, Qt, QTimer
from PySide6.QtWidgets import QDockWidget, QLayout, QWidget

from gradbox.teaching import lessons as names
from gradbox.views.layouts.host import Frame
from gradbox.views.panels.lesson_panel import (
    TEACHER_SCALE,
    LessonPanel,
    apply_teacher_mode,
    put_away,
)
from gradbox.views.panels.playground import PlaygroundPanel
from gradbox.views.panels.training_loop import TrainingLoopPanel
from gradbox.views.window.phase_bar import PhaseBar
from gradbox.views.window.toolbar import TrainingToolbar

# The font scale for a projector: TEACHER_SCALE from 1400 x 900 up, less in a smaller
# window (at 1024 x 700, 1.5 left a 50 px plot), never below MIN_SCALE.
MIN_SCALE = 1.2
FULL_SCALE_SIZE = QSize(1400, 900)
LESSON_SHARE = 0.32  # of the width, for the lesson's large text
SIDE_SHARE = 0.30  # of the width, for the step's panels in the left column
BOTTOM_SHARE = 0.40  # of the height, for the loss curve and the loop under a main view


def teacher_scale(size: QSize) -> float:
    fit = min(size.width() / FULL_SCALE_SIZE.width(), size.height() / FULL_SCALE_SIZE.height())
    return max(MIN_SCALE, min(TEACHER_SCALE, TEACHER_SCALE * fit))


@dataclass(frozen=True)
class Before:
    """What teacher mode found, to give back exactly."""

    geometry: QByteArray
    state: QByteArray
    size: QSize
    tab: int
    lesson_height: int | None  # the lesson panel's, if it showed


class Presentation:
    """Shows a lesson step's regions in the main window, large; and undoes it."""

    def __init__(self, frame: Frame, lessons: LessonPanel, playground: PlaygroundPanel,
                 training_loop: TrainingLoopPanel, toolbar: TrainingToolbar,
                 phase_bar: PhaseBar, grow_docks: Callable[[], None]) -> None:
        """`grow_docks()`: each view left under its readable size grows to it (a Room)."""
        self.frame = frame
        self.window = frame.window
        self.docks = frame.docks
        self.tabs = frame.tabs
        self.lessons = lessons
        self.playground = playground
        self.training_loop = training_loop
        self.toolbar = toolbar
        self.phase_bar = phase_bar
        self.grow_docks = grow_docks
        self.before: Before | None = None
        self.needed: tuple[str, ...] = ()
        # Counts the hand-overs of the layout: a give-back queued before one is stale.
        self._handed_over = 0

    @property
    def active(self) -> bool:
        return self.before is not None

    def saved_state(self) -> QByteArray | None:
        """The window state to save at exit while presenting: the one from before."""
        return self.before.state if self.before is not None else None

    def saved_geometry(self) -> QByteArray | None:
        return self.before.geometry if self.before is not None else None

    def remember(self) -> None:
        """Keep the layout to give back, if teacher mode is not on yet."""
        w = self.window
        if self.before is None:
            self.before = Before(w.saveGeometry(), w.saveState(self.frame.layout_version),
                                 QSize(w.size()), self.tabs.currentIndex(),
                                 self.lessons.height() if self.lessons.isVisible() else None)

    def present(self, on: bool, needed: Sequence[str]) -> None:
        w = self.window
        if on:
            self.remember()
        if not on and self.before is None:
            return
        assert self.before is not None
        size = self.before.size
        # While the fonts change and the docks move, the layout's minimum passes through
        # sizes bigger than the window (old places, new fonts): without this the window
        # grew to them (1186 x 852 on a 1024 x 700 screen) and stayed.
        w.layout().setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.needed = tuple(needed) if on else ()
        apply_teacher_mode(w, self.needed, on, scale=teacher_scale(size))
        training = names.TRAINING_TOOLBAR in self.needed
        # The phase, large enough for the back of the room, on a row of its own.
        self.phase_bar.setVisible(on and training)
        self.toolbar.phase_action.setVisible(not (on and training))
        # The timeline row (the switches, "step 30", the timeline) where a step needs its
        # switches: beside a playground lesson it showed the last lesson's, and the phase
        # bar says the step already (a third row of toolbars left the parameter table
        # 64 px high at 1024 x 700).
        self.toolbar.timeline_bar.setVisible(not on or bool(set(self.needed) & {
            names.FORGET_ZERO_GRAD, names.GHOST}))
        if on:
            self._arrange()
            QTimer.singleShot(0, lambda: self._settle(size, arrange=True))
        else:
            before = self.before
            # Given back while still presenting: the tab it brings back puts nothing away
            # (the layout restored already has the panels as they were).
            self._give_back(before, now=True)
            self.before = None
            # The old fonts are laid out in queued calls (the lesson's step box, the
            # parameters' summary each refit in one of their own): give the sizes back
            # once more after them.
            self._give_back_later(before, passes=3)

    def arrange(self, needed: Sequence[str]) -> None:
        """The step's layout at the window's own font, every control left in place: the
        Lesson workspace follows a lesson's steps with it (see Workspaces.follow_step)."""
        if self.active:
            return
        self.needed = tuple(needed)
        try:
            self._arrange()
        finally:
            self.needed = ()

    # --- the step's layout ---------------------------------------------------------------
    def _size(self) -> QSize:
        """The window's size to lay out for: the one it had before teacher mode."""
        return self.before.size if self.before is not None else QSize(self.window.size())

    def _arrange(self) -> None:
        w = self.window
        tabs = self.tabs
        pages = [tabs.widget(i) for i in range(tabs.count()) if tabs.isTabVisible(i)]
        # No main view named: the docks take the whole window rather than frame a blank.
        w.centralWidget().setVisible(bool(pages))
        # The first main view the step names comes to the front, unless the one on show is
        # named too (without a lesson every view is: the tab the learner chose stays).
        if tabs.currentWidget() is None or tabs.currentWidget().objectName() not in self.needed:
            for name in self.needed:
                page = next((p for p in pages if p.objectName() == name), None)
                if page is not None:
                    tabs.setCurrentWidget(page)
                    break
        # The playground's graph put away: its caption and details go with it, and the
        # table takes the width (they held half the playground empty).
        graph = w.findChild(QWidget, names.PG_GRAPH)
        if graph is not None and graph.isHidden() and graph.parentWidget() is not None:
            put_away(graph.parentWidget())
        self.playground.favour_graph(names.PG_GRAPH in self.needed
                                  and names.PG_TABLE not in self.needed)
        lesson = self.docks["Lessons"]
        lesson.show()
        lesson.raise_()
        # A panel the step names shows even if it was closed before teacher mode (seen
        # in the real window: the loss curve closed in the layout kept from the last
        # session, lesson 10 step 5 said "the loss falls" with no loss curve). Turning
        # teacher mode off restores the layout from before, closed again.
        for dock in self.docks.values():
            if dock.objectName() in self.needed and dock.isHidden() and not dock.isFloating():
                dock.show()
        docks = [d for d in self.docks.values() if d.isVisible() and d is not lesson
                 and not d.isFloating() and not w.tabifiedDockWidgets(d)]
        if w.centralWidget().isVisible():
            self._beside_main_view(docks)
        else:
            self._stack(docks)
        # Shares are a guess: a view left under its readable size (the parameter table
        # under two lines of warning, 58 px at 1024 x 700) grows to it from its neighbours.
        QTimer.singleShot(0, self.grow_docks)

    def _beside_main_view(self, docks: list[QDockWidget]) -> None:
        """A main view named: it keeps the middle from top to bottom; the step's panels
        stack in the left column and the loop (wide code) runs under the main view. (With
        the loss curve along the bottom too, at 1024 x 700 the boundary was 100 px high.)"""
        w = self.window
        width, height = self._size().width(), self._size().height()
        loop = self.docks["Training loop"]
        side = [d for d in docks if d is not loop]
        for k, dock in enumerate(side):
            if k == 0:
                w.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
            else:
                w.splitDockWidget(side[k - 1], dock, Qt.Orientation.Vertical)
        if loop in docks:
            w.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, loop)
        lesson = self.docks["Lessons"]
        horizontal, widths = [lesson], [int(LESSON_SHARE * width)]
        if side:
            horizontal.append(side[0])
            widths.append(int(SIDE_SHARE * width))
        w.resizeDocks(horizontal, widths, Qt.Orientation.Horizontal)
        if len(side) > 1:
            column = sum(d.height() for d in side)
            w.resizeDocks(side, [column // len(side)] * len(side), Qt.Orientation.Vertical)
        if loop in docks:
            loop_panel = self.training_loop
            needed = loop_panel.content_height() + loop.height() - loop_panel.height()
            w.resizeDocks([loop], [min(needed, int(BOTTOM_SHARE * height))],
                          Qt.Orientation.Vertical)

    def _stack(self, docks: list[QDockWidget]) -> None:
        """No main view: the step's panels one above the other, the window's width
        beside the lesson (at 1024 x 700 three side by side left the loop 117 px wide)."""
        w = self.window
        width = self._size().width()
        for k, dock in enumerate(docks):
            if k == 0:
                w.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
            else:
                w.splitDockWidget(docks[k - 1], dock, Qt.Orientation.Vertical)
        lesson = self.docks["Lessons"]
        if not docks:
            return
        share = int(LESSON_SHARE * width)
        w.resizeDocks([lesson, docks[0]], [share, width - share], Qt.Orientation.Horizontal)
        if len(docks) > 1:
            # The loop needs its lines and no more; the others share the rest equally
            # (half the column left the parameter table one row high at 1024 x 700).
            column = sum(d.height() for d in docks)
            loop = self.docks["Training loop"]
            heights = [0] * len(docks)
            if loop in docks:
                heights[docks.index(loop)] = min(self.training_loop.content_height()
                                                 + loop.height() - self.training_loop.height(),
                                                 column // 2)
            # The loss curve's three plots need more height than a table's rows (an
            # equal share left its grad norm plot 55 px high at 1366 x 768, moons step 5).
            rest = [k for k, d in enumerate(docks) if d is not loop]
            # The parameters too: a table under its summary, warning and history plot
            # (64 px of rows at 1024 x 700 beside the loss curve, lesson 4 step 3).
            shares = {self.docks["Loss curve"]: 3, self.docks["Parameters && gradients"]: 4}
            weights = {k: shares.get(docks[k], 2) for k in rest}
            room = column - sum(heights)
            for k in rest:
                heights[k] = room * weights[k] // max(sum(weights.values()), 1)
            w.resizeDocks(docks, heights, Qt.Orientation.Vertical)

    def _settle(self, size: QSize, arrange: bool = False) -> None:
        """Once the new fonts are laid out: the window at the size it had, never grown.
        The layout's minimum stays unenforced while presenting: the docks give way to
        the window, not the window to the docks (the Designer's large text asked 1069 px
        of a 1024 px screen)."""
        w = self.window
        w.layout().activate()
        if w.size() != size:
            w.resize(size)
        if arrange and self.active:
            self._arrange()

    def hand_over(self) -> None:
        """Teacher mode has ended and another owner (a workspace) lays the window out
        now: the give-backs still queued would put the layout from before teacher mode
        over it (Ctrl+2 in teacher mode showed the Train panels under Graph's menu)."""
        self._handed_over += 1

    def _give_back_later(self, before: Before, passes: int) -> None:
        """Each refit (a box's height at its new width) may move the docks again: give
        the sizes back after each turn of the event loop, `passes` times."""
        handed_over = self._handed_over

        def again() -> None:
            if handed_over != self._handed_over:
                return
            self._give_back(before, settle=True)
            if passes > 1:
                self._give_back_later(before, passes - 1)
        QTimer.singleShot(0, again)

    def _give_back(self, before: Before, settle: bool = False, now: bool = False) -> None:
        w = self.window
        if self.active and not now:  # teacher mode came back on before this call ran
            return
        w.centralWidget().setVisible(True)
        self.playground.favour_graph(False)
        # Ended on a longer step than it began on: the step's box scrolls in the lesson
        # panel's old height rather than grow its dock (only the same lesson and step
        # came back exactly before).
        self.lessons.fit_step_box(before.lesson_height)
        w.restoreState(before.state, self.frame.layout_version)
        self.tabs.setCurrentIndex(before.tab)
        if settle:
            w.layout().setSizeConstraint(QLayout.SizeConstraint.SetDefaultConstraint)
            w.layout().activate()
        # Only the size: teacher mode never moved the window (restoreGeometry would,
        # by the window manager's frame, and may leave a maximised state).
        if w.size() != before.size:
            w.resize(before.size)
