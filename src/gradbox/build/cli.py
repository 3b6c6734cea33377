"""`gradbox check [--stage N] [--json] FILE`: the Build stages' checks in a terminal.

Prints the feedback the Build workspace shows -- each stage passed or failed, and for the
first failing case its code, what was wrong in words, the mistake's id, the line, the
learner's prints, and the nodes whose numbers differ. `--json` prints one object a
course's autograder reads instead (`gradbox.build.report`'s shape).

Exit status: 0 when every stage checked passed, 1 when a case failed, 2 when the file
cannot be used (missing, unreadable, a syntax error, no `Value` or other API name, or an
error while it was loaded). No Qt is loaded.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gradbox.build.report import CheckReport, describe_mistake
from gradbox.build.sandbox import DEFAULT_TIMEOUT, check_source
from gradbox.build.stages import load_stages
from gradbox.formatting import fmt

__all__ = ["MAX_FILE_BYTES", "format_report", "main"]

MAX_FILE_BYTES = 1 << 20  # an engine is ~100 lines; a megabyte is not one


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gradbox check", description="Check your own autograd engine, stage by stage "
        "(docs/build-it-yourself.md). Exit 0: all passed; 1: a case failed; 2: the file "
        "cannot be used.")
    parser.add_argument("file", type=Path, help="your engine, e.g. engine.py")
    parser.add_argument("--stage", type=int, default=None, metavar="N",
                        help="check stages 0..N (default: every stage the file gets "
                        "through, stopping at the first that fails)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (for an autograder) instead of text")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                        help="wall-clock limit for each case (default "
                        f"{DEFAULT_TIMEOUT:g} s; three times that for the random and the "
                        "training cases)")
    return parser.parse_args(argv)


def _read(path: Path) -> tuple[str | None, str]:
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None, f"{path}: no such file"
    except OSError as error:
        return None, f"{path}: cannot read it ({error.strerror})"
    if len(raw) > MAX_FILE_BYTES:
        return None, f"{path}: larger than {MAX_FILE_BYTES // 1024} KB: not an engine"
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as error:
        return None, f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"


def format_report(report: CheckReport, filename: str) -> str:
    """The report as a learner reads it in a terminal: every stage, the first failure."""
    lines: list[str] = []
    if report.error is not None:
        where = f" (line {report.line})" if report.line else ""
        lines.append(f"{filename}{where}: {report.error}")
        if report.mistake:
            lines.append(f"  mistake: {report.mistake}")
    for stage in report.stages:
        mark = "passed" if stage.passed else "FAILED"
        lines.append(f"{mark}  {stage.title}  ({sum(c.passed for c in stage.cases)}/"
                     f"{len(stage.cases)} cases)")
    failure = report.first_failure
    if failure is not None:
        stage, case = failure
        lines += ["", f"First failing case: {case.name} (stage {stage.stage})", ""]
        lines += [f"    {line}" for line in case.code.splitlines()]
        lines += ["", case.message]
        if case.line is not None:
            lines.append(f"  look at {filename}, line {case.line}")
        if case.mistake:
            about = describe_mistake(case.mistake).description
            lines.append(f"  mistake: {case.mistake} — {about}")
        if case.graph is not None:
            wrong = [n for n in reversed(case.graph.nodes) if n.wrong]
            if wrong:
                lines += ["", "  yours vs expected, from the output back:"]
                for n in wrong[:8]:
                    name = n.label or f"node {n.id} ({n.op or 'leaf'})"
                    mark = "  <- first wrong" if n.id == case.graph.first_wrong else ""
                    exp_g = "?" if n.expected_grad is None else fmt(n.expected_grad, digits=6)
                    lines.append(f"    {name:>18}: grad {fmt(n.grad, digits=6)} vs {exp_g}"
                                 f"{mark}")
        if case.output:
            lines += ["", "  your prints:"] + [f"    {x}" for x in case.output.splitlines()[:20]]
    elif report.passed:
        lines += ["", f"All {len(report.stages)} stages checked pass."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[2:] if argv is None else argv)
    last = max(s.number for s in load_stages())
    if args.stage is not None and not 0 <= args.stage <= last:
        print(f"gradbox check: --stage takes a stage from 0 to {last}, got {args.stage}",
              file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print("gradbox check: --timeout takes a number of seconds above 0", file=sys.stderr)
        return 2
    source, problem = _read(args.file)
    if source is None:
        report = CheckReport.failed_to_run(problem)
    else:
        report = check_source(source, up_to_stage=args.stage, timeout=args.timeout,
                              filename=args.file.name)
    if args.json:
        print(json.dumps(report.to_json(), indent=1))
    else:
        print(format_report(report, args.file.name))
    if report.error is not None:
        return 2
    return 0 if report.passed else 1
