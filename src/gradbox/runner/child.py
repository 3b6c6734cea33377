"""The training process: hosts the trainer, answers named commands, runs, publishes.

`main` is what `TrainingProcess` starts in a child process (spawn context). It reads
messages from its end of the pipe -- commands by name with plain-data arguments, Run,
quit -- and answers with replies, notes and snapshots (see gradbox.runner.wire).

A Run is this process's own loop: a step, then the window's messages, then the next.
A snapshot is published only when the window asked for one (its `WANTED` mark: at most
one per frame), and always after a command and at the end of a run.

Pause means now. The window marks the run paused in the control block and sends
SIGUSR1; the signal's handler runs between two bytecodes of the step under way and
raises `Abandoned`, and the step's start is restored (`Trainer.rewind` to the step it
began at), as when a step stops on a non-finite number. Outside a step the mark is read
at the next step boundary. So a 1000x1000 network's step of seconds is left at once.
"""

from __future__ import annotations

import gc
import os
import signal
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, NamedTuple

import numpy as np

from gradbox.runner.shared import Segment
from gradbox.runner.wire import PAUSED_UPTO, READY, STEPPING, STEPS, WANTED, Publisher, control_view
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal, divergence
from gradbox.training.history import StepRecord
from gradbox.training.limits import describe_error
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

# Young objects beyond this many (a big network's graph) are frozen rather than scanned
# again and again by the cyclic collector; W1's step leaves a few thousand.
FREEZE_ABOVE = 100_000
PAUSE_SIGNAL = getattr(signal, "SIGUSR1", None)


class Abandoned(BaseException):
    """Raised inside a step by Pause (a BaseException: no `except Exception` keeps it)."""


def freeze_big_young_generation() -> None:
    """After a step or command: put a big network's live nodes out of the collector's way
    (`gc.freeze()`, constant time; reference counting still frees them)."""
    if gc.get_count()[0] > FREEZE_ABOVE:
        gc.freeze()


def make_trainer(start: TrainingState | TrainingConfig | None) -> Trainer:
    if isinstance(start, TrainingState):
        return Trainer.from_state(start)
    return Trainer(start)


class Tick(NamedTuple):
    """What one tick of a Run did (see `TrainerSession.tick`)."""

    stepped: bool
    alarm: str = ""
    reached: str = ""


