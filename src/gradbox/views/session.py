"""The Qt side of a training session: a worker thread that owns the Trainer, and the
controller the widgets talk to.

Only the worker thread touches the `Trainer`. Widgets call the controller, which sends
commands (plain callables) to the worker through a queued signal; the worker answers
with immutable `Snapshot`s. A run is a zero-interval timer in the worker's thread that
does one step per tick, so a Pause or any other command is handled between two steps.
Snapshots are sent at most `EMIT_INTERVAL` apart while running, so a fast network does
not flood the UI thread with repaints it cannot show anyway.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from pyqtgraph.util.garbage_collector import GarbageCollector
from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal, Slot

from gradbox.training import Snapshot, StepRecord, Trainer, TrainingConfig, plan_config_change
from gradbox.views.plotting import edit_text

log = logging.getLogger(__name__)

EMIT_INTERVAL = 1 / 30  # seconds between snapshots while running: a display rate
_collector: GarbageCollector | None = None


def collect_garbage_on_the_ui_thread() -> None:
    """Run Python's cyclic collector only from the UI thread, on a timer.

    Left automatic, a collection starts in whichever thread allocates -- usually the
    training thread -- and may then destroy Qt objects of the UI thread from there,
    which can deadlock or crash Qt. pyqtgraph's GarbageCollector is made for exactly
    this. (The engine's own graphs never need it: they hold no cycles.)
    """
    global _collector
    if _collector is None:
        _collector = GarbageCollector(interval=0.5)
Command = Callable[[Trainer], Any]


class TrainingWorker(QObject):
    """Lives in the worker thread; runs commands and training steps on the Trainer."""

    snapshot_ready = Signal(object)
    running_changed = Signal(bool, int)  # (running, the run's number)
    stopped = Signal(str)
    failed = Signal(str, str)
    result_ready = Signal(object, object)  # (callback, result) for commands that return data

    def __init__(self, trainer: Trainer) -> None:
        super().__init__()
        self.trainer = trainer
        # Runs are numbered by the controller; a Pause cancels every run asked for up to
        # `paused_upto`, including one whose start is still queued behind a busy command
        # (an int written by the UI thread and read here: atomic under the GIL).
        self.paused_upto = 0
        self._run_number = 0
        self._timer: QTimer | None = None
        self._run_limit: int | None = None
        self._last_emit = 0.0
        self._steps_done = 0
        self.graph_wanted = False  # set from the UI thread; a bool write is atomic
        # Set by the UI thread once it has shown the last snapshot and had time to
        # breathe; while running, no new snapshot is sent before that (backpressure).
        self.ui_ready = threading.Event()
        self.ui_ready.set()
        # Cleared while the UI thread draws a snapshot: the worker waits rather than
        # compete for the GIL, so the drawing takes milliseconds, not a frame or ten.
        self.ui_drawn = threading.Event()
        self.ui_drawn.set()

    @Slot()
    def _create_timer(self) -> None:
        # Created here, in the worker thread, so its ticks run in that thread.
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._tick)

    def _emit(self) -> None:
        self._last_emit = time.perf_counter()
        self.ui_ready.clear()
        self.ui_drawn.clear()
        self.snapshot_ready.emit(self.trainer.snapshot())

    @Slot(object, object, bool)
    def execute(self, command: Command, callback: object = None, changes: bool = True) -> None:
        self.trainer.capture_graph = self.graph_wanted
        try:
            result = command(self.trainer)
        except Exception as error:  # a command's failure must not end the thread
            self._report(error)
            return
        if callback is not None:
            self.result_ready.emit(callback, result)
        if changes and not self.running:
            self._emit()

    @Slot(object)
    def replace_trainer(self, factory: Callable[[Trainer], Trainer]) -> None:
        try:
            self.trainer = factory(self.trainer)
        except Exception as error:  # the old trainer stays: nothing is lost
            self._report(error)
            return
        self._emit()

    @property
    def running(self) -> bool:
        return self._timer is not None and self._timer.isActive()

    @Slot(object, int)
    def start_run(self, limit: object = None, number: int = 0) -> None:
        if self._timer is None or self._timer.isActive():
            return
        if number <= self.paused_upto:
            # Paused before it could start: the last Pause wins. Say so, since the
            # button flipped to Pause when Run was pressed.
            self.running_changed.emit(False, number)
            return
        self._run_number = number
        self._run_limit = limit if isinstance(limit, int) else None
        self._steps_done = 0
        self._timer.start()
        self.running_changed.emit(True, number)

    def request_pause(self, upto: int) -> None:
        """Thread-safe: runs numbered up to `upto` stop before their next step, or never
        start."""
        self.paused_upto = max(self.paused_upto, upto)

    @Slot()
    def _tick(self) -> None:
        if self.paused_upto >= self._run_number or (self._run_limit is not None
                                     and self._steps_done >= self._run_limit):
            self._finish_run("")
            return
        self.ui_drawn.wait(0.25)  # bounded: a stuck UI must not stop training for good
        # Trace the graph only for the steps whose snapshot will be shown.
        due = (time.perf_counter() - self._last_emit >= EMIT_INTERVAL
               and self.ui_ready.is_set())
        self.trainer.capture_graph = self.graph_wanted and due
        try:
            record = self.trainer.step()
        except Exception as error:
            self._finish_run("")
            self._report(error)
            return
        self._steps_done += 1
        if record is None:
            self._finish_run(self.trainer.stop_reason)
            return
        if due:
            self._emit()

    def _finish_run(self, reason: str) -> None:
        assert self._timer is not None
        self._timer.stop()
        if self.graph_wanted:  # steps between shown snapshots were not traced
            self.trainer.capture_current_graph()
        self._emit()
        self.running_changed.emit(False, self._run_number)
        if reason:
            self.stopped.emit(reason)

    def _report(self, error: Exception) -> None:
        detail = "".join(traceback.format_exception(error))
        log.error("training command failed:\n%s", detail)
        self.failed.emit(str(error), detail)
        self._emit()


def _record_key(record: StepRecord) -> tuple[int, float, float]:
    """What tells one run's step from another's (same numbers: the same state)."""
    return record.step, record.loss, record.grad_norm


class SessionController(QObject):
    """What every widget holds: the latest snapshot, and methods that change the session."""

    snapshot_changed = Signal(object)
    running_changed = Signal(bool)
    message = Signal(str)
    error = Signal(str, str)
    stopped = Signal(str)
    sample_selected = Signal(int)
    parameter_selected = Signal(str)
    _command = Signal(object, object, bool)
    _start = Signal(object, int)
    _replace = Signal(object)

    def __init__(self, trainer: Trainer | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        collect_garbage_on_the_ui_thread()
        trainer = trainer or Trainer(TrainingConfig())
        self.snapshot: Snapshot = trainer.snapshot()
        self.running = False
        self._runs_asked = 0  # numbers the runs, so a Pause knows which runs it cancels
        self._paused_upto = 0
        self.selected_sample = 0
        self.selected_parameter = ""
        self._thread = QThread()
        self._thread.setObjectName("gradbox-training")
        self._worker = TrainingWorker(trainer)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker._create_timer)
        self._command.connect(self._worker.execute)
        self._start.connect(self._worker.start_run)
        self._replace.connect(self._worker.replace_trainer)
        self._worker.snapshot_ready.connect(self._on_snapshot)
        self._worker.running_changed.connect(self._on_running_changed)
        self._worker.stopped.connect(self._on_stopped)
        self._worker.failed.connect(self.error)
        self._worker.result_ready.connect(self._on_result)
        app = QCoreApplication.instance()
        if app is not None:
            # A QThread destroyed while running aborts the process: stop it on quit.
            app.aboutToQuit.connect(self.shutdown)
        self._thread.start()

    # --- plumbing ---------------------------------------------------------------------
    def call(self, command: Command, callback: Callable[[Any], None] | None = None) -> None:
        """Run `command(trainer)` in the worker thread; `callback(result)` back here.
        A new snapshot follows, since the command may have changed the session."""
        self._command.emit(command, callback, True)

    def query(self, question: Command, callback: Callable[[Any], None]) -> None:
        """Like `call` for a read-only `question`: no snapshot follows, nothing redraws."""
        self._command.emit(question, callback, False)

    @Slot(object, object)
    def _on_result(self, callback: Callable[[Any], None], result: Any) -> None:
        callback(result)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        started = time.perf_counter()
        self.snapshot = snapshot
        self.snapshot_changed.emit(snapshot)
        # A zero timer fires after the repaints this update caused, so `started` to then
        # is what showing one snapshot costs the UI thread.
        QTimer.singleShot(0, lambda: self._ready_after(started))

    def _ready_after(self, started: float) -> None:
        busy = time.perf_counter() - started
        self._worker.ui_drawn.set()
        if self.running:
            # Stay idle at least as long as the update took, so clicks, timers and
            # Pause get half the UI thread however heavy the views are.
            QTimer.singleShot(int(1000 * max(EMIT_INTERVAL, busy)), self._worker.ui_ready.set)
        else:
            self._worker.ui_ready.set()

    @Slot(bool, int)
    def _on_running_changed(self, running: bool, number: int) -> None:
        # Only the newest run asked for has a say, and a run already paused here
        # cannot turn the button back to Pause on its way out.
        if number != self._runs_asked or (running and number <= self._paused_upto):
            return
        self._set_running(running)

    def _set_running(self, running: bool) -> None:
        if running != self.running:
            self.running = running
            self.running_changed.emit(running)

    @Slot(str)
    def _on_stopped(self, reason: str) -> None:
        self.message.emit(reason)
        self.stopped.emit(reason)

    def stopped_trainer(self) -> Trainer:
        """The trainer itself, for the UI thread to read once `shutdown()` has returned."""
        if self._thread.isRunning():
            raise RuntimeError("the training thread still owns the trainer")
        return self._worker.trainer

    def set_graph_wanted(self, wanted: bool) -> None:
        """A graph view is showing: capture the graph with each shown step (costs time)."""
        self._worker.graph_wanted = wanted
        if wanted:
            self.call(lambda t: t.capture_current_graph())

    def shutdown(self) -> None:
        """Stop the worker thread (after the step it may be running). Safe to call twice."""
        self._worker.request_pause(self._runs_asked + 1)
        self._worker.ui_drawn.set()
        self._thread.quit()
        self._thread.wait()

    # --- training ----------------------------------------------------------------------
    def step(self) -> None:
        if not self.running:
            self.call(lambda t: self._checked_step(t))

    def _checked_step(self, trainer: Trainer) -> None:
        if trainer.step() is None:
            self._worker.stopped.emit(trainer.stop_reason)

    def substep(self) -> None:
        if not self.running:
            self.call(self._checked_substep)

    def _checked_substep(self, trainer: Trainer) -> None:
        trainer.substep()
        if trainer.stop_reason:
            self._worker.stopped.emit(trainer.stop_reason)

    def run(self, steps: int | None = None) -> None:
        if not self.running or self.pausing:
            self._runs_asked += 1
            self._set_running(True)  # the button flips now, not when the worker answers
            self._start.emit(steps, self._runs_asked)

    def pause(self) -> None:
        """Stop the run, or the run asked for but not started yet: the last Pause wins.
        `running` turns False when the worker has stopped (after its last snapshot)."""
        self._paused_upto = self._runs_asked
        self._worker.request_pause(self._paused_upto)

    @property
    def pausing(self) -> bool:
        """Pause was pressed after the newest Run; the worker may not have stopped yet."""
        return self._paused_upto == self._runs_asked

    def toggle_run(self) -> None:
        if self.running and not self.pausing:
            self.pause()
        else:
            self.run()

    def reset(self) -> None:
        self.call(lambda t: t.reset())
        self.message.emit("Reset to the same initial weights")

    def reinitialize(self) -> None:
        self.call(lambda t: t.reinitialize())
        self.message.emit("Re-initialized with new random weights")

    def rewind(self, step: int) -> None:
        """Go back to `step` of the run on screen. The request is checked against the
        trainer it reaches: a Reset or a new run queued before it has made `step` mean
        something else (or nothing), and then it is dropped with a note."""
        seen = self.snapshot.history
        mark = _record_key(seen[step - 1]) if 0 < step <= len(seen) else None

        def checked(trainer: Trainer) -> None:
            history = trainer.history
            if step > len(history) or (mark is not None
                                       and _record_key(history[step - 1]) != mark):
                self.message.emit(f"Not rewound to step {step}: the run changed before "
                                  "the request arrived")
                return
            trainer.rewind(step)
        self.call(checked)

    def set_forget_zero_grad(self, on: bool) -> None:
        self.call(lambda t: t.set_forget_zero_grad(on))

    def set_ghost(self, on: bool) -> None:
        self.call(lambda t: t.set_ghost(on))

    def set_parameter(self, name: str, value: float) -> None:
        """A weight typed in by hand; the views re-render from the next snapshot."""
        def edit(trainer: Trainer) -> None:
            change = trainer.set_parameter(name, value)
            self.message.emit(f"{edit_text(change)} (after step {change.step}; "
                              "rewind past it to undo)")
        self.call(edit)

    def set_lr(self, lr: float) -> None:
        self.call(lambda t: t.set_lr(lr))

    def replace_trainer(self, factory: Callable[[Trainer], Trainer], message: str = "") -> None:
        """Swap in `factory(old_trainer)`; if the factory raises, the old one stays."""
        self._replace.emit(factory)
        if message:
            self.message.emit(message)

    def apply_config(self, config: TrainingConfig) -> None:
        """Use a new configuration, keeping whatever it does not change (the core's
        `plan_config_change` decides: a new rate from the next step, a restart from the
        same initial weights, a new model, or new data)."""
        change = plan_config_change(self.snapshot.config, config)
        if change.kind == "none":
            return
        if change.kind == "lr":
            self.set_lr(config.lr)
            self.message.emit(change.message)
            return
        self.replace_trainer(lambda trainer: trainer.with_config(config), change.message)

    def add_point(self, x: float, y: float, label: int, test: bool = False) -> None:
        def edit(trainer: Trainer) -> None:
            dataset = trainer.dataset.copy()
            dataset.add_point(x, y, label, test)
            trainer.replace_dataset(dataset)
        self.call(edit)

    def remove_point(self, x: float, y: float) -> None:
        def edit(trainer: Trainer) -> None:
            dataset = trainer.dataset.copy()
            if dataset.remove_nearest(x, y) >= 0:
                trainer.replace_dataset(dataset)
        self.call(edit)

    # --- selection (UI-side state shared by the views) -----------------------------------
    def select_sample(self, index: int) -> None:
        self.selected_sample = index
        self.sample_selected.emit(index)

    def select_parameter(self, name: str) -> None:
        if name != self.selected_parameter:
            self.selected_parameter = name
            self.parameter_selected.emit(name)
