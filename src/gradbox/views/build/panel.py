"""The Build workspace's page: write the engine stage by stage, Check it, see where it is wrong.

Left: the stage's text above the code editor. Right: what the check found above the
failing case's graph (and, at the last stage, training on the learner's own engine).
Along the top: the stage, Check (Ctrl+Enter), the busy sign and Cancel while a check
runs, Watch a file…, and the teacher's "all stages open".

Stages open one after another: passing stage N opens N + 1 (the teacher setting opens
all). The learner's code is kept per stage (`code_store`); a stage first opened starts
from the learner's code of the stage before it -- one engine grows through the stages
-- or, with none, from the stage's starter code.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gradbox.build.report import CheckReport
from gradbox.build.stages import Stage
from gradbox.views.build import BUILD_TAB
from gradbox.views.build.case_graph import CaseGraphView
from gradbox.views.build.checking import Checker, Start
from gradbox.views.build.code_store import CodeStore
from gradbox.views.build.editor import CodeEditor
from gradbox.views.build.feedback import Feedback
from gradbox.views.build.stage_text import StageText, plain_label
from gradbox.views.build.training import TrainOnYours
from gradbox.views.build.watch import FileWatch
from gradbox.views.palette import NOTE_BOX

MIN_WIDTH = 320
# What the panel keeps in the settings, and what each reads as while never written.
SETTINGS: dict[str, object] = {"unlocked": 0, "unlock_all": False, "stage": 0}


def _scrolled(widget: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidget(widget)
    area.setWidgetResizable(True)
    area.setFrameShape(QScrollArea.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return area


class BuildPanel(QWidget):
    """Stages, editor, Check, feedback and the learner's graph."""

    open_playground = Signal(str, object, str, bool, str)
    message = Signal(str)  # for the window's status line

    def __init__(self, stages: Sequence[Stage], folder: Path | None = None,
                 settings: QSettings | None = None, start: Start | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(BUILD_TAB)
        self.stages = tuple(stages)
        self.settings = settings
        self.store = CodeStore(folder, self)
        self.store.failed.connect(self.message)
        self.checker = Checker(start, self)
        self.watch = FileWatch(self)
        self.stage: Stage = self.stages[0]
        self.unlocked = int(self._setting("unlocked"))
        self._held: CheckReport | None = None  # a report waiting for a prediction
        self._loading = False  # the editor's text is being set, not typed
        self._shown = False  # the editor holds a stage's code (not yet while built)
        self._shares_set = False  # the splitters' first sizes, once the page has its own

        self.editor = CodeEditor()
        self.editor.textChanged.connect(self._on_typed)
        self.text = StageText()
        self.text.predicted.connect(self._on_predicted)
        self.feedback = Feedback()
        self.feedback.line_found.connect(self.editor.mark_line)
        self.feedback.open_playground.connect(self.open_playground)
        self.feedback.next_stage.connect(self._go_on)
        self.graph = CaseGraphView()
        self.training = TrainOnYours(self.editor.toPlainText)
        self.training.error_line.connect(self.editor.mark_line)
        self._build_layout()
        self._make_actions()
        self.checker.started.connect(self._on_started)
        self.checker.finished.connect(self._on_finished)
        self.checker.cancelled.connect(self._on_cancelled)
        self.watch.changed.connect(self._on_watched_change)
        self.watch.missing.connect(self.watch_label.setText)
        self._ticker = QTimer(self, interval=100)
        self._ticker.timeout.connect(self._show_elapsed)
        self.unlock_all.setChecked(bool(self._setting("unlock_all")))
        self.unlock_all.toggled.connect(self._on_unlock_all)
        self._fill_stages()
        last = int(self._setting("stage"))
        self.go_to(last if self.is_open(last) else 0)

    # --- construction -----------------------------------------------------------------
    def _build_layout(self) -> None:
        self.stage_box = QComboBox()
        # as wide as the bar allows, not as its longest title ("4. tanh (the slope ...")
        self.stage_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.stage_box.setMinimumContentsLength(16)
        self.stage_box.setAccessibleName("Stage")
        self.stage_box.setToolTip("The stage you are building; passing it opens the next")
        self.stage_box.activated.connect(lambda i: self.go_to(self.stages[i].number))
        self.check_button = QPushButton("Check")
        self.check_button.setToolTip("Run this stage's cases on your code (Ctrl+Enter)")
        self.check_button.clicked.connect(self.check)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # moving: no end known
        self.busy.setMaximumWidth(90)
        self.busy.setTextVisible(False)
        self.busy_label = QLabel()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the check (your code keeps running otherwise "
                                      "until its time limit)")
        self.cancel_button.clicked.connect(self.checker.cancel)
        self.watch_button = QPushButton("Watch a file…")
        self.watch_button.setToolTip("Write your engine in your own editor: each time you "
                                     "save it, it is checked here")
        self.watch_button.clicked.connect(self._choose_watched)
        self.unlock_all = QCheckBox("All stages open")
        self.unlock_all.setToolTip("For teachers: open every stage, passed or not")
        bar = QHBoxLayout()
        bar.addWidget(self.stage_box, 1)
        bar.addWidget(self.check_button)
        bar.addWidget(self.busy)
        bar.addWidget(self.busy_label)
        bar.addWidget(self.cancel_button)
        bar.addStretch(0)
        bar.addWidget(self.watch_button)
        bar.addWidget(self.unlock_all)
        for widget in (self.busy, self.busy_label, self.cancel_button):
            widget.hide()
        self.watch_label = plain_label()
        self.watch_label.setStyleSheet(f"background: {NOTE_BOX[0]}; color: {NOTE_BOX[1]}; "
                                       "padding: 3px;")
        self.watch_label.hide()
        self.stop_watch_button = QPushButton("Stop watching")
        self.stop_watch_button.clicked.connect(self.stop_watching)
        self.stop_watch_button.hide()
        watch_row = QHBoxLayout()
        watch_row.addWidget(self.watch_label, 1)
        watch_row.addWidget(self.stop_watch_button)

        left = QSplitter(Qt.Orientation.Vertical)
        self.text_area = _scrolled(self.text)
        left.addWidget(self.text_area)
        left.addWidget(self.editor)
        left.setStretchFactor(0, 2)
        left.setStretchFactor(1, 3)
        self.lower_tabs = QTabWidget()
        self.lower_tabs.addTab(self.graph, "Your graph")
        self.lower_tabs.addTab(self.training, "Train on your engine")
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(_scrolled(self.feedback))
        right.addWidget(self.lower_tabs)
        # its own least height, not its pages': the training page's (226 px) kept the
        # feedback above it from the room a case without a graph gives it
        self.lower_tabs.setMinimumHeight(110)
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        self.left, self.right = left, right
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        # Its own minimum, not its bar's: the page shares the main views' stack, whose
        # widest page sets the window's least width in every workspace (this bar's 497 px
        # made the Train workspace 1137 px wide; its 240 px of height cost the lessons'
        # parameter table in teacher mode its room). The Build workspace gives it the window.
        self.setMinimumSize(MIN_WIDTH, 120)
        column.addLayout(bar)
        column.addLayout(watch_row)
        column.addWidget(self.splitter, 1)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        # typing goes into the code when the page appears (Space was the window's Step)
        QTimer.singleShot(0, self.editor.setFocus)
        if not self._shares_set:
            self._shares_set = True
            # once laid out at the size it is shown at (a page shown for the first time
            # still has the size it had hidden)
            QTimer.singleShot(0, self._share)

    def _share(self) -> None:
        """The code gets the most room; the stage's text above it a third."""
        w, h = max(self.width(), 600), max(self.height(), 400)
        self.splitter.setSizes([int(w * 0.58), int(w * 0.42)])
        self.left.setSizes([int(h * 0.36), int(h * 0.64)])
        last = self.stage is self.stages[-1]
        self._share_right(graph=last, share=0.3 if last else None)

    def _share_right(self, graph: bool, share: float | None = None) -> None:
        """The feedback above the graph: most of the height until there is a graph."""
        h = max(self.right.height(), 400)
        share = share or (0.5 if graph else 0.8)
        self.right.setSizes([int(h * share), int(h * (1 - share))])

    def _make_actions(self) -> None:
        self.check_action = QAction("Check", self)
        self.check_action.setShortcuts([QKeySequence("Ctrl+Return"),
                                        QKeySequence("Ctrl+Enter")])
        self.check_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.check_action.triggered.connect(self.check)
        self.addAction(self.check_action)

    # --- settings ----------------------------------------------------------------------
    def _setting(self, key: str) -> object:
        default = SETTINGS[key]
        if self.settings is None:
            return default
        value = self.settings.value(f"build/{key}", default)
        if isinstance(default, bool):
            return value in (True, "true", "1", 1)
        try:
            return type(default)(value)  # type: ignore[call-arg]
        except (TypeError, ValueError):
            return default

    def _keep_setting(self, key: str, value: object) -> None:
        """Kept when it changes only: a window opened and closed writes no settings (a
        missing setting reads as its default)."""
        if self.settings is not None and self._setting(key) != value:
            self.settings.setValue(f"build/{key}", value)

    # --- stages --------------------------------------------------------------------------
    def is_open(self, number: int) -> bool:
        return self.unlock_all.isChecked() or number <= self.unlocked

    def _fill_stages(self) -> None:
        self.stage_box.clear()
        model = self.stage_box.model()
        for i, stage in enumerate(self.stages):
            open_ = self.is_open(stage.number)
            mark = "" if open_ else "  (pass the one before to open)"
            passed = "✓ " if stage.number < self.unlocked else ""  # it opened the next
            self.stage_box.addItem(f"{passed}{stage.title}{mark}", stage.number)
            item = model.item(i)  # type: ignore[attr-defined]
            item.setEnabled(open_)
        self.stage_box.setCurrentIndex(self.stages.index(self.stage))

    def go_to(self, number: int) -> None:
        """Show stage `number` with the learner's code for it."""
        stage = next((s for s in self.stages if s.number == number), None)
        if stage is None or not self.is_open(number):
            return
        if self.checker.is_running():
            self.checker.cancel()
        if self._shown:
            self._keep_code()
        self.stage = stage
        self._keep_setting("stage", number)
        self.stage_box.setCurrentIndex(self.stages.index(stage))
        self.text.set_stage(stage)
        self.text_area.verticalScrollBar().setValue(0)  # a new stage is read from its top
        # the payoff opens with the last stage (Neuron, Layer, MLP are written by then)
        last = stage is self.stages[-1]
        self.lower_tabs.setTabEnabled(1, last)
        self.lower_tabs.setTabToolTip(1, "Train the moons on your own engine" if last else
                                      "Opens at the last stage, once your MLP is written")
        self.lower_tabs.setCurrentIndex(1 if last else 0)
        if last:
            self._share_right(graph=True, share=0.3)  # the payoff: the curves get the room
        else:
            self.training.stop()
        if not self.watch.is_watching():
            self._set_code(self.code_for(stage))
            self._cursor_to_the_gap(stage)
        self._shown = True
        self._held = None
        self.editor.mark_line(0)
        self.feedback.show_nothing("Press Check (Ctrl+Enter) to run this stage's cases "
                                   "on your code.")
        self.graph.set_case(None)
        if self.watch.is_watching():
            self.check()  # the watched file is what the learner has: check it at once

    def code_for(self, stage: Stage) -> str:
        """The learner's code for `stage`. The first time: their latest code from a
        stage before it with the starter code of each stage since added at its end (a
        starter is what its stage adds to the one growing file), or, with none, every
        starter up to this stage."""
        kept = self.store.load(stage.number)
        if kept is not None:
            return kept
        earlier = [s for s in self.stages if s.number < stage.number]
        base, since = "", [*earlier, stage]
        for k in range(len(earlier) - 1, -1, -1):
            text = self.store.load(earlier[k].number)
            if text is not None:
                base, since = text, [*earlier[k + 1:], stage]
                break
        for s in since:
            if s.starter.strip() and s.starter.strip() not in base:
                # PEP 8's blank lines: one before a method, two before a class or function
                gap = "\n\n" if s.starter.startswith(" ") else "\n\n\n"
                base = base.rstrip("\n") + gap + s.starter if base.strip() else s.starter
        return base

    def _cursor_to_the_gap(self, stage: Stage) -> None:
        """The cursor on the first `...` of this stage's starter code, selected, so the
        learner types where the stage asks (or at the end, when there is none)."""
        doc = self.editor.document()
        begin = doc.toPlainText().find(stage.starter.strip()) if stage.starter.strip() else -1
        found = doc.find("...", max(begin, 0)) if begin >= 0 else None
        cursor = self.editor.textCursor()
        if found is not None and not found.isNull():
            cursor = found
        else:
            cursor.movePosition(cursor.MoveOperation.End)
        self.editor.setTextCursor(cursor)
        self.editor.ensureCursorVisible()

    def _set_code(self, text: str) -> None:
        self._loading = True
        try:
            self.editor.setPlainText(text)
        finally:
            self._loading = False

    def _on_typed(self) -> None:
        if self._loading or self.watch.is_watching():
            return
        self.editor.mark_line(0)  # the line moved or was fixed: the mark would mislead
        self._keep_code()

    def _keep_code(self) -> None:
        if self._shown and not self.watch.is_watching():
            self.store.keep(self.stage.number, self.editor.toPlainText())

    def _on_unlock_all(self, on: bool) -> None:
        self._keep_setting("unlock_all", on)
        self._fill_stages()

    def _unlock(self, number: int) -> None:
        if number > self.unlocked:
            self.unlocked = number
            self._keep_setting("unlocked", number)
            self._fill_stages()

    # --- checking ------------------------------------------------------------------------
    def check(self) -> None:
        """Check the code in the editor (or the watched file) up to this stage."""
        self.checker.check(self.editor.toPlainText(), self.stage.number)

    def _on_started(self) -> None:
        for widget in (self.busy, self.busy_label, self.cancel_button):
            widget.show()
        self.check_button.setEnabled(False)
        self.busy_label.setText("Checking…")
        shown = " (below, the last check's answer until this one's comes)" \
            if self.feedback.case is not None else ""
        self.feedback.show_busy(f"Checking stage {self.stage.number}…{shown}")
        self._ticker.start()

    def _show_elapsed(self) -> None:
        self.busy_label.setText(f"Checking… {self.checker.elapsed():.1f} s")

    def _idle(self) -> None:
        self._ticker.stop()
        for widget in (self.busy, self.busy_label, self.cancel_button):
            widget.hide()
        self.check_button.setEnabled(True)

    def _on_cancelled(self) -> None:
        self._idle()
        self.feedback.show_nothing("Check cancelled. Press Check (Ctrl+Enter) to run it "
                                   "again.")

    def _on_finished(self, report: CheckReport) -> None:
        self._idle()
        if self.checker.stage != self.stage.number:
            return  # a check of a stage no longer shown
        if self.text.prediction_pending():
            self._held = report
            self.feedback.show_nothing("Checked. Predict the number first (in the yellow "
                                       "box), or Skip, to see what your engine did.")
            # the box in view and its field ready: it is what the learner does next
            self.text_area.ensureWidgetVisible(self.text.predict_box)
            self.text.predict_entry.setFocus()
            return
        self.show_report(report)

    def _on_predicted(self) -> None:
        held, self._held = self._held, None
        if held is not None:
            self.show_report(held)

    def show_report(self, report: CheckReport) -> None:
        self.feedback.show_report(report, self.stage.number)
        failure = report.first_failure
        if failure is not None and failure[1].graph is not None:
            # the room first: the graph is framed for the size it is drawn at
            self.lower_tabs.setCurrentWidget(self.graph)
            self._share_right(graph=True)
            self.graph.set_case(failure[1].graph, failure[1].name)
        else:
            self.graph.set_case(None)
            if failure is not None or self.lower_tabs.currentWidget() is self.graph:
                # words to read and nothing to draw: the feedback gets the room (at the
                # last stage the training's curves keep some)
                last = self.stage is self.stages[-1]
                self._share_right(graph=False, share=0.6 if last else None)
        through = [s for s in report.stages if s.stage <= self.stage.number]
        if through and all(s.passed for s in through) and report.error is None \
                and any(s.stage == self.stage.number for s in through):
            self._unlock(self.stage.number + 1)
            following = next((s for s in self.stages if s.number > self.stage.number), None)
            if following is not None:
                self.feedback.offer_next(following.number, following.title)
                self.message.emit(f"Stage {self.stage.number} passes: stage "
                                  f"{following.number} ({following.title}) is open.")

    def _go_on(self) -> None:
        following = next((s for s in self.stages if s.number > self.stage.number), None)
        if following is not None:
            self.go_to(following.number)
            self.editor.setFocus()

    # --- watching a file ------------------------------------------------------------------
    def _choose_watched(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Watch your engine file", "",
                                              "Python files (*.py);;All files (*)")
        if path:
            self.watch_file(Path(path))

    def watch_file(self, path: Path) -> None:
        """Check `path` now and after each save; the editor shows it, read-only."""
        self._keep_code()
        text = self.watch.watch(path)
        self.editor.setReadOnly(True)
        self.watch_label.setText(f"Watching {path.name}: edit it in your own editor; each "
                                 "save is checked here.")
        self.watch_label.show()
        self.stop_watch_button.show()
        if text is not None:
            self._on_watched_change(text)

    def stop_watching(self) -> None:
        self.watch.stop()
        self.editor.setReadOnly(False)
        self.watch_label.hide()
        self.stop_watch_button.hide()
        self._set_code(self.code_for(self.stage))

    def _on_watched_change(self, text: str) -> None:
        # where the learner was looking stays in view (a save changes a line or two)
        bar = self.editor.verticalScrollBar()
        kept = bar.value()
        self._set_code(text)
        bar.setValue(kept)
        self.check()

    # --- quitting ---------------------------------------------------------------------------
    def flush(self) -> bool:
        """Write the learner's code now and wait for it (the window is closing)."""
        self._keep_code()
        return self.store.flush()
