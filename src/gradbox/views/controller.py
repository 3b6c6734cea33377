"""The Qt side of a training session: the controller the widgets talk to, driving a
training process (gradbox.runner) through a `ProcessLink`.

Widgets call the controller's methods, which send the session's named commands
(`gradbox.training.session`: a name and plain-data arguments) to the training process;
it answers with immutable `Snapshot`s whose arrays are views of shared memory, and a
question's answer comes back to a callback. No trainer lives in this process.

Frames. The controller's `FramePacer` (gradbox.views.frame_pacer) draws them: a
snapshot that arrives is offered to it, and drawn at once if the last frame is a frame
old (a single Step shows without waiting for a tick), else when it is. While running,
the window asks the training process for the next snapshot once it has drawn one
(`want_snapshot`): the training process makes one per frame at most and never waits for
the window.

Process, not thread -- measured with benchmarks/bench_app.py and bench_process.py. With
a training thread, the UI thread and training took turns at one interpreter lock: W1
trained at 0.45-0.58x the bare step rate on the boundary and graph tabs (parked while a
frame drew, by design), the longest stalls were 59-64 ms, Step -> shown 28-33 ms, and
a 1000x1000 network's Pause waited 2.3 s for a phase. In a process, training has its own
lock and core, Pause abandons the step under way (SIGUSR1), a crash or an out-of-memory
kill in training leaves the window up, and the snapshots cross through shared memory:
a 1000x1000 snapshot costs the window 0.6 ms of CPU against 64 ms pickled (0.01x), W1's
traced graph 0.8 ms against 5.5 ms. A training process starts in 0.25 s (forkserver).

Garbage. Python's cyclic collector runs only on the UI thread, on a timer: left
automatic, a collection may start in another thread (the session writer's, the
landscape's) and destroy Qt objects of the UI thread from there.
"""

from __future__ import annotations

import gc
import glob
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot
from threadpoolctl import threadpool_limits

from gradbox.runner.process import CommandError
from gradbox.runner.shared import SHM_FOLDER
from gradbox.runner.wire import LazyAnswer
from gradbox.training.config import TrainingConfig, plan_config_change
from gradbox.training.datasets import Dataset
from gradbox.training.goals import RunGoal
from gradbox.training.history import History
from gradbox.training.session import Session, record_key
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer
from gradbox.views.frame_pacer import FramePacer
from gradbox.views.process_link import ProcessLink

log = logging.getLogger(__name__)

START_PATIENCE_S = 120.0  # a big network takes this long at most to be built
QUIT_PATIENCE_S = 30.0  # the whole run is fetched at quit: a big one takes a while
_collector: QTimer | None = None


def collect_garbage_on_the_ui_thread() -> None:
    """Run Python's cyclic collector only from the UI thread, on a timer (see above)."""
    global _collector
    if _collector is None:
        gc.disable()
        _collector = QTimer()
        _collector.setInterval(500)
        _collector.timeout.connect(_collect_young)
        _collector.start()


def _collect_young() -> None:
    threshold0, threshold1, threshold2 = gc.get_threshold()
    young, middle, old = gc.get_count()
    if young <= threshold0:
        return
    gc.collect(0)
    if middle > threshold1:
        gc.collect(1)
        if old > threshold2:
            gc.collect(2)


def leave_cores_for_the_threads() -> None:
    """Cap numpy's BLAS threads in the window's process at one per core beyond two, and
    have Qt paint on the UI thread alone. (The training process keeps its own threads.)

    OpenBLAS starts a thread per core and keeps them spinning after each product: on two
    cores they took turns with the UI thread and training, and the heat map's small
    products (10,000 x 16 x 16) took 4.8 ms a frame, 13 ms at worst, under load; with one
    BLAS thread 2.4 and 4.2 ms.

    Qt's raster engine splits a large fill (a scaled heat map, an antialiased axis, a
    scroll bar's groove) over a pool of threads and waits for them: on two cores shared
    with training they were seldom free, and a repaint of the whole W1 window took
    6.8-11 ms of wall time and 7-8 ms of the process's CPU; painted by the UI thread
    alone, 2.7-5.1 ms and 2.6-3.3 ms (load ~4). Qt reads QT_NO_GUI_THREADPOOL at its
    first large fill: this runs before the window paints.
    """
    threadpool_limits(limits=max(1, (os.cpu_count() or 1) - 2), user_api="blas")
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def freeze_what_lives_now() -> None:
    """Once the window is up: collect, then put every object alive into the collector's
    permanent generation. The app's ~100,000 long-lived objects (modules, widgets, plot
    items) were scanned again by each full collection, which took 50 ms on the UI thread
    about once a minute; frozen, a full collection scans only what came later. (What is
    frozen and later becomes cyclic garbage stays: they live as long as the app.)"""
    gc.collect()
    gc.freeze()


