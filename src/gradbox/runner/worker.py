"""Work in a process of its own: for jobs that would hold Python's interpreter lock for
long stretches if they ran on a thread of the window's process (an animation export's
replay, drawing and encoding: Pillow's GIF quantising held it up to 340 ms at a time),
so the window never waits for them.

`WorkerProcess(work, payload)` starts a child (forkserver where there is one: a fork of a
small process with no Qt and no threads; spawn elsewhere; never fork), hands it
`payload` -- a block of `shared.write_block` (a pickle with its arrays beside it), which
the child loads (the run as the training process sent it: never unpickled in the
window) -- and the child calls `work(loaded, progress,
cancelled)`. `wait(progress, cancelled)` relays progress and returns the result or
raises the child's exception; it blocks without holding the interpreter lock, so call it
from a thread of the caller's. Cancel reaches the child as a message that its
`cancelled()` sees; a child that does not stop within `STOP_PATIENCE_S` is killed. The
window going away closes the pipe, which `cancelled()` also sees. The child runs at a
lower priority: on a busy machine the window and the training come first.

May import: the standard library, `gradbox.runner.process` and `.shared` (never Qt).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from gradbox.runner.process import START_METHOD, main_module_hidden
from gradbox.runner.shared import read_block

NICENESS = 10
STOP_PATIENCE_S = 2.0  # after Cancel, how long the work may take to stop before a kill

Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]
Work = Callable[[Any, Progress, Cancelled], Any]


class WorkerCancelledError(Exception):
    """Cancelled, and the child had to be killed to stop (or ended on its own)."""


class WorkerDiedError(RuntimeError):
    """The child ended without an answer (killed, out of memory, a crash)."""


class WorkerProcess:
    """`work(read_block(payload), progress, cancelled)` in a child process."""

    def __init__(self, work: Work, payload: bytes | memoryview | Any,
                 name: str = "gradbox-worker") -> None:
        ctx = multiprocessing.get_context(START_METHOD)
        self._conn, theirs = ctx.Pipe()
        self._process = ctx.Process(target=_worker_main, name=name, daemon=True,
                                    args=(theirs,))
        with main_module_hidden():  # the child needs none of the app's __main__
            self._process.start()
        theirs.close()  # so the pipe ends when the child does
        self.pid = self._process.pid
        with contextlib.suppress(OSError):  # it died already: wait() says so
            # The work goes by the pipe, not as the process's arguments: what it imports
            # (for an export, the frame drawing's modules) loads at the lower priority.
            self._conn.send(work)
            self._conn.send_bytes(memoryview(payload).cast("B"))

    def wait(self, progress: Progress | None = None, cancelled: Cancelled | None = None,
             ) -> Any:
        """Relay progress until the child ends; its result, or its exception raised here.
        The child has ended when this returns."""
        stop_by: float | None = None
        try:
            while True:
                if stop_by is None and cancelled is not None and cancelled():
                    with contextlib.suppress(OSError):
                        self._conn.send("cancel")
                    stop_by = time.monotonic() + STOP_PATIENCE_S
                if stop_by is not None and time.monotonic() > stop_by:
                    raise WorkerCancelledError
                if not self._conn.poll(0.05):
                    continue
                try:
                    what, *rest = self._conn.recv()
                except EOFError:
                    self._process.join(1.0)
                    if stop_by is not None:
                        raise WorkerCancelledError from None
                    raise WorkerDiedError(f"the {self._process.name} process ended "
                                          f"unexpectedly ({_exit_words(self._process.exitcode)})"
                                          ) from None
                if what == "progress":
                    if progress is not None:
                        progress(*rest)
                elif what == "done":
                    return rest[0]
                else:  # "failed"
                    raise rest[0]
        finally:
            self.stop()

    def stop(self) -> None:
        """End the child (asked by closing its pipe, then killed) and wait for it."""
        self._conn.close()
        self._process.join(STOP_PATIENCE_S)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()

    @property
    def alive(self) -> bool:
        return self._process.is_alive()


def _exit_words(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"on {signal.Signals(-code).name}"
        return f"on signal {-code}"
    return f"exit code {code}"


def _stop(_signum: int, _frame: object) -> None:
    sys.exit(1)  # unwinds, so the work's own clean-up runs (a temporary file removed)


def _worker_main(conn: Connection) -> None:
    """The child: read the work and its payload, do it, say how it went."""
    signal.signal(signal.SIGTERM, _stop)  # (multiprocessing ends daemons with SIGTERM)
    with contextlib.suppress(OSError, AttributeError):
        os.nice(NICENESS)
    try:
        work: Work = conn.recv()
        loaded = read_block(conn.recv_bytes())
        # Anything from the window (Cancel), or its end of the pipe closing, stops it.
        result = work(loaded, lambda *done: conn.send(("progress", *done)), conn.poll)
        conn.send(("done", result))
    except BaseException as error:  # told to the window, which shows it
        with contextlib.suppress(OSError):
            try:
                conn.send(("failed", error))
            except Exception:  # an error that does not pickle: its words
                conn.send(("failed", RuntimeError(str(error) or type(error).__name__)))
