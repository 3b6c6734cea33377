"""The sandbox's child: runs the learner's file and the checks, writes JSON lines.

Started by `gradbox.build.sandbox` as `python -I -c <bootstrap> <package dir>` in a
temporary directory, with the job (the learner's source, the stages and their cases, the
limits) as JSON on stdin. Before the learner's code runs it

- keeps the real stdout for its own JSON lines and points file descriptor 1 at stderr,
  so a learner's `os.write(1, ...)` cannot break a line of the protocol, and replaces
  stdin with nothing;
- sets its own limits (never `preexec_fn`, unsafe with threads): RLIMIT_AS at what it
  uses now plus the job's memory limit, RLIMIT_CPU a little past the wall limit, where
  the platform has them (macOS ignores RLIMIT_AS: the wall limit still holds);
- arms `faulthandler.dump_traceback_later` at each case's wall limit (announced in the
  case's event, so the sandbox waits for exactly that), so a hang is reported with
  where it was (the sandbox reads the dump from stderr), and `faulthandler` for fatal
  signals.

Events, one JSON object a line: `{"event": "loading", "limit"}` before the learner's file
runs, `{"event": "case", "stage", "case", "limit"}` as a case starts,
`{"event": "case-done", "stage", "result"}`, `{"event": "stage", "result"}`, and last
`{"event": "report", "report"}` (`gradbox.build.report.CheckReport.to_json`).
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import sys
import time
from typing import IO, Any

SLOW_KINDS = ("random", "train")  # cases that run the learner's code many times: 3x the limit


def _limit(memory: int, timeout: float) -> None:
    try:
        import resource
    except ImportError:  # Windows: the wall limit is all there is
        return
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        used = 0
    try:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = used + memory
        if used and (hard == resource.RLIM_INFINITY or want <= hard):
            resource.setrlimit(resource.RLIMIT_AS, (want, hard))
    except (ValueError, OSError, AttributeError):
        pass
    try:
        cpu = int(timeout) + 2
        _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        if hard == resource.RLIM_INFINITY or cpu < hard:
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1 if hard ==
                                                     resource.RLIM_INFINITY else hard))
    except (ValueError, OSError, AttributeError):
        pass


class Emitter:
    """Writes events as JSON lines, each signed with the job's nonce (an event the
    learner's code writes to this stream without it is dropped by the sandbox)."""

    def __init__(self, out: IO[str], nonce: str = "") -> None:
        self.out = out
        self.nonce = nonce

    def __call__(self, event: str, **fields: Any) -> None:
        record = {"event": event, **fields, "nonce": self.nonce}
        try:
            line = json.dumps(record, allow_nan=False)
        except ValueError:  # nan or inf somewhere (a diverged loss): as text, 'nan'
            line = json.dumps(_finite(record), allow_nan=False)
        self.out.write(line + "\n")
        self.out.flush()


def _finite(x: Any) -> Any:
    """`x` with every non-finite float written as text ('nan', 'inf', '-inf')."""
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    return x


def arm(limit: float) -> None:
    """Dump where the code is and exit after `limit` seconds, unless re-armed first."""
    faulthandler.dump_traceback_later(limit, exit=True, file=sys.__stderr__)


def run_job(job: dict[str, Any], emit: Emitter) -> Any:
    from gradbox.build.cases import CASES
    from gradbox.build.checks import load_learner
    from gradbox.build.kinds import run_case
    from gradbox.build.report import CaseResult, CheckReport, StageResult

    timeout = float(job.get("timeout", 5.0))
    # Loading may import what the file imports (numpy, say): three times a case's limit.
    emit("loading", limit=3 * timeout)
    arm(3 * timeout)
    learner, failed = load_learner(job["source"], job.get("filename") or "engine.py")
    if failed is not None:
        return failed
    up_to = job.get("up_to_stage")
    results = []
    for stage in job["stages"]:
        number = int(stage["stage"])
        if up_to is not None and number > up_to:
            break
        cases: list[CaseResult] = []
        for name in stage["cases"]:
            case = CASES[name]
            if case.kind == "random" and any(not c.passed for c in cases):
                continue  # a named case already failed: the random search would find it too
            limit = timeout * (3 if case.kind in SLOW_KINDS else 1)
            emit("case", stage=number, case=name, limit=limit)
            arm(limit)
            result = run_case(case, learner)
            if not cases and not results and learner.output:
                result = _with_output(result, learner.output)
            cases.append(result)
            emit("case-done", stage=number, result=result.to_json())
        passed = all(c.passed for c in cases)
        stage_result = StageResult(number, str(stage["title"]), passed, tuple(cases))
        results.append(stage_result)
        emit("stage", result=stage_result.to_json())
        if not passed and up_to is None:
            break
    return CheckReport(all(s.passed for s in results) and bool(results), tuple(results))


def _with_output(result: Any, output: str) -> Any:
    from dataclasses import replace
    return replace(result, output=(output + result.output)[:8000])


def main() -> None:
    real_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # the learner's raw writes to fd 1 land in stderr
    raw = sys.stdin.buffer.read()
    job = json.loads(raw)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.stdin = open(os.devnull)  # noqa: SIM115 -- lives as long as the process
    sys.stdout = sys.stderr
    emit = Emitter(real_out, str(job.pop("nonce", "")))
    started = time.monotonic()
    # Import what the checks use before the limits: the learner's budget is their own.
    import gradbox.build.checks
    import gradbox.build.reference
    import gradbox.teaching.pitfalls  # noqa: F401
    timeout = float(job.get("timeout", 5.0))
    cases = sum(len(s["cases"]) for s in job["stages"]) + 1
    # CPU time is a backstop behind the wall limits: every case at its longest, and more.
    _limit(int(job.get("memory_limit", 1 << 30)), 3 * timeout * cases + 10)
    faulthandler.enable(file=sys.__stderr__)
    emit("started", seconds=round(time.monotonic() - started, 4))
    if job.get("kind") == "train":
        emit("training", limit=timeout)
        arm(timeout)
        from gradbox.build.train import run_training
        run_training(job, emit)
    else:
        report = run_job(job, emit)
        emit("report", report=report.to_json())
    faulthandler.cancel_dump_traceback_later()
    real_out.flush()
    os._exit(0)  # the learner's objects may hold anything: skip their finalisers
