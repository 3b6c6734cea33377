"""The Qt side of a training session: a worker thread that owns the `Session` (and so the
Trainer), and the controller the widgets talk to. (Both halves of one protocol -- private
signals, a shared `latest` and events -- so they stay in one module, past 600 lines.)

Only the worker thread touches the session. Widgets call the controller's methods, which
send the session's named commands (`gradbox.training.session`: a name and plain-data
arguments) to the worker through a queued signal; the worker answers with immutable
`Snapshot`s, and a question's answer with a callback. This is the only view-side module
that imports the Trainer. A run is a zero-interval timer in the worker's thread that
ticks the session's Run: one step per tick (one phase per tick for a network big enough
that a step takes long), so a Pause or any other command is handled between two steps or
phases.

Frames. The views are redrawn at most once per display frame, by one timer on the UI
thread that pulls the latest snapshot (`SessionController._frame`): while running the
worker only makes a snapshot when the last one has been shown, and publishes it in
`TrainingWorker.latest`; the frame hands it to every view, then has the window repaint
at once, while the worker waits at its next step boundary. Drawing with the trainer
parked is what keeps a frame within its budget: both threads share one interpreter lock,
and a repaint makes hundreds of calls from Qt into Python (pyqtgraph's items, the table's
model), each of which could otherwise wait up to `sys.getswitchinterval()` (5 ms) for the
training thread's turn.

Thread, not process -- measured with benchmarks/bench_app.py. Before frames (2 shared
cores at a load of 7 to 12), W1's longest UI stalls while running were 207 ms (boundary
tab) to 1,182 ms (graph tab, operation level), 76-93 % of the repaint inside them spent
off the CPU, and the graph tabs trained at 0.24x and 0.12x the bare step rate: the two
threads took turns at the lock. With frames the repaints run while the worker is parked,
and the lock changes hands every millisecond (`SWITCH_INTERVAL_S`). On an idle machine a
W1 frame then costs 11-14 ms of UI-thread CPU (35 ms before the plots kept their ranges
and the table slowed down to ten refreshes a second), of which under 10 % is waiting for
the lock: what is left of a stall is the frame's own work, not the lock. A separate
process would remove the lock for good and let training use the second core while a
frame draws (W1 trains at about half the bare step rate, parked half the time); the
commands are now plain data that could cross (issue 22), but every frame would copy a
snapshot across: 16 MB of parameters and gradients for the
1000x1000 network, pickled and unpickled on the UI thread, longer than a frame. So the
thread stays, and parks.

Garbage. Python's cyclic collector runs only on the UI thread (see below). A big network's
step allocates millions of graph nodes, which the collector would scan again and again
(a collection of the young generation mid-step took seconds on 1000x1000); the engine's
graphs hold no cycles, so after such a step the worker moves what is alive into the
collector's permanent generation (`gc.freeze()`, constant time), where reference
counting still frees it and no collection scans it.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QCoreApplication,
    QObject,
    Qt,
    QThread,
    QTimer,
    Signal,
    Slot,
)
from threadpoolctl import threadpool_limits

from gradbox.training.config import TrainingConfig, plan_config_change, splits_steps
from gradbox.training.datasets import Dataset
from gradbox.training.goals import RunGoal
from gradbox.training.history import History
from gradbox.training.limits import describe_error
from gradbox.training.session import QUESTIONS, Session, record_key
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.training.timeline import Timeline
from gradbox.training.trainer import Trainer
from gradbox.views.frame_pacer import FramePacer

log = logging.getLogger(__name__)

FRAME_MS = 16  # one display frame at 60 Hz: the views are redrawn at most this often
SWITCH_INTERVAL_S = 0.001  # see SessionController.__init__
PARK_PATIENCE_MS = 6  # how long a frame waits for the worker to reach a step boundary
PARK_LIMIT_S = 0.25  # the longest the worker waits for a frame: a stuck UI must not stop it
# Young objects beyond this many (a big network's graph) are frozen by the worker rather
# than scanned by the collector; W1's step leaves a few thousand.
FREEZE_ABOVE = 100_000
_collector: QTimer | None = None


def collect_garbage_on_the_ui_thread() -> None:
    """Run Python's cyclic collector only from the UI thread, on a timer.

    Left automatic, a collection starts in whichever thread allocates -- usually the
    training thread -- and may then destroy Qt objects of the UI thread from there,
    which can deadlock or crash Qt. (pyqtgraph's GarbageCollector does the same, but
    would also scan a big step's millions of fresh nodes: see the module's docstring.)
    """
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
    if young <= threshold0 or young > FREEZE_ABOVE:
        return  # nothing to do, or a big step's nodes, which the worker freezes
    gc.collect(0)
    if middle > threshold1:
        gc.collect(1)
        if old > threshold2:
            gc.collect(2)


def leave_cores_for_the_threads() -> None:
    """Cap numpy's BLAS threads at the cores the UI and training threads do not need.

    OpenBLAS starts a thread per core and keeps them spinning after each product: on two
    cores they took turns with the UI thread and the training thread, and the heat map's
    small products (10,000 x 16 x 16) took 4.8 ms a frame, 13 ms at worst, under load;
    with one BLAS thread 2.4 and 4.2 ms. Big networks' products keep any cores beyond two.
    """
    threadpool_limits(limits=max(1, (os.cpu_count() or 1) - 2), user_api="blas")


def freeze_what_lives_now() -> None:
    """Once the window is up: collect, then put every object alive into the collector's
    permanent generation. The app's ~100,000 long-lived objects (modules, widgets, plot
    items) were scanned again by each full collection, which took 50 ms on the UI thread
    about once a minute; frozen, a full collection scans only what came later. (What is
    frozen and later becomes cyclic garbage stays: they live as long as the app.)"""
    gc.collect()
    gc.freeze()


def freeze_big_young_generation() -> None:
    """After a step or command: put a big network's live nodes out of the collector's way."""
    if gc.get_count()[0] > FREEZE_ABOVE:
        gc.freeze()


Command = Callable[[Trainer], Any]
# Commands after which the new snapshot is shown even while a Run goes on: they replace
# the run or move the timeline. (A question shows nothing; other changes wait for the
# Run's next frame.)
SHOWN_WHILE_RUNNING = frozenset({"rewind", "undo", "redo", "reset", "reinitialize",
                                 "set_config", "new_run", "open_run", "import_points",
                                 "start_lesson"})


class TrainingWorker(QObject):
    """Lives in the worker thread; runs the `Session`'s commands and a Run's ticks, and is
    the session's view (its notes and stops go out as signals)."""

    snapshot_ready = Signal()  # `latest` holds a new snapshot (sent for commands)
    running_changed = Signal(bool, int)  # (running, the run's number)
    stopped = Signal(str)
    goal_reached = Signal(str)
    note = Signal(str)  # what a change replaced, and how to get it back
    failed = Signal(str, str)
    result_ready = Signal(object, object)  # (callback, result) for commands that return data

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        session.view = self
        # (the whole run's record while the timeline is back or None, undo text, redo
        # text), published with each snapshot
        self.latest_timeline: tuple[History | None, str, str] = (None, "", "")
        # Runs are numbered by the controller; a Pause cancels every run asked for up to
        # `paused_upto`, including one whose start is still queued behind a busy command
        # (an int written by the UI thread and read here: atomic under the GIL).
        self.paused_upto = 0
        self._run_number = 0
        # Milliseconds between a Run's steps (0: as fast as possible); set from the UI
        # thread, read before each step.
        self.interval_ms = 0
        self._timer: QTimer | None = None
        # The newest snapshot; the UI thread reads it (an attribute read is atomic).
        self.latest: Snapshot = session.snapshot()
        # Set by the UI thread once it has shown `latest`: while running, no snapshot is
        # made (nor a graph traced) before that -- one per frame at most (backpressure).
        self.wanted = threading.Event()
        self.wanted.set()
        # Cleared by the UI thread while it draws a frame: the worker waits at its next
        # step boundary (`parked` set) rather than compete for the interpreter lock.
        self.ui_idle = threading.Event()
        self.ui_idle.set()
        self.parked = threading.Event()
        self.training = False  # a run is going on: read from the UI thread (atomic)

    # --- the session's view (called in this thread) ------------------------------------------
    def show_message(self, text: str) -> None:
        self.note.emit(text)

    def show_stop(self, reason: str) -> None:
        self.stopped.emit(reason)

    @property
    def graph_wanted(self) -> bool:
        """A graph view is showing (set from the UI thread; a bool write is atomic)."""
        return self.session.graph_wanted

    @graph_wanted.setter
    def graph_wanted(self, wanted: bool) -> None:
        self.session.graph_wanted = wanted

    @Slot()
    def _create_timer(self) -> None:
        # Created here, in the worker thread, so its ticks run in that thread.
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._tick)

    @property
    def timeline(self) -> Timeline:
        return self.session.timeline

    @property
    def trainer(self) -> Trainer:
        return self.session.trainer

    def _publish(self) -> None:
        # What the timeline holds and what Undo would do go with the snapshot, written
        # first: a frame that sees the new snapshot sees them too.
        self.latest_timeline = self.session.timeline_view()
        self.latest = self.session.snapshot()
        self.wanted.clear()

    def _emit(self) -> None:
        self._publish()
        self.snapshot_ready.emit()

    @Slot(str, object, object, object)
    def execute(self, name: str, args: object = (), kwargs: object = None,
                callback: object = None) -> None:
        """Run the session's command `name` with plain-data arguments; `callback(result)`
        goes back to the UI thread. A snapshot follows a change (not a question)."""
        try:
            result = self.session.command(name, *args, **(kwargs or {}))  # type: ignore
        except Exception as error:  # a command's failure must not end the thread
            self._report(error)
            return
        finally:
            freeze_big_young_generation()
        if callback is not None:
            self.result_ready.emit(callback, result)
        if name in QUESTIONS or result is False or (name in ("undo", "redo") and not result):
            return  # nothing changed: a question, a move dropped, nothing to undo
        if not self.running or name in SHOWN_WHILE_RUNNING:
            self._emit()

    @Slot(object, object, object)
    def execute_callable(self, command: Command, callback: object = None,
                         change: object = "") -> None:
        """Run `command(trainer)`, for tests and tools in this process only (a closure
        cannot leave it; the window sends named commands). `change` None: a question;
        '': a change to what is shown only; otherwise the name of a change to the run."""
        self.trainer.capture_graph = self.graph_wanted
        if isinstance(change, str) and change:
            self.session.diverge(change)
        try:
            result = command(self.trainer)
        except Exception as error:
            self._report(error)
            return
        finally:
            freeze_big_young_generation()
        if callback is not None:
            self.result_ready.emit(callback, result)
        if change is not None and not self.running:
            self._emit()

    @Slot(object, str)
    def replace_trainer(self, factory: Callable[[Trainer], Trainer | None], what: str) -> None:
        """A run-replacing action given as a factory (tests and in-process tools only):
        undoable. If `factory` raises, the old run stays."""
        try:
            self.session.replace_run(what, factory)
        except Exception as error:  # the old trainer stays: nothing is lost
            self._report(error)
            return
        finally:
            freeze_big_young_generation()
        self._emit()

    @property
    def running(self) -> bool:
        return self._timer is not None and self._timer.isActive()

    @property
    def splits_steps(self) -> bool:
        """Whether a run takes one phase per tick: a step long enough that Pause, and
        the interpreter lock, should not wait for all of it."""
        return splits_steps(self.trainer.config)

    @Slot(object, int)
    def start_run(self, goal: object = None, number: int = 0) -> None:
        if self._timer is None:
            return
        if self._timer.isActive():
            # Run pressed while the last run was pausing ("Pausing…" invites it): the new
            # run takes the old one over, which goes on, or (paused too) ends at its next
            # tick with its last snapshot published, under the new number. Ignored, it
            # left the window saying "running" with nothing training, for good.
            self._run_number = number
            self._goal = goal if isinstance(goal, RunGoal) else RunGoal()
            self._steps_done = 0
            if number > self.paused_upto:
                self.running_changed.emit(True, number)
            return
        if number <= self.paused_upto:
            # Paused before it could start: the last Pause wins. Say so, since the
            # button flipped to Pause when Run was pressed.
            self.running_changed.emit(False, number)
            return
        self._run_number = number
        self.session.start_run(goal if isinstance(goal, RunGoal) else RunGoal())
        self.training = True
        self._timer.start(self.interval_ms)
        self.running_changed.emit(True, number)

    def request_pause(self, upto: int) -> None:
        """Thread-safe: runs numbered up to `upto` stop before their next step (or phase,
        for a big network), or never start."""
        self.paused_upto = max(self.paused_upto, upto)

    def _wait_for_frame(self) -> None:
        if not self.ui_idle.is_set():
            self.parked.set()
            self.ui_idle.wait(PARK_LIMIT_S)
            self.parked.clear()

    @Slot()
    def _tick(self) -> None:
        assert self._timer is not None
        if self.paused_upto >= self._run_number:
            self._finish_run("")
            return
        if self._timer.interval() != self.interval_ms:  # the speed was changed
            self._timer.setInterval(self.interval_ms)
        self._wait_for_frame()
        # Trace the graph only for the steps whose snapshot will be shown; a paced Run
        # (a frame or more per step) shows every step: that is what it is for.
        paced = self.interval_ms >= FRAME_MS
        due = self.wanted.is_set() or paced
        try:
            tick = self.session.tick(capture_graph=self.graph_wanted and due)
        except Exception as error:
            self._finish_run("")
            self._report(error)
            return
        finally:
            freeze_big_young_generation()
        if tick.alarm:  # the trainer stopped itself, or the loss diverges
            self._finish_run(tick.alarm)
            return
        if tick.reached:
            self._finish_run("")
            self.goal_reached.emit(f"Run stopped: {tick.reached}")
            return
        # A step that was not traced must not be shown with an older step's graph.
        if tick.stepped and (due or (self.wanted.is_set() and not self.graph_wanted)):
            self._publish()

    def _finish_run(self, reason: str) -> None:
        assert self._timer is not None
        self._timer.stop()
        self.training = False
        self.session.finish_run()  # (traces the last step's graph if steps went untraced)
        self._emit()
        self.running_changed.emit(False, self._run_number)
        if reason:
            self.stopped.emit(reason)

    def _report(self, error: Exception) -> None:
        detail = "".join(traceback.format_exception(error))
        log.error("training command failed:\n%s", detail)
        self.failed.emit(describe_error(error), detail)
        self._emit()


