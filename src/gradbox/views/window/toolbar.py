"""The training toolbar: Step, Sub-step, Run/Pause with its speed and goal, Reset; and a
second row (`timeline_bar`) with the broken switches, the step counter and the timeline."""

from __future__ import annotations

import time

import qtawesome
from PySide6.QtCore import QEvent, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QIcon, QKeySequence, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QLabel,
    QProxyStyle,
    QSizePolicy,
    QSlider,
    QStyle,
    QStyleHintReturn,
    QStyleOption,
    QStyleOptionComplex,
    QToolBar,
    QWidget,
)

from gradbox.autograd.phases import Phase
from gradbox.port.protocol import SessionPort
from gradbox.teaching.loop_code import phase_done, phase_summary
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.views.label_holder import LabelHolder
from gradbox.views.palette import ALARM, ALARM_ON_DARK, NEXT_ON_DARK
from gradbox.views.window.run_controls import RunControls

# Icon-font names (qtawesome): Font Awesome 5 solid and Material Design Icons 6.
ICONS = {"step": "fa5s.step-forward", "substep": "mdi6.debug-step-into", "run": "fa5s.play",
         "pause": "fa5s.pause", "reset": "mdi6.restore", "reinit": "mdi6.dice-5",
         "close": "fa5s.times"}


def icon(name: str) -> QIcon:
    """The icon in navy on a light window, in a light blue on a dark theme's (the navy
    all but vanished there: contrast 1.1)."""
    app = QApplication.instance()
    dark = (isinstance(app, QApplication)
            and app.palette().color(QPalette.ColorRole.Window).lightness() < 128)
    return qtawesome.icon(ICONS[name], color=NEXT_ON_DARK if dark else "#1f3f66")


def _action(parent: QWidget, text: str, tip: str, shortcut: str | None = None,
            icon_name: str = "") -> QAction:
    action = QAction(icon(icon_name), text, parent) if icon_name else QAction(text, parent)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
        tip = f"{tip} ({QKeySequence(shortcut).toString(QKeySequence.NativeText)})"
    action.setToolTip(tip)
    action.setStatusTip(tip)
    return action



