"""A `SessionPort` whose `Session` runs here, on the UI thread: a view built on it needs
no training process (napari tests `QtDims(Dims())` with no viewer; this is the same
idea). For widget tests and benchmarks, not for the app: a step here holds the UI
thread, and a Pause waits for the step under way.

It behaves as the process's port does, in the same order: a command runs at once and
its snapshot goes to the pacer (drawn at once if the last frame is a frame old); a note
or a stop is heard as the session says it; an answer is called back on the event loop's
next turn, never inside `ask`. A Run is a timer: one `Session.tick` per timeout, at the
chosen speed, a snapshot published when the last frame has been drawn.
"""

from __future__ import annotations

import itertools
import traceback
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer

from gradbox.files.sessions import load_state
from gradbox.port.common import PortBase
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.limits import describe_error
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.timeline import Timeline


class _Loaded:
    """A lazy answer already in hand (the process's `LazyAnswer`, here)."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def load(self) -> Any:
        return self._value


class InProcessPort(PortBase):
    """The `SessionPort` over a `Session` in this process (see the module's docstring)."""

    def __init__(self, session: Session | TrainingConfig | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session if isinstance(session, Session) else Session.fresh(session)
        self.session.view = self
        self.session.read_file = self.session.read_file or load_state
        self._numbers = itertools.count(1)
        self._run_number = 0  # the run going on (0: none)
        self._wanted = False  # a frame was drawn since the last snapshot of a Run
        self._ticker = QTimer(self)
        self._ticker.timeout.connect(self._tick)
        self.snapshot = self.newest = self.session.snapshot()

    # --- the session's view ---------------------------------------------------------------
    def show_message(self, text: str) -> None:
        self.message.emit(text)

    def show_stop(self, reason: str) -> None:
        self._on_stopped(reason)

    # --- the transport ------------------------------------------------------------------
    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
              waited: bool = False, lazy: bool = False) -> int:
        number = next(self._numbers) if waited else 0
        try:
            result, snapshot = self.session.perform(name, *args, **kwargs)
        except Exception as error:  # as in the training process: said, and nothing lost
            self._publish()
            failure = (number, describe_error(error),
                       "".join(traceback.format_exception(error)))
            QTimer.singleShot(0, self, lambda: self._on_failed(*failure))
            return number
        if snapshot is not None:
            self._publish(snapshot)
        if waited:
            answer = _Loaded(result) if lazy else result
            QTimer.singleShot(0, self, lambda: self._on_replied(number, answer))
        return number

    def _publish(self, snapshot: Snapshot | None = None) -> None:
        self._wanted = False
        self.newest = snapshot if snapshot is not None else self.session.snapshot()
        self._on_snapshot(self.newest)

    def _start_run(self, number: int, goal: RunGoal, interval_s: float) -> None:
        if self._paused_upto >= number:
            self._on_running_changed(False, number)  # paused before it could start
            return
        self._run_number = number
        self.session.start_run(goal)
        self._ticker.start(round(interval_s * 1000))
        self._on_running_changed(True, number)

    def _tick(self) -> None:
        try:
            tick = self.session.tick(capture_graph=self.graph_wanted and self._wanted)
        except Exception as error:
            self._finish_run()
            self._on_failed(0, describe_error(error), "".join(traceback.format_exception(error)))
            return
        if tick.alarm:
            self._finish_run(alarm=tick.alarm)
        elif tick.reached:
            self._finish_run(note=f"Run stopped: {tick.reached}")
        elif tick.stepped and self._wanted:
            self._publish()

    def _finish_run(self, alarm: str = "", note: str = "") -> None:
        number, self._run_number = self._run_number, 0
        self._ticker.stop()
        self.session.finish_run()
        self._publish()
        self._on_running_changed(False, number)
        if alarm:
            self._on_stopped(alarm)
        if note:
            self.message.emit(note)

    def _pause(self, upto: int) -> None:
        if self._run_number and upto >= self._run_number:
            self._finish_run()

    def _speed(self, interval_s: float) -> None:
        self._ticker.setInterval(round(interval_s * 1000))

    def _want_snapshot(self) -> None:
        self._wanted = True

    # --- saving, and the end --------------------------------------------------------------
    def whole_run_written(self, answer: Any, path: Path, step: int) -> None:
        """Nothing to let go of: the run lives here."""

    def stopped_timeline(self) -> Timeline:
        """The run, as a save on quit writes it."""
        return self.session.timeline

    def continue_training(self) -> None:
        """Nothing to continue: a session in this process does not die alone."""

    def shutdown(self) -> None:
        """Stop a Run and the pacer's work. Safe to call twice."""
        self._ticker.stop()
        self._run_number = 0
        self.pacer.shutdown()

    @property
    def stepping(self) -> bool:
        """Never seen true: a step here holds the UI thread until it is done."""
        return False
