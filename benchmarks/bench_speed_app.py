"""The app's Run at the fastest speed against a bare `Trainer.step()`, interleaved.

A real main window (offscreen, 1400x900, autosave on, its training process) runs W1 for
`steps` steps at the fastest speed; then this process times `steps` bare
`Trainer.step()`s of a fresh W1 trainer; and again, `rounds` times, on the boundary tab
and on the graph tab (network level). Both are wall time: the Run's steps/s is what a
learner sees. One run's ratio was unreadable on this machine (its noise moved it by
+-0.2); the median of interleaved rounds, each ratio taken between neighbours, is what
this prints. Called by `bench_speed.py --app`; runs alone too:

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
from PySide6.QtWidgets import QApplication

from bench_app import RATE_TARGET, W1, Scenario, make_window, settle, spin
from gradbox.training.trainer import Trainer, TrainingConfig


def bare_rate(config: TrainingConfig, steps: int) -> float:
    """Steps per second of bare `Trainer.step()`s (wall time), from a fresh run."""
    trainer = Trainer(config)
    trainer.step()
    start = time.perf_counter()
    for _ in range(steps):
        trainer.step()
    return steps / (time.perf_counter() - start)


def run_rate(app: QApplication, window, steps: int) -> float:
    controller = window.controller
    start_step = controller.snapshot.step
    controller.set_speed(None)
    t0 = time.perf_counter()
    controller.run(steps)
    spin(app, lambda: not controller.running
         and controller.snapshot.step >= start_step + steps)
    elapsed = time.perf_counter() - t0
    return (controller.snapshot.step - start_step) / elapsed


def run_app(config: TrainingConfig, rounds: int, steps: int) -> None:
    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    app = QApplication.instance() or QApplication([])
    load = os.getloadavg()
    print(f"\nThe app's Run (fastest speed) against bare Trainer.step(), interleaved; "
          f"{rounds} rounds of {steps} steps; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    scenarios = (Scenario("w1-boundary", "boundary tab", config, "boundary"),
                 Scenario("w1-network", "graph tab, network level", config, "graph",
                          "network"))
    with tempfile.TemporaryDirectory() as folder:
        for scenario in scenarios:
            window = make_window(app, scenario, Path(folder) / "autosave.gradbox.json")
            run_rate(app, window, 50)  # warm: the training process's first steps
            ratios, runs, bares = [], [], []
            for _ in range(rounds):
                run = run_rate(app, window, steps)
                settle(app, 100)
                bare = bare_rate(config, steps)
                runs.append(run)
                bares.append(bare)
                ratios.append(run / bare)
            ratio = statistics.median(ratios)
            print(f"  {scenario.title:26s} Run {statistics.median(runs):6.1f} steps/s, bare "
                  f"{statistics.median(bares):6.1f} steps/s; ratios "
                  + ", ".join(f"{r:.2f}" for r in ratios)
                  + f"; median {ratio:.2f}x (target >= {RATE_TARGET}x: "
                  + ("ok" if ratio >= RATE_TARGET else "MISSED") + ")")
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
