"""Reading files off the UI thread: a progress bar with Cancel once it takes half a second.

Opening a session or importing a CSV reads, checks and builds on a thread of its own
(a 990x990 session took 5-21 s, during which the window froze). The answer comes back
to the UI thread through a queued signal; past PROGRESS_AFTER_MS a progress dialog shows
(with the fraction read, when the work reports one) and Cancel, which drops the result
-- and stops the work at its next progress report, if it makes any.

A task may go on after its thread (`keep_open`, from `done`): opening a session, the
training process builds the run after the file is checked here, and the dialog stays
until it has (`end`).

A dialog the person closes (Cancel, Escape, its close button) is a cancel, and is only
hidden: it lives until the task ends. (It was deleted at once, and the restore question
at start, answered Yes after Escape had closed the progress over it, raised "Internal C++
object (QProgressDialog) already deleted".)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QProgressDialog, QWidget

PROGRESS_AFTER_MS = 500
NEVER_MS = 2**31 - 1  # a minimum duration that keeps a progress dialog from showing
Progress = Callable[[float], bool]  # fraction done -> go on?
Done = Callable[[Any, BaseException | None], None]


class BackgroundTask(QObject):
    """`work(progress)` on its own thread; `done(result, error)` back on the UI thread,
    unless cancelled. Keep a reference until `finished` (the window keeps its tasks)."""

    _answered = Signal(object, object)  # (result, error), from the work's thread
    _progressed = Signal(float)
    finished = Signal()

    def __init__(self, parent: QWidget, label: str, work: Callable[[Progress], Any],
                 done: Done) -> None:
        super().__init__(parent)
        self._done = done
        self.cancelled = False
        self._was_shown = False  # the dialog, when the answer came
        self.cancel_pressed = False  # by the person, in the dialog (not by the window closing)
        self.kept_open = False  # going on elsewhere after its thread: `end` ends it
        self.label = label  # what the dialog says
        self._dialog_open = True  # not yet closed by a cancel or the end
        self.dialog = QProgressDialog(label, "Cancel", 0, 0, parent)
        self.dialog.setWindowTitle("gradbox")
        self.dialog.setWindowModality(Qt.WindowModal)
        self.dialog.setMinimumDuration(PROGRESS_AFTER_MS)
        self.dialog.setAutoClose(False)
        self.dialog.setAutoReset(False)
        self.dialog.canceled.connect(self._on_cancel_pressed)
        self.dialog.setValue(0)  # starts the minimum-duration clock
        self._answered.connect(self._on_answer, Qt.QueuedConnection)
        self._progressed.connect(self._on_progress, Qt.QueuedConnection)

        def run() -> None:
            try:
                result, error = work(self._report), None
            except BaseException as failure:  # handed to `done`, which shows it
                result, error = None, failure
            self._answered.emit(result, error)
        self.thread = threading.Thread(target=run, name="gradbox-reading", daemon=True)
        self.thread.start()

    def _report(self, fraction: float) -> bool:
        """The work's progress callback (any thread): False once cancelled."""
        if not self.cancelled:
            self._progressed.emit(fraction)
        return not self.cancelled

    @Slot(float)
    def _on_progress(self, fraction: float) -> None:
        if not self.cancelled:
            if self.dialog.maximum() == 0:
                self.dialog.setRange(0, 1000)
            self.dialog.setValue(int(fraction * 1000))

    @Slot()
    def _on_cancel_pressed(self) -> None:
        self.cancel_pressed = True
        self.cancel()

    @Slot()
    def cancel(self) -> None:
        """Drop the result; the work stops at its next progress report, if any."""
        self.cancelled = True
        self._close_dialog()

    def _close_dialog(self) -> None:
        """Hidden, not deleted: `end` deletes it (whoever holds the task may still ask
        it things)."""
        if self._dialog_open:
            self._dialog_open = False
            self.dialog.canceled.disconnect(self._on_cancel_pressed)
            self.dialog.setMinimumDuration(NEVER_MS)  # nor shows again by its own clock
            self.dialog.close()

    def keep_open(self, label: str) -> None:
        """From `done`: the task goes on elsewhere; its dialog (saying `label`) is back,
        and Cancel stays possible, until `end()`."""
        self.kept_open = True
        self.label = label
        if not self.cancelled:
            self.dialog.setLabelText(label)
            # Back as it was (its clock from now, if it had not shown yet).
            self.dialog.setMinimumDuration(PROGRESS_AFTER_MS)
            if self._was_shown:
                self.dialog.show()

    def end(self) -> None:
        """A task kept open is over."""
        self._close_dialog()
        self.dialog.deleteLater()
        self.finished.emit()
        self.deleteLater()

    @Slot(object, object)
    def _on_answer(self, result: Any, error: BaseException | None) -> None:
        # What `done` puts up (a question, an error) comes over the window, and the
        # progress dialog, modal to the window, lay over it and took its clicks: at
        # start 'Restore it?' could not be answered under a finished read. It steps
        # aside (nor shows by its own clock) until `keep_open` or `end`.
        if not self.cancelled:  # (cancelled, the dialog is closed)
            self._was_shown = self.dialog.isVisible()
            self.dialog.setMinimumDuration(NEVER_MS)
            self.dialog.hide()
        try:
            if not self.cancelled:
                self._done(result, error)
        except BaseException:
            self.kept_open = False
            raise
        finally:  # a `done` that raises (a bug, shown by the error dialog) still ends
            if not self.kept_open:
                self.end()


def run_in_background(parent: QWidget, label: str, work: Callable[[Progress], Any],
                      done: Done) -> BackgroundTask:
    return BackgroundTask(parent, label, work, done)
