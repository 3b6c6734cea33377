"""Unsaved-change tracking and autosave to the user's data directory.

A snapshot's *signature* (step, phase, weights, data, settings, switches) tells whether
the session differs from what was last written by the user; selection changes and
graph captures do not count. A few seconds after a change, the session is written to
`autosave.gradbox.json` in the app's data directory, by the worker thread that owns
the trainer. A clean exit deletes that file, so finding it at launch means the last
run ended in a crash or a kill, and the window offers to restore it.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal, Slot

from gradbox import persistence
from gradbox.training import Snapshot
from gradbox.views.session import SessionController

log = logging.getLogger(__name__)

AUTOSAVE_DELAY_MS = 3000
AUTOSAVE_NAME = "autosave.gradbox.json"


def default_autosave_path() -> Path:
    folder = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation)
    return Path(folder or Path.home() / ".gradbox") / AUTOSAVE_NAME


def signature(snapshot: Snapshot) -> str:
    """Everything a save would keep, reduced to a digest; equal digests, nothing to save."""
    digest = hashlib.blake2b(digest_size=16)
    for array in (snapshot.params, snapshot.grads, snapshot.points, snapshot.labels,
                  snapshot.is_test):
        digest.update(array.tobytes())
    digest.update(repr((snapshot.step, snapshot.phase, snapshot.config, snapshot.edits,
                        snapshot.forget_zero_grad, snapshot.ghost)).encode())
    return digest.hexdigest()


class Autosaver(QObject):
    """Knows whether the session has unsaved changes, and keeps a crash copy on disk."""

    dirty_changed = Signal(bool)

    def __init__(self, controller: SessionController, path: Path | None = None,
                 delay_ms: int = AUTOSAVE_DELAY_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.path = path or default_autosave_path()
        self._saved_signature = signature(controller.snapshot)
        self._autosaved_signature = self._saved_signature
        self.dirty = False
        self.enabled = True
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self.autosave_now)
        controller.snapshot_changed.connect(self._on_snapshot)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        current = signature(snapshot)
        self._set_dirty(current != self._saved_signature)
        if current != self._autosaved_signature and self.enabled and not self._timer.isActive():
            self._timer.start()

    def _set_dirty(self, dirty: bool) -> None:
        if dirty != self.dirty:
            self.dirty = dirty
            self.dirty_changed.emit(dirty)

    def mark_saved(self, snapshot: Snapshot | None = None) -> None:
        """The session was just written (or opened) by the user: nothing is unsaved."""
        self._saved_signature = signature(snapshot or self.controller.snapshot)
        self._set_dirty(False)

    @Slot()
    def autosave_now(self) -> None:
        path = self.path
        wanted = signature(self.controller.snapshot)

        def write(trainer: object) -> None:
            # A crash copy that cannot be written is worth a log line, not a dialog
            # every few seconds.
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                persistence.save_session(trainer, path)  # type: ignore[arg-type]
            except (OSError, persistence.SessionError) as error:
                log.warning("autosave to %s failed: %s", path, error)

        def done(_result: object) -> None:
            self._autosaved_signature = wanted
        self.controller.query(write, done)

    def discard(self) -> None:
        """A clean exit: no crash copy is needed any more."""
        self._timer.stop()
        self.enabled = False
        try:
            self.path.unlink(missing_ok=True)
        except OSError as error:
            log.warning("could not remove the autosave file %s: %s", self.path, error)


def crash_copy(path: Path | None = None) -> Path | None:
    """The autosave left by a run that did not exit cleanly, if any."""
    path = path or default_autosave_path()
    return path if path.is_file() else None
