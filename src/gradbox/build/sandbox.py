"""The learner's code runs here: in a fresh child process per check, never in the caller's.

`check_source(source, up_to_stage=...)` runs the checks and returns a `CheckReport`
(blocking: a view calls it off its UI thread, or uses `start_check`, whose handle it can
`poll()` from a timer and `cancel()`).

The child is `sys.executable -I` (isolated: no PYTHONPATH, no user site, no current
directory on sys.path -- the directory holding this `gradbox` package is put on sys.path
by the bootstrap itself), in a temporary working directory that is removed afterwards,
with one thread of BLAS. It sets its own limits at start (`gradbox.build.child`): address
space (RLIMIT_AS) and CPU time where the platform has them; here, a wall-clock limit
everywhere, for each case: `timeout` seconds (three times that for the random and the
training cases, which run the learner's code many times), announced by the child as the
case starts. At its end the child's `faulthandler` writes where it was and exits, and the
report says so in words ("stopped after 5 s: your `backward` never returned; it was in
`build_topo`, line 14"); a second later the child is killed if it is still there. So a
slow machine slows a check down without failing it, and a hang is found in one case's
time.

Only JSON crosses: one line per event on the child's stdout (a case starting, a stage
done, the report), never a pickle. The learner's prints are captured inside the child
(capped); anything written to the raw file descriptors lands in stderr, capped here.
The training process is another process altogether: this child is never it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gradbox
from gradbox.build.ending import report_after_end
from gradbox.build.report import CheckReport
from gradbox.build.stages import Stage, load_stages

__all__ = ["DEFAULT_TIMEOUT", "CheckHandle", "SandboxProcess", "check_source", "child_command",
           "stage_job", "start_check"]

DEFAULT_TIMEOUT = 5.0  # seconds of wall clock a case may take (random, training: x3)
STARTUP = 30.0  # seconds for the child to start, before any learner code runs
MEMORY_LIMIT = 1 << 30  # bytes of address space the learner's code may add (RLIMIT_AS)
GRACE = 1.0  # after the wall limit: the child's own dump and exit, then a kill
STDERR_CAP = 64 * 1024
STDOUT_CAP = 32 * 1024 * 1024
PACKAGE_PARENT = str(Path(gradbox.__file__).resolve().parent.parent)
BOOTSTRAP = ("import sys; sys.path.insert(0, sys.argv[1]); "
             "from gradbox.build.child import main; main()")


def stage_job(stages: tuple[Stage, ...]) -> list[dict[str, Any]]:
    """What the child needs of each stage: its number, title and cases, as plain data."""
    return [{"stage": s.number, "title": s.title, "cases": list(s.cases)} for s in stages]


def child_command(module: str = "gradbox.build.child") -> list[str]:
    """The command line of a sandbox child running `module`'s main()."""
    bootstrap = BOOTSTRAP.replace("gradbox.build.child", module)
    return [sys.executable, "-I", "-c", bootstrap, PACKAGE_PARENT]


