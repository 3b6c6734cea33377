"""Watch a file: the learner's own engine.py, re-checked each time their editor saves it.

Editors save by writing a new file and renaming it over the old one; `QFileSystemWatcher`
watches the old file's inode and goes silent after the first such save. So the folder is
watched as well (a rename into it changes it), the path is added again whenever it
exists and is no longer watched, and a change is reported only when the file's contents
differ from the last ones reported (an editor's save can touch the folder several times).
The contents are read here, on the UI thread: a learner's engine file is a few kB.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

SETTLE_MS = 150  # an editor's save is a burst of events: wait for it to end
MAX_BYTES = 1 << 20  # an engine file past a megabyte is not one


class FileWatch(QObject):
    """Reports `changed(text)` each time the watched file's contents change."""

    changed = Signal(str)
    missing = Signal(str)  # the file is gone (deleted, or mid-rename): what to say

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path: Path | None = None
        self._watcher = QFileSystemWatcher(self)
        self._watcher.fileChanged.connect(self._poke)
        self._watcher.directoryChanged.connect(self._poke)
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self._look)
        self._digest: str | None = None

    def watch(self, path: Path) -> str | None:
        """Watch `path` from now on; returns its text now (None if unreadable)."""
        self.stop()
        self.path = Path(path).resolve()
        self._watcher.addPath(str(self.path.parent))
        text = self._read()
        self._rewatch()
        if text is not None:
            self._digest = _digest(text)
        return text

    def stop(self) -> None:
        paths = self._watcher.files() + self._watcher.directories()
        if paths:
            self._watcher.removePaths(paths)
        self.path = None
        self._digest = None
        self._settle.stop()

    def is_watching(self) -> bool:
        return self.path is not None

    def _poke(self, _path: str) -> None:
        if self.path is not None:
            self._settle.start()

    def _rewatch(self) -> None:
        assert self.path is not None
        if self.path.exists() and str(self.path) not in self._watcher.files():
            self._watcher.addPath(str(self.path))

    def _read(self) -> str | None:
        assert self.path is not None
        try:
            with open(self.path, "rb") as f:
                raw = f.read(MAX_BYTES + 1)
        except OSError:
            return None
        if len(raw) > MAX_BYTES:
            return None
        return raw.decode("utf-8", errors="replace")

    def _look(self) -> None:
        if self.path is None:
            return
        self._rewatch()
        text = self._read()
        if text is None:
            if not self.path.exists():
                self.missing.emit(f"{self.path.name} is gone; watching for it to come back")
            return
        digest = _digest(text)
        if digest != self._digest:
            self._digest = digest
            self.changed.emit(text)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