def _start_of(source: Trainer | Session | TrainingState | TrainingConfig | None,
              ) -> TrainingState | TrainingConfig:
    """What a training process starts from: a run's whole state, or a configuration."""
    if isinstance(source, Session):
        source = source.trainer
    if isinstance(source, Trainer):
        return source.state()
    return source if source is not None else TrainingConfig()


class _FinalRun:
    """The run as the training process had it when the window shut down: what a save on
    quit writes (the shape of `Timeline.whole_run`)."""

    def __init__(self, state: TrainingState, position: int | None) -> None:
        self._run = (state, position)

    def whole_run(self) -> tuple[TrainingState, int | None]:
        return self._run


class SessionController(QObject):
    """What every widget holds: the latest snapshot, and methods that change the session."""

    snapshot_changed = Signal(object)
    running_changed = Signal(bool)
    # Pause was pressed during a run: the training process abandons the step under way,
    # then running_changed(False) follows.
    pause_requested = Signal()
    message = Signal(str)
    error = Signal(str, str)
    stopped = Signal(str)
    sample_selected = Signal(int)
    parameter_selected = Signal(str)
    undo_changed = Signal(str, str)  # what Undo and Redo would do ('' for nothing)
    # The training process ended unasked (killed, out of memory, a crash), in words; the
    # window offers `continue_training()`.
    training_died = Signal(str)

    def __init__(self, trainer: Trainer | Session | TrainingState | TrainingConfig | None
                 = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        collect_garbage_on_the_ui_thread()
        leave_cores_for_the_threads()
        self.running = False
        self._runs_asked = 0  # numbers the runs, so a Pause knows which runs it cancels
        self._paused_upto = 0
        self.goal = RunGoal()  # when a Run stops by itself; set by the window's controls
        self.speed: float | None = None  # steps per second; the toolbar sets a watchable one
        self.selected_sample = 0
        self.selected_parameter = ""
        self.graph_wanted = False
        # The whole run's record while the timeline is moved back (later steps faded).
        self.ahead: History | None = None
        self.undo_text = self.redo_text = ""
        self.died = ""  # why the training process ended unasked ('' while it lives)
        self._callbacks: dict[int, Callable[[Any], None]] = {}
        # Who hears a command's failure instead of the window's "Something went wrong".
        self._failures: dict[int, Callable[[str], None]] = {}
        self._rewinding_to: int | None = None  # a rewind sent, its snapshot not yet here
        self._final: _FinalRun | None = None
        self._link = self._start(_start_of(trainer))
        latest = self._link.latest
        assert latest is not None
        self.snapshot: Snapshot = latest  # the one the views were last given
        # Draws the frames; views that want fewer snapshots than every frame, or work
        # off the UI thread, subscribe there (rate tiers).
        self.pacer = FramePacer(self)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def whole_run_written(self, answer: LazyAnswer, path: Path, step: int) -> None:
        """The whole run `answer` brought (at `step`) is in session file `path`: the
        window keeps no copy of it (a death continues from the file)."""
        self._link.process.whole_state_written(answer, str(path), step)

    def _start(self, start: TrainingState | TrainingConfig | str) -> ProcessLink:
        """A training process for `start`, its first snapshot in hand. Raises what
        building the run raised (a configuration too big for memory, ...)."""
        link = ProcessLink(start, self)
        try:
            link.process.wait_for_snapshot(START_PATIENCE_S)
        except (CommandError, TimeoutError):
            link.close()
            raise
        link.snapshot_arrived.connect(self._on_snapshot_arrived)
        link.replied.connect(self._on_replied)
        link.failed.connect(self._on_failed)
        link.running_changed.connect(self._on_running_changed)
        link.stopped.connect(self._on_stopped)
        link.note.connect(self.message)
        link.died.connect(self._on_died)
        if self.graph_wanted:
            link.process.set_graph_wanted(True)
        if self.speed is not None:
            link.set_speed(_interval(self.speed))
        return link

    # --- plumbing ---------------------------------------------------------------------
    def command(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Send the session's command `name` (gradbox.training.session: plain-data
        arguments) to the training process; a new snapshot follows a change."""
        self._link.call(name, *args, **kwargs)

    def ask_lazily(self, name: str, *args: Any, callback: Callable[[Any], None],
                   **kwargs: Any) -> None:
        """As `ask`, for a large answer (a whole run, for a save): `callback` gets a
        `LazyAnswer` whose `load()` unpickles it -- on the thread that writes the file,
        not this one (a 1000x1000 network's run is tens of megabytes)."""
        self._callbacks[self._link.process.call_lazily(name, *args, **kwargs)] = callback

    def ask(self, name: str, *args: Any, callback: Callable[[Any], None], **kwargs: Any,
            ) -> None:
        """Ask the session's question `name`; `callback(answer)` is called back here, on
        the UI thread. Nothing changes, nothing is redrawn."""
        self._callbacks[self._link.call(name, *args, **kwargs)] = callback

    def move_timeline(self, step: int) -> None:
        """Move the timeline to `step` of whatever run it holds when the request arrives
        (`rewind` checks the request against the run on screen; a run just opened is not
        on screen yet)."""
        self.command("rewind", step, None)

    def stopped_timeline(self) -> _FinalRun:
        """The run as it was when `shutdown()` stopped the training process."""
        if self._final is None:
            raise RuntimeError("the training process is still running, or it died")
        return self._final

    def _show_timeline(self, ahead: History | None, undo: str, redo: str) -> None:
        self.ahead = ahead
        if (undo, redo) != (self.undo_text, self.redo_text):
            self.undo_text, self.redo_text = undo, redo
            self.undo_changed.emit(undo, redo)

    @Slot(int, object)
    def _on_replied(self, number: int, result: Any) -> None:
        self._failures.pop(number, None)
        callback = self._callbacks.pop(number, None)
        if callback is not None:
            callback(result)

    @Slot(int, str, str)
    def _on_failed(self, number: int, text: str, detail: str) -> None:
        self._callbacks.pop(number, None)
        failure = self._failures.pop(number, None)
        if failure is not None:
            failure(text)
        else:
            self.error.emit(text, detail)

    # --- frames -----------------------------------------------------------------------
    @Slot(object)
    def _on_snapshot_arrived(self, snapshot: Snapshot) -> None:
        if snapshot is self.snapshot:
            return  # the first one, shown already
        self._rewinding_to = None
        self.pacer.offer(snapshot, self._link.process.timeline)

    def present(self, snapshot: Snapshot, timeline: tuple[Any, str, str]) -> None:
        """A frame (the pacer's): `snapshot` becomes the one on screen."""
        self.snapshot = snapshot
        self._show_timeline(*timeline)
        self.snapshot_changed.emit(snapshot)

    def frame_drawn(self) -> None:
        """A frame is over: while running, the training process may publish the next."""
        if self.running:
            self._link.want_snapshot()

    @property
    def frames(self) -> int:
        """Frames drawn so far: each hands one snapshot to every view."""
        return self.pacer.frames

    @Slot(bool, int)
    def _on_running_changed(self, running: bool, number: int) -> None:
        # Only the newest run asked for has a say, and a run already paused here
        # cannot turn the button back to Pause on its way out.
        if number != self._runs_asked or (running and number <= self._paused_upto):
            return
        if running:
            self._set_running(True)
            self._link.want_snapshot()
            return
        # The run's last snapshot is shown before anyone hears that it stopped.
        self.pacer.flush_then(lambda: self._stop_running(number))

    def _stop_running(self, number: int) -> None:
        if number == self._runs_asked:  # (a newer run asked for meanwhile has the say)
            self._set_running(False)

    def _set_running(self, running: bool) -> None:
        if running != self.running:
            self.running = running
            self.running_changed.emit(running)

    @Slot(str)
    def _on_stopped(self, reason: str) -> None:
        # As for running_changed: the stop is heard with the run's last snapshot on
        # screen (heard within a frame's own event pass, the window's alert took the
        # frame's older step for the step it paused at, and said 'Still diverging').
        # Said once, by whoever shows `stopped` (the window's alert), not also as a message.
        self.pacer.flush_then(lambda: self.stopped.emit(reason))

    # --- a training process that died ----------------------------------------------------
    @Slot(str)
    def _on_died(self, text: str) -> None:
        self._callbacks.clear()
        self._failures.clear()
        self._set_running(False)
        step, kept = self._link.process.last_step, self._link.process.last_start
        where = (f"from step {step}, as saved in {Path(kept).name}" if isinstance(kept, str)
                 else f"from step {step}, the last whole state this window holds (the "
                 "autosave has it too)" if step is not None else
                 "from step 0 of the same settings (no whole state of the run had reached "
                 "this window yet)")
        self.died = (f"{text} The window keeps what it showed (step {self.snapshot.step}); "
                     f"training can continue {where}.")
        log.error("%s", self.died)
        self.training_died.emit(self.died)

    def continue_training(self) -> None:
        """After the training process died: a new one, from the last whole state this
        window holds or the session file it went into (else step 0 of the same
        settings)."""
        old = self._link
        last = old.process.last_start
        start: TrainingState | TrainingConfig | str = (
            last if last is not None else self.snapshot.config)
        old.close()
        old.setParent(None)
        self._link = self._start(start)
        self.died = ""
        latest = self._link.latest
        assert latest is not None
        self.pacer.offer(latest, self._link.process.timeline)
        self.message.emit(f"Training continues from step {latest.step}")

    @property
    def training_pid(self) -> int:
        """The training process's id (tests stop and kill it)."""
        return int(self._link.process.pid or 0)

    def shared_memory_left(self) -> list[str]:
        """The names this window's training process has in /dev/shm now (none once it
        has been shut down)."""
        prefix = self._link.process.prefix
        return sorted(os.path.basename(p) for p in
                      glob.glob(os.path.join(SHM_FOLDER, glob.escape(prefix) + "*")))

    @property
    def newest(self) -> Snapshot:
        """The newest snapshot received from the training process (drawn at the next
        frame if it is not `snapshot` yet)."""
        latest = self._link.latest
        return latest if latest is not None else self.snapshot

    @property
    def stepping(self) -> bool:
        """A step (or a big network's phase) is under way in the training process."""
        return self._link.process.stepping

    # --- the end -------------------------------------------------------------------------
    def set_graph_wanted(self, wanted: bool) -> None:
        """A graph view is showing: capture the graph with each shown step (costs time)."""
        self.graph_wanted = wanted
        self._link.process.set_graph_wanted(wanted)

    def shutdown(self) -> None:
        """Stop the training process, keeping the whole run for a save on quit
        (`stopped_timeline`). Safe to call twice."""
        self.pacer.shutdown()
        if self._link.alive and self._final is None:
            self._link.pause(self._runs_asked + 1)
            try:
                state, position, _snapshot = self._link.process.request(
                    "whole_run", timeout=QUIT_PATIENCE_S)
                self._final = _FinalRun(state, position)
            except (CommandError, TimeoutError) as error:
                log.error("the run could not be fetched at quit: %s", error)
        self._link.close()
        self._link.setParent(None)  # gone with Python's reference, not in Qt's teardown

    # --- training ----------------------------------------------------------------------
    def step(self) -> None:
        if not self.running:
            self.command("step")

    def substep(self) -> None:
        if not self.running:
            self.command("substep")

    def run(self, goal: RunGoal | int | None = None) -> None:
        """Train until paused, or until `goal` (a RunGoal, or a number of steps; by
        default the goal chosen in the window, `self.goal`) is reached."""
        if isinstance(goal, int):
            goal = RunGoal(steps=goal)
        if not self.running or self.pausing:
            self._runs_asked += 1
            self._set_running(True)  # the button flips now, not when training answers
            self._link.run(self._runs_asked, goal or self.goal,
                           _interval(self.speed) / 1000)

    def set_speed(self, steps_per_second: float | None) -> None:
        """Steps per second a Run takes (None: as fast as it can); applies at once."""
        self.speed = steps_per_second
        self._link.set_speed(_interval(steps_per_second) / 1000)

    @property
    def interval_ms(self) -> int:
        """Milliseconds between a Run's steps (0: as fast as possible)."""
        return _interval(self.speed)

    def pause(self) -> None:
        """Stop the run now (the step under way is abandoned, its start restored), or the
        run asked for but not started yet: the last Pause wins. `running` turns False
        when the training process has stopped."""
        self._paused_upto = self._runs_asked
        self._link.pause(self._paused_upto)
        if self.running:
            self.pause_requested.emit()

    @property
    def pausing(self) -> bool:
        """Pause was pressed after the newest Run; training may not have stopped yet."""
        return self._paused_upto == self._runs_asked

    def toggle_run(self) -> None:
        if self.running and not self.pausing:
            self.pause()
        else:
            self.run()

    def reset(self) -> None:
        self.command("reset")

    def reinitialize(self) -> None:
        self.command("reinitialize")

    def rewind(self, step: int) -> None:
        """Move the timeline to `step` (back, or forward again to steps it still holds).
        The request is checked against the run it reaches: a Reset or a new run queued
        before it has made `step` mean something else (or nothing), and then it is
        dropped with a note."""
        if step == self._rewinding_to:
            return  # asked already, and no snapshot since: the same move, not twice
        seen = self.snapshot.history
        if step > len(seen) and self.ahead is not None:
            seen = self.ahead
        self._rewinding_to = step
        self.command("rewind", step, record_key(seen[step - 1]) if 0 < step <= len(seen)
                     else None)

    def undo(self) -> None:
        """Bring back the run the last run-replacing action replaced."""
        self.command("undo")

    def redo(self) -> None:
        self.command("redo")

    def set_forget_zero_grad(self, on: bool) -> None:
        self.command("set_forget_zero_grad", on)

    def set_ghost(self, on: bool) -> None:
        self.command("set_ghost", on)

    def set_parameter(self, name: str, value: float) -> None:
        """A weight typed in by hand; the views re-render from the next snapshot."""
        self.command("set_parameter", name, value)

    def pin_run(self) -> None:
        """Keep this run's curves to compare the next one with (replaces an older pin)."""
        self.command("pin")
        self.message.emit("Run pinned: change a setting and train again to compare")

    def unpin_run(self) -> None:
        self.command("unpin")

    def set_lr(self, lr: float) -> None:
        self.command("set_lr", lr)

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
        self.command("set_config", config)

    def new_run(self, config: TrainingConfig, what: str) -> None:
        """A fresh run of `config`, undoably replacing this one; `what` names the action."""
        self.command("new_run", config, what)

    def open_run(self, state: TrainingState, what: str) -> None:
        """Continue the saved run `state` (a file opened, a session restored), undoably."""
        self.command("open_run", state, what)

    def open_file(self, path: Path, what: str, opened: Callable[[int], None],
                  failed: Callable[[str], None]) -> None:
        """Continue the run saved in session file `path`, undoably. The training process
        reads the file and builds the run itself: the window never builds or sends a
        second copy (a 1000x1000 run is a hundred megabytes). Then `opened(steps)` (its
        snapshot has come first), or `failed(why)`: the current run stays."""
        number = self._link.call("open_file", str(path), what)
        self._callbacks[number], self._failures[number] = opened, failed

    def import_points(self, dataset: Dataset, what: str) -> None:
        """Train on imported points (a new run if this network cannot take them), undoably."""
        self.command("import_points", dataset, what)

    def start_lesson(self, config: TrainingConfig, forget_zero_grad: bool,
                     ghost: bool) -> None:
        """A fresh run for a lesson, from its own step 0, undoably."""
        self.command("start_lesson", config, forget_zero_grad, ghost)

    def add_point(self, x: float, y: float, label: int, test: bool = False,
                  target: float | None = None) -> None:
        """Add a point; a regression point over the plane needs its `target`."""
        self.command("add_point", x, y, label, test, target)

    def remove_point(self, x: float, y: float) -> None:
        self.command("remove_point", x, y)

    # --- selection (UI-side state shared by the views) -----------------------------------
    def select_sample(self, index: int) -> None:
        self.selected_sample = index
        self.sample_selected.emit(index)

    def select_parameter(self, name: str) -> None:
        if name != self.selected_parameter:
            self.selected_parameter = name
            self.parameter_selected.emit(name)


def _interval(steps_per_second: float | None) -> int:
    return 0 if steps_per_second is None else max(0, round(1000 / steps_per_second))
