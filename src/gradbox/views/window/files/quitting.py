"""Quitting never loses work: Quit, the window closed, or a signal ending the app.

A file that cannot be written (a full disk, a read-only file) keeps the window open with
the choice of Save As…, Discard or Cancel, and the crash copy is brought up to date first
(or the question says it could not be). The run is paused and every write is made before
the training stops. A signal (SIGTERM, SIGINT) closes without asking: unsaved changes
stay in the crash copy and are offered next time, saying which signal ended the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
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
    """The File menu's side (a SessionFiles), and the Resume it holds."""

    offering_restore: bool
    resume: _Keeping | None

    def save_session_as(self) -> None: ...
    def cancel_reading(self) -> None: ...


class ClosingWindow(Protocol):
    """The window being closed: it hides while the app writes, shows again to ask, and
    puts the questions (tests replace them on the window)."""

    def hide(self) -> None: ...
    def show(self) -> None: ...
    def close(self) -> bool: ...
    def save_settings(self) -> None: ...
    def ask_unsaved(self) -> str: ...
    def ask_save_failed(self, text: str) -> str: ...


class Quitting:
    """Decides whether the main window may close, making every write first."""

    def __init__(self, window: ClosingWindow, port: SessionPort, *, document: SessionDocument,
                 saver: SessionSaver, autosaver: Autosaver | None, files: _FileSide,
                 stop_workers: Callable[[], None], settings: QSettings | None) -> None:
        """`stop_workers()`: the window's own threads end (the loss landscape's)."""
        self.window = window
        self.port = port
        self.document = document
        self.saver = saver
        self.autosaver = autosaver
        self.files = files
        self.stop_workers = stop_workers
        self.settings = settings
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
            self.saver.close()
            return True
        if self.files.resume is not None and self.files.resume.enabled:
            # Kept for the next start, unsaved changes and all, as an editor does.
            self.port.pause()
            w.hide()  # the app, not a person, waits for the file
            error = self.files.resume.keep()
            unsaved = self.autosaver is not None and self.autosaver.dirty
            if error is not None and unsaved and not self._write_failed(
                    event, f"This session could not be kept for the next start in "
                    f"{self.files.resume.path}: {failure_reason(error)}."):
                return False
            self._finish(discard_crash_copy=error is None or unsaved)
            return True
        if self.autosaver is not None and self.autosaver.dirty:
            answer = w.ask_unsaved()
            path = self.document.path
            if answer == "cancel" or (answer == "save" and path is None):
                event.ignore()
                if answer == "save":
                    self.files.save_session_as()
                return False
            if answer == "save":
                assert path is not None
                self.port.pause()
                w.hide()  # the window goes first: the app, not a person, waits
                error = self.saver.save_and_wait(path)
                if error is not None and not self._write_failed(
                        event, f"{path.name} could not be saved: "
                        f"{failure_reason(error)}."):
                    return False
        self._finish()
        return True

    def _finish(self, discard_crash_copy: bool = True) -> None:
        w = self.window
        self.files.cancel_reading()  # a file still being read arrives in no window
        w.save_settings()
        self.stop_workers()
        self.port.shutdown()
        # (a crash copy still being offered stays, and is offered again next time)
        if self.autosaver is not None and discard_crash_copy and not self.files.offering_restore:
            self.autosaver.discard()
        # The writer's thread ends with the window, its last writes made: none can call
        # back into a window already deleted (a test run once aborted in that teardown).
        self.saver.close()

    def _write_failed(self, event: QCloseEvent, what: str) -> bool:
        """A write on quit failed: bring the crash copy up to date, show the window again
        and ask. True to close anyway (Discard); otherwise the window stays."""
        w = self.window
        crash = "no crash copy is kept"
        if self.autosaver is not None:
            try:
                self.autosaver.path.parent.mkdir(parents=True, exist_ok=True)
                error = self.saver.save_and_wait(self.autosaver.path)
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
            QTimer.singleShot(0, self.files.save_session_as)
        return False

    def _close_for_signal(self) -> None:
        w = self.window
        self.files.cancel_reading()
        w.save_settings()
        self.port.shutdown()
        if self.autosaver is None:
            return
        if self.files.offering_restore:
            # The last run's copy is still unanswered: it stays, and is offered again.
            self.autosaver.enabled = False
            return
        if not self.autosaver.dirty:
            self.autosaver.discard()
            return
        self.autosaver.enabled = False
        w.hide()
        try:  # the training has stopped: the timeline is ours, and the app is ending
            self.saver.write_stopped(self.port.stopped_timeline(), self.autosaver.path)
        except (OSError, persistence.SessionError) as error:
            log.error("keeping the unsaved session on %s failed: %s", self.ended_by, error)
        if self.settings is not None:
            self.settings.setValue(ENDED_BY_KEY, self.ended_by)
            self.settings.sync()
