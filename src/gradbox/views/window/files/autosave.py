"""Unsaved-change tracking and autosave to the user's data directory.

A snapshot's *signature* (step, phase, weights, data, settings, switches) tells whether
the session differs from what was last written by the user; selection changes and
graph captures do not count. A few seconds after a change, the session is written to
`autosave.gradbox` in the app's data directory: the training process hands over the
run's state between two steps and a writer thread writes it (see views.saving), so
neither training nor the UI waits for the disk. A clean exit deletes that file -- closing
the window, Quit, and SIGTERM or SIGINT with nothing unsaved -- so finding it at launch
means the last run crashed, was killed outright, or was ended by a signal before its
changes were saved (then the settings say which signal), and the window offers to
restore it. If an autosave cannot be written, `failed` says so once (until one
succeeds again): the window shows it, since a crash copy that silently stopped updating
is worse than none.
"""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal, Slot

from gradbox.files import sessions as persistence
from gradbox.port.protocol import SessionPort
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.views.window.files.saving import SessionSaver, TrainingDiedError

log = logging.getLogger(__name__)

AUTOSAVE_DELAY_MS = 3000
AUTOSAVE_NAME = "autosave.gradbox"
# What versions before the compact format called it: still offered after a crash.
OLD_AUTOSAVE_NAME = "autosave.gradbox.json"


def default_autosave_path() -> Path:
    folder = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation)
    return Path(folder or Path.home() / ".gradbox") / AUTOSAVE_NAME


# Past this many numbers an array is digested by its sum and an even sample of its entries:
# hashing all of a 1000x1000 network's 16 MB of weights and gradients took 33 ms of every
# frame. A change the sum and the sample both miss would leave a state marked as saved;
# training moves every weight, and a weight typed in by hand is in `edits`.
DIGEST_WHOLE = 1 << 16


def _digest(digest: Any, array: np.ndarray) -> None:
    if array.size <= DIGEST_WHOLE:
        digest.update(array.tobytes())
        return
    flat = array.reshape(-1)
    digest.update(flat[:: flat.size // DIGEST_WHOLE + 1].tobytes())
    digest.update(repr((flat.size, float(np.sum(flat, dtype=np.float64)))).encode())


def signature(snapshot: Snapshot) -> str:
    """Everything a save would keep, reduced to a digest; equal digests, nothing to save."""
    digest = hashlib.blake2b(digest_size=16)
    for array in (snapshot.params, snapshot.grads, snapshot.points, snapshot.labels,
                  snapshot.is_test):
        _digest(digest, np.asarray(array))
    digest.update(repr((snapshot.step, snapshot.phase, snapshot.config, snapshot.edits,
                        snapshot.forget_zero_grad, snapshot.ghost)).encode())
    return digest.hexdigest()


class Autosaver(QObject):
    """Knows whether the session has unsaved changes, and keeps a crash copy on disk."""

    dirty_changed = Signal(bool)
    failed = Signal(str)  # once per run of failures: what went wrong, in words

    def __init__(self, controller: SessionPort, path: Path | None = None,
                 delay_ms: int = AUTOSAVE_DELAY_MS, parent: QObject | None = None,
                 saver: SessionSaver | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.path = path or default_autosave_path()
        self.saver = saver or SessionSaver(controller, self)
        self._saved_signature = signature(controller.snapshot)
        self._autosaved_signature = self._saved_signature
        self.dirty = False
        self.enabled = True
        self.failing = False
        self.failures = 0  # autosaves that could not be written, all told
        self._writing = False
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

    def mark_unsaved(self) -> None:
        """The session on screen has changes no file of the user's holds (a session
        kept at quit that had them)."""
        self._saved_signature = ""
        self._set_dirty(True)

    @Slot()
    def autosave_now(self) -> None:
        if not self.enabled:
            return
        if self._writing:  # one at a time; the next is due when this one is done
            self._timer.start()
            return
        self._writing = True
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            self._done(None, error)
            return
        self.saver.save(path, self._done)

    def _done(self, written: Snapshot | None, error: BaseException | None) -> None:
        self._writing = False
        if isinstance(error, TrainingDiedError):
            # Nothing was written, nothing failed on disk: the next snapshot (after
            # Continue) asks again. (This used to be never called: `_writing` stayed
            # true and the crash copy stopped for good at the step before the death.)
            return
        if error is None:
            assert written is not None
            self._autosaved_signature = signature(written)
            self.failing = False
            if signature(self.controller.snapshot) != self._autosaved_signature and \
                    self.enabled and not self._timer.isActive():
                self._timer.start()
            return
        self.failures += 1
        log.warning("autosave to %s failed: %s", self.path, error)
        if not self.failing:
            self.failing = True
            self.failed.emit(f"The crash copy of this session could not be written to "
                             f"{self.path}: {failure_reason(error)}. Save the session yourself "
                             "(File ▸ Save) to keep it safe.")

    def discard(self) -> None:
        """A clean exit: no crash copy is needed any more."""
        self._timer.stop()
        self.enabled = False
        self.saver.wait(10.0)
        for path in (self.path, self.path.with_name(OLD_AUTOSAVE_NAME)):
            try:
                path.unlink(missing_ok=True)
            except OSError as error:
                log.warning("could not remove the autosave file %s: %s", path, error)


def failure_reason(error: BaseException) -> str:
    """Why a write failed, in words a person reads."""
    if isinstance(error, MemoryError):
        return "there was not enough memory"
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error) or type(error).__name__


def crash_copy(path: Path | None = None) -> Path | None:
    """The autosave left by a run that did not exit cleanly, if any (and removes what
    interrupted autosaves left behind)."""
    path = path or default_autosave_path()
    for candidate in (path, path.with_name(OLD_AUTOSAVE_NAME)):
        persistence.remove_stale_temp_files(candidate)
    for candidate in (path, path.with_name(OLD_AUTOSAVE_NAME)):
        if candidate.is_file():
            return candidate
    return None


def set_aside(path: Path, why: str = "unreadable") -> Path | None:
    """Move a crash copy that is not restored (unreadable, or its reading cancelled) out
    of the way (a rename needs no free space), so it is not offered at every launch but
    is not thrown away either: autosave.gradbox -> autosave.<why>.gradbox, or
    autosave.<why>-2.gradbox ... if that name is taken (an earlier copy set aside is
    never replaced)."""
    for number in range(1, 1000):
        tag = why if number == 1 else f"{why}-{number}"
        aside = path.with_name(path.name.replace(".gradbox", f".{tag}.gradbox"))
        if os.path.lexists(aside):
            continue
        try:
            # A hard link refuses a taken name (a rename would replace it); where links
            # are not allowed, a rename to the name just found free.
            try:
                os.link(path, aside, follow_symlinks=False)
            except FileExistsError:
                continue
            except OSError:
                path.rename(aside)
            else:
                path.unlink()
        except OSError as error:
            log.warning("could not set aside %s: %s", path, error)
            return None
        return aside
    log.warning("could not set aside %s: a thousand copies are set aside already", path)
    return None


def describe(state: TrainingState, saved_at: datetime) -> str:
    """What a restore dialog must say: when, which data and network, how far it got."""
    c = state.config
    day = "today" if saved_at.date() == datetime.now().date() else saved_at.strftime("%d %b %Y")
    sizes = "-".join(str(n) for n in c.layer_sizes)
    return (f"Saved automatically at {saved_at:%H:%M} {day}: {c.dataset} data "
            f"({len(state.dataset.labels)} points), network {sizes} ({c.activation}), "
            f"{state.step} training step{'s' if state.step != 1 else ''}.")
