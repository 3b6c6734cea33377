"""The window's handle on the training process: start it, send commands, read snapshots.

Qt-free: the window watches `fileno()` (a QSocketNotifier) and calls `receive()` when
something arrived; tests and benchmarks call `receive(timeout)` or `request()`.

Commands travel by name with plain-data arguments (`call`), answers come back as
events in the order they were sent. Snapshots arrive as views of shared memory (see
gradbox.runner.wire); of several waiting, only the newest is built. If the process dies
(killed, out of memory, a crash in native code), the pipe ends, `receive` returns a
`Died` event that says what happened in words, and `latest` still holds the last
snapshot shown, `last_state` the last whole state fetched, to continue from.
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gradbox.runner import child
from gradbox.runner.shared import Segment, remove_leftovers
from gradbox.runner.wire import (
    CONTROL_BYTES,
    PAUSED_UPTO,
    READY,
    STEPPING,
    STEPS,
    WANTED,
    LazyAnswer,
    Receiver,
    control_view,
)
from gradbox.training import limits
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState

# Forkserver where there is one (see TrainingProcess.__init__), spawn elsewhere; never
# fork: this process has Qt's threads.
START_METHOD = ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                else "spawn")
QUIT_PATIENCE_S = 2.0  # how long a quit waits for the process before it is killed
_numbers = itertools.count()


@dataclass(frozen=True)
class Reply:
    number: int  # what `call` returned
    result: Any


@dataclass(frozen=True)
class Failed:
    number: int  # the call's, or 0 for a step of a Run
    text: str  # in words
    detail: str  # the traceback


@dataclass(frozen=True)
class NewSnapshot:
    snapshot: Snapshot


@dataclass(frozen=True)
class RunChanged:
    running: bool
    number: int


@dataclass(frozen=True)
class Stopped:
    reason: str


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Died:
    text: str
    exitcode: int | None


Event = Reply | Failed | NewSnapshot | RunChanged | Stopped | Note | Died


class CommandError(RuntimeError):
    def __init__(self, text: str, detail: str) -> None:
        super().__init__(text)
        self.detail = detail


def describe_exit(exitcode: int | None) -> str:
    """Why the training process ended, in words."""
    if exitcode is None:
        return "The training process stopped answering."
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        if name == "SIGKILL":
            return ("The training process was killed (SIGKILL): by hand, or by the system "
                    "when memory ran out.")
        if name == "SIGSEGV":
            return "The training process crashed (a segmentation fault in native code)."
        return f"The training process ended on {name}."
    return f"The training process exited (code {exitcode})."


def _nothing() -> None:
    return None


def _clean_up(conn: Any, process: Any, prefix: str, control: Segment) -> None:
    """End a training process and free every name it or its window made."""
    conn.close()
    process.join(0.5)
    if process.is_alive():
        process.kill()
        process.join()
    remove_leftovers(prefix)
    control.unlink()


@contextlib.contextmanager
def main_module_hidden() -> Iterator[None]:
    """Start a process without it importing this program's main module.

    multiprocessing makes a spawned (or forkserver) child import the parent's `__main__`
    -- for the app, gradbox.app with Qt and every view; for a test run, pytest -- so that
    functions defined there can be unpickled. The training process needs none of it
    (its entry point is `child.main`), and the imports took most of its start-up. The
    two attributes the preparation data is taken from are hidden while it is made.
    """
    main = sys.modules.get("__main__")
    hidden = {k: main.__dict__[k] for k in ("__spec__", "__file__")
              if main is not None and k in main.__dict__}
    try:
        for key in hidden:
            if key == "__spec__":
                main.__spec__ = None  # type: ignore[union-attr]
            else:
                del main.__dict__[key]  # type: ignore[union-attr]
        yield
    finally:
        if main is not None:
            main.__dict__.update(hidden)


class TrainingProcess:
    """A trainer in a child process (see the module's docstring)."""

    def __init__(self, start: TrainingState | TrainingConfig | str | None = None,
                 context: str | None = None) -> None:
        self.prefix = f"gbx{os.getpid()}_{next(_numbers)}_"
        # The control block is the window's: it outlives a trainer that dies.
        self._control_segment = Segment(self.prefix + "c", CONTROL_BYTES, create=True)
        self.control = control_view(self._control_segment)
        self.control[:] = 0
        try:
            ctx = multiprocessing.get_context(context or START_METHOD)
            if ctx.get_start_method() == "forkserver":
                # The server imports the training code once; each process is a fork of
                # it (not of this one: no Qt, no threads), ready in tens of milliseconds.
                # The app's own __main__ is not imported there.
                ctx.set_forkserver_preload(["gradbox.runner.child"])
            self._conn, theirs = ctx.Pipe()
            started = time.perf_counter()
            self._process = ctx.Process(
                target=child.main,
                args=(theirs, self.prefix, self._control_segment.name, start),
                name="gradbox-training", daemon=True)
            with main_module_hidden():
                self._process.start()
        except BaseException:
            # No process to clean up after: the block's name would outlive the window.
            self._control_segment.unlink()
            raise
        theirs.close()  # so the pipe ends when the child does
        self.pid = self._process.pid
        self._receiver = Receiver(self.control)
        self._numbers = itertools.count(1)
        self._backlog: list[Event] = []
        self.latest: Snapshot | None = None
        self._last_state: TrainingState | None = start if isinstance(start, TrainingState) \
            else None
        self._lazy_state: LazyAnswer | None = None  # a newer one, not read yet
        # The newest whole state went into this session file, at this step: the window
        # let go of its copy (see `whole_state_written`). A process started from a file
        # (a continuation after a death) can go back to it until a newer state comes: its
        # step is the first snapshot's. (It started with none: a second death before the
        # next autosave went back to step 0.)
        self._last_file: tuple[str, int] | None = (start, -1) if isinstance(start, str) \
            else None
        self._newest: Callable[[], object] = _nothing  # the newest answer with a whole state
        self.death: Died | None = None
        self.started_in_s = 0.0  # until the first snapshot arrived
        self._started = started
        self._closed = False
        # A handle dropped without close() still ends its process (the pipe's end is
        # the child's cue) and frees what it named.
        self._finalizer = weakref.finalize(self, _clean_up, self._conn, self._process,
                                           self.prefix, self._control_segment)

    # --- sending ------------------------------------------------------------------------
    def fileno(self) -> int:
        """Readable when a message arrived (or the process died)."""
        return self._conn.fileno()

    @property
    def alive(self) -> bool:
        return self.death is None and self._process.is_alive()

    def _send(self, *message: Any) -> None:
        if self.death is not None or self._closed:
            return
        with contextlib.suppress(OSError):  # the process died: `receive` says so
            self._conn.send(message)

    def call(self, command: str, /, *args: Any, **kwargs: Any) -> int:
        """Send `command` (a name) with plain-data arguments; its Reply (or Failed) comes
        with the number returned here."""
        number = next(self._numbers)
        self._send("call", number, command, args, kwargs)
        return number

    def tell(self, command: str, /, *args: Any, **kwargs: Any) -> None:
        """As `call`, when nobody waits for the answer: none crosses back (a failure
        does, numbered 0)."""
        self._send("call", 0, command, args, kwargs)

    def call_lazily(self, command: str, /, *args: Any, **kwargs: Any) -> int:
        """As `call`, for a large answer (a whole run): its Reply holds a `LazyAnswer`,
        pickled in shared memory, which `load()` reads on whichever thread needs it."""
        number = next(self._numbers)
        self._send("lazy call", number, command, args, kwargs)
        return number

    @property
    def last_state(self) -> TrainingState | None:
        """The last whole state fetched from the training process (None: none yet)."""
        if self._lazy_state is not None:
            answer, self._lazy_state = self._lazy_state, None
            loaded = answer.load()
            self._last_state = loaded[0] if isinstance(loaded, tuple) else loaded
        return self._last_state

    def whole_state_written(self, answer: LazyAnswer, path: str, step: int) -> None:
        """The run `answer` brought (at `step`) is in session file `path` now. Unless a
        newer whole state came since, the window lets go of its copy (a 1000x1000 run's
        is a hundred megabytes and more: checkpoints, history, data) and a continuation
        starts from the file, which the next training process reads itself."""
        if self._newest() is answer:
            self._lazy_state = self._last_state = None
            self._last_file = (path, step)

    @property
    def last_start(self) -> TrainingState | str | None:
        """What a continuation after a death starts from: the last whole state, or the
        session file it went into (None: none yet)."""
        state = self.last_state
        if state is not None:
            return state
        return self._last_file[0] if self._last_file is not None else None

    @property
    def last_step(self) -> int | None:
        """The step of `last_start` (None: none yet), without reading it."""
        if self._lazy_state is None and self._last_state is None:
            return self._last_file[1] if self._last_file is not None else None
        state = self.last_state
        return None if state is None else state.step

    def run(self, number: int, goal: RunGoal | None = None, interval_s: float = 0.0) -> None:
        """Start run `number` (numbers grow; a Pause names the runs it stops)."""
        self._send("run", number, goal, interval_s)

    def set_speed(self, interval_s: float) -> None:
        self._send("speed", interval_s)

    def pause(self, upto: int) -> None:
        """Stop runs numbered up to `upto` now: a step under way is abandoned."""
        self.control[PAUSED_UPTO] = max(int(self.control[PAUSED_UPTO]), upto)
        # Before its handler is in place the signal would end the process.
        if child.PAUSE_SIGNAL is not None and self.control[READY] and self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, child.PAUSE_SIGNAL)

    def want_snapshot(self) -> None:
        """The window is ready for a frame: the next step of a Run publishes one."""
        self.control[WANTED] = 1

    @property
    def stepping(self) -> bool:
        """A step is under way in the training process."""
        return bool(self.control[STEPPING])

    @property
    def steps_done(self) -> int:
        return int(self.control[STEPS])

    # --- receiving ----------------------------------------------------------------------
    def receive(self, timeout: float = 0.0) -> list[Event]:
        """What arrived, in order (waiting up to `timeout` s for the first message)."""
        events, self._backlog = self._backlog, []
        messages: list[tuple[Any, ...]] = []
        wait = 0.0 if events else timeout
        ended = False
        while self.death is None:
            try:
                if not self._conn.poll(wait):
                    break
                messages.append(self._conn.recv())
            except (EOFError, OSError):
                ended = True
                break
            wait = 0.0
        # What came before a death is read before the dead process's blocks are removed:
        # an answer already in the pipe (a whole run for the autosave) maps its block by
        # name, and a snapshot its slot (the death used to remove them first: the answer
        # was lost to a FileNotFoundError).
        try:
            events.extend(self._events(messages))
        finally:
            if ended:
                self._died()
        if self.death is not None and not any(isinstance(e, Died) for e in events) \
                and self._death_unreported:
            events.append(self.death)
        self._death_unreported = False
        return events

    def _events(self, messages: list[tuple[Any, ...]]) -> list[Event]:
        events: list[Event] = []
        last_snapshot = max((i for i, m in enumerate(messages) if m[0] == "snapshot"),
                            default=-1)
        for i, message in enumerate(messages):
            events.extend(self._event(message, i == last_snapshot))
            if message[0] == "snapshot" and len(message) > 2:
                events.extend(self._event(message[2], False))  # a command's answer
        return events

    _death_unreported = False

    def _event(self, message: tuple[Any, ...], newest: bool) -> list[Event]:
        kind = message[0]
        if kind == "snapshot":
            meta = message[1]
            for observed in meta.get("observed", ()):
                limits.observe_step(*observed)  # the window's step estimates learn from it
            self._receiver.absorb(meta)
            if not newest:
                self._receiver.drop(meta)
                return []
            try:
                self.latest = self._receiver.snapshot(meta)
            except FileNotFoundError:
                # Its block was already replaced by the writer: a newer snapshot follows.
                self._receiver.drop(meta)
                return []
            if not self.started_in_s:
                self.started_in_s = time.perf_counter() - self._started
            if self._last_file is not None and self._last_file[1] < 0:
                self._last_file = (self._last_file[0], self.latest.step)
            return [NewSnapshot(self.latest)]
        if kind == "reply":
            answer = message[2]
            if isinstance(answer, tuple) and answer and isinstance(answer[0], TrainingState):
                answer = answer[0]  # (a whole run: its state first)
            if isinstance(answer, TrainingState):
                self._last_state, self._lazy_state, self._last_file = answer, None, None
                self._newest = _nothing
            return [Reply(message[1], message[2])]
        if kind == "lazy reply":
            try:
                lazy = LazyAnswer(message[2], message[3], self._receiver.known())
            except FileNotFoundError:  # (its block is gone: said, never raised here)
                return [Failed(message[1], "the training process's answer was lost", "")]
            # (only whole runs and states are asked for lazily)
            self._lazy_state, self._last_state, self._last_file = lazy, None, None
            self._newest = weakref.ref(lazy)
            return [Reply(message[1], lazy)]
        if kind == "failed":
            return [Failed(message[1], message[2], message[3])]
        if kind == "running":
            return [RunChanged(message[1], message[2])]
        if kind == "stopped":
            return [Stopped(message[1])]
        if kind == "note":
            return [Note(message[1])]
        if kind == "ready":
            # The training process has mapped the control block: its name can go now
            # (the memory stays while mapped), so nothing is left in /dev/shm even if
            # neither side gets to clean up.
            self._control_segment.unlink()
        return []

    def _died(self) -> None:
        self._process.join(1.0)
        code = self._process.exitcode
        self.death = Died(describe_exit(code), code)
        self._death_unreported = True
        for kind in "shb":  # snapshot slots, history, lazy answers
            remove_leftovers(self.prefix + kind)

    def request(self, command: str, /, *args: Any, timeout: float = 60.0,
                **kwargs: Any) -> Any:
        """Send `command` and wait for its answer (tests, benchmarks, a quit's last
        save). Events that arrive meanwhile are kept for the next `receive`."""
        name = command
        number = self.call(command, *args, **kwargs)
        deadline = time.perf_counter() + timeout
        kept: list[Event] = []
        try:
            while True:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError(f"no answer to {name!r} in {timeout} s")
                events = self.receive(left)
                for i, event in enumerate(events):
                    if isinstance(event, (Reply, Failed)) and event.number == number:
                        kept.extend(events[i + 1:])
                        if isinstance(event, Failed):
                            raise CommandError(event.text, event.detail)
                        return event.result
                    kept.append(event)
                    if isinstance(event, Died):
                        raise CommandError(event.text, "")
        finally:
            self._backlog = kept + self._backlog

    def wait_for_snapshot(self, timeout: float = 60.0) -> Snapshot:
        """The first snapshot (blocking; events that came with it are kept for the next
        `receive`). Raises CommandError if the run could not be built or the process
        died, with what went wrong in words."""
        deadline = time.perf_counter() + timeout
        kept: list[Event] = []
        try:
            while self.latest is None:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError(f"no snapshot from the training process in "
                                       f"{timeout} s")
                events = self.receive(left)
                kept.extend(events)
                for event in events:
                    if isinstance(event, Failed):
                        raise CommandError(event.text, event.detail)
                    if isinstance(event, Died):
                        raise CommandError(event.text, "")
            return self.latest
        finally:
            self._backlog = kept + self._backlog

    def wait_for(self, kind: type, timeout: float = 60.0) -> list[Event]:
        """Receive until an event of `kind` arrives; every event received, in order."""
        deadline = time.perf_counter() + timeout
        seen: list[Event] = []
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no {kind.__name__} in {timeout} s")
            events = self.receive(left)
            seen.extend(events)
            if any(isinstance(e, kind) for e in events):
                return seen
            if self.death is not None:
                raise CommandError(self.death.text, "")

    # --- the end --------------------------------------------------------------------------
    def close(self) -> None:
        """Stop the process (killed if it does not stop in time) and free every block
        it named. Safe to call twice; the last snapshot stays readable."""
        if self._closed:
            return
        self.pause(1 << 62)
        self._send("quit")
        self._closed = True
        self._process.join(QUIT_PATIENCE_S)
        self._finalizer()