def _interval(steps_per_second: float | None) -> int:
    return 0 if steps_per_second is None else max(0, round(1000 / steps_per_second))


class SessionController(QObject):
    """What every widget holds: the latest snapshot, and methods that change the session."""

    snapshot_changed = Signal(object)
    running_changed = Signal(bool)
    # Pause was pressed during a run: the run stops at the next step boundary (at the next
    # phase for a big network, seconds away), then running_changed(False) follows.
    pause_requested = Signal()
    message = Signal(str)
    error = Signal(str, str)
    stopped = Signal(str)
    sample_selected = Signal(int)
    parameter_selected = Signal(str)
    undo_changed = Signal(str, str)  # what Undo and Redo would do ('' for nothing)
    _command = Signal(str, object, object, object)
    _callable = Signal(object, object, object)
    _start = Signal(object, int)
    _replace = Signal(object, str)

    def __init__(self, trainer: Trainer | Session | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        collect_garbage_on_the_ui_thread()
        # The two threads take turns at the interpreter lock at least every millisecond
        # (Python's default is 5): each of a repaint's many calls back into Python may
        # wait that long for the training thread's turn. Measured on W1 (bench_app.py):
        # longest stall 38 -> 28 ms, p99 gap 28 -> 23 ms, steps/s 72 -> 87.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        leave_cores_for_the_threads()
        session = trainer if isinstance(trainer, Session) else Session(trainer)
        self.running = False
        self._runs_asked = 0  # numbers the runs, so a Pause knows which runs it cancels
        self._paused_upto = 0
        self.goal = RunGoal()  # when a Run stops by itself; set by the window's controls
        self.speed: float | None = None  # steps per second; the toolbar sets a watchable one
        self.selected_sample = 0
        self.selected_parameter = ""
        # The whole run's record while the timeline is moved back (later steps faded).
        self.ahead: History | None = None
        self.undo_text = self.redo_text = ""
        self._thread = QThread()
        self._thread.setObjectName("gradbox-training")
        self._worker = TrainingWorker(session)
        self.snapshot: Snapshot = self._worker.latest  # the one the views were last given
        self.frames = 0  # frames drawn: each hands one snapshot to every view
        self._next_frame = 0.0  # time.perf_counter() before which no frame is drawn
        self._parking_since: float | None = None
        self._drawing = False
        # The display-paced timer: the only thing that hands snapshots to the views.
        self._frame = QTimer(self)
        self._frame.setSingleShot(True)
        self._frame.setTimerType(Qt.TimerType.PreciseTimer)
        self._frame.timeout.connect(self._draw_frame)
        self._worker.moveToThread(self._thread)
        self._thread.started.connect(self._worker._create_timer)
        self._command.connect(self._worker.execute)
        self._callable.connect(self._worker.execute_callable)
        self._start.connect(self._worker.start_run)
        self._replace.connect(self._worker.replace_trainer)
        self._worker.note.connect(self.message)
        self._worker.goal_reached.connect(self.message)
        self._worker.snapshot_ready.connect(self._schedule_frame)
        self._worker.running_changed.connect(self._on_running_changed)
        self._worker.stopped.connect(self._on_stopped)
        self._worker.failed.connect(self.error)
        self._worker.result_ready.connect(self._on_result)
        # Views that want fewer snapshots than every frame subscribe here (rate tiers).
        self.pacer = FramePacer(self)
        app = QCoreApplication.instance()
        if app is not None:
            # A QThread destroyed while running aborts the process: stop it on quit.
            app.aboutToQuit.connect(self.shutdown)
        self._thread.start()

    # --- plumbing ---------------------------------------------------------------------
    def command(self, name: str, *args: Any, **kwargs: Any) -> None:
        """Send the session's command `name` (gradbox.training.session: plain-data
        arguments) to the worker thread; a new snapshot follows a change."""
        self._command.emit(name, args, kwargs, None)

    def ask(self, name: str, *args: Any, callback: Callable[[Any], None], **kwargs: Any,
            ) -> None:
        """Ask the session's question `name`; `callback(answer)` is called back here, on
        the UI thread. Nothing changes, nothing is redrawn."""
        self._command.emit(name, args, kwargs, callback)

    def call(self, command: Command, callback: Callable[[Any], None] | None = None,
             change: str = "A change") -> None:
        """Run `command(trainer)` in the worker thread, for tests and in-process tools (the
        window sends named commands, which could leave the process; a closure cannot).
        `change` names it as `TrainingWorker.execute_callable` says."""
        self._callable.emit(command, callback, change)

    def query(self, question: Command, callback: Callable[[Any], None]) -> None:
        """Like `call` for a read-only `question`: no snapshot follows, nothing redraws."""
        self._callable.emit(question, callback, None)

    def move_timeline(self, step: int) -> None:
        """Move the timeline to `step` of whatever run it holds when the request arrives
        (`rewind` checks the request against the run on screen; a run just opened is not
        on screen yet)."""
        self.command("rewind", step, None)

    def stopped_timeline(self) -> Timeline:
        """The timeline itself, for the UI thread to read once `shutdown()` has returned."""
        self.stopped_trainer()  # raises while the thread runs
        return self._worker.timeline

    def _show_timeline(self, ahead: History | None, undo: str, redo: str) -> None:
        self.ahead = ahead
        if (undo, redo) != (self.undo_text, self.redo_text):
            self.undo_text, self.redo_text = undo, redo
            self.undo_changed.emit(undo, redo)

    @Slot(object, object)
    def _on_result(self, callback: Callable[[Any], None], result: Any) -> None:
        callback(result)

    # --- frames -----------------------------------------------------------------------
    @Slot()
    def _schedule_frame(self) -> None:
        """A frame as soon as the last one is a frame old: at once after a pause, so a
        single Step shows without delay; paced while snapshots come quickly."""
        if self._frame.isActive() or self._drawing:
            return  # (a frame being drawn looks for a newer snapshot when it ends)
        wait = self._next_frame - time.perf_counter()
        if wait <= 0:
            self._draw_frame()
        else:
            self._frame.start(int(wait * 1000) + 1)

    @Slot()
    def _draw_frame(self) -> None:
        if self._drawing:
            return  # reached from inside a frame's event pass: that frame goes on
        worker = self._worker
        snapshot, timeline = worker.latest, worker.latest_timeline
        if snapshot is self.snapshot:  # nothing new (yet): look again next frame
            if self.running:
                self._next_frame = time.perf_counter() + FRAME_MS / 1000
                self._frame.start(FRAME_MS)
            return
        now = time.perf_counter()
        if worker.training and not worker.parked.is_set():
            # Ask the worker to stop at its next step boundary, and draw once it has
            # (or after a few ms: a big network's phase is not waited for).
            worker.ui_idle.clear()
            if self._parking_since is None:
                self._parking_since = now
            if now - self._parking_since < PARK_PATIENCE_MS / 1000:
                self._frame.start(1)
                return
        self._parking_since = None
        worker.ui_idle.clear()
        self._drawing = True
        try:
            self.frames += 1
            self.snapshot = snapshot
            self._show_timeline(*timeline)
            self.snapshot_changed.emit(snapshot)
            # Lay out and repaint what the views changed now, while the worker waits,
            # rather than in later events that would compete with it for the lock: the
            # graphics scenes' queued updates first (pyqtgraph's plots), which post the
            # layout and repaint requests that the second pass handles.
            QCoreApplication.sendPostedEvents()
            QCoreApplication.sendPostedEvents()
        finally:
            self._drawing = False
            worker.ui_idle.set()
            worker.wanted.set()
        busy = time.perf_counter() - now
        # While running, stay idle at least as long as the frame took, so clicks, timers
        # and training get half the UI thread however heavy the views are. A single Step
        # is shown as soon as a frame has passed.
        idle = max(FRAME_MS / 1000, busy) if self.running else FRAME_MS / 1000
        self._next_frame = time.perf_counter() + idle
        if self.running or worker.latest is not snapshot:
            self._schedule_frame()

    @Slot(bool, int)
    def _on_running_changed(self, running: bool, number: int) -> None:
        # Only the newest run asked for has a say, and a run already paused here
        # cannot turn the button back to Pause on its way out.
        if number != self._runs_asked or (running and number <= self._paused_upto):
            return
        if not running and self._worker.latest is not self.snapshot:
            # The run's last snapshot is shown before anyone hears that it stopped.
            if self._drawing:
                # Delivered by a frame's own event pass, while it shows an older one:
                # heard once that frame is over (running stays True till then).
                QTimer.singleShot(0, lambda: self._on_running_changed(running, number))
                return
            self._frame.stop()
            self._draw_frame()
        self._set_running(running)
        if running:
            self._schedule_frame()

    def _set_running(self, running: bool) -> None:
        if running != self.running:
            self.running = running
            self.running_changed.emit(running)

    @Slot(str)
    def _on_stopped(self, reason: str) -> None:
        # As for running_changed: the stop is heard with the run's last snapshot on
        # screen (heard within a frame's own event pass, the window's alert took the
        # frame's older step for the step it paused at, and said 'Still diverging').
        if self._worker.latest is not self.snapshot:
            if self._drawing:
                QTimer.singleShot(0, lambda: self._on_stopped(reason))
                return
            self._frame.stop()
            self._draw_frame()
        # Said once, by whoever shows `stopped` (the window's alert), not also as a message.
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
            self.command("capture_graph")

    def shutdown(self) -> None:
        """Stop the worker thread (after the step it may be running). Safe to call twice."""
        self._worker.request_pause(self._runs_asked + 1)
        self._frame.stop()
        self._worker.ui_idle.set()
        self._thread.quit()
        self._thread.wait()

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
            self._set_running(True)  # the button flips now, not when the worker answers
            self._start.emit(goal or self.goal, self._runs_asked)

    def set_speed(self, steps_per_second: float | None) -> None:
        """Steps per second a Run takes (None: as fast as it can); applies at once."""
        self.speed = steps_per_second
        self._worker.interval_ms = _interval(steps_per_second)

    def pause(self) -> None:
        """Stop the run, or the run asked for but not started yet: the last Pause wins.
        `running` turns False when the worker has stopped (after its last snapshot)."""
        self._paused_upto = self._runs_asked
        self._worker.request_pause(self._paused_upto)
        if self.running:
            self.pause_requested.emit()

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
        self.command("reset")

    def reinitialize(self) -> None:
        self.command("reinitialize")

    def rewind(self, step: int) -> None:
        """Move the timeline to `step` (back, or forward again to steps it still holds).
        The request is checked against the run it reaches: a Reset or a new run queued
        before it has made `step` mean something else (or nothing), and then it is
        dropped with a note."""
        seen = self.snapshot.history
        if step > len(seen) and self.ahead is not None:
            seen = self.ahead
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

    def replace_trainer(self, factory: Callable[[Trainer], Trainer | None],
                        message: str = "Run replaced") -> None:
        """Swap in `factory(old_trainer)` (or the old one, changed in place, if it returns
        None), undoably; `message` names the action. If the factory raises, the old run
        stays. For tests and in-process tools: the window uses the named commands below."""
        self._replace.emit(factory, message)

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