class TrainerSession:
    """The commands the window may send, by name, over a `Trainer`: the shape of the
    Qt-free `Session` (issue 21), which takes this place when it is there. Arguments and
    results are plain data; what the session has to say goes to `view`."""

    QUESTIONS = frozenset({"state", "parameter_history", "trajectory", "training_loss",
                           "snapshot", "timeline_view"})

    def __init__(self, trainer: Trainer, view: Any = None) -> None:
        self.trainer = trainer
        self.view = view
        self.graph_wanted = False
        self._goal = RunGoal()
        self._steps_done = 0

    def command(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        t = self.trainer
        commands: dict[str, Callable[..., Any]] = {
            "step": self.step, "substep": self.substep, "rewind": t.rewind,
            "reset": t.reset, "reinitialize": t.reinitialize,
            "set_forget_zero_grad": t.set_forget_zero_grad, "set_ghost": t.set_ghost,
            "set_parameter": t.set_parameter, "set_lr": t.set_lr, "pin": t.pin,
            "unpin": t.unpin, "replace_dataset": t.replace_dataset,
            "set_config": self.set_config, "open_run": self.open_run,
            "state": t.state, "parameter_history": t.parameter_history,
            "trajectory": t.trajectory, "training_loss": t.training_loss,
            "capture_graph": t.capture_current_graph, "snapshot": t.snapshot,
            "timeline_view": self.timeline_view,
        }
        if name not in commands:
            raise KeyError(f"there is no session command named {name!r}")
        self.trainer.capture_graph = self.graph_wanted
        return commands[name](*args, **kwargs)

    def snapshot(self) -> Snapshot:
        return self.trainer.snapshot()

    def timeline_view(self) -> tuple[None, str, str]:
        return None, "", ""

    def step(self) -> StepRecord | None:
        record = self.trainer.step()
        if record is None:
            self.view.show_stop(self.trainer.stop_reason)
        return record

    def substep(self) -> str:
        phase = self.trainer.substep()
        if self.trainer.stop_reason:
            self.view.show_stop(self.trainer.stop_reason)
        return phase

    def set_config(self, config: TrainingConfig) -> None:
        self.trainer = self.trainer.with_config(config)

    def open_run(self, state: TrainingState, what: str = "") -> None:
        self.trainer = Trainer.from_state(state)

    def start_run(self, goal: RunGoal | None = None) -> None:
        self._goal = goal or RunGoal()
        self._steps_done = 0

    def tick(self, capture_graph: bool | None = None) -> Tick:
        trainer = self.trainer
        trainer.capture_graph = self.graph_wanted if capture_graph is None else capture_graph
        record = trainer.step()
        if record is None:
            return Tick(False, alarm=trainer.stop_reason)
        self._steps_done += 1
        diverging = divergence(trainer.history, trainer.forget_zero_grad)
        if diverging:
            return Tick(True, alarm=diverging)
        return Tick(True, reached=self._goal.reached(record, self._steps_done))

    def finish_run(self) -> None:
        if self.graph_wanted:  # steps between shown snapshots were not traced
            self.trainer.capture_current_graph()


class Child:
    """The training process's loop (see the module's docstring); the session's view."""

    def __init__(self, conn: Connection, prefix: str, control: np.ndarray,
                 session: TrainerSession) -> None:
        self.conn = conn
        self.control = control
        self.session = session
        session.view = self
        self.publisher = Publisher(prefix, control)
        self.run_number = 0  # the run going on (0: none)
        self.interval_s = 0.0
        self.next_step_at = 0.0
        self._abandonable = False
        self.quit = False

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

    def publish(self) -> None:
        self.control[WANTED] = 0
        session = self.session
        session.trainer.capture_graph = session.graph_wanted
        self.send("snapshot", self.publisher.message(session.snapshot(),
                                                     session.timeline_view()))

    def handle(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "call":
            _, number, name, args, kwargs = message
            self.call(number, name, args, kwargs)
        elif kind == "run":
            _, number, goal, interval_s = message
            self.start_run(number, goal, interval_s)
        elif kind == "speed":
            self.interval_s = float(message[1])
        elif kind == "graph":
            self.session.graph_wanted = bool(message[1])
            if message[1]:
                self.call(0, "capture_graph", (), {})
        elif kind == "quit":
            self.quit = True

    def call(self, number: int, name: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> None:
        """Run command `name`. Its snapshot goes first, then the answer: a window that
        has the answer has the snapshot after it too. Questions publish nothing."""
        try:
            result = self.session.command(name, *args, **kwargs)
        except Exception as error:  # a command's failure must not end the process
            self.publish()
            self.send("failed", number, describe_error(error),
                      "".join(traceback.format_exception(error)))
            return
        finally:
            freeze_big_young_generation()
        if name not in self.session.QUESTIONS:
            self.publish()
        if not number:
            return  # (asked by this process itself)
        try:
            self.send("reply", number, result)
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
            tick = self.session.tick(capture_graph=self.session.graph_wanted
                                     and bool(self.control[WANTED]))
            self._abandonable = False
        except Abandoned:
            self._abandonable = False
            self.control[STEPPING] = 0
            self.abandon(start)
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
        elif tick.stepped and self.control[WANTED]:
            self.publish()

    def abandon(self, start: int) -> None:
        """Pause arrived mid-step: say so at once, then put the step's start back."""
        number, self.run_number = self.run_number, 0
        self.send("running", False, number)
        # The signal may have cut the step's bookkeeping short anywhere: the collector
        # and numpy's error state are put back as the step's context managers would.
        gc.enable()
        np.seterr(all="warn", under="ignore")
        self.session.trainer.rewind(start)
        self.session.finish_run()
        self.control[STEPS] = self.session.trainer.step_count
        self.publish()

    # --- the loop -------------------------------------------------------------------------
    def loop(self) -> None:
        while not self.quit:
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


def main(conn: Connection, prefix: str, control_name: str,
         start: TrainingState | TrainingConfig | None) -> None:
    """The training process's entry point (see `TrainingProcess`)."""
    control_segment = Segment(control_name)
    control = control_view(control_segment)
    # numpy's BLAS: one thread per core is right here (the window has its own process).
    try:
        trainer = make_trainer(start)
    except Exception as error:
        conn.send(("failed", 0, describe_error(error),
                   "".join(traceback.format_exception(error))))
        return
    child = Child(conn, prefix, control, TrainerSession(trainer))
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