def child_environment() -> dict[str, str]:
    """The child's environment: the caller's, minus Python's own variables (isolated
    mode ignores them anyway), with one BLAS thread (each reserves address space)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = "1"
    return env


@dataclass
class _Pipes:
    """What the child wrote so far, read by two daemon threads (the pipes never fill)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    deadline: float = 0.0  # the child is killed past it: the last limit it announced
    limit: float = 0.0
    stderr: list[bytes] = field(default_factory=list)  # the first bytes
    stderr_size: int = 0
    stderr_tail: bytes = b""  # the last bytes
    stdout_size: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class SandboxProcess:
    """A child running `module` with a JSON job on its stdin; its events read as they come.

    Shared by the check (`CheckHandle`) and the training (`gradbox.build.train`)."""

    def __init__(self, job: dict[str, Any], *, timeout: float,
                 module: str = "gradbox.build.child") -> None:
        self.timeout = timeout
        self.started = time.monotonic()
        self.workdir = tempfile.mkdtemp(prefix="gradbox-build-")
        # Until the child says what it starts (a case, the file, a training run) it has
        # STARTUP seconds: Python and numpy start slowly on a busy machine, and no learner
        # code has run yet.
        self._pipes = _Pipes(deadline=self.started + STARTUP + GRACE, limit=STARTUP)
        self.killed_for_time = False
        self.cancelled = False
        # Events must carry this: a line the learner's code writes to the child's output
        # stream is dropped (a raised bar against a forged report, not a jail).
        self._nonce = secrets.token_hex(16)
        job = {**job, "timeout": timeout, "memory_limit": MEMORY_LIMIT, "nonce": self._nonce}
        # A session of its own (POSIX): a kill reaches whatever the learner's code started
        # too (a fork, a subprocess), not only the child itself.
        self.proc = subprocess.Popen(
            child_command(module), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=self.workdir, env=child_environment(),
            close_fds=True, start_new_session=os.name == "posix")
        self._ended = threading.Event()
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for t in self._threads:
            t.start()
        # The reaper waits for the end and tidies up (the pipes' readers, the temporary
        # directory), so poll() on a UI thread only ever reads a flag.
        threading.Thread(target=self._reap, daemon=True).start()
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(job).encode("utf-8"))
            self.proc.stdin.close()
        except OSError:  # the child died at once; its exit code says the rest
            pass

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            arrived = time.monotonic()
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(event, dict) or event.pop("nonce", None) != self._nonce:
                continue
            event["arrived"] = round(arrived - self.started, 4)  # seconds after the spawn
            with self._pipes.lock:
                self._pipes.stdout_size += len(raw)
                if self._pipes.stdout_size > STDOUT_CAP:
                    continue
                self._pipes.events.append(event)
                limit = event.get("limit")
                if isinstance(limit, int | float) and not isinstance(limit, bool):
                    # The child starts something that may take `limit` seconds (it dumps
                    # where it is and exits at its end): the kill waits a grace beyond.
                    self._pipes.limit = float(limit)
                    self._pipes.deadline = arrived + float(limit) + GRACE

    def _read_stderr(self) -> None:
        """Keep the first STDERR_CAP/4 bytes and the last 3/4: a hang's dump comes last,
        after whatever the learner's code wrote there."""
        assert self.proc.stderr is not None
        head_cap = STDERR_CAP // 4
        while chunk := self.proc.stderr.read1(65536):
            with self._pipes.lock:
                room = head_cap - self._pipes.stderr_size
                if room > 0:
                    self._pipes.stderr.append(chunk[:room])
                    chunk = chunk[room:]
                self._pipes.stderr_size += room if room > 0 else 0
                if chunk:
                    tail = self._pipes.stderr_tail + chunk
                    self._pipes.stderr_tail = tail[-(STDERR_CAP - head_cap):]

    def events(self) -> list[dict[str, Any]]:
        """Every event the child wrote so far (JSON objects), in order."""
        with self._pipes.lock:
            return list(self._pipes.events)

    @property
    def limit(self) -> float:
        """The limit of what the child was doing last (a case's, the file's)."""
        with self._pipes.lock:
            return self._pipes.limit

    def _left(self) -> float:
        with self._pipes.lock:
            return self._pipes.deadline - time.monotonic()

    def stderr(self) -> str:
        """What the child wrote to stderr: its start and its end (a hang's dump)."""
        with self._pipes.lock:
            return (b"".join(self._pipes.stderr) + self._pipes.stderr_tail).decode(
                "utf-8", "replace")

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def _reap(self) -> None:
        self.proc.wait()
        self._kill_group()  # anything the learner's code left running
        for t in self._threads:
            t.join(timeout=5.0)
        shutil.rmtree(self.workdir, ignore_errors=True)
        self._ended.set()

    def finished(self) -> bool:
        """True once the child has ended and its pipes are read (killing it past the
        wall limit). Never blocks."""
        if self._ended.is_set():
            return True
        if self.proc.poll() is None and self._left() <= 0:
            self.killed_for_time = True
            self.kill()
        return False

    def wait(self) -> None:
        """Block until the child has ended or been killed past the wall limit."""
        while not self._ended.wait(timeout=max(self._left(), 0.0) + 0.05):
            if self.proc.poll() is None and self._left() <= 0:
                self.killed_for_time = True
                self.kill()

    def _kill_group(self) -> None:
        if os.name == "posix":
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def kill(self) -> None:
        self._kill_group()
        with contextlib.suppress(OSError):
            self.proc.kill()

    def cancel(self) -> None:
        """End the child now; the reaper tidies up after it (never waited for here: a
        Cancel on the UI thread returns at once)."""
        self.cancelled = True
        self.kill()


