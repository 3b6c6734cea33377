"""What to say when the sandbox's child ended without its report.

The child streams each case as it starts and ends (`gradbox.build.child`); when it is
killed past the wall limit, runs out of memory, or the learner's code ends it
(`os._exit`, a signal), the report is put together here from what it streamed: the
stages and cases finished, then the case that was running, failed with the reason in
words. A hang is located from the child's `faulthandler` dump: "stopped after 5 s: your
`backward` never returned; it was in `build_topo`, line 14".
"""

from __future__ import annotations

import re
import signal
from typing import Any

from gradbox.build.report import CaseResult, CheckReport, StageResult

__all__ = ["hang_location", "report_after_end"]

_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)', re.M)


def hang_location(stderr: str, filename: str) -> tuple[str | None, str | None, int | None]:
    """From a faulthandler dump (most recent call first): the outermost learner function
    the case called, the innermost learner function, and its line."""
    dump = stderr[stderr.rfind("Timeout ("):] if "Timeout (" in stderr else stderr
    frames = [(m["file"], int(m["line"]), m["name"]) for m in _FRAME.finditer(dump)]
    mine = [f for f in frames if f[0] == filename]
    if not mine:
        return None, None, None
    inner = mine[0]
    outer = mine[-1]
    return outer[2], inner[2], inner[1]


def _stopped_words(timeout: float, stderr: str, filename: str) -> tuple[str, int | None]:
    outer, inner, line = hang_location(stderr, filename)
    head = f"stopped after {timeout:g} s"
    if outer is None:
        return f"{head}: your code never finished (an endless loop?)", None
    if outer == "<module>":
        return (f"{head}: your file never finished running; it was at line {line} "
                "(code at the top level of the file runs when it is loaded)"), line
    where = f"`{inner}`, line {line}" if inner != "<module>" else f"line {line}"
    if inner == outer:
        return f"{head}: your `{outer}` never returned; it was at line {line}", line
    return f"{head}: your `{outer}` never returned; it was in {where}", line


def report_after_end(events: list[dict[str, Any]], stderr: str, returncode: int | None, *,
                     timeout: float, killed_for_time: bool, cancelled: bool,
                     filename: str = "engine.py") -> CheckReport:
    """A report from the events a child streamed before it ended without one."""
    stages: list[StageResult] = []
    current: dict[int, list[CaseResult]] = {}
    titles: dict[int, str] = {}
    running: tuple[int, str] | None = None
    started = False
    for event in events:
        kind = event.get("event")
        if kind == "started":
            started = True
        elif kind == "case":
            running = (int(event["stage"]), str(event["case"]))
        elif kind == "case-done":
            current.setdefault(int(event["stage"]), []).append(
                CaseResult.from_json(event["result"]))
            running = None
        elif kind == "stage":
            result = StageResult.from_json(event["result"])
            stages.append(result)
            titles[result.stage] = result.title
            current.pop(result.stage, None)
    if cancelled:
        message, mistake, line = "stopped: the check was cancelled", None, None
    elif killed_for_time or "Timeout (" in stderr or returncode == -getattr(
            signal, "SIGXCPU", -999):
        message, line = _stopped_words(timeout, stderr, filename)
        mistake = "timeout"
    elif "MemoryError" in stderr or returncode == -getattr(signal, "SIGKILL", -999):
        message, mistake, line = ("stopped: the process running your code ran out of "
                                  "memory (or was killed)"), "memory", None
    elif "Fatal Python error" in stderr:
        reason = re.search(r"Fatal Python error: (.*)", stderr)
        message = ("the process running your code crashed"
                   + (f" ({reason.group(1).strip()})" if reason else "")
                   + ": deep recursion past Python's limit can do that")
        mistake, line = "crashed", None
    elif "Traceback (most recent call last)" in stderr and "gradbox/build/" in stderr:
        last = stderr.strip().splitlines()[-1]
        message = f"gradbox's checker failed (a bug in gradbox, not in your code): {last}"
        mistake, line = "error", None
    else:
        message = (f"the process running your code ended (exit code {returncode}) before "
                   "the check finished: does your code call os._exit or exit()?")
        mistake, line = "crashed", None
    if running is None:
        if cancelled:
            return CheckReport(False, tuple(stages), message)
        if not started:
            return CheckReport.failed_to_run(f"the check could not start: {message}",
                                             mistake=mistake, line=line)
        # Ended while loading the file (or between cases): say it at the top.
        return CheckReport(False, tuple(stages), message, line, mistake)
    number, name = running
    from gradbox.build.cases import CASES
    code = CASES[name].code if name in CASES else ""
    cases = [*current.get(number, []), CaseResult(name, False, code, message, mistake, line)]
    title = titles.get(number) or next((s.title for s in stages if s.stage == number), "")
    if not title:
        from gradbox.build.stages import load_stages
        title = next((s.title for s in load_stages() if s.number == number), f"stage {number}")
    stages.append(StageResult(number, title, False, tuple(cases)))
    return CheckReport(False, tuple(stages))