# A step under way this long shows a busy sign (shorter ones would only flicker it).
BUSY_AFTER_S = 0.3
BUSY_FRAME_MS = 100
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class JumpToClickStyle(QProxyStyle):
    """A slider that goes where its groove is clicked, as a desktop timeline does, and
    that shows when it has the keyboard's focus (Fusion draws no mark on a slider: ← and
    → moved a timeline nothing said was focused)."""

    def drawComplexControl(self, control: QStyle.ComplexControl,  # noqa: N802 (Qt's name)
                           option: QStyleOptionComplex, painter: QPainter,
                           widget: QWidget | None = None) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if (control == QStyle.ComplexControl.CC_Slider
                and option.state & QStyle.StateFlag.State_HasFocus):
            painter.save()
            painter.setPen(QPen(option.palette.highlight().color(), 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRoundedRect(option.rect.adjusted(1, 1, -1, -1), 3, 3)
            painter.restore()

    def styleHint(self, hint: QStyle.StyleHint, option: QStyleOption | None = None,  # noqa: N802
                  widget: QWidget | None = None,
                  returned: QStyleHintReturn | None = None) -> int:
        if hint == QStyle.StyleHint.SH_Slider_AbsoluteSetButtons:
            return int(Qt.MouseButton.LeftButton.value)
        return super().styleHint(hint, option, widget, returned)

class TrainingToolbar(QToolBar):
    """Drives the session; every action is also offered in the main window's menus."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__("Training", parent)
        self.setObjectName("training_toolbar")
        self.controller = controller
        self.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)

        self.step_action = _action(self, "Step", "Run one training iteration: forward, "
                                   "zero_grad, backward, update", "Space", "step")
        self.substep_action = _action(self, "Sub-step", "Run only the next phase of the "
                                      "iteration, so you can stop between them", "N", "substep")
        self.run_action = _action(self, "Run", "Train at the chosen speed until paused or the "
                                  "chosen goal is reached", "R", "run")
        self.run_action.setCheckable(True)
        self._run_tip = self.run_action.toolTip()
        self.reset_action = _action(self, "Reset", "Back to step 0 with the same initial "
                                    "weights", "Ctrl+Shift+R", "reset")
        self.reinit_action = _action(self, "Re-initialize", "Back to step 0 with new random "
                                     "initial weights", "Ctrl+I", "reinit")
        for action in (self.step_action, self.substep_action, self.run_action):
            self.addAction(action)
        self._hold_run_width()
        self.run_controls = RunControls(controller)
        self.addWidget(self.run_controls)
        self.phase_label = QLabel()
        self.phase_label.setAccessibleName("Phase just run and next phase")
        # A toolbar shows or hides a widget through the action that holds it.
        self.phase_action = self.addWidget(self.phase_label)
        self.addSeparator()
        self.addAction(self.reset_action)
        self.addAction(self.reinit_action)
        self.addSeparator()

        self.forget_zero_grad = QCheckBox("Forget zero_grad")
        self.forget_zero_grad.setAccessibleName("Forget zero_grad")
        self.forget_zero_grad.setToolTip(
            "Break the machine on purpose: skip zero_grad, so each step's gradients are "
            "added to the last ones and pile up. Turns the ghost run on, from this step (F)")
        self._style_forget()
        self.ghost = QCheckBox("Ghost run")
        self.ghost.setAccessibleName("Ghost run")
        self.ghost.setToolTip("Also train a copy correctly on the same batches, and show its "
                              "loss and gradients beside the broken run (G)")
        # Keys of their own, like Step's and Run's: the switches a lesson flips (the
        # Training menu holds them). Kept in step with the boxes here, where the run
        # sets the boxes too.
        self.forget_action = self._switch_action(self.forget_zero_grad, "F")
        self.ghost_action = self._switch_action(self.ghost, "G")
        # The second row: the switches, where the run stands, and the timeline, which
        # gets the rest of the width (a step per pixel or so on a wide window).
        self.timeline_bar = QToolBar("Timeline", parent)
        self.timeline_bar.setObjectName("timeline_toolbar")
        self.timeline_bar.addWidget(self.forget_zero_grad)
        self.timeline_bar.addWidget(self.ghost)
        self.timeline_bar.addSeparator()

        self.counter = QLabel()
        self.counter.setAccessibleName("Step counter")
        self.counter.setToolTip("Steps trained so far, and steps per second while running")
        self.counter.setMinimumWidth(130)
        # Held: its text changes at every frame of a run, and must not lay out the window.
        self.timeline_bar.addWidget(LabelHolder(self.counter))
        # A step that takes longer than a moment says so while it is computed: a 3 s step
        # (23 layers x 100,000 points) showed nothing at all until its snapshot came.
        self._busy_since: tuple[float, int] | None = None  # (when, the step on screen)
        self._busy_timer = QTimer(self)
        self._busy_timer.setInterval(BUSY_FRAME_MS)
        self._busy_timer.timeout.connect(self._show_busy)
        self._busy_timer.start()
        self.timeline = QSlider(Qt.Horizontal)
        self.timeline.setAccessibleName("Timeline")
        self.timeline.setToolTip("Drag back to see any earlier step; the later steps stay "
                                 "(faded in the loss curve) and dragging forward brings them "
                                 "back exactly. A step taken from the earlier point replaces "
                                 "them (Edit → Undo brings them back)")
        self.timeline.setMinimumWidth(160)
        self.timeline.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.timeline.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.timeline.setRange(0, 0)
        # A click on the groove jumps there (it moved a page of 10 steps); the style is
        # kept referenced here, since a widget does not own the style it is given. No base
        # style is passed: a QProxyStyle owns its base, and given the application's own it
        # deleted it a second time at exit (every quit ended in a segfault).
        self._jump_style = JumpToClickStyle()
        self.timeline.setStyle(self._jump_style)
        self.timeline_bar.addWidget(self.timeline)

        self.step_action.triggered.connect(controller.step)
        self.substep_action.triggered.connect(controller.substep)
        self.run_action.triggered.connect(self._on_run_triggered)
        self.reset_action.triggered.connect(lambda: controller.send(Session.reset))
        self.reinit_action.triggered.connect(lambda: controller.send(Session.reinitialize))
        self.forget_zero_grad.toggled.connect(
            lambda on: controller.send(Session.set_forget_zero_grad, on))
        self.forget_zero_grad.toggled.connect(self._on_forget_toggled)
        self.ghost.toggled.connect(lambda on: controller.send(Session.set_ghost, on))
        self.timeline.sliderReleased.connect(self._on_timeline_released)
        self.timeline.actionTriggered.connect(self._on_timeline_action)
        controller.snapshot_changed.connect(self._on_snapshot)
        controller.running_changed.connect(self._on_running_changed)
        controller.pause_requested.connect(self._on_pause_requested)
        self._rate_start: tuple[float, int] | None = None
        self._steps_per_second = 0.0
        self._on_snapshot(controller.snapshot)

    def _hold_run_width(self) -> None:
        """Run, Pause and Pausing… take one width: the toolbar shifted each time the
        button's word changed."""
        button = self.widgetForAction(self.run_action)
        if button is None:
            return
        text = self.run_action.text()
        widths = []
        for word in ("Run", "Pause", "Pausing…"):
            self.run_action.setText(word)
            widths.append(button.sizeHint().width())
        self.run_action.setText(text)
        button.setMinimumWidth(max(widths))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # teacher mode: other widths
            self._hold_run_width()
        if event.type() == QEvent.Type.PaletteChange:  # a light or dark theme's icons
            self._style_forget()
            for action, name in ((self.step_action, "step"), (self.substep_action, "substep"),
                                 (self.reset_action, "reset"), (self.reinit_action, "reinit")):
                action.setIcon(icon(name))
            self.run_action.setIcon(icon("pause" if self.run_action.isChecked() else "run"))

    @Slot(bool)
    def _on_run_triggered(self, checked: bool) -> None:
        if checked:
            self.controller.run()
        else:
            self.controller.pause()

    @Slot(bool)
    def _on_forget_toggled(self, on: bool) -> None:
        # The damage is seen beside a correct run: the ghost starts with it, from this
        # very step (unticking it again is allowed).
        if on and not self.ghost.isChecked():
            self.ghost.setChecked(True)

    @Slot(bool)
    def _on_running_changed(self, running: bool) -> None:
        self.run_action.setChecked(running)
        self.run_action.setText("Pause" if running else "Run")
        self.run_action.setToolTip(self._run_tip)
        self.run_action.setIcon(icon("pause" if running else "run"))
        for action in (self.step_action, self.substep_action, self.reset_action,
                       self.reinit_action):
            action.setEnabled(not running)
        self.timeline.setEnabled(not running)
        snapshot = self.controller.snapshot
        self._rate_start = (time.perf_counter(), snapshot.step) if running else None
        self._steps_per_second = 0.0
        self._show_counter(snapshot)

    @Slot()
    def _on_pause_requested(self) -> None:
        """Pause answers at once, before the training process has said it stopped (a
        button that still says Pause would look like the click was lost). Pressing it
        again runs on."""
        self.run_action.setChecked(False)
        self.run_action.setText("Pausing…")
        self.run_action.setIcon(icon("run"))
        # The training process leaves the step under way and puts its start back.
        self.run_action.setToolTip("Pausing: the step being computed is dropped and its "
                                   "start shown (click to run on instead)")

    @Slot()
    def _on_timeline_released(self) -> None:
        if self.timeline.value() != self.controller.snapshot.step:
            self.controller.rewind(self.timeline.value())

    @Slot(int)
    def _on_timeline_action(self, action: int) -> None:
        # Keyboard and page clicks (not drags) rewind as soon as they land.
        if not self.timeline.isSliderDown() and action != QSlider.SliderMove:
            self.timeline.setValue(self.timeline.sliderPosition())
            self._on_timeline_released()

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        phase, done = snapshot.phase, phase_done(snapshot)
        done_text, next_text = phase_summary(snapshot)
        # Two short lines: narrow enough for a full toolbar at 1024 px.
        self.phase_label.setText(f"{done_text}<br><b>{next_text}</b>")
        # Room for the longest line, or a full toolbar cuts "(skipped)" off.
        self.phase_label.setMinimumWidth(self.phase_label.sizeHint().width())
        self.phase_label.setToolTip(
            (f"Just ran {Phase(done).what}" if done else "No phase has run yet")
            + f"\nThe next Sub-step runs {Phase(phase).what}")
        if self._rate_start is not None:
            start_time, start_step = self._rate_start
            elapsed = time.perf_counter() - start_time
            if elapsed > 0.2:
                self._steps_per_second = (snapshot.step - start_step) / elapsed
        self._show_counter(snapshot)
        if not self.timeline.isSliderDown():
            # Moved back, the timeline still reaches the run's end: later steps are kept.
            ahead = self.controller.ahead
            self.timeline.blockSignals(True)
            self.timeline.setRange(0, max(snapshot.step, len(ahead) if ahead else 0))
            self.timeline.setValue(snapshot.step)
            self.timeline.blockSignals(False)
        for box, action, value in (
                (self.forget_zero_grad, self.forget_action, snapshot.forget_zero_grad),
                (self.ghost, self.ghost_action, snapshot.ghost)):
            # The run's state, shown without sending it back; the menu's switch with it
            # (left behind, it thought a lesson's ticked box was off, and its key F
            # ticked it again: a first press did nothing).
            for switch in (box, action):
                if switch.isChecked() != value:
                    switch.blockSignals(True)
                    switch.setChecked(value)
                    switch.blockSignals(False)

    def _style_forget(self) -> None:
        """The broken switch in the warning red; the light red on a dark theme, where the
        red was too dark to read (contrast 2.2)."""
        if not hasattr(self, "forget_zero_grad"):
            return  # (a palette change before the switch is made)
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        colour = ALARM_ON_DARK if dark else ALARM
        self.forget_zero_grad.setStyleSheet(
            f"QCheckBox {{ font-weight: bold; color: {colour}; padding: 2px 6px; }}")

    def _switch_action(self, box: QCheckBox, key: str) -> QAction:
        action = QAction(box.text(), self, checkable=True)
        action.setShortcut(QKeySequence(key))
        action.setToolTip(box.toolTip())
        action.toggled.connect(box.setChecked)
        box.toggled.connect(action.setChecked)
        return action

    @Slot()
    def _show_busy(self) -> None:
        """"⠹ computing step N…" once one step has been under way BUSY_AFTER_S; the
        snapshot's arrival puts the counter back."""
        port = self.controller
        step = port.snapshot.step
        if not port.stepping:
            if self._busy_since is not None:
                self._busy_since = None
                self._show_counter(port.snapshot)
            return
        now = time.perf_counter()
        if self._busy_since is None or self._busy_since[1] != step:
            self._busy_since = (now, step)  # a new step (a fast Run's next one)
            return
        waited = now - self._busy_since[0]
        if waited >= BUSY_AFTER_S:
            spinner = SPINNER[int(waited * 1000 / BUSY_FRAME_MS) % len(SPINNER)]
            self.counter.setText(f"{spinner} computing step {step + 1}…")

    def _show_counter(self, snapshot: Snapshot) -> None:
        text = f"step {snapshot.step}"
        if self.controller.running and self._steps_per_second:
            text += f"  ·  {self._steps_per_second:.0f} steps/s"
        self.counter.setText(text)