class CheckHandle:
    """A check under way. `poll()` returns None until the report is in, then the report
    (also in `.report`); `cancel()` ends the child at once (the report then says so).
    `running_case` names the case the child is in, for a progress line."""

    def __init__(self, source: str, *, up_to_stage: int | None, timeout: float,
                 stages: tuple[Stage, ...] | None, filename: str) -> None:
        self.stages = stages if stages is not None else load_stages()
        job = {"source": source, "filename": filename, "up_to_stage": up_to_stage,
               "stages": stage_job(self.stages)}
        self.timeout = timeout
        self.filename = filename
        self._cases_in_all = sum(len(s.cases) for s in self.stages
                                 if up_to_stage is None or s.number <= up_to_stage)
        self._process = SandboxProcess(job, timeout=timeout)
        self.report: CheckReport | None = None

    @property
    def elapsed(self) -> float:
        return self._process.elapsed

    @property
    def startup_seconds(self) -> float | None:
        """Seconds from spawning the child to its 'started' line (None before it)."""
        return next((float(e["arrived"]) for e in self._process.events()
                     if e.get("event") == "started"), None)

    @property
    def progress(self) -> tuple[int, int]:
        """(cases done, cases this check would run if every stage passed), for a
        progress line; the check may stop sooner, at the first stage that fails."""
        done = sum(1 for e in self._process.events() if e.get("event") == "case-done")
        return done, self._cases_in_all

    @property
    def running_case(self) -> tuple[int, str] | None:
        for event in reversed(self._process.events()):
            if event.get("event") == "case":
                return int(event["stage"]), str(event["case"])
        return None

    def poll(self) -> CheckReport | None:
        if self.report is None and self._process.finished():
            self.report = self._finish()
        return self.report

    def wait(self) -> CheckReport:
        if self.report is None:
            self._process.wait()
            self.report = self._finish()
        return self.report

    def cancel(self) -> None:
        if self.report is None:
            self._process.cancel()
            self.report = self._finish()

    def _finish(self) -> CheckReport:
        # What the child wrote is read as data, defensively: a line the learner's code
        # forged or garbled is a report saying so, never an exception in the caller.
        events = self._process.events()
        try:
            for event in events:
                if event.get("event") == "report":
                    return CheckReport.from_json(event["report"])
            return report_after_end(events, self._process.stderr(),
                                    self._process.proc.returncode,
                                    timeout=self._process.limit,
                                    killed_for_time=self._process.killed_for_time,
                                    cancelled=self._process.cancelled, filename=self.filename)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            return CheckReport.failed_to_run(f"the check's answer could not be read ({error!r})"
                                             ": did your code write to the checker's output?",
                                             mistake="crashed")


def start_check(source: str, *, up_to_stage: int | None = None,
                timeout: float = DEFAULT_TIMEOUT, stages: tuple[Stage, ...] | None = None,
                filename: str = "engine.py") -> CheckHandle:
    """Start checking `source` in a fresh child; returns at once."""
    return CheckHandle(source, up_to_stage=up_to_stage, timeout=timeout, stages=stages,
                       filename=filename)


def check_source(source: str, *, up_to_stage: int | None = None,
                 timeout: float = DEFAULT_TIMEOUT, stages: tuple[Stage, ...] | None = None,
                 filename: str = "engine.py") -> CheckReport:
    """Check `source` (the learner's file) in a fresh child and wait for the report.

    `up_to_stage=None`: every stage the file gets through, stopping at the first that
    fails. `up_to_stage=N`: every stage from the first up to N, each reported. `timeout`
    is each case's wall-clock limit. Blocks for a few seconds (a correct engine's eleven
    stages: 3-7 s here): call it off the UI thread."""
    return start_check(source, up_to_stage=up_to_stage, timeout=timeout, stages=stages,
                       filename=filename).wait()

