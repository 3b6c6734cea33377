"""The training process: hosts the session and its trainer, answers named commands,
runs, publishes.

Process, not thread -- measured (benchmarks/bench_app.py, bench_process.py; 2 shared
cores). With the trainer on a thread of the window's process, training and drawing took
turns at one interpreter lock: W1 trained at 0.45-0.58x the bare step rate on a quiet
machine (0.17x on the graph tab at load 6-11), a 1000x1000 network's Pause waited 2.3 s
for a phase, and a crash in a step took the window with it. Here training has its own
lock: W1 trains at 0.6-1.3x the bare step rate by tab and run (the bare step itself
varies 2.7-6 ms on this machine), the window's longest stall is 14-18 ms. Snapshots
cross through shared memory (a 1000x1000 snapshot costs the window 0.6 ms of CPU,
pickled it cost 64 ms; W1's traced graph 0.8 against 5.5 ms), a training process starts
in 0.25 s (forkserver), and Pause abandons a step.

`main` is what `TrainingProcess` starts in a child process (forkserver where there is
one, else spawn). It reads messages from its end of the pipe -- commands by name with
plain-data arguments, Run, quit -- and answers with replies, notes and snapshots (see
gradbox.runner.wire). It also opens session files itself (`Session.open_file`): the
window only checks a file, so it never builds a second copy of a run nor sends one across.

A Run is this process's own loop: a step, then the window's messages, then the next.
A snapshot is published only when the window asked for one (its `WANTED` mark: at most
one per frame), and always after a command and at the end of a run. What a published
step costs beyond the step (its graph traced when a graph view shows, the snapshot
written) is spent on published steps only, and on at most PUBLISH_SHARE of this
process's time: the steps in between are bare steps. Every snapshot of a Run carries
its own step's graph (it was traced at most ten times a second before, and a snapshot
in between showed step k's numbers beside step k-j's graph).

This process is the leader of a session of its own (`os.setsid`): Linux schedules a
session's processes as one group (autogroup), and in the window's group the window's
drawing came out of training's share of the cores. On this 2-core machine at load 6
(other sessions' tests) a Run of W1 at the fastest speed trained at 0.43x the bare step
rate on the boundary tab, 0.41x on the graph tab; in a group of its own, 0.74x and 0.72x
(benchmarks/bench_speed_app.py, which prints both bounds from the CPU each side used).

Pause means now. The window marks the run paused in the control block and sends
SIGUSR1; the signal's handler runs between two bytecodes of the step under way and
raises `Abandoned`, and the step's start is restored (`Trainer.rewind` to the step it
began at), as when a step stops on a non-finite number. Outside a step the mark is read
at the next step boundary. So a 1000x1000 network's step of seconds is left at once.
What made it slow (benchmarks/bench_pause.py, 1000x1000, load 5): the half-built graph
was freed while the exception unwound (a list comprehension's and `sum`'s partial
results are not locals: 0.2-4.3 s in one deallocation), the re-enabled cyclic collector
then scanned millions of young objects, and the publish read a million weights and
gradients (twice) from their nodes (0.3-0.4 s). Now the graph's pieces are frame locals,
which the exception's traceback keeps until `run_one_step`'s `except` has answered; the
step's young objects are frozen (`cyclic_gc_paused`); the weights published last are
reused when nothing moved them (`Trainer.snapshot`).

After the answer, the abandoned graph is freed a piece at a time (`AbandonedGraph`), and
between the pieces the loop reads the window's messages: a question, a speed, Run's
answer are handled at once. A question right after a 1000x1000 Pause waited 0.2-1.4 s
in the forward pass, 0.3-3.3 s in the backward pass, for the graph freed in one go; now
0-16 ms in the forward pass, 1-532 ms in the backward pass (most likely the gradients
put back after the answer: benchmarks/bench_pause.py --ask). A command that trains or builds
(Step, a Run's first step...) first frees the rest at once: two big graphs never live
together.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from gradbox.autograd.collector import freeze_big_young_generation, in_a_training_process
from gradbox.files.sessions import load_state, load_state_with_controls
from gradbox.runner.leftovers import AbandonedGraph
from gradbox.runner.shared import Segment
from gradbox.runner.wire import (
    PAUSED_UPTO,
    READY,
    STEPPING,
    STEPS,
    WANTED,
    Publisher,
    control_view,
    put_answer,
)
from gradbox.training import limits
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.limits import describe_error
from gradbox.training.session import QUESTIONS, REPLAY_GRAPH_LIMIT, SETTINGS, Session
from gradbox.training.snapshots import Snapshot, start_revisions_at
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

PAUSE_SIGNAL = getattr(signal, "SIGUSR1", None)
# A Run spends at most this share of the training process's CPU time on publishing
# (tracing the step's graph for a graph view, writing the snapshot): after a publish
# that took c seconds, the next waits until c * (1 / PUBLISH_SHARE - 1) more went into
# training. W1 (benchmarks/bench_speed_app.py): a boundary-tab publish is ~0.1-0.3 ms
# (the window's frames set the pace, ~20-30 a second); a graph-tab one ~3.5 ms, the
# trace costing about a step (13 a second: the graph view draws ten).
PUBLISH_SHARE = 0.05


class Abandoned(BaseException):
    """Raised inside a step by Pause (a BaseException: no `except Exception` keeps it)."""


def make_trainer(start: TrainingState | TrainingConfig | str | None) -> Trainer:
    """The run to start from: a whole state, a session file's (read here: the window let
    go of its copy once the file held it), or a new run of a configuration."""
    if isinstance(start, str):
        start = load_state_with_controls(start)[0]
    if isinstance(start, TrainingState):
        return Trainer.from_state(start)
    return Trainer(start)


class Child:
    """The training process's loop (see the module's docstring); the session's view."""

    def __init__(self, conn: Connection, prefix: str, control: np.ndarray,
                 session: Session) -> None:
        self.conn = conn
        self.control = control
        self.session = session
        session.view = self
        self.publisher = Publisher(prefix, control)
        self.run_number = 0  # the run going on (0: none)
        self.interval_s = 0.0
        self.next_step_at = 0.0
        self._abandonable = False
        self.leftovers: AbandonedGraph | None = None  # an abandoned step's, being freed
        # A Run's next snapshot is not published before this process's CPU time
        # (time.thread_time()) reaches this (see PUBLISH_SHARE).
        self._publish_after_cpu = 0.0
        self.quit = False
        # The steps trained here, for the window's estimates (limits here learns from
        # them too: a check of a new network's size uses it).
        self.observed: list[tuple[TrainingConfig, float, int | None]] = []
        limits.report_steps_to(lambda *step: self.observed.append(step))

    # --- the session's view -----------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.send("note", text)

    def show_stop(self, reason: str) -> None:
        self.send("stopped", reason)

    # --- Pause ------------------------------------------------------------------------------
    def on_pause_signal(self, _signum: int, _frame: object) -> None:
        if self._abandonable and self.control[PAUSED_UPTO] >= self.run_number:
            self._abandonable = False
            raise Abandoned

    @property
    def paused(self) -> bool:
        return bool(self.control[PAUSED_UPTO] >= self.run_number)

    # --- messages -------------------------------------------------------------------------
    def send(self, *message: Any) -> None:
        self.conn.send(message)

    def publish(self, answer: tuple[Any, ...] | None = None,
                snapshot: Snapshot | None = None) -> None:
        """Send `snapshot` (by default the session's now); `answer` (a command's reply)
        rides in the same message, after it (see `call`)."""
        self.control[WANTED] = 0
        meta = self.publisher.message(snapshot if snapshot is not None
                                      else self.session.snapshot())
        # The steps' compute times go to the window, whose estimates they correct.
        meta["observed"], self.observed = self.observed, []
        if answer is not None:
            try:
                self.send("snapshot", meta, answer)
                return
            except Exception as error:  # (pickled before anything is written)
                self.send("snapshot", meta)
                self.send("failed", answer[1], f"the answer cannot be sent: {error}",
                          "".join(traceback.format_exception(error)))
                return
        self.send("snapshot", meta)

    def handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "call":
            _, number, name, args, kwargs = message
            self.call(number, name, args, kwargs)
        elif kind == "lazy call":
            _, number, name, args, kwargs = message
            self.call(number, name, args, kwargs, lazy=True)
        elif kind == "run":
            _, number, goal, interval_s = message
            self.start_run(number, goal, interval_s)
        elif kind == "speed":
            self.interval_s = float(message[1])
        elif kind == "quit":
            self.quit = True

    def call(self, number: int, name: str, args: tuple[Any, ...],
             kwargs: dict[str, Any], lazy: bool = False) -> None:
        """Run command `name`. The session hands back its answer and, for a command,
        the snapshot after it (`Session.perform`); both go in one message, the snapshot
        first: a window that has the answer has the snapshot too, and a Step wakes the
        window once, not twice. Questions and settings publish nothing. A `lazy` answer
        is pickled into shared memory (see `wire.LazyAnswer`)."""
        try:
            result, snapshot = self.session.perform(name, *args, **kwargs)
        except Exception as error:  # a command's failure must not end the process
            self.publish()
            self.send("failed", number, describe_error(error),
                      "".join(traceback.format_exception(error)))
            return
        finally:
            freeze_big_young_generation()
        answer: tuple[Any, ...] | None = None
        if number:  # (0: asked by this process itself, nobody waits for the answer)
            try:
                answer = (("lazy reply", number, *put_answer(
                    self.publisher.prefix, number, result, self.publisher.known()))
                          if lazy else ("reply", number, result))
            except Exception as error:  # an answer that cannot cross: say so, go on
                answer = ("failed", number, f"the answer to {name} cannot be sent: {error}",
                          "".join(traceback.format_exception(error)))
        if snapshot is not None:
            self.publish(answer, snapshot)
        elif answer is not None:
            try:
                self.send(*answer)
            except Exception as error:  # an answer that cannot cross: say so, go on
                self.send("failed", number, f"the answer to {name} cannot be sent: {error}",
                          "".join(traceback.format_exception(error)))

    # --- a run ----------------------------------------------------------------------------
    def start_run(self, number: int, goal: RunGoal | None, interval_s: float) -> None:
        if self.control[PAUSED_UPTO] >= number:
            self.send("running", False, number)  # paused before it could start
            return
        self.run_number = number
        self.session.start_run(goal)
        self.interval_s = interval_s
        self.next_step_at = time.perf_counter()
        self.send("running", True, number)

    def finish_run(self, alarm: str = "", note: str = "") -> None:
        number, self.run_number = self.run_number, 0
        self.session.finish_run()
        self.publish()
        self.send("running", False, number)
        if alarm:
            self.send("stopped", alarm)
        if note:
            self.send("note", note)

    def run_one_step(self) -> None:
        trainer = self.session.trainer
        start = trainer.step_count
        self.control[STEPPING] = 1
        try:
            self._abandonable = True
            if self.paused:  # paused just before the handler could see the step
                self._abandonable = False
                raise Abandoned
            # Untraced: the graph is traced for the steps that are published alone.
            tick = self.session.tick(capture_graph=False)
            self._abandonable = False
        except Abandoned as abandoned:
            # The abandoned graph stays alive (the traceback holds the frames that built
            # it) until the window has its answer; then it is freed in pieces.
            self._abandonable = False
            self.control[STEPPING] = 0
            self.abandon(start)
            self.leftovers = AbandonedGraph(abandoned.__traceback__)
            return
        except Exception as error:
            self._abandonable = False
            self.control[STEPPING] = 0
            self.finish_run()
            self.send("failed", 0, describe_error(error),
                      "".join(traceback.format_exception(error)))
            return
        finally:
            self.control[STEPPING] = 0
            freeze_big_young_generation()
        self.control[STEPS] = self.session.trainer.step_count
        if tick.alarm:
            self.finish_run(alarm=tick.alarm)
        elif tick.reached:
            self.finish_run(note=f"Run stopped: {tick.reached}")
        elif tick.stepped and self.control[WANTED] and (
                # (A paced Run publishes every step the window wants: the budget is for the
                # fastest speed, where a slow publish -- the first, 11 ms -- held a Run at
                # 2 steps a second off the screen for a minute.)
                self.interval_s or time.thread_time() >= self._publish_after_cpu):
            self.publish_step()

    def publish_step(self) -> None:
        """Publish a Run's step, with its own graph if a graph view shows; the next may
        come once PUBLISH_SHARE of the time since was this one's."""
        # The steps' layer statistics wait to be measured together when the history is
        # next read (`HistoryBuffer`): the steps' own cost, paid here before the publish
        # is timed. Counted as the publish's, it grew with the steps since the last one,
        # and so the wait before the next: W1 published every 64 steps, ~5 a second.
        self.session.trainer.history  # noqa: B018 (read for what reading it measures)
        started = time.thread_time()
        if self.session.graph_wanted:
            self.session.capture_graph()  # this step's (the Run's steps are untraced)
        self.publish()
        done = time.thread_time()
        self._publish_after_cpu = done + (done - started) * (1 / PUBLISH_SHARE - 1)

    def abandon(self, start: int) -> None:
        """Pause arrived mid-step: put the step's start back, show it, and say the run
        stopped (in that order: a window that hears it stopped has its last snapshot)."""
        number, self.run_number = self.run_number, 0
        # The signal may have cut the step's bookkeeping short anywhere: the collector
        # and numpy's error state are put back as the step's context managers would.
        gc.enable()
        np.seterr(all="warn", under="ignore")
        # The snapshot shows the start from its arrays; the parameters take it after the
        # answer (a million gradients: 50-100 ms), before the next message is read.
        trainer = self.session.trainer
        finish_rewind = trainer.begin_rewind(start)
        if self.session.graph_wanted and len(trainer.param_names) <= REPLAY_GRAPH_LIMIT:
            # A graph view shows: `finish_run` traces the last whole step again (the
            # abandoned one's graph went with it), from the parameters put back first.
            finish_rewind()
            finish_rewind = _nothing
        try:
            self.session.finish_run()
            self.control[STEPS] = self.session.trainer.step_count
            self.publish()
            self.send("running", False, number)
        finally:
            finish_rewind()

    # --- the loop -------------------------------------------------------------------------
    def free_leftovers(self) -> None:
        """Free a piece of an abandoned step's graph, or answer a message that came: at
        once if it can be answered beside the old graph, else after freeing the rest."""
        leftovers = self.leftovers
        assert leftovers is not None
        if self.run_number and self.paused:  # paused before its first step: say so now
            self.finish_run()
        elif self.run_number:  # a Run's first step is due
            leftovers.free_all()
        elif self.conn.poll():
            message = self.conn.recv()
            if not answered_beside_leftovers(message):
                leftovers.free_all()
            self.handle(message)
        else:
            leftovers.free_piece()
        if leftovers.done:
            self.leftovers = None

    def loop(self) -> None:
        while not self.quit:
            if self.leftovers is not None:
                self.free_leftovers()
                continue
            if not self.run_number:
                self.handle(self.conn.recv())
                continue
            if self.paused:
                self.finish_run()
                continue
            wait = self.next_step_at - time.perf_counter()
            if self.conn.poll(max(0.0, wait)):
                self.handle(self.conn.recv())
                continue
            if self.run_number and not self.paused:
                self.next_step_at = max(self.next_step_at + self.interval_s,
                                        time.perf_counter()) if self.interval_s else 0.0
                self.run_one_step()
        self.publisher.close()


