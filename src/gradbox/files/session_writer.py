"""A thread that writes sessions, so that neither training nor the UI ever waits on a disk.

A caller hands over an immutable `TrainingState` (taking one is cheap) and a path; the
writer thread turns it into a file with `persistence.save_session` (binary arrays, no big
JSON to encode, so the GIL is mostly free while it writes). If a newer state for the
same path arrives before the older one was started, only the newer one is written: an
autosave that falls behind skips states, it never queues them up.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gradbox.files import sessions as persistence
from gradbox.files.session_controls import SessionControls
from gradbox.training.state import TrainingState

log = logging.getLogger(__name__)
EXIT_WAIT = 10.0  # seconds a write under way may take to finish when the app exits
_writers: weakref.WeakSet[SessionWriter] = weakref.WeakSet()


@atexit.register
def _finish_writes() -> None:
    for writer in list(_writers):
        writer.wait(EXIT_WAIT)

Done = Callable[[BaseException | None], None]


@dataclass
class _Job:
    state: TrainingState | Callable[[], TrainingState]
    path: Path
    done: list[Done] = field(default_factory=list)
    controls: SessionControls | Callable[[], SessionControls | None] | None = None


class SessionWriter:
    """Writes sessions one at a time on its own thread (see the module docstring)."""

    def __init__(self, name: str = "gradbox-writer") -> None:
        self._name = name
        self._lock = threading.Condition()
        self._queue: list[_Job] = []
        self._busy = False
        self._closed = False
        self._thread: threading.Thread | None = None

    def submit(self, state: TrainingState | Callable[[], TrainingState],
               path: str | os.PathLike[str], done: Done | None = None,
               controls: SessionControls | Callable[[], SessionControls | None] | None = None,
               ) -> None:
        """Write `state` (and the run `controls`, if given) to `path` soon;
        `done(error or None)` runs on the writer thread. `state` (then `controls`) may be
        a function that gives it, called on the writer thread (reading a large run there,
        not on the thread that asks)."""
        path = Path(path)
        with self._lock:
            if self._closed:
                raise RuntimeError("the session writer is closed")
            for job in self._queue:
                if job.path == path:  # not started yet: write the newer state instead
                    job.state, job.controls = state, controls
                    if done is not None:
                        job.done.append(done)
                    return
            self._queue.append(_Job(state, path, [done] if done is not None else [],
                                    controls))
            if self._thread is None:
                # A daemon, so a forgotten writer never keeps the process alive; at exit,
                # writes under way get a few seconds to finish (and an interrupted one
                # leaves the old file whole anyway).
                self._thread = threading.Thread(target=self._run, name=self._name,
                                                daemon=True)
                self._thread.start()
                _writers.add(self)
            self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._queue and not self._closed:
                    self._lock.wait()
                if not self._queue:
                    return
                job = self._queue.pop(0)
                self._busy = True
            self._write(job)
            # (Not kept while waiting for the next: the state it wrote is the caller's
            # to let go of.)
            del job
            with self._lock:
                self._busy = False
                self._lock.notify_all()

    @staticmethod
    def _write(job: _Job) -> None:
        error: BaseException | None = None
        try:
            state = job.state() if callable(job.state) else job.state
            controls = job.controls() if callable(job.controls) else job.controls
            persistence.save_session(state, job.path, controls)
        except Exception as failure:  # MemoryError too: reported, the thread goes on
            error = failure
        for done in job.done:
            try:
                done(error)
            except Exception:
                log.exception("a session writer callback failed")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until everything submitted is written; False on timeout."""
        with self._lock:
            return self._lock.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self, timeout: float | None = None) -> None:
        """Finish what was submitted, then stop the thread."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout)

    @property
    def running(self) -> bool:
        """Whether its thread is alive (started by the first submit, ended by close)."""
        with self._lock:
            return self._thread is not None and self._thread.is_alive()

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._busy or bool(self._queue)
