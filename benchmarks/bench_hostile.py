"""Hostile inputs, each loaded in a fresh process: outcome, wall time and peak memory.

    PYTHONPATH=src python benchmarks/bench_hostile.py [--timeout 30] [--only NAME ...]
        [--bombs] [--repeat N] [--small] [--kind session|csv|lesson ...] [--json OUT]

Builds tests/hostile_corpus.py's files at run time (sessions and CSVs from valid seeds,
bombs, lying sizes, nesting; lesson files from a stranger: padded headers, deep nesting,
a FIFO, a misspelt table, huge seeds, a claim read at step 1e9) in a temporary folder
and opens each as the app does (`sessions.load_session`, `points_csv.load_csv`,
`lesson_files.read_lesson`; a "lesson-claims" case also checks the lesson's claims as
File > Open lesson does) in a child process capped at 4 GB of address space and
`--timeout` seconds. Memory is the child's peak resident size above
what it had after importing gradbox (os.wait4's ru_maxrss). Prints a markdown table,
the machine's load before and after (times on 2 shared cores scale with it), and for the
bombs (files that must be refused within 1 s and 100 MB each) the worst of each.
`--bombs` runs only those; `--repeat N` opens each N times and keeps the median time and
the largest memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import hostile_corpus

CHILD = r"""
import json, resource, sys, time
from gradbox.files import sessions
from gradbox.training import datasets
from gradbox.files import points_csv
from gradbox.teaching import lesson_files
kind, path = sys.argv[1], sys.argv[2]


def read_lesson(path):
    if hasattr(lesson_files, "read_lesson"):
        return lesson_files.read_lesson(path)
    with open(path, "rb") as f:  # as the window read it before issue 31
        return lesson_files.load_lesson(f.read().decode("utf-8"), path)


def check_claims(lesson):
    try:  # as File > Open lesson checks them: in a capped child, with progress
        from gradbox.runner.lesson_check import check_in_child
    except ImportError:  # before issue 31: in the window's own process
        return lesson_files.false_claims(lesson)
    return check_in_child(lesson)


base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"base_kb": base}), flush=True)
start = time.perf_counter()
try:
    if kind == "csv":
        d = points_csv.load_csv(path)
        outcome = f"loaded ({len(d)} points)"
    elif kind.startswith("lesson"):
        lesson = read_lesson(path)
        outcome = f"loaded ({len(lesson.steps)} steps)"
        if kind == "lesson-claims":
            false = check_claims(lesson)
            outcome += f", {len(false)} claims false: {' '.join(false)}"
    else:
        t = sessions.load_session(path)
        outcome = f"loaded (layers {len(t.config.layer_sizes)}, step {t.step_count})"
except (sessions.SessionError, datasets.DatasetError, lesson_files.LessonFileError) as error:
    outcome = f"{type(error).__name__}: {error}"
except BaseException as error:
    outcome = f"!! {type(error).__name__}: {error}"
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - start}), flush=True)
"""

MEMORY_CAP = 4 * 2**30


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_one(kind: str, path: Path, timeout: float) -> dict[str, object]:
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(path)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             preexec_fn=_cap, text=True)
    killed = False
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > timeout + 5:
            child.send_signal(signal.SIGKILL)
            killed = True
            pid, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)
    lines = [json.loads(line) for line in child.stdout.read().splitlines() if line.startswith("{")]
    info: dict[str, object] = {}
    for line in lines:
        info.update(line)
    base = int(info.get("base_kb", 0))
    info["peak_mb"] = (usage.ru_maxrss - base) / 1024
    if killed:
        info["outcome"] = f"killed: still running after {timeout + 5:.0f} s"
        info["seconds"] = time.perf_counter() - start
    elif "outcome" not in info:
        info["outcome"] = f"!! process died (exit {child.returncode})"
        info["seconds"] = time.perf_counter() - start
    return info


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--small", action="store_true", help="leave out the 1 GB builds")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--bombs", action="store_true", help="only the bombs")
    parser.add_argument("--repeat", type=int, default=1, help="median time of N opens")
    parser.add_argument("--kind", nargs="*", help="only these kinds (lesson covers both)")
    args = parser.parse_args()
    rows = []
    print(f"load before: {_load()}")
    with tempfile.TemporaryDirectory() as folder:
        corpus = hostile_corpus.build(Path(folder), big=not args.small)
        print("| file | what | size | outcome | time s | peak MB |")
        print("|---|---|---:|---|---:|---:|")
        for case, path in corpus:
            if (args.only and case.name not in args.only) or (args.bombs and not case.bomb):
                continue
            if args.kind and case.kind.partition("-")[0] not in args.kind:
                continue
            runs = [run_one(case.kind, path, args.timeout) for _ in range(max(args.repeat, 1))]
            info = dict(runs[0])
            info["seconds"] = statistics.median(float(r["seconds"]) for r in runs)
            info["peak_mb"] = max(float(r["peak_mb"]) for r in runs)
            outcome = str(info["outcome"]).replace("|", "/").replace("\n", " ")[:110]
            if case.expect and case.expect not in str(info["outcome"]):
                outcome = f"(expected '{case.expect}') {outcome}"
            size = path.stat().st_size
            print(f"| {case.name} | {case.what} | {size / 1024:,.0f} KB | {outcome} | "
                  f"{float(info['seconds']):.2f} | {float(info['peak_mb']):.0f} |", flush=True)
            rows.append({"name": case.name, "bomb": case.bomb, "size": size, **info})
    print(f"load after: {_load()}")
    bombs = [row for row in rows if row["bomb"]]
    if bombs:
        slowest = max(bombs, key=lambda row: float(row["seconds"]))
        biggest = max(bombs, key=lambda row: float(row["peak_mb"]))
        refused = sum(not str(row["outcome"]).startswith(("loaded", "!!", "killed"))
                      for row in bombs)
        print(f"bombs: {len(bombs)}, {refused} refused; slowest {slowest['name']} "
              f"{float(slowest['seconds']):.2f} s, largest {biggest['name']} "
              f"{float(biggest['peak_mb']):.0f} MB (the bar: 1 s and 100 MB each)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


def _load() -> str:
    """The load averages (1, 5, 15 min) and the cores they share."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


if __name__ == "__main__":
    main()
