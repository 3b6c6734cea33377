"""The training process as Qt signals: what arrives on its pipe, delivered on the UI thread.

A `QSocketNotifier` watches the pipe of a `gradbox.runner.process.TrainingProcess`;
when something arrives (or the process died and the pipe ended), the events are read
at once -- no thread, no polling timer -- and each becomes a signal. Reading costs the
UI thread only the small metadata: a snapshot's arrays are views of shared memory.
"""

from __future__ import annotations

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


class ProcessLink(QObject):
    """One training process's events as signals, on the UI thread. It only listens:
    commands go to the `TrainingProcess` itself."""

    snapshot_arrived = Signal(object)  # Snapshot
    replied = Signal(int, object)  # (the call's number, its answer)
    failed = Signal(int, str, str)  # (the call's number or 0, in words, traceback)
    running_changed = Signal(bool, int)  # (running, the run's number)
    stopped = Signal(str)  # a run stopped itself on a problem
    note = Signal(str)
    died = Signal(str)  # the process ended unasked, in words

    def __init__(self, process: TrainingProcess, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.process = process
        self._notifier: QSocketNotifier | None = QSocketNotifier(
            process.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._read)

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
        """Stop listening (before the process is closed). Safe to call twice."""
        notifier, self._notifier = self._notifier, None
        if notifier is not None:
            # Gone now, while the application is: a notifier left to Qt's teardown, on
            # a pipe already closed, crashed the app on its way out (SIGSEGV).
            notifier.setEnabled(False)
            notifier.setParent(None)
            del notifier
