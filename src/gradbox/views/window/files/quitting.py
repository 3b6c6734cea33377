"""Quitting never loses work: Quit, the window closed, or a signal ending the app.

A file that cannot be written (a full disk, a read-only file) keeps the window open with
the choice of Save As…, Discard or Cancel, and the crash copy is brought up to date first
(or the question says it could not be). The run is paused and every write is made before
the training stops. A signal (SIGTERM, SIGINT) closes without asking: unsaved changes
stay in the crash copy and are offered next time, saying which signal ended the run.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QApplication

from gradbox.files import sessions as persistence
from gradbox.port.protocol import SessionPort
from gradbox.views.window.files.autosave import Autosaver, failure_reason
from gradbox.views.window.files.document import SessionDocument
from gradbox.views.window.files.saving import SessionSaver

log = logging.getLogger(__name__)

ENDED_BY_KEY = "ended_by_signal"  # settings: the signal that ended a run with unsaved work


class _Keeping(Protocol):
    """Resume: the session kept for the next start."""

    enabled: bool
    path: Path

    def keep(self) -> BaseException | None: ...


class _FileSide(Protocol):
    """The File menu's side (a SessionFiles)."""

    offering_restore: bool

    def save_session_as(self) -> None: ...
    def cancel_reading(self) -> None: ...


class _Stopping(Protocol):
    def shutdown(self) -> None: ...  # the loss landscape's worker


class QuittingWindow(Protocol):
    """What quitting writes with and asks through: the document, the writers, the
    training process, the questions the window puts."""

    controller: SessionPort
    document: SessionDocument
    saver: SessionSaver
    autosaver: Autosaver | None
    resume: _Keeping | None
    files: _FileSide
    landscape: _Stopping
    settings: QSettings | None

    def hide(self) -> None: ...
    def show(self) -> None: ...
    def close(self) -> bool: ...
    def save_settings(self) -> None: ...
    def ask_unsaved(self) -> str: ...
    def ask_save_failed(self, text: str) -> str: ...


class Quitting:
    """Decides whether the main window may close, making every write first."""

    def __init__(self, window: QuittingWindow) -> None:
        self.window = window
        self.ended_by = ""  # the signal that is ending the app, if one is

    def is_ending(self) -> bool:
        """A signal is ending the app: no question may wait for an answer."""
        return bool(self.ended_by)

    def end_by_signal(self, name: str) -> None:
        """SIGTERM or SIGINT (a logout, `kill`, Ctrl+C): close as Quit would, without
        asking anything. Unsaved changes stay in the autosave and are offered next time,
        saying which signal ended the run; with nothing unsaved the autosave is removed."""
        self.ended_by = name
        self.window.close()
        QApplication.quit()  # also ends a question's own event loop, if one is open

    def may_close(self, event: QCloseEvent) -> bool:
        """Make the writes a close needs; True if the window closes now (False: the
        event is ignored and the window stays, its question answered or still open)."""
        w = self.window
        if self.ended_by:
            self._close_for_signal()
            w.saver.close()
            return True
        if w.resume is not None and w.resume.enabled:
            # Kept for the next start, unsaved changes and all, as an editor does.
            w.controller.pause()
            w.hide()  # the app, not a person, waits for the file
            error = w.resume.keep()
            unsaved = w.autosaver is not None and w.autosaver.dirty
            if error is not None and unsaved and not self._write_failed(
                    event, f"This session could not be kept for the next start in "
                    f"{w.resume.path}: {failure_reason(error)}."):
                return False
            self._finish(discard_crash_copy=error is None or unsaved)
            return True
        if w.autosaver is not None and w.autosaver.dirty:
            answer = w.ask_unsaved()
            path = w.document.path
            if answer == "cancel" or (answer == "save" and path is None):
                event.ignore()
                if answer == "save":
                    w.files.save_session_as()
                return False
            if answer == "save":
                assert path is not None
                w.controller.pause()
                w.hide()  # the window goes first: the app, not a person, waits
                error = w.saver.save_and_wait(path)
                if error is not None and not self._write_failed(
                        event, f"{path.name} could not be saved: "
                        f"{failure_reason(error)}."):
                    return False
        self._finish()
        return True

    def _finish(self, discard_crash_copy: bool = True) -> None:
        w = self.window
        w.files.cancel_reading()  # a file still being read arrives in no window
        w.save_settings()
        w.landscape.shutdown()
        w.controller.shutdown()
        # (a crash copy still being offered stays, and is offered again next time)
        if w.autosaver is not None and discard_crash_copy and not w.files.offering_restore:
            w.autosaver.discard()
        # The writer's thread ends with the window, its last writes made: none can call
        # back into a window already deleted (a test run once aborted in that teardown).
        w.saver.close()

    def _write_failed(self, event: QCloseEvent, what: str) -> bool:
        """A write on quit failed: bring the crash copy up to date, show the window again
        and ask. True to close anyway (Discard); otherwise the window stays."""
        w = self.window
        crash = "no crash copy is kept"
        if w.autosaver is not None:
            try:
                w.autosaver.path.parent.mkdir(parents=True, exist_ok=True)
                error = w.saver.save_and_wait(w.autosaver.path)
            except OSError as failure:
                error = failure
            crash = "" if error is None else failure_reason(error)
        w.show()
        kept = ("The crash copy holds the session as it is now." if not crash else
                f"The crash copy could not be written either: {crash}.")
        answer = w.ask_save_failed(f"{what}\n\n{kept}\n\nThe window stays open until "
                                   "you choose: save it elsewhere, or discard the changes.")
        if answer == "discard":
            return True
        event.ignore()
        if answer == "save_as":
            QTimer.singleShot(0, w.files.save_session_as)
        return False

    def _close_for_signal(self) -> None:
        w = self.window
        w.files.cancel_reading()
        w.save_settings()
        w.controller.shutdown()
        if w.autosaver is None:
            return
        if w.files.offering_restore:
            # The last run's copy is still unanswered: it stays, and is offered again.
            w.autosaver.enabled = False
            return
        if not w.autosaver.dirty:
            w.autosaver.discard()
            return
        w.autosaver.enabled = False
        w.hide()
        try:  # the training has stopped: the timeline is ours, and the app is ending
            w.saver.write_stopped(w.controller.stopped_timeline(), w.autosaver.path)
        except (OSError, persistence.SessionError) as error:
            log.error("keeping the unsaved session on %s failed: %s", self.ended_by, error)
        if w.settings is not None:
            w.settings.setValue(ENDED_BY_KEY, self.ended_by)
            w.settings.sync()
