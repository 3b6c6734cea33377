"""The lesson panel: choose a lesson, read it step by step, and let it set the app up.

The panel never reaches into the main window. It talks to a small `LessonHost` (the
main window implements it; tests use a fake), so a lesson is "show the playground
with this expression" or "show training with this config", nothing more. Teacher mode
hides what a lesson does not need and enlarges fonts for a projector;
`apply_teacher_mode` does that to any widget tree by objectName.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence, Set
from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QFont,
    QKeySequence,
    QResizeEvent,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMenuBar,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gradbox.teaching import lessons as names
from gradbox.teaching.lessons import ALL_CONTROLS, LESSONS, Lesson
from gradbox.training.config import TrainingConfig
from gradbox.training.snapshots import Snapshot
from gradbox.views.fitting_combo import FittingComboBox
from gradbox.views.named import named
from gradbox.views.palette import HIGHLIGHT, ON_HIGHLIGHT
from gradbox.views.panels.lesson_check import LessonCheck

TEACHER_SCALE = 1.5
# Dynamic properties that remember what teacher mode changed, so turning it off puts
# back exactly that and nothing the user hid on purpose.
_HIDDEN = "gradbox_teacher_hidden"
_FONT = "gradbox_teacher_font"


def _plain(rich: str) -> str:
    document = QTextDocument()
    document.setHtml(rich)
    return document.toPlainText()


class LessonHost(Protocol):
    """What a lesson needs from the app. The main window implements these three."""

    def show_playground(self, expression: str, values: Mapping[str, float], variant: str,
                        retain_graph: bool, tab: str) -> None: ...

    def show_training(self, config: TrainingConfig, forget_zero_grad: bool,
                      ghost: bool, tab: str = "") -> None: ...

    def set_teacher_mode(self, on: bool, needed_controls: Sequence[str]) -> None: ...

    def use_run_controls(self, speed: float | None, stop: str, value: float) -> None: ...

    def restore_run_controls(self) -> None: ...


# The regions of the window a step may show or put away: docks, main tabs, and the
# playground's table, graph and extra tabs. Buttons and switches are not regions: a
# lesson's own stay in view at every step (they are small, and a step that does not
# name them still may need them a moment later).
REGIONS = frozenset({names.DESIGNER, names.PARAMETERS, names.LOSS_CURVE, names.TRAINING_LOOP,
                     names.BOUNDARY, names.GRAPH_TAB, names.LAYERS_TAB, names.LANDSCAPE_TAB,
                     names.PLAYGROUND_TAB, names.PG_TABLE, names.PG_GRAPH, names.PG_EXTRAS})


def presented(lesson: Lesson, step: int) -> tuple[str, ...]:
    """What teacher mode shows at this step: the regions the step names, and the
    lesson's controls that are not regions. A step naming nothing shows the lesson's."""
    panels = lesson.steps[step].panels
    if not panels:
        return lesson.controls
    return tuple(dict.fromkeys((*panels, *(c for c in lesson.controls if c not in REGIONS))))


# --- teacher mode, for any widget tree --------------------------------------------------------
def apply_teacher_mode(window: QWidget, needed: Iterable[str], on: bool,
                       managed: Iterable[str] = ALL_CONTROLS,
                       scale: float = TEACHER_SCALE) -> None:
    """Hide the managed controls a lesson does not need and scale `window`'s font; or undo.

    Controls are found by objectName among `window`'s descendants (widgets and actions).
    A control that contains a needed one stays (hiding a toolbar would hide its check
    box). Tab pages are hidden as tabs, docks as docks. Turning it off shows again only
    what teacher mode hid and restores the font it found. From one step to the next only
    what changes is shown or hidden, and the fonts stay scaled: showing everything and
    scaling every font again laid the whole window out twice, most of a step's time.
    """
    if not on:
        _restore(window)
        return
    keep = set(needed)
    needed_widgets = [w for name in keep for w in window.findChildren(QWidget, name)]
    hidden: set[QObject] = set()  # what this step puts away (hidden already or now)
    for name in set(managed) - keep:
        for widget in window.findChildren(QWidget, name):
            if any(widget.isAncestorOf(n) for n in needed_widgets):
                continue
            if _set_shown(widget, False) or widget.property(_HIDDEN):
                widget.setProperty(_HIDDEN, True)
                hidden.add(widget)
        for action in window.findChildren(QAction, name):
            if action.isVisible() or action.property(_HIDDEN):
                action.setVisible(False)
                action.setProperty(_HIDDEN, True)
                hidden.add(action)
    # A label goes with the control it names ("Backward variant:" stood alone before).
    for label in window.findChildren(QLabel):
        buddy = label.buddy()
        if buddy in hidden and (_set_shown(label, False) or label.property(_HIDDEN)):
            label.setProperty(_HIDDEN, True)
            hidden.add(label)
    _restore(window, fonts=False, unless=hidden)  # what the last step put away, back
    # A widget with a style sheet of its own no longer inherits its parent's font (Qt's
    # style-sheet style sets it explicitly), so each is scaled by hand. Fonts are read
    # before any is changed: a child must not be scaled twice through its parent.
    styled = [w for w in window.findChildren(QWidget) if w.styleSheet()]
    originals = [(w, QFont(w.font())) for w in (window, *styled)
                 if not isinstance(w.property(_FONT), QFont)]  # not scaled already
    for widget, font in originals:
        widget.setProperty(_FONT, font)
        widget.setFont(_scaled(font, scale))


def put_away(widget: QWidget) -> None:
    """Hide `widget` for teacher mode: turning it off (or the next step) shows it again."""
    if _set_shown(widget, False):
        widget.setProperty(_HIDDEN, True)


def _scaled(font: QFont, scale: float) -> QFont:
    bigger = QFont(font)
    if font.pointSizeF() > 0:
        bigger.setPointSizeF(font.pointSizeF() * scale)
    else:  # a font given in pixels
        bigger.setPixelSize(round(font.pixelSize() * scale))
    return bigger


def _restore(window: QWidget, fonts: bool = True, unless: Set[QObject] = frozenset()) -> None:
    """Show what teacher mode put away (but `unless`), and give back the fonts it scaled."""
    for widget in window.findChildren(QWidget):
        if widget.property(_HIDDEN) and widget not in unless:
            widget.setProperty(_HIDDEN, None)
            _set_shown(widget, True)
    for action in window.findChildren(QAction):
        if action.property(_HIDDEN) and action not in unless:
            action.setProperty(_HIDDEN, None)
            action.setVisible(True)
    if not fonts:
        return
    for widget in (window, *window.findChildren(QWidget)):
        font = widget.property(_FONT)
        if isinstance(font, QFont):
            widget.setFont(font)
            widget.setProperty(_FONT, None)


def _set_shown(widget: QWidget, shown: bool) -> bool:
    """Show or hide a widget the way its container expects; True if anything changed."""
    tabs = _tab_widget_of(widget)
    if tabs is not None:
        index = tabs.indexOf(widget)
        if tabs.isTabVisible(index) == shown:
            return False
        tabs.setTabVisible(index, shown)
        return True
    # A dock hides like any widget (its toggle action follows). isHidden: hidden by
    # itself, not merely because its parent is.
    if widget.isHidden() != shown:
        return False
    widget.setVisible(shown)
    return True


def _tab_widget_of(widget: QWidget) -> QTabWidget | None:
    stack = widget.parentWidget()
    tabs = stack.parentWidget() if isinstance(stack, QStackedWidget) else None
    return tabs if isinstance(tabs, QTabWidget) and tabs.indexOf(widget) >= 0 else None


# --- the text -----------------------------------------------------------------------------------
def lesson_html(lesson: Lesson, current: int, steps_first: bool = False,
                with_look: bool = True) -> str:
    """The lesson as rich text: intro, formulas, steps with the current one marked.

    `steps_first` (teacher mode, large fonts): the steps come first, so they stay in view
    in a small dock; the intro, which the teacher says aloud anyway, follows them.
    `with_look` False leaves the current step's "look for" to a box of its own.
    """
    about = [f"<p>{html.escape(lesson.intro)}</p>", "<p><b>Local derivatives</b></p>",
             "<table cellpadding='3' style='background: #f4f1e8'>"]
    # Dark text on the formulas' light box, whatever the theme (a dark theme's light
    # text on it could not be read).
    about += [f"<tr><td style='color: {ON_HIGHLIGHT}'><code>{html.escape(f)}</code></td></tr>"
              for f in lesson.formulas]
    about.append("</table>")
    steps = ["<p><b>Steps</b></p><ol>"]
    for k, step in enumerate(lesson.steps):
        do, look = html.escape(step.do), html.escape(step.look)
        if k == current:
            # The dark text on the highlight only: the item's number is drawn beside
            # the highlight, on the panel, and a dark theme's panel hid it.
            marked = (f"<li style='background: {HIGHLIGHT}'><span style='color: "
                      f"{ON_HIGHLIGHT}'><a name='current'></a><b>{do}</b>")
            steps.append(f"{marked}<br><i>Look for:</i> {look}</span></li>" if with_look
                         else f"{marked}</span></li>")
        elif k < current:
            steps.append(f"<li style='color: #666666'>{do}</li>")
        else:
            steps.append(f"<li>{do}</li>")
    steps.append("</ol>")
    if lesson.takeaway and current == len(lesson.steps) - 1:
        steps.append(f"<p><b>Takeaway:</b> {html.escape(lesson.takeaway)}</p>")
    body = steps + about if steps_first else about + steps
    return f"<h3>{html.escape(lesson.title)}</h3>" + "".join(body)


def overview_html(lessons: Sequence[Lesson]) -> str:
    """What the panel shows before a lesson is chosen: no lesson text quotes numbers the
    screen does not show yet, because the lesson has not set the app up."""
    items = "".join(f"<li><b>{html.escape(x.title)}</b></li>" for x in lessons)
    return ("<h3>Lessons</h3><p>Choose a lesson above. It sets the app up for itself, "
            "then walks you through it one step at a time: what to do, and what to look "
            f"for.</p><ol style='list-style-type: none'>{items}</ol>")


class LessonPanel(QWidget):
    """Lesson chooser, the lesson's text step by step, and teacher mode."""

    lesson_applied = Signal(str)  # the lesson's key
    step_changed = Signal(int)
    teacher_mode_changed = Signal(bool)

    def __init__(self, host: LessonHost | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("lesson_panel")
        self.setAccessibleName("Lessons")
        self.host = host
        # No lesson until one is chosen: its text would describe a state it never set up.
        self.lesson: Lesson | None = None
        self.step = 0
        self._snapshot: Snapshot | None = None  # the run on screen, for the claims' check
        self._menu_actions: dict[str, QAction] = {}
        self._opened: dict[str, Lesson] = {}  # lessons opened from files, by key
        self._teacher_action: QAction | None = None
        self._step_actions: tuple[QAction, QAction] | None = None  # the menu's Previous, Next

        # Long titles must not set the dock's width: the list shows them whole, the box
        # as much as fits, with "…" and the whole title in its tooltip.
        self.chooser = FittingComboBox(14)
        named(self.chooser, "lesson_chooser", "Lesson",
              "Choose a lesson: it sets the app up for you")
        for item in LESSONS:
            self.chooser.addItem(item.title, item.key)
        self.chooser.setPlaceholderText("Choose a lesson…")
        self.chooser.setCurrentIndex(-1)
        self.restart = QPushButton("Set up again")
        named(self.restart, "lesson_restart", "Set up the lesson again",
              "Put the app back in this lesson's starting state")
        self.leave_button = QPushButton("Leave")
        named(self.leave_button, "lesson_leave", "Leave the lesson",
              "End the lesson: your own run speed and stop condition come back; the run "
              "stays as it is")
        # What the current step claims that the run on screen does not show (a seed or a
        # setting the learner changed): said in the step's box, never contradicted silently.
        self.check = LessonCheck()
        # The current step, always in view above the text: in a small dock or with teacher
        # mode's large fonts the list of steps may be scrolled away, never this.
        self.current = QLabel()
        named(self.current, "lesson_current_step", "Current step",
              "What to do now, and what to look for once it is done")
        self.current.setWordWrap(True)
        self.current.setTextFormat(Qt.TextFormat.RichText)
        self.current.setStyleSheet(f"QLabel {{ background: {HIGHLIGHT}; color: {ON_HIGHLIGHT}; "
                                   "padding: 6px; "
                                   "border: 1px solid #e6d48a; }")
        # Its lines whole, growing the dock if need be -- except in a dock given back its
        # size after teacher mode, where a longer step than before scrolls in its box
        # (see fit_step_box) rather than move the docks from where they were.
        self.current_box = QScrollArea()
        self.current_box.setObjectName("lesson_current_box")
        self.current_box.setWidget(self.current)
        self.current_box.setWidgetResizable(True)
        self.current_box.setFrameShape(QFrame.Shape.NoFrame)
        self.current_box.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._box_cap: int | None = None  # the panel height the box must fit, if any
        self.current_box.hide()
        self.text = QTextBrowser()
        named(self.text, "lesson_text", "Lesson text", "What to click, and what to look for")
        self.text.setOpenExternalLinks(False)
        # The list follows the current step until the reader scrolls it: teacher mode
        # lays the docks out again after a step changes, and at the text's final width
        # its lines moved up past the view (lesson 6 step 3 showed only steps 4 and 5).
        self._follow_current = False
        self.text.viewport().installEventFilter(self)
        self.text.verticalScrollBar().actionTriggered.connect(self._stop_following)
        self.previous_button = QPushButton("◀ Previous")
        named(self.previous_button, "lesson_previous", "Previous step",
              "Back to the previous step")
        self.next_button = QPushButton("Next ▶")
        named(self.next_button, "lesson_next", "Next step", "On to the next step")
        self.position = QLabel()
        self.position.setAccessibleName("Step")
        self.position.setToolTip("Which step of the lesson you are on")
        self.teacher = QCheckBox("Teacher mode")
        named(self.teacher, "lesson_teacher_mode", "Teacher mode",
              "For a projector: hide the controls this lesson does not need and enlarge "
              "the fonts")

        top = QHBoxLayout()
        top.addWidget(self.chooser, 1)
        top.addWidget(self.restart)
        steps = QHBoxLayout()
        steps.addWidget(self.previous_button)
        steps.addWidget(self.position, 1)
        steps.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.current_box)
        layout.addWidget(self.text, 1)
        layout.addLayout(steps)
        # The bottom row has room to spare: the top row's width sets the dock's minimum.
        bottom = QHBoxLayout()
        bottom.addWidget(self.teacher)
        bottom.addStretch(1)
        bottom.addWidget(self.leave_button)
        layout.addLayout(bottom)

        self.chooser.activated.connect(self._on_chosen)
        self.restart.clicked.connect(self._set_up_again)
        self.leave_button.clicked.connect(self.leave)
        self.previous_button.clicked.connect(self.previous_step)
        self.next_button.clicked.connect(self.next_step)
        self.teacher.toggled.connect(self.set_teacher_mode)
        self._render()

    # --- public API ---------------------------------------------------------------------------
    def apply(self, lesson: Lesson) -> None:
        """Show `lesson` from its first step and set the app up for it through the host."""
        self.lesson = lesson
        self.step = 0
        self._box_cap = None  # a new step's box: its lines whole
        if any(x is lesson for x in LESSONS):
            index = self.chooser.findData(lesson.key)
        else:
            # A teacher's own lesson (File or Lessons › Open lesson…): in the chooser too,
            # after the built-in ones, under a key of its own (it was set up with the
            # chooser showing none).
            data = f"opened:{lesson.key}"
            index = self.chooser.findData(data)
            if index < 0:
                self.chooser.addItem(lesson.title, data)
                index = self.chooser.count() - 1
            self.chooser.setItemText(index, lesson.title)
            self._opened[data] = lesson
        if index != self.chooser.currentIndex():
            self.chooser.setCurrentIndex(index)
        if lesson.key in self._menu_actions:
            self._menu_actions[lesson.key].setChecked(True)
        setup = lesson.setup
        if self.host is not None:
            if setup.view == "playground":
                # A playground lesson depends on no run control: the learner's come back.
                self.host.restore_run_controls()
                self.host.show_playground(setup.expression, dict(setup.values), setup.variant,
                                          setup.retain_graph, setup.tab)
            else:
                assert setup.config is not None  # Setup refuses a training view without one
                self.host.use_run_controls(setup.run_speed, setup.run_stop,
                                           setup.run_stop_value)
                self.host.show_training(setup.config, setup.forget_zero_grad, setup.ghost,
                                        setup.main_tab)
            if self.teacher.isChecked():
                self.host.set_teacher_mode(True, presented(lesson, 0))
        self._render()
        self.lesson_applied.emit(lesson.key)
        self.step_changed.emit(self.step)

    @Slot()
    def leave(self) -> None:
        """End the lesson: the overview again, and the learner's run controls back."""
        if self.lesson is None:
            return
        self.lesson = None
        self.step = 0
        self.chooser.setCurrentIndex(-1)
        for action in self._menu_actions.values():
            if action.isChecked():
                # The group is exclusive; unchecking needs it to allow none for a moment.
                group = action.actionGroup()
                if group is not None:
                    group.setExclusive(False)
                action.setChecked(False)
                if group is not None:
                    group.setExclusive(True)
        if self.host is not None:
            self.host.restore_run_controls()
        self._render()
        self.lesson_applied.emit("")
        self.step_changed.emit(0)

    def show_run(self, snapshot: Snapshot) -> None:
        """The run on screen changed: check the current step's claims on it."""
        self._snapshot = snapshot
        if self.check.update(self.lesson, self.step, snapshot) and self.lesson is not None:
            self._show_current()

    def mark_false_claims(self, lesson_key: str, sentences: list[str]) -> None:
        """Keep what the check of an opened lesson found false in its steps' box."""
        self.check.mark_false(lesson_key, sentences)
        if self.lesson is not None:
            self._show_current()

    def apply_key(self, key: str) -> None:
        for item in LESSONS:
            if item.key == key:
                self.apply(item)
                return
        raise KeyError(key)

    @Slot()
    def next_step(self) -> None:
        self.go_to_step(self.step + 1)

    @Slot()
    def previous_step(self) -> None:
        self.go_to_step(self.step - 1)

    def go_to_step(self, step: int) -> None:
        if self.lesson is None:
            return
        step = max(0, min(step, len(self.lesson.steps) - 1))
        if step != self.step:
            self.step = step
            self._box_cap = None  # a new step's box: its lines whole
            if self.teacher.isChecked() and self.host is not None:
                # Teacher mode presents the step: what it names, large; the rest away.
                self.host.set_teacher_mode(True, presented(self.lesson, step))
            self._render()
            self.step_changed.emit(step)

    @Slot(bool)
    def set_teacher_mode(self, on: bool) -> None:
        if self.teacher.isChecked() != on:
            self.teacher.setChecked(on)  # comes back here through toggled
            return
        if self._teacher_action is not None and self._teacher_action.isChecked() != on:
            self._teacher_action.setChecked(on)
        if self.host is not None:
            # Without a lesson nothing is named: the host presents what is on show.
            needed = presented(self.lesson, self.step) if self.lesson is not None else ()
            self.host.set_teacher_mode(on, needed)
        self._render()
        self.teacher_mode_changed.emit(on)

    def build_menu(self, parent: QMenuBar | QMenu | QWidget) -> QMenu:
        """A "Lessons" menu: one checkable entry per lesson, the step keys, teacher mode.

        Given a menu bar (or a main window, whose menu bar is used) the menu is added
        to it; given a menu it becomes a submenu.
        """
        if isinstance(parent, QMenuBar | QMenu):
            menu = parent.addMenu("&Lessons")
        else:
            bar = parent.menuBar() if hasattr(parent, "menuBar") else QMenuBar(parent)
            menu = bar.addMenu("&Lessons")
        menu.setToolTipsVisible(True)
        group = QActionGroup(menu)
        for item in LESSONS:
            action = QAction(item.title, menu)
            action.setObjectName(f"lesson_action_{item.key}")
            action.setCheckable(True)
            action.setToolTip(item.intro)
            action.setStatusTip(item.intro)
            action.triggered.connect(lambda _checked=False, lesson=item: self.apply(lesson))
            group.addAction(action)
            menu.addAction(action)
            self._menu_actions[item.key] = action
        menu.addSeparator()
        # Keys for the step buttons, so a teacher at the projector goes on without the
        # mouse (Alt+← / Alt+→, as back and forward in a browser: no field or view of the
        # window uses them). In the menu, F1 lists them.
        previous = QAction("&Previous step", menu)
        previous.setShortcut(QKeySequence("Alt+Left"))
        previous.setToolTip(self.previous_button.toolTip())
        previous.triggered.connect(self.previous_step)
        following = QAction("&Next step", menu)
        following.setShortcut(QKeySequence("Alt+Right"))
        following.setToolTip(self.next_button.toolTip())
        following.triggered.connect(self.next_step)
        menu.addAction(previous)
        menu.addAction(following)
        self._step_actions = (previous, following)
        previous.setEnabled(self.previous_button.isEnabled())
        following.setEnabled(self.next_button.isEnabled())
        menu.addSeparator()
        teacher = QAction("&Teacher mode", menu)
        teacher.setObjectName("lesson_action_teacher_mode")
        teacher.setCheckable(True)
        teacher.setChecked(self.teacher.isChecked())
        teacher.setToolTip(self.teacher.toolTip())
        teacher.toggled.connect(self.set_teacher_mode)
        menu.addAction(teacher)
        self._teacher_action = teacher
        return menu

    def text_plain(self) -> str:
        """What the panel says: the current step's box, then the lesson text."""
        current = _plain(self.current.text()) if self.current_box.isVisibleTo(self) else ""
        return (current + "\n" + self.text.toPlainText()).strip()

    # --- plumbing -------------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_current()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if (watched is self.text.viewport() and event.type() == QEvent.Type.Resize
                and self._follow_current):
            # Once the text has its lines at the new width (laid out after this event).
            QTimer.singleShot(0, self._scroll_to_current)
        return False

    @Slot()
    def _scroll_to_current(self) -> None:
        if self._follow_current and self.lesson is not None:
            self.text.scrollToAnchor("current")

    @Slot(int)
    def _stop_following(self, _action: int) -> None:
        self._follow_current = False

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        # Teacher mode's font on or off: the step's lines are of another height (kept at
        # the large font's, the box held the window 65 px taller than 700 after it).
        if event.type() == QEvent.Type.FontChange:
            QTimer.singleShot(0, self._fit_current)  # once the box has its font too

    def fit_step_box(self, height: int | None) -> None:
        """Fit the step's box into a panel `height` px tall (None: its lines whole again).
        Teacher mode ended on a longer step than it began on: the dock keeps the size it
        had before (restored exactly) and the box scrolls, until the next step."""
        self._box_cap = height
        self._fit_current()

    def _fit_current(self) -> None:
        """The current step's box is never cut: it asks for the height its words need at
        its width, and the lesson text below (which scrolls) gives way."""
        if self.current_box.isHidden():
            return
        # The box spans the panel: its own width lags a resize by a layout pass (shown
        # from a closed dock, it was measured at its hidden width and cut to 57 of 112 px).
        margins = self.layout().contentsMargins()
        width = self.width() - margins.left() - margins.right()
        # A label's heightForWidth is never below its minimum height: without clearing
        # it, teacher mode's large height stayed after it (38 px more at 1024 x 700).
        old = self.current.minimumHeight()
        self.current.setMinimumHeight(0)
        needed = self.current.heightForWidth(width)
        needed = needed if needed > 0 else old
        self.current.setMinimumHeight(needed)
        box = needed
        if self._box_cap is not None:
            # What the panel's other parts leave of the height it is to keep.
            others = self.layout().minimumSize().height() - self.current_box.minimumHeight()
            box = max(min(needed, self._box_cap - others), 3 * self.fontMetrics().height())
        self.current_box.setMinimumHeight(box)
    @Slot(int)
    def _on_chosen(self, index: int) -> None:
        if index < 0:
            return
        key = self.chooser.itemData(index)
        lesson = self._opened.get(key) or next((x for x in LESSONS if x.key == key), None)
        if lesson is not None:
            self.apply(lesson)

    @Slot()
    def _set_up_again(self) -> None:
        if self.lesson is not None:
            self.apply(self.lesson)

    def _show_current(self) -> None:
        """The current step's box: what to do, what to look for, and what this run shows
        where it differs."""
        assert self.lesson is not None
        total = len(self.lesson.steps)
        step = self.lesson.steps[self.step]
        self.current.setText(f"<b>Step {self.step + 1} of {total}: {html.escape(step.do)}</b>"
                             f"<br><i>Look for:</i> {html.escape(step.look)}"
                             + self.check.html())
        self.current_box.show()
        self._fit_current()

    def _render(self) -> None:
        self.restart.setEnabled(self.lesson is not None)
        self.leave_button.setEnabled(self.lesson is not None)
        self.check.update(self.lesson, self.step, self._snapshot)
        if self.lesson is None:
            self.text.setHtml(overview_html(LESSONS))
            self.current_box.hide()
            self.position.setText("")
            self._enable_steps(False, False)
            return
        self.text.setHtml(lesson_html(self.lesson, self.step, self.teacher.isChecked(),
                                      with_look=False))
        self._follow_current = self.step > 0 or self.teacher.isChecked()
        if self._follow_current:
            self.text.scrollToAnchor("current")
        total = len(self.lesson.steps)
        self._show_current()
        self.position.setText(f"Step {self.step + 1} of {total}")
        self._enable_steps(self.step > 0, self.step < total - 1)

    def _enable_steps(self, back: bool, forward: bool) -> None:
        self.previous_button.setEnabled(back)
        self.next_button.setEnabled(forward)
        if self._step_actions is not None:
            self._step_actions[0].setEnabled(back)
            self._step_actions[1].setEnabled(forward)
