"""The app's Run at the fastest speed against a bare `Trainer.step()`, interleaved.

A real main window (offscreen, 1400x900, autosave on, its training process, the app's
process policy) runs W1 for `steps` steps at the fastest speed; then this process times
`steps` bare `Trainer.step()`s of a W1 trainer at the same step; and again, `rounds` times, on the
boundary tab and on the graph tab (network level). Both are wall time: the Run's
steps/s is what a learner sees. One run's ratio was unreadable on this machine (its noise
moved it by +-0.2); the median of interleaved rounds, each ratio taken between
neighbours, is what this prints.

Where the time goes, in CPU time (which the load does not inflate): per step, the
training process's (a step, publishing, tracing the graph) and the window's (receiving,
frames, repaints), against a bare step's. The Run can reach bare / training when the
training process has a core, or the scheduler's share of one, to itself. Linux
schedules a login session's processes as one group (autogroup): in the window's group,
on a machine busy with other sessions, training and the window shared one share, and
the Run could reach bare / (training + window) only (the second bound printed; 0.4x at
load 6-8). The training process now leads a session of its own (runner/child.py).
Called by `bench_speed.py --app`; runs alone too:

    python benchmarks/bench_speed_app.py [--rounds 4] [--steps 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg
from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from bench_app import RATE_TARGET, W1, Scenario, make_window, settle
from gradbox.app import set_window_process_policy
from gradbox.training.trainer import Trainer, TrainingConfig

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used (Linux; NaN elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / _TICKS


def own_cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def bare_rate(trainer: Trainer, steps: int) -> tuple[float, float]:
    """(steps per second, CPU ms per step) of `steps` bare `trainer.step()`s."""
    start, cpu = time.perf_counter(), time.thread_time()
    for _ in range(steps):
        trainer.step()
    return (steps / (time.perf_counter() - start),
            (time.thread_time() - cpu) * 1000 / steps)


def run_rate(window, steps: int) -> dict[str, float]:
    """Steps per second of a Run at the fastest speed, and where the CPU went. Waits on
    the port's signal (a polling timer would cost the window CPU while it measures)."""
    controller = window.controller
    start_step, frames = controller.snapshot.step, controller.frames
    controller.set_speed(None)
    loop = QEventLoop()
    controller.running_changed.connect(lambda running: running or loop.quit())
    QTimer.singleShot(300_000, loop.quit)
    pid = controller.training_pid
    child0, own0, t0 = process_cpu_s(pid), own_cpu_s(), time.perf_counter()
    controller.run(steps)
    loop.exec()
    elapsed = time.perf_counter() - t0
    done = controller.snapshot.step - start_step
    return {"rate": done / elapsed,
            "child_ms": (process_cpu_s(pid) - child0) * 1000 / done,
            "window_ms": (own_cpu_s() - own0) * 1000 / done,
            "fps": (controller.frames - frames) / elapsed}


def run_app(config: TrainingConfig, rounds: int, steps: int) -> None:
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    app = QApplication.instance() or QApplication([])
    set_window_process_policy()  # as the app does before its window
    load = os.getloadavg()
    print(f"\nThe app's Run (fastest speed) against bare Trainer.step(), interleaved; "
          f"{rounds} rounds of {steps} steps; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    scenarios = (Scenario("w1-boundary", "boundary tab", config, "boundary"),
                 Scenario("w1-network", "graph tab, network level", config, "graph",
                          "network"))
    with tempfile.TemporaryDirectory() as folder:
        for scenario in scenarios:
            window = make_window(app, scenario, Path(folder) / "autosave.gradbox.json")
            run_rate(window, 50)  # warm: the training process's first steps
            # The bare trainer takes the same steps as the Run's, round by round: a step
            # late in a run costs a few per cent more than an early one (its records).
            trainer = Trainer(config)
            bare_rate(trainer, 50)
            ratios, runs, bares = [], [], []
            for _ in range(rounds):
                run = run_rate(window, steps)
                settle(app, 100)
                bare, bare_cpu = bare_rate(trainer, steps)
                run["bare_ms"] = bare_cpu
                runs.append(run)
                bares.append(bare)
                ratios.append(run["rate"] / bare)
            ratio = statistics.median(ratios)

            def median(key: str, runs: list[dict[str, float]] = runs) -> float:
                return statistics.median(r[key] for r in runs)
            print(f"  {scenario.title:26s} Run {median('rate'):6.1f} steps/s, bare "
                  f"{statistics.median(bares):6.1f} steps/s; ratios "
                  + ", ".join(f"{r:.2f}" for r in ratios)
                  + f"; median {ratio:.2f}x (target >= {RATE_TARGET}x: "
                  + ("ok" if ratio >= RATE_TARGET else "MISSED") + ")")
            bare_ms, child_ms, window_ms = median("bare_ms"), median("child_ms"), \
                median("window_ms")
            print(f"  {'':26s} CPU per step: bare {bare_ms:.2f} ms; Run: training process "
                  f"{child_ms:.2f} ms + window {window_ms:.2f} ms ({median('fps'):.0f} "
                  f"frames/s). Bounds: training's own share {bare_ms / child_ms:.2f}x; "
                  f"one share with the window {bare_ms / (child_ms + window_ms):.2f}x")
            window.close()
            window.controller.shutdown()
            window.deleteLater()
            settle(app, 100)
    load = os.getloadavg()
    print(f"  load after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    run_app(W1, args.rounds, args.steps)


if __name__ == "__main__":
    main()