def _nothing() -> None:
    return None


def answered_beside_leftovers(message: tuple[Any, ...]) -> bool:
    """A message that builds no graph (a question but the gradient check, Run's answer,
    a speed, quit): handled while an abandoned step's graph is still being freed."""
    kind = message[0]
    if kind in ("call", "lazy call"):
        return (message[2] in QUESTIONS | SETTINGS) and message[2] != "gradient_check"
    return kind in ("run", "speed", "quit")


def main(conn: Connection, prefix: str, control_name: str,
         start: TrainingState | TrainingConfig | str | None) -> None:
    """The training process's entry point (see `TrainingProcess`)."""
    if hasattr(os, "setsid"):  # a scheduling group of its own (see the module's docstring)
        with contextlib.suppress(OSError):
            os.setsid()
    control_segment = Segment(control_name)
    control = control_view(control_segment)
    # Revision numbers above any an earlier training process of this window handed out
    # (microseconds since the epoch: a later process starts higher).
    start_revisions_at(time.time_ns() // 1000)
    # An allocation past the cap raises MemoryError here, which is said in words and
    # leaves the run as it was, instead of the system's killer picking a process.
    limits.cap_this_process()
    # numpy's BLAS: one thread per core is right here (the window has its own process).
    try:
        trainer = make_trainer(start)
    except Exception as error:
        conn.send(("failed", 0, describe_error(error),
                   "".join(traceback.format_exception(error))))
        return
    child = Child(conn, prefix, control, Session(trainer, read_file=load_state))
    in_a_training_process()
    if PAUSE_SIGNAL is not None:
        signal.signal(PAUSE_SIGNAL, child.on_pause_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C is the window's to handle
    control[STEPS] = trainer.step_count
    control[READY] = 1  # Pause may signal now: the handler is in place
    child.send("ready", os.getpid())
    child.publish()
    try:
        child.loop()
    except (EOFError, BrokenPipeError, ConnectionResetError):
        pass  # the window has gone: so does its training process
    finally:
        child.publisher.close()
