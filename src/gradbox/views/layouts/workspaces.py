"""Workspaces: the window arranged for what a person is doing, not every panel at once.

Train (designer, boundary, loss, parameters, the loop), Graph (the graph large, the
parameters beside it), Playground (the playground alone), Lesson (the lesson's text
large beside the boundary, the loop, loss and parameters it talks about) and Build (the
learner's own engine, stage by stage, the whole window). Each is designed
for 1024 x 700 first and grows with the window. Docks stay movable; each workspace
remembers its own arrangement in the settings (versioned: a layout saved by another
version of the window is ignored), and Reset layout brings back the designed one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from gradbox.teaching import lessons as names
from gradbox.views.build import BUILD_TAB
from gradbox.views.layouts.docks import DockRoom
from gradbox.views.layouts.host import Frame
from gradbox.views.layouts.presentation import Presentation
from gradbox.views.panels.lesson_panel import REGIONS, LessonPanel, presented

# The regions that are docks: a step naming one shows that dock, not a main view.
_DOCK_REGIONS = frozenset({names.DESIGNER, names.PARAMETERS, names.LOSS_CURVE,
                           names.TRAINING_LOOP})
WORKSPACE_VERSION = 1  # of the arrangements saved per workspace
CURRENT_KEY = f"workspaces/v{WORKSPACE_VERSION}/current"  # the one on show at exit
LESSON_SHARE = 0.34  # of the width, for the lesson's text in the Lesson workspace


@dataclass(frozen=True)
class Workspace:
    key: str
    title: str
    shortcut: str
    tab: str  # the main view it shows, by objectName
    docks: tuple[str, ...]  # the docks it shows, by title; the others are closed
    tip: str


WORKSPACES = (
    Workspace("train", "&Train", "Ctrl+1", names.BOUNDARY,
              ("Designer", "Parameters && gradients", "Loss curve", "Training loop", "Lessons"),
              "Design a network and train it: Designer, boundary, loss, parameters, the loop"),
    Workspace("graph", "&Graph", "Ctrl+2", names.GRAPH_TAB, ("Parameters && gradients",),
              "The computation graph large, with the parameters beside it"),
    Workspace("playground", "&Playground", "Ctrl+3", names.PLAYGROUND_TAB, (),
              "Type an expression and take its gradient apart, with the whole window"),
    Workspace("lesson", "&Lesson", "Ctrl+4", names.BOUNDARY,
              ("Lessons", "Loss curve", "Training loop"),
              "A lesson's text large beside the views it talks about (the View menu "
              "brings the others back)"),
    Workspace("build", "&Build it yourself", "Ctrl+5", BUILD_TAB, (),
              "Write the engine yourself, stage by stage: gradbox checks it, draws your "
              "graph and trains on it"),
)


def settings_key(key: str) -> str:
    return f"workspaces/v{WORKSPACE_VERSION}/{key}"


class Workspaces:
    """Switches the main window between workspaces and keeps each one's arrangement."""

    def __init__(self, frame: Frame, settings: QSettings | None, lessons: LessonPanel,
                 build: QWidget, presentation: Presentation, dock_room: DockRoom,
                 grow_docks: Callable[[], None]) -> None:
        """`build`: the Build page, a tab of the Build workspace only; `grow_docks()`:
        each view left under its readable size grows to it (a Room)."""
        self.frame = frame
        self.window = frame.window
        self.docks = frame.docks
        self.tabs = frame.tabs
        self.settings = settings
        self.lessons = lessons
        self.build = build
        self.presentation = presentation
        self.dock_room = dock_room
        self.grow_docks = grow_docks
        self.current: Workspace | None = None  # None: the window as the user left it
        self.switching = False  # the tab changes while switching put no panel away
        self.actions: dict[str, QAction] = {}
        self._designed: QByteArray | None = None

    def remember_design(self) -> None:
        """The window as built: the Train workspace's designed layout, and every other
        one's starting point."""
        self._designed = self.window.saveState(self.frame.layout_version)
        self._show_build_tab(False)

    def _show_build_tab(self, shown: bool) -> None:
        """The Build page is a tab of the Build workspace only: a sixth tab in the 370 px
        the docks leave the main views at 1024 px elided every name ('Gra...', 'Bu...')."""
        tabs = self.tabs
        index = tabs.indexOf(self.build)
        if index >= 0 and tabs.isTabVisible(index) != shown:
            tabs.setTabVisible(index, shown)

    def add_menu(self, view: QMenu) -> None:
        menu = view.addMenu("&Workspace")
        menu.setToolTipsVisible(True)
        group = QActionGroup(menu)
        for space in WORKSPACES:
            action = QAction(space.title, menu, checkable=True)
            action.setShortcut(QKeySequence(space.shortcut))
            action.setToolTip(space.tip)
            action.setStatusTip(space.tip)
            action.setObjectName(f"workspace_{space.key}")
            action.triggered.connect(lambda _=False, key=space.key: self.switch(key))
            group.addAction(action)
            menu.addAction(action)
            self.actions[space.key] = action
        menu.addSeparator()
        reset = menu.addAction("&Reset layout")
        reset.setToolTip("Put this workspace's panels back as designed")
        reset.setStatusTip(reset.toolTip())
        reset.triggered.connect(self.reset)
        self.reset_action = reset

    # --- switching ---------------------------------------------------------------------------
    def switch(self, key: str) -> None:
        """Keep the arrangement of the workspace on show, then show `key`'s: as it was
        left, or as designed the first time."""
        w = self.window
        teaching = self.presentation.active
        if teaching:
            # Teacher mode gives its layout back first (that is the one to keep), and
            # then this workspace owns the window: none of its queued give-backs may
            # come over it.
            self.lessons.set_teacher_mode(False)
            self.presentation.hand_over()
        self._keep_current()
        space = next(s for s in WORKSPACES if s.key == key)
        saved = self.settings.value(settings_key(key)) if self.settings is not None else None
        self.current = space
        self._show_build_tab(key == "build")
        self.actions[key].setChecked(True)
        if saved is None or not self._apply_state(QByteArray(saved)):
            self._design(space)
        else:
            self._show_tab(space)
        self._follow_lesson(space)
        if teaching:
            # The fonts just shrank back: their layout passes may move the docks once
            # more, so the arrangement is put back after them.
            arranged = w.saveState(self.frame.layout_version)
            QTimer.singleShot(0, lambda: self._settle_after_teacher(space, arranged))
            self.frame.messages.show_message(
                f"Teacher mode ended: the {space.title.replace('&', '')} workspace shows "
                "(Lessons › Teacher mode presents the step again)",
                lambda: not self.presentation.active)

    def _settle_after_teacher(self, space: Workspace, arranged: QByteArray) -> None:
        if self.current is not space or self.presentation.active:
            return
        self._apply_state(arranged)
        self._show_tab(space)
        self._follow_lesson(space)

    def restore_current(self, layout_restored: bool) -> None:
        """At start: the workspace that was on show at exit is the one the menu checks,
        if the layout restored is its (the menu said Train over the Graph layout)."""
        key = str(self.settings.value(CURRENT_KEY, "")) if self.settings is not None else ""
        space = next((s for s in WORKSPACES if s.key == key), None)
        if space is None or not layout_restored:
            return
        self.current = space
        self.actions[key].setChecked(True)
        self._show_tab(space)

    def follow_step(self, regions: Sequence[str]) -> None:
        """In the Lesson workspace, show what the lesson's step names -- as teacher mode
        does, at the window's own font and with every control left in place: its main
        view comes to the front, its panels show beside the lesson, the others close
        (the View menu brings any back). A step naming no panel changes nothing."""
        w = self.window
        if self.current is None or self.current.key != "lesson" or self.presentation.active:
            return
        named = [r for r in regions if r in REGIONS]
        if not named:
            return
        # Showing a panel before they are arranged can ask more than the screen: the
        # window grew to 1024 x 902 on a 700 px screen (lesson 4 step 2). It keeps its size.
        size = w.size()
        for title, dock in self.docks.items():
            wanted = title == "Lessons" or dock.objectName() in named
            if dock.isVisible() != wanted and not dock.isFloating():
                dock.setVisible(wanted)
        page = next((p for p in (self.tabs.widget(i) for i in range(self.tabs.count()))
                     if p.objectName() in named
                     or any(p.findChildren(QWidget, r) for r in named
                            if r not in _DOCK_REGIONS)), None)
        self.switching = True  # the tab puts no panel away: the step decides
        try:
            if page is not None and page is not self.tabs.currentWidget():
                self.tabs.setCurrentWidget(page)
            # placed as teacher mode places them: the step's panels in a column beside
            # the main view, the loop under it (the loss curve, parameters and lesson in
            # one right-hand column left the parameters 35 px at 1024 x 700)
            self.presentation.arrange(named)
        finally:
            self.switching = False
        if w.size() != size:
            w.resize(size)
        # and once the layout it queued has run (right after a lesson's set-up, lesson 4
        # step 1 grew the window to 1024 x 854 a turn later)
        QTimer.singleShot(0, lambda: w.resize(size) if w.size() != size else None)
        # A panel shown where it had little room (the parameters under the loss curve,
        # 35 px high at 1024 x 700) grows to its readable size once laid out.
        QTimer.singleShot(0, self.grow_docks)

    def reset(self) -> None:
        """The designed arrangement of the workspace on show (Train if none is)."""
        space = self.current or WORKSPACES[0]
        if self.settings is not None:
            self.settings.remove(settings_key(space.key))
        self.current = space
        self.actions[space.key].setChecked(True)
        self._show_build_tab(space.key == "build")
        self._design(space)

    def keep(self) -> None:
        """Save the arrangement on show (at exit)."""
        self._keep_current()

    def _keep_current(self) -> None:
        if self.settings is None or self.presentation.active:
            return
        self.settings.setValue(CURRENT_KEY, self.current.key if self.current else "")
        if self.current is None:
            return
        # The panels as the user has them, not as a tab put them away for its room (kept
        # on the Graph tab, Train came back without its Designer, loss curve and loop).
        with self.dock_room.all_shown():
            state = self.window.saveState(self.frame.layout_version)
        self.settings.setValue(settings_key(self.current.key), state)

    def _apply_state(self, state: QByteArray) -> bool:
        self.switching = True
        try:
            self.dock_room.clear_put_away()
            return self.window.restoreState(state, self.frame.layout_version)
        finally:
            self.switching = False

    def _show_tab(self, space: Workspace) -> None:
        page = self.tabs.findChild(QWidget, space.tab)
        # the tab page itself, or the scroll area that holds it (the playground)
        while page is not None and self.tabs.indexOf(page) < 0:
            page = page.parentWidget()
        if page is not None:
            self.switching = True
            try:
                self.tabs.setCurrentWidget(page)
            finally:
                self.switching = False

    def _follow_lesson(self, space: Workspace) -> bool:
        """The Lesson workspace with a lesson on: its current step decides what shows.
        True if it did (the workspace's own tab then stays behind)."""
        lesson = self.lessons.lesson
        if space.key != "lesson" or lesson is None or self.current is not space:
            return False
        self.follow_step(presented(lesson, self.lessons.step))
        return True

    def _design(self, space: Workspace) -> None:
        w = self.window
        if self._designed is not None:
            self._apply_state(self._designed)
        self._show_tab(space)
        for title, dock in self.docks.items():
            dock.setVisible(title in space.docks)
        if space.key == "lesson":
            # The lesson above its loss curve on the right; the loop under the main view.
            lesson, others = self.docks["Lessons"], self.docks["Loss curve"]
            w.splitDockWidget(lesson, others, Qt.Orientation.Vertical)
            loop = self.docks["Training loop"]
            w.resizeDocks([loop], [int(0.3 * w.height())], Qt.Orientation.Vertical)
            w.resizeDocks([lesson], [int(LESSON_SHARE * w.width())], Qt.Orientation.Horizontal)
            w.resizeDocks([lesson, others], [int(0.6 * w.height()), int(0.4 * w.height())],
                          Qt.Orientation.Vertical)
        elif space.key == "graph":
            w.resizeDocks([self.docks["Parameters && gradients"]], [int(0.3 * w.width())],
                          Qt.Orientation.Horizontal)
        else:
            self.dock_room.fit()
        QTimer.singleShot(0, lambda: self._show_tab(space) if not self._follow_lesson(space)
                          else None)
