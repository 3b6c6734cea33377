"""How much of the test suite's time whole-window tests take (issue 33: at most 25 %).

A test is *whole-window* when, anywhere in its setup, call or teardown, it built the app's
`MainWindow` in the test process (the `window` and `open_window` fixtures, or by hand), or
started a process that shows it (`python -m gradbox ...` but `check`, or a script that
builds a MainWindow, as tests/layout_probe.py does). Everything else -- widgets on a port,
the engine, files -- is not. A test's time is its setup + call + teardown, as
`--durations=0` reports them.

As a pytest plugin, from the checkout (PYTHONPATH puts this folder and the sources first):

    PYTHONPATH=$PWD/src:$PWD/benchmarks python -m pytest -p window_share \\
        --window-share=share.json

prints the figures at the end and keeps every test's time and kind in share.json. Read a
kept report again, or two side by side (before, after):

    python benchmarks/window_share.py share.json [after.json]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

# What the test process has built or started so far (each worker counts its own).
_seen = {"windows": 0}


def _count_windows() -> None:
    """Counts every MainWindow built in this process (subclasses too)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")  # as tests/conftest.py
    from gradbox.views.window.main_window import MainWindow

    built = MainWindow.__init__

    def init(self, *args: Any, **kwargs: Any) -> None:
        _seen["windows"] += 1
        built(self, *args, **kwargs)

    MainWindow.__init__ = init  # type: ignore[method-assign]


def shows_the_window(argv: Any) -> bool:
    """Does this command line start the app's window (in another process)?"""
    words = [str(word) for word in argv] if isinstance(argv, list | tuple) else [str(argv)]
    for i, word in enumerate(words):
        if word == "-m" and words[i + 1:i + 2] == ["gradbox"]:
            return words[i + 2:i + 3] != ["check"]
        if word == "-c" and "MainWindow(" in " ".join(words[i + 1:i + 2]):
            return True
        if word.endswith(".py") and Path(word).is_file():
            return "MainWindow(" in Path(word).read_text(encoding="utf-8")
    return False


def _count_app_processes() -> None:
    started = subprocess.Popen.__init__

    def init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if shows_the_window(args):
            _seen["windows"] += 1
        started(self, args, *rest, **kwargs)

    subprocess.Popen.__init__ = init  # type: ignore[method-assign]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--window-share", metavar="JSON", default=None,
                     help="keep every test's time and whether it built the whole window")


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_TIMES] = defaultdict(float)
    config.stash[_WINDOWED] = set()
    config.stash[_STARTED] = time.perf_counter()
    if _runs_tests(config):
        _count_windows()
        _count_app_processes()


def _runs_tests(config: pytest.Config) -> bool:
    """Not the xdist controller, which only hears the workers' reports."""
    return hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)


_TIMES = pytest.StashKey[defaultdict]()
_WINDOWED = pytest.StashKey[set]()
_STARTED = pytest.StashKey[float]()
_BEFORE = pytest.StashKey[int]()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[_BEFORE] = _seen["windows"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if _seen["windows"] > item.stash.get(_BEFORE, _seen["windows"]):
        report.user_properties.append(("whole_window", True))  # crosses from xdist workers


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    config = _config[0]
    config.stash[_TIMES][report.nodeid] += report.duration
    if ("whole_window", True) in report.user_properties:
        config.stash[_WINDOWED].add(report.nodeid)


_config: list[pytest.Config] = []


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _config[:] = [session.config]


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if not _runs_tests(config) and not config.stash[_TIMES]:
        return
    if hasattr(config, "workerinput"):
        return
    times = dict(config.stash[_TIMES])
    report = {
        "wall_s": round(time.perf_counter() - config.stash[_STARTED], 2),
        "load": os.getloadavg(),
        "tests": {nodeid: {"s": round(s, 4), "window": nodeid in config.stash[_WINDOWED]}
                  for nodeid, s in sorted(times.items())},
    }
    path = config.getoption("--window-share")
    if path:
        Path(path).write_text(json.dumps(report, indent=1), encoding="utf-8")
    terminalreporter.write_sep("=", "whole-window tests' share of the suite's time")
    terminalreporter.write_line(summary(report))


def summary(report: dict[str, Any], top: int = 15) -> str:
    tests = report["tests"]
    total = sum(t["s"] for t in tests.values())
    windowed = {n: t for n, t in tests.items() if t["window"]}
    window_s = sum(t["s"] for t in windowed.values())
    by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0, 0])
    for nodeid, t in tests.items():
        row = by_module[nodeid.split("::")[0]]
        row[1] += t["s"]
        row[3] += 1
        if t["window"]:
            row[0] += t["s"]
            row[2] += 1
    load = ", ".join(f"{x:.1f}" for x in report.get("load", ()))
    lines = [
        f"wall clock {report['wall_s']:.0f} s (load at the end {load}); "
        f"{len(tests)} tests, {total:.0f} s of test time",
        f"whole-window: {len(windowed)} tests, {window_s:.0f} s = "
        f"{100 * window_s / max(total, 1e-9):.1f} % of the test time",
        "modules by whole-window time (window s / module s, window tests / tests):",
    ]
    ranked = sorted(by_module.items(), key=lambda kv: -kv[1][0])
    for module, (w, s, nw, n) in ranked[:top]:
        if w:
            lines.append(f"  {w:7.1f} / {s:7.1f} s  {nw:3d} / {n:3d}  {module}")
    return "\n".join(lines)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(f"== {name}")
        print(summary(json.loads(Path(name).read_text(encoding="utf-8"))))
