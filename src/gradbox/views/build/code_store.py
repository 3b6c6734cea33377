"""The learner's code, one file per stage in their data folder, never lost.

Each change is kept in memory at once and written a moment later (a debounce, so a
burst of typing is one write) by a writer thread: the UI thread never touches the disk.
A write goes to a temporary file beside the target, is flushed to the disk, then
renamed over it, so a crash mid-write leaves the previous version whole. `flush()`
(at quit) writes whatever is still waiting and waits for it.

The folder is `build/` in the app's data folder (`$XDG_DATA_HOME/gradbox/build` on
Linux), beside the session's autosave; `stage-03.py` holds stage 3's code.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

log = logging.getLogger(__name__)

SAVE_DELAY_MS = 400  # after the last keystroke
FOLDER_NAME = "build"


def stage_file(folder: Path, stage: int) -> Path:
    return folder / f"stage-{stage:02d}.py"


def write_atomically(path: Path, text: str) -> None:
    """`text` into `path`: whole or not at all (temp file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class CodeStore(QObject):
    """Per-stage code: `load(stage)` (None if never written), `keep(stage, text)`."""

    failed = Signal(str)  # a write the disk refused, in words

    def __init__(self, folder: Path | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = folder  # None: kept in memory only (tests, screenshots)
        self._texts: dict[int, str] = {}
        self._waiting: dict[int, str] = {}  # written by the next write
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._busy = False  # the writer is writing (flush waits for it)
        self._closed = False
        self._timer = QTimer(self, singleShot=True, interval=SAVE_DELAY_MS)
        self._timer.timeout.connect(self._hand_over)
        self._pending: dict[int, str] = {}  # kept, not yet handed to the writer
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []

    def load(self, stage: int) -> str | None:
        """What the learner last had for `stage`: kept this run, or read from the folder."""
        if stage in self._texts:
            return self._texts[stage]
        if self.folder is None:
            return None
        try:
            text = stage_file(self.folder, stage).read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            log.warning("could not read the code of stage %d: %s", stage, error)
            return None
        self._texts[stage] = text
        return text

    def keep(self, stage: int, text: str) -> None:
        """Remember `text` now; it is written after SAVE_DELAY_MS without another change."""
        if self._texts.get(stage) == text:
            return
        self._texts[stage] = text
        if self.folder is None:
            return
        self._pending[stage] = text
        self._timer.start()

    def flush(self, timeout: float = 5.0) -> bool:
        """Write everything kept and wait for it (at quit). True if all was written."""
        self._timer.stop()
        self._hand_over()
        with self._lock:
            return self._wake.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._closed = True
            self._wake.notify_all()

    # --- the writer thread --------------------------------------------------------------
    def _hand_over(self) -> None:
        if not self._pending or self.folder is None:
            return
        with self._lock:
            self._waiting.update(self._pending)
            self._pending.clear()
            self._wake.notify_all()
        if self._thread is None:
            self._thread = threading.Thread(target=self._write_forever, name="build-code",
                                            daemon=True)
            self._thread.start()

    def _write_forever(self) -> None:
        assert self.folder is not None
        while True:
            with self._lock:
                self._wake.wait_for(lambda: self._waiting or self._closed)
                if self._closed and not self._waiting:
                    return
                jobs, self._waiting = self._waiting, {}
                self._busy = True
            try:
                for stage, text in sorted(jobs.items()):
                    try:
                        write_atomically(stage_file(self.folder, stage), text)
                    except OSError as error:
                        message = f"Your code for stage {stage} was not saved: {error}"
                        self.errors.append(message)
                        self.failed.emit(message)  # queued to the window's thread
            finally:
                with self._lock:
                    self._busy = False
                    self._wake.notify_all()
