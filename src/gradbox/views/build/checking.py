"""Check, off the UI thread: the learner's code runs in the sandbox's child process.

`Checker.check(source, stage)` starts a check and returns at once; a timer asks the
running check whether it has finished (`poll`, which never blocks), and `finished`
brings its `CheckReport` -- plain data read from the child, never an unpickled object.
`cancel()` ends the child at once. A hang, a recursion blow-up or a memory blow-up in the
learner's code ends in the sandbox's limits and comes back as a report that says so;
the window answers all the while (the UI thread never waits for a check).

A new check while one runs cancels the old one: only the newest code's answer counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, Signal

from gradbox.build.report import CheckReport

POLL_MS = 40  # how often a running check is asked: well under a reading's pause


class Running(Protocol):
    """A check under way (the sandbox's handle)."""

    def poll(self) -> CheckReport | None: ...
    def cancel(self) -> None: ...


Start = Callable[[str, int], Running]


def sandbox_start(source: str, stage: int) -> Running:
    """A check in the sandbox's child process (its handle can end the child at once)."""
    from gradbox.build import sandbox

    return sandbox.start_check(source, up_to_stage=stage)


class Checker(QObject):
    """One check at a time, started and polled from the UI thread."""

    started = Signal()
    finished = Signal(object)  # CheckReport
    cancelled = Signal()

    def __init__(self, start: Start | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._start = start or sandbox_start
        self._running: Running | None = None
        self.started_at = 0.0
        self.source = ""  # what the running (or last) check checks
        self.stage = 0
        self._timer = QTimer(self, interval=POLL_MS)
        self._timer.timeout.connect(self._poll)

    def is_running(self) -> bool:
        return self._running is not None

    def elapsed(self) -> float:
        return time.monotonic() - self.started_at if self._running is not None else 0.0

    def check(self, source: str, stage: int) -> None:
        """Check `source` up to `stage`; a check already running is cancelled first."""
        if self._running is not None:
            self._running.cancel()
            self._running = None
        self.source, self.stage = source, stage
        try:
            self._running = self._start(source, stage)
        except Exception as error:  # could not even start a child: say so as a report
            self.finished.emit(CheckReport.failed_to_run(f"The check could not start: {error}"))
            return
        self.started_at = time.monotonic()
        self._timer.start()
        self.started.emit()

    def cancel(self) -> None:
        if self._running is None:
            return
        self._running.cancel()
        self._running = None
        self._timer.stop()
        self.cancelled.emit()

    def _poll(self) -> None:
        running = self._running
        if running is None:
            self._timer.stop()
            return
        try:
            report = running.poll()
        except Exception as error:
            report = CheckReport.failed_to_run(f"The check failed: {error}")
        if report is None:
            return
        self._running = None
        self._timer.stop()
        self.finished.emit(report)
