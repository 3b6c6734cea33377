"""The training process as Qt signals: what arrives on its pipe, delivered on the UI thread.

A `QSocketNotifier` watches the pipe of a `gradbox.runner.process.TrainingProcess`;
when something arrives (or the process died and the pipe ended), the events are read
at once -- no thread, no polling timer -- and each becomes a signal. Reading costs the
UI thread only the small metadata: a snapshot's arrays are views of shared memory.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, QSocketNotifier, Signal, Slot

from gradbox.runner.process import (
    Died,
    Failed,
    NewSnapshot,
    Note,
    Reply,
    RunChanged,
    Stopped,
    TrainingProcess,
)
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState


class ProcessLink(QObject):
    """One training process, watched from the UI thread."""

    snapshot_arrived = Signal(object)  # Snapshot
    replied = Signal(int, object)  # (the call's number, its answer)
    failed = Signal(int, str, str)  # (the call's number or 0, in words, traceback)
    running_changed = Signal(bool, int)  # (running, the run's number)
    stopped = Signal(str)  # a run stopped itself on a problem
    note = Signal(str)
    died = Signal(str)  # the process ended unasked, in words

    def __init__(self, start: TrainingState | TrainingConfig | str | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process = TrainingProcess(start)
        self._notifier: QSocketNotifier | None = QSocketNotifier(
            self.process.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)

    @property
    def latest(self) -> Snapshot | None:
        return self.process.latest

    @property
    def alive(self) -> bool:
        return self.process.alive

    def call(self, command: str, /, *args: Any, **kwargs: Any) -> int:
        return self.process.call(command, *args, **kwargs)

    def run(self, number: int, goal: RunGoal | None, interval_s: float) -> None:
        self.process.run(number, goal, interval_s)

    def set_speed(self, interval_s: float) -> None:
        self.process.set_speed(interval_s)

    def pause(self, upto: int) -> None:
        self.process.pause(upto)

    def want_snapshot(self) -> None:
        self.process.want_snapshot()

    @Slot()
    def _read(self) -> None:
        for event in self.process.receive():
            if isinstance(event, NewSnapshot):
                self.snapshot_arrived.emit(event.snapshot)
            elif isinstance(event, Reply):
                self.replied.emit(event.number, event.result)
            elif isinstance(event, Failed):
                self.failed.emit(event.number, event.text, event.detail)
            elif isinstance(event, RunChanged):
                self.running_changed.emit(event.running, event.number)
            elif isinstance(event, Stopped):
                self.stopped.emit(event.reason)
            elif isinstance(event, Note):
                self.note.emit(event.text)
            elif isinstance(event, Died):
                if self._notifier is not None:
                    self._notifier.setEnabled(False)  # the pipe stays readable (at its end)
                self.died.emit(event.text)

    def close(self) -> None:
        """End the process and free its shared memory. Safe to call twice."""
        notifier, self._notifier = self._notifier, None
        if notifier is not None:
            # Gone now, while the application is: a notifier left to Qt's teardown, on
            # a pipe already closed, crashed the app on its way out (SIGSEGV).
            notifier.setEnabled(False)
            notifier.setParent(None)
            del notifier
        self.process.close()
