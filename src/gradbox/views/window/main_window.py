"""The main window: the assembly of menus, docks and main views around the decision boundary.

What it holds lives apart: the docks' sizes and what a tab puts away (layouts/docks.py),
workspaces and teacher mode (layouts/), the file side and quitting (window/files/)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QRect, QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QDockWidget,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gradbox.build.stages import load_stages
from gradbox.port.protocol import SessionPort
from gradbox.teaching import lessons
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.views.build.panel import BuildPanel
from gradbox.views.fitting_tabs import FittingTabs
from gradbox.views.layouts.docks import DockRoom
from gradbox.views.layouts.host import Frame
from gradbox.views.layouts.presentation import Presentation
from gradbox.views.layouts.room import Room
from gradbox.views.layouts.workspaces import Workspaces
from gradbox.views.panels.designer import DesignerPanel
from gradbox.views.panels.lesson_panel import LessonPanel, presented
from gradbox.views.panels.parameters import ParametersView
from gradbox.views.panels.playground import PlaygroundPanel
from gradbox.views.panels.training_loop import TrainingLoopPanel
from gradbox.views.panels.wheel import guard_wheels
from gradbox.views.plots.boundary import DecisionBoundaryView
from gradbox.views.plots.landscape_view import LandscapeView
from gradbox.views.plots.layer_stats_view import LayerStatsView
from gradbox.views.plots.loss_curve import LossCurveView
from gradbox.views.window.alerts import AlertBanner
from gradbox.views.window.errors import ErrorReporter
from gradbox.views.window.files.autosave import Autosaver
from gradbox.views.window.files.class_exports import ClassExports
from gradbox.views.window.files.document import SessionDocument
from gradbox.views.window.files.quitting import Quitting
from gradbox.views.window.files.resume import KeptControls
from gradbox.views.window.files.saving import SessionSaver
from gradbox.views.window.files.session_files import SessionFiles
from gradbox.views.window.headline import Headline
from gradbox.views.window.keys import FieldKeys
from gradbox.views.window.message_bar import MessageBar
from gradbox.views.window.phase_bar import PhaseBar
from gradbox.views.window.shortcuts import shortcuts_html
from gradbox.views.window.toolbar import TrainingToolbar

log = logging.getLogger(__name__)

# Of the docks and toolbars saved in the settings: 2 has the timeline row, 3 the phase
# bar on a row of its own.
LAYOUT_VERSION = 3

def load_saved_config(settings: QSettings) -> TrainingConfig | None:
    """The configuration of the last launch, or None if there is none or it is unusable."""
    text = settings.value("config", "")
    if not text:
        return None
    try:
        data = json.loads(str(text))
        data["hidden"] = tuple(data["hidden"])
        return TrainingConfig(**data)
    except (ValueError, TypeError, KeyError):
        log.warning("ignoring an unusable saved configuration: %r", text)
        return None


def _scrolling(widget: QWidget, vertical_only: bool = False) -> QScrollArea:
    """Let a tall or wide panel scroll rather than force a window bigger than the screen."""
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.NoFrame)
    if vertical_only:
        # A form cut off at the side hides its values; keep it whole, scroll up and down.
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        area.setMinimumWidth(widget.sizeHint().width()
                             + area.verticalScrollBar().sizeHint().width() + 4)
    # The scroll area takes the panel's name: it is what a tab or dock holds, so it is
    # what teacher mode must find to hide or keep.
    name = widget.objectName() or type(widget).__name__
    widget.setObjectName(f"{name}_content")
    area.setObjectName(name)
    return area


class MainWindow(QMainWindow):
    def __init__(self, controller: SessionPort, settings: QSettings | None = None,
                 autosave_path: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.settings = settings
        # Which file the session is, its title, its unsaved mark, the recent files.
        self.document = SessionDocument(settings, self)
        self.document.changed.connect(self.show_title)
        self.errors = ErrorReporter(self)  # every message that stays until read
        self._layout_restored = False  # the docks as the user left them last time
        self._shown_once = False
        # The run controls the learner had before a lesson set its own (None: no lesson did).
        self._learner_run_controls: tuple[float | None, str, float] | None = None
        # The fields the lesson's step names, and the configuration they were shown for.
        self._step_fields: list[str] = []
        self._fields_config: TrainingConfig | None = None
        # Autosave only where asked (the launcher asks; tests and screenshots don't).
        # Sessions are written by a writer thread, never by the UI thread.
        self.saver = SessionSaver(controller, self)
        self.autosaver = (Autosaver(controller, autosave_path, saver=self.saver)
                          if autosave_path else None)
        if self.autosaver is not None:
            self.autosaver.dirty_changed.connect(self.setWindowModified)
            self.autosaver.dirty_changed.connect(self.document.set_dirty)
            self.autosaver.failed.connect(
                lambda text: self.errors.show("Autosave failed", text))
        self.show_title()

        self.toolbar = TrainingToolbar(controller, self)
        self.addToolBar(Qt.TopToolBarArea, self.toolbar)
        self.addToolBarBreak(Qt.TopToolBarArea)
        self.phase_bar = PhaseBar(controller, self)  # teacher mode's large phase indicator
        self.addToolBar(Qt.TopToolBarArea, self.phase_bar)
        self.phase_bar.hide()
        # A row of its own for the timeline: beside teacher mode's phase bar it went into
        # the » overflow with the Ghost run switch (1024 x 768, lesson 4).
        self.addToolBarBreak(Qt.TopToolBarArea)
        self.addToolBar(Qt.TopToolBarArea, self.toolbar.timeline_bar)

        self.boundary = DecisionBoundaryView(controller)
        self.tabs = FittingTabs()
        self.tabs.setAccessibleName("Main views")
        self.tabs.add(self.boundary, "Decision boundary", "Boundary")
        self.boundary.setObjectName(lessons.BOUNDARY)
        self.graph = self._make_graph_view()
        if self.graph is not None:
            self.graph.setObjectName(lessons.GRAPH_TAB)
            self.tabs.add(self.graph, "Computation graph", "Graph")
        self.layer_stats = LayerStatsView(controller)
        self.layer_stats.setObjectName(lessons.LAYERS_TAB)
        self.tabs.add(self.layer_stats, "Layers")
        self.landscape = LandscapeView(controller)
        self.landscape.setObjectName(lessons.LANDSCAPE_TAB)
        self.tabs.add(self.landscape, "Landscape")
        self.playground = PlaygroundPanel(controller)
        self.tabs.add(_scrolling(self.playground), "Playground")
        # Build it yourself: the learner's code per stage in the data folder, beside
        # the autosave (kept in memory only where there is none: tests, screenshots)
        self.build = BuildPanel(load_stages(), autosave_path.parent / "build"
                                if autosave_path else None, settings)
        self.tabs.add(self.build, "Build it yourself", "Build")
        self.headline = Headline(controller)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.headline)
        column.addWidget(self.tabs, 1)
        self.setCentralWidget(central)
        # Clicking a tab takes the focus out of a field, as clicking elsewhere would.
        self.tabs.tabBar().setFocusPolicy(Qt.StrongFocus)
        self.field_keys = FieldKeys(self)
        self.layout_version = LAYOUT_VERSION
        self.toolbar.forget_zero_grad.setObjectName(lessons.FORGET_ZERO_GRAD)
        self.toolbar.phase_label.setObjectName(lessons.PHASE_INDICATOR)
        self.toolbar.ghost.setObjectName(lessons.GHOST)

        self.designer = DesignerPanel(controller)
        self.loss_curve = LossCurveView(controller)
        self.parameters = ParametersView(controller)
        self.docks: dict[str, QDockWidget] = {}
        self.messages = MessageBar()  # (in the status bar, below)
        # What the layouts arrange; each is given it and the few panels it works with.
        self.frame = Frame(self, self.docks, self.tabs, self.messages, LAYOUT_VERSION)
        self._dock("Designer", _scrolling(self.designer, vertical_only=True),
                   Qt.LeftDockWidgetArea)
        parameters = self._dock("Parameters && gradients", self.parameters,
                                Qt.RightDockWidgetArea)
        loss = self._dock("Loss curve", self.loss_curve, Qt.BottomDockWidgetArea)
        self.training_loop = TrainingLoopPanel(controller)
        loop = self._dock("Training loop", self.training_loop, Qt.BottomDockWidgetArea)
        self.splitDockWidget(loss, loop, Qt.Horizontal)
        self.dock_room = DockRoom(
            self.frame, self.training_loop, self.headline, (self.playground_page(), self.build),
            self.graph, lambda: self.presentation.active or self.workspaces.switching)
        self.tabs.currentChanged.connect(self.dock_room.on_tab_changed)
        self.lessons = LessonPanel(self)
        # The lessons get a dock of their own above the parameters, never a tab behind
        # another panel: a lesson step that sends you to a panel must not hide the lesson.
        lesson_dock = self._dock("Lessons", self.lessons, Qt.RightDockWidgetArea)
        self.splitDockWidget(lesson_dock, parameters, Qt.Vertical)
        self.lessons.lesson_applied.connect(self._on_lesson_applied)
        # The tab the learner chose, outside lessons: Leave brings it back.
        self._learner_tab: QWidget | None = self.tabs.currentWidget()
        self.tabs.currentChanged.connect(self._on_tab_chosen)
        self.lessons.step_changed.connect(self._on_lesson_step)
        # The right column runs down to the status bar: the lesson and the parameters
        # get the window's height, the loss curve and the loop share the width beside it.
        self.setCorner(Qt.BottomRightCorner, Qt.RightDockWidgetArea)
        # The Designer takes the left side from top to bottom (it is tall).
        self.setCorner(Qt.BottomLeftCorner, Qt.LeftDockWidgetArea)
        self.resize(1400, 900)
        self.resizeDocks([lesson_dock, parameters], [330, 470], Qt.Vertical)
        self.resizeDocks([loss, loop], [500, 400], Qt.Horizontal)
        self.dock_room.fit()

        self.banner = AlertBanner()  # the run's alarms, said here only
        # Both permanent: a button's status tip, shown on hover, hides neither.
        self.statusBar().addPermanentWidget(self.messages, 1)
        self.statusBar().addPermanentWidget(self.banner, 1)

        def grow_docks() -> None:  # (the Room is built last)
            self.room.grow_docks()
        self.presentation = Presentation(self.frame, self.lessons, self.playground,
                                         self.training_loop, self.toolbar, self.phase_bar,
                                         grow_docks)
        self.workspaces = Workspaces(self.frame, settings, self.lessons, self.build,
                                     self.presentation, self.dock_room, grow_docks)
        self.workspaces.remember_design()
        # The file side is given what it uses: the port, the document, the reporter...
        kept = KeptControls(controller, self.toolbar.run_controls, self.tabs, self.lessons,
                            self.workspaces)
        self.saver.controls = kept.current  # (read when a save is asked for)
        self.class_exports = ClassExports(self, controller, self.document, self.errors,
                                          self.lessons, self.docks["Lessons"])
        self.files = SessionFiles(
            self, controller, document=self.document, reporter=self.errors, saver=self.saver,
            autosaver=self.autosaver, messages=self.messages, controls=kept,
            class_exports=self.class_exports, plots=(self.boundary, self.loss_curve),
            graph=self.graph, ending=self.is_ending, settings=settings,
            autosave_path=autosave_path)
        self.resume = self.files.resume  # the session kept at quit, if the launcher asks
        self.quitting = Quitting(self, controller, document=self.document, saver=self.saver,
                                 autosaver=self.autosaver, files=self.files,
                                 stop_workers=self.landscape.shutdown, settings=settings)
        self._make_menus()
        guard_wheels(self)  # the wheel scrolls panels; it changes a box once focused
        # A button or switch takes the focus from Tab, not from a click: Space presses
        # the one the keyboard went to, and after a click (Next ▶) Space is Step again
        # (pressed nine times for "Step until step 10", it went through the lesson).
        for button in self.findChildren(QAbstractButton):
            if button.focusPolicy() == Qt.FocusPolicy.StrongFocus:
                button.setFocusPolicy(Qt.FocusPolicy.TabFocus)
        # Each view's readable size: too small, it says so.
        self.room = Room(self.frame, {
            "boundary": self.boundary.plot, "loss": self.loss_curve.graphics,
            "layers": self.layer_stats.graphics, "landscape": self.landscape,
            "graph": getattr(self.graph, "view", None), "parameters": self.parameters.table,
            "pg_graph": self.playground.graph}, self.lessons, self.workspaces,
            self.presentation, self.dock_room)
        self.room.guard_views()
        controller.message.connect(self._on_message)
        self.designer.refused.connect(self._on_refused)
        self.designer.checked.connect(self.messages.recheck)
        # A message goes once it is no longer so: asked again whenever what messages
        # speak of changes (the run, a lesson, the docks, teacher mode).
        self.lessons.lesson_applied.connect(self.messages.recheck)
        self.lessons.teacher_mode_changed.connect(self.messages.recheck)
        self.tabs.currentChanged.connect(self.messages.recheck)
        for dock in self.docks.values():
            dock.visibilityChanged.connect(self.messages.recheck)
        self.build.message.connect(self._on_message)
        self.build.open_playground.connect(self._show_mistake_in_playground)
        controller.error.connect(self._on_error)
        controller.training_died.connect(self._on_training_died)
        controller.stopped.connect(self._on_stopped)
        controller.snapshot_changed.connect(self._on_snapshot)
        self._restore_layout()

    # --- construction -----------------------------------------------------------------
    def _make_graph_view(self) -> QWidget | None:
        try:
            from gradbox.views.graph.panel import GraphPanel
        except ImportError:
            return None
        return GraphPanel(self.controller, reporter=self.errors)

    def playground_page(self) -> QWidget:
        """The playground's tab page (the scroll area around the panel)."""
        return self.playground.parent().parent()

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title.lower().replace(" ", "_").replace("&&", "and"))
        dock.setWidget(widget)
        dock.setAccessibleName(title.replace("&&", "&"))
        self.addDockWidget(area, dock)
        self.docks[title] = dock
        return dock

    def _menu_action(self, menu_text: str, text: str, slot: object, shortcut: str | None = None,
                     tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.setToolTip(tip or text)
        action.setStatusTip(tip or text)
        action.triggered.connect(slot)
        self.menus[menu_text].addAction(action)
        return action

    def _make_menus(self) -> None:
        bar = self.menuBar()
        self.menus = {name: bar.addMenu(name)
                      for name in ("&File", "&Edit", "&Training", "&View", "&Help")}
        m = self._menu_action
        self.files.add_menu_entries(self.menus, self._menu_action)
        self.class_exports.add_menu_entries(self._menu_action, self.menus["&File"])
        self.menus["&File"].addSeparator()
        if self.resume is not None:
            self.resume.add_menu_entry(self.menus["&File"])
        m("&File", "&Quit", self.close, "Ctrl+Q")

        self.undo_action = m("&Edit", "&Undo", self.undo, "Ctrl+Z",
                             "Bring back the run the last action replaced")
        self.redo_action = m("&Edit", "&Redo", lambda: self.controller.send(Session.redo),
                             "Ctrl+Shift+Z", "Replace it again")
        self.controller.undo_changed.connect(self._on_undo_changed)
        self._on_undo_changed("", "")

        training = self.menus["&Training"]
        t = self.toolbar
        for action in (t.step_action, t.substep_action, t.run_action):
            training.addAction(action)
        training.addSeparator()
        training.addAction(t.reset_action)
        training.addAction(t.reinit_action)
        training.addSeparator()
        training.addAction(t.forget_action)
        training.addAction(t.ghost_action)
        training.addSeparator()
        m("&Training", "&Pin this run", self.controller.pin_run, "Ctrl+P",
          "Keep this run's loss and accuracy curves, dotted, to compare the next run with")
        m("&Training", "&Unpin", lambda: self.controller.send(Session.unpin), None,
          "Stop showing the pinned run's curves")

        view = self.menus["&View"]
        for dock in self.docks.values():
            view.addAction(dock.toggleViewAction())
            dock.toggleViewAction().triggered.connect(
                lambda checked, d=dock: self.dock_room.on_dock_toggled(d, checked))
        view.addAction(self.toolbar.toggleViewAction())
        view.addAction(self.toolbar.timeline_bar.toggleViewAction())
        view.addSeparator()
        self.workspaces.add_menu(view)

        lesson_menu = self.lessons.build_menu(self.menuBar())
        # Open lesson… where a teacher looks for lessons too, not only under File.
        opening = next((a for a in self.menus["&File"].actions()
                        if a.text() == "Open &lesson…"), None)
        if opening is not None:
            lesson_menu.addSeparator()
            lesson_menu.addAction(opening)
        self.menuBar().insertMenu(self.menus["&Help"].menuAction(), lesson_menu)
        m("&Help", "&Keyboard and mouse", self.show_shortcuts, "F1")
        m("&Help", "&About gradbox", self.show_about)

    # --- the lesson host: what a lesson may ask of the window --------------------------
    @Slot(str)
    def _on_lesson_applied(self, key: str) -> None:
        """A lesson chosen anywhere (menu, shortcut, a saved session) opens where its
        instructions show: with the Lessons panel closed it replaced the run unseen.
        Left, the tab the learner had before it comes back, and with it the panels that
        tab shows (a playground lesson left the training panels put away)."""
        if not key:
            if self._learner_tab is not None and self.tabs.indexOf(self._learner_tab) >= 0:
                self.tabs.setCurrentWidget(self._learner_tab)
            return
        dock = self.docks["Lessons"]
        if dock.isHidden():
            dock.show()
        dock.raise_()

    @Slot(int)
    def _on_tab_chosen(self, _index: int) -> None:
        if self.lessons.lesson is None:
            self._learner_tab = self.tabs.currentWidget()

    @Slot(int)
    def _on_lesson_step(self, step: int) -> None:
        """The Lesson workspace shows what the step names; the loop's line a step quotes
        comes into view ("beside optimizer.step()")."""
        lesson = self.lessons.lesson
        self._step_fields = []
        if lesson is not None:
            self.workspaces.follow_step(presented(lesson, step))
            # The fields the step names, scrolled into view once its layout has settled
            # (the Momentum box was below the Designer's fold at 1366 x 768).
            self._step_fields = [n for n in lesson.steps[step].panels if n in lessons.FIELDS]
            if self._step_fields:
                self._bring_into_view(self._step_fields, passes=3)
        if lesson is not None and lesson.steps[step].loop_line:
            line = lesson.steps[step].loop_line
            self.training_loop.show_line(line)
            # and again once teacher mode's layout for the step has settled
            QTimer.singleShot(0, lambda: self.training_loop.show_line(line))

    def _bring_into_view(self, names: Sequence[str], passes: int) -> None:
        """Scroll each named field into its scroll area's view, after each of the next
        `passes` turns of the event loop (teacher mode and the docks settle in them)."""
        def again() -> None:
            for name in names:
                for field in self.findChildren(QWidget, name):
                    area = field.parentWidget()
                    while area is not None and not isinstance(area, QScrollArea):
                        area = area.parentWidget()
                    if area is not None and field.isVisible():
                        area.ensureWidgetVisible(field, 8, 8)
            if passes > 1:
                self._bring_into_view(names, passes - 1)
        QTimer.singleShot(0, again)

    def show_playground(self, expression: str, values: dict[str, float] | None, variant: str,
                        retain_graph: bool, tab: str = "variables") -> None:
        self.tabs.setCurrentWidget(self.playground_page())
        self.playground.setup(expression, values, variant, retain_graph, tab)

    def _show_mistake_in_playground(self, expression: str, values: dict[str, float],
                                    variant: str, retain_graph: bool, tab: str) -> None:
        """The Build workspace's "Open in Playground": gradbox's engine making the
        learner's mistake, beside the correct one."""
        self.workspaces.switch("playground")
        self.show_playground(expression, values, variant, retain_graph, tab)

    def show_training(self, config: TrainingConfig, forget_zero_grad: bool,
                      ghost: bool, tab: str = "") -> None:
        """A lesson starts from its own step 0, whatever ran before it."""
        page = self.tabs.findChild(QWidget, tab) if tab else None
        self.tabs.setCurrentWidget(page if page is not None else self.boundary)
        if self.controller.running:
            self.controller.pause()
        self.controller.send(Session.start_lesson, config, forget_zero_grad, ghost)

    def use_run_controls(self, speed: float | None, stop: str, value: float) -> None:
        """A lesson's run speed and stop condition. The learner's are kept, once, to be
        put back when the lesson is left (a "for 50 steps" set before it would stop its
        200-step run half way)."""
        run = self.toolbar.run_controls
        if self._learner_run_controls is None:
            self._learner_run_controls = run.controls()
        run.set_controls(speed, stop, value)

    def restore_run_controls(self) -> None:
        """The learner's run controls, as they were before the first lesson set its own."""
        if self._learner_run_controls is not None:
            self.toolbar.run_controls.set_controls(*self._learner_run_controls)
            self._learner_run_controls = None

    def set_teacher_mode(self, on: bool, needed_controls: Sequence[str]) -> None:
        """Present the lesson step (see presentation.py), or give the layout back. With
        no lesson (nothing named) the main view on show is presented, with its controls:
        every panel at once, enlarged, left the boundary 95 px high at 1024 x 700 under
        'too small' banners."""
        if on and not needed_controls:
            page = self.tabs.currentWidget().objectName()
            needed_controls = (page, *(lessons.PLAYGROUND_CONTROLS
                                       if page == lessons.PLAYGROUND_TAB else
                                       (lessons.TRAINING_TOOLBAR, lessons.FORGET_ZERO_GRAD,
                                        lessons.GHOST)))
        if on and not self.presentation.active:
            self.presentation.remember()  # the layout as the user has it, to give back
            self.dock_room.before_teacher_mode()
        was_on = self.presentation.active
        self.presentation.present(on, needed_controls)
        if was_on and not on:
            self.dock_room.after_teacher_mode()

    @Slot()
    def undo(self) -> None:
        """Undo: a Designer edit still waiting to apply is the last thing done, so it is
        what goes (nothing of the session changes); otherwise the session's own Undo."""
        if self.designer.cancel_pending():
            self.controller.message.emit("Undid the Designer edit (it was not applied yet)")
            return
        self.controller.send(Session.undo)

    @Slot(str, str)
    def _on_undo_changed(self, undo: str, redo: str) -> None:
        for action, verb, what in ((self.undo_action, "Undo", undo),
                                   (self.redo_action, "Redo", redo)):
            action.setEnabled(bool(what))
            action.setText(f"&{verb}: {what}" if what else f"&{verb}")
            action.setStatusTip(f"{verb} “{what}”" if what else f"Nothing to {verb.lower()}")

    # --- messages and errors ---------------------------------------------------------------
    @Slot(str)
    def _on_message(self, text: str) -> None:
        self.messages.show_message(text, self._about_this_run())

    def _about_this_run(self) -> Callable[[], bool]:
        """What a message about the run stays true for: the run it was said of (the
        first one shown after it: a replacing action's message comes before its run)
        and the lesson it was said in. ("Lesson set up" stood at step 108 and after
        the next lesson.)"""
        lesson = self.lessons.lesson
        said_of: list[int] = []

        def holds() -> bool:
            if self.lessons.lesson is not lesson:
                return False
            run = self.controller.snapshot.run_id
            if not said_of:
                said_of.append(run)
            return run == said_of[0]
        return holds

    @Slot(str)
    def _on_refused(self, text: str) -> None:
        """The Designer refused an edit: said until the Designer says otherwise."""
        self.messages.show_message(text, lambda: self.designer.status.text() == text)

    @Slot(str, str)
    def _on_error(self, text: str, detail: str = "") -> None:
        self.errors.show("Something went wrong", text, detail)

    @Slot(str)
    def _on_training_died(self, text: str) -> None:
        """The training process ended unasked: the window stays, says so in words, and
        offers to continue (the box stays until answered)."""
        box = self.errors.show("Training stopped", text)
        box.setIcon(QMessageBox.Icon.Critical)
        box.setStandardButtons(QMessageBox.StandardButton.NoButton)
        go_on = box.addButton("Continue training", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Not now", QMessageBox.ButtonRole.RejectRole)
        go_on.clicked.connect(self.continue_training)

    def continue_training(self) -> None:
        """A new training process, from the last whole state of the run (see
        SessionPort.continue_training); a failure to start is said in words."""
        try:
            self.controller.continue_training()
        except Exception as error:  # the window stays: it still shows the run
            self.errors.show("Training could not continue", str(error))

    @property
    def error_box(self) -> QMessageBox | None:
        """The message shown last (it stays until read)."""
        return self.errors.last

    @Slot(str)
    def _on_stopped(self, reason: str) -> None:
        """A Run paused on a problem (a non-finite loss, a diverging one): say so until
        the state it describes is gone."""
        self.banner.run_stopped(reason, self.controller.snapshot)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        self.messages.recheck()
        if self._step_fields and snapshot.config != self._fields_config:
            # The lesson's run arrived (its Designer laid out anew): the step's fields
            # into view again; a run going on moves nothing.
            self._fields_config = snapshot.config
            self._bring_into_view(self._step_fields, passes=2)
        self.banner.show_state(snapshot)
        self.lessons.show_run(snapshot)
        # A regression's plot is the fit of a function, not a boundary between classes.
        name = "Fit" if snapshot.config.is_regression else "Decision boundary"
        if self.tabs.name_of(self.tabs.indexOf(self.boundary)) != name:
            self.tabs.rename(self.boundary, name, "Fit" if name == "Fit" else "Boundary")
        self.show_title()

    def show_title(self) -> None:
        """The title names the session's file ("untitled" before it has one)."""
        self.setWindowTitle(f"{self.document.title()}[*] — gradbox")

    # --- files: see files/ ---------------------------------------------------------
    def is_ending(self) -> bool:
        """A signal is ending the app: no question may wait for an answer."""
        return self.quitting.is_ending()

    def end_by_signal(self, name: str) -> None:
        """SIGTERM or SIGINT: close as Quit would, without asking (see quitting.py)."""
        self.quitting.end_by_signal(name)

    def ask_unsaved(self) -> str:
        """'save', 'discard' or 'cancel'. Tests replace this method."""
        answer = QMessageBox.question(
            self, "Unsaved changes", "This session has changes that are not saved. Save them?",
            QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel)
        return {QMessageBox.Save: "save", QMessageBox.Discard: "discard"}.get(answer, "cancel")

    def ask_save_failed(self, text: str) -> str:
        """'save_as', 'discard' or 'cancel'. Tests replace this method."""
        box = QMessageBox(QMessageBox.Warning, "The session was not saved", text,
                          QMessageBox.Discard | QMessageBox.Cancel, self)
        box.setTextFormat(Qt.TextFormat.PlainText)  # it names the file
        save_as = box.addButton("Save As…", QMessageBox.AcceptRole)
        box.setDefaultButton(save_as)
        box.exec()
        clicked = box.clickedButton()
        if clicked is save_as:
            return "save_as"
        return "discard" if clicked is box.button(QMessageBox.Discard) else "cancel"

    # --- help ------------------------------------------------------------------------------
    @Slot()
    def show_shortcuts(self) -> None:
        menus = [a.menu() for a in self.menuBar().actions() if a.menu() is not None]
        QMessageBox.information(self, "Keyboard and mouse", shortcuts_html(menus))

    @Slot()
    def show_about(self) -> None:
        QMessageBox.about(self, "About gradbox",
                          "<b>gradbox</b> — build the machine behind <code>loss.backward()</code>"
                          " and watch it run.<br><br>A scalar autograd engine, a small MLP "
                          "library, and views of every value and gradient.")

    # --- settings ----------------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        # Once shown: set before, it gave way to restoreGeometry's on X11.
        rect, self._saved_rect = self._saved_rect, None
        self._restore_rect(rect)
        if not self._shown_once and not self._layout_restored:
            self._shown_once = True
            self.dock_room.fit()  # for the size the window is shown at

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if self.presentation.active:
            return  # teacher mode sizes its own docks; the usual fit comes back after it
        self.dock_room.resized(event.oldSize(), event.size())

    def _restore_layout(self) -> None:
        self._saved_rect: object = None  # put back once shown (see _restore_rect)
        if self.settings is None:
            return
        geometry = self.settings.value("geometry")
        state = self.settings.value("window_state")
        if geometry is not None:
            self.restoreGeometry(geometry)
            self._saved_rect = self.settings.value("rect")
        if state is not None:
            # A layout saved by an older window (other toolbars and docks) is ignored.
            self._layout_restored = self.restoreState(state, LAYOUT_VERSION)
        self.workspaces.restore_current(self._layout_restored)

    def _restore_rect(self, rect: object) -> None:
        """Back at its size, if the screen still has room for it, and where it was, moved
        onto the screen as far as it must (a window manager's border put it at 1,1): Qt's
        restoreGeometry makes a window that filled the screen 2 px smaller (an exact fit
        would be full screen, it says) and, a title bar's height guessed, shorter still
        (1022x674 on a 1024x700 screen with no title bars). Nothing without a `rect`."""
        screen = self.screen()
        if (not isinstance(rect, QRect) or not rect.isValid() or screen is None
                or self.isMaximized() or self.isFullScreen()):
            return
        room = screen.availableGeometry()
        if rect.width() <= room.width() and rect.height() <= room.height():
            rect = QRect(rect)
            rect.moveLeft(min(max(rect.left(), room.left()), room.right() + 1 - rect.width()))
            rect.moveTop(min(max(rect.top(), room.top()), room.bottom() + 1 - rect.height()))
            self.setGeometry(rect)

    def save_settings(self) -> None:
        if self.settings is None:
            return
        # Never teacher mode's presentation: the layout from before it.
        self.workspaces.keep()
        self.settings.setValue("geometry", self.presentation.saved_geometry()
                               or self.saveGeometry())
        # (teacher mode never moves nor resizes the window: its rectangle is the one before)
        self.settings.setValue("rect", self.geometry())
        with self.dock_room.all_shown():
            self.settings.setValue("window_state", self.presentation.saved_state()
                                   or self.saveState(LAYOUT_VERSION))
        self.settings.setValue("config", json.dumps(self.controller.snapshot.config.to_dict()))
        self.settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt's name)
        """Quit never loses work (see quitting.py)."""
        if self.quitting.may_close(event):
            self.build.flush()  # the learner's code, written before the app ends
            super().closeEvent(event)
