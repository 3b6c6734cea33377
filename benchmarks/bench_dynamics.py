"""Issue 15's two costs, in one run: the loss landscape and the per-layer statistics.

1. The landscape (gradbox.training.landscape.compute) on a 60×60 grid, for W1 (micrograd's demo
   network, MLP(2, [16, 16, 1]) ReLU on 100 moons, hinge + 1e-4·L2) after 100 steps, in
   each of its three planes; and the grid side the app picks for a big network, with its
   time. Target: 60×60 in ≤ 0.5 s.
2. The per-layer statistics' share of a W1 step: Trainer.step() timed with the
   statistics measured (as the app does) and with them replaced by a no-op, interleaved
   so that machine load hits both alike; plus measure_layers() alone. Target: ≤ 10 %.

Run:  python benchmarks/bench_dynamics.py [--quick]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np

from gradbox.training import landscape
from gradbox.training import trainer as trainer_module
from gradbox.training.config import TrainingConfig
from gradbox.training.history import measure_layers
from gradbox.training.trainer import Trainer

W1 = TrainingConfig(dataset="moons", n_samples=100, noise=0.1, test_ratio=0.0,
                    hidden=(16, 16), activation="relu", loss="hinge", lr=1.0, l2=1e-4,
                    schedule="linear", steps=100, seed=0)


def problem_of(trainer: Trainer) -> landscape.Problem:
    s = trainer.snapshot()
    c, train = s.config, ~s.is_test
    return landscape.Problem(s.layer_sizes, c.activation, c.effective_loss, c.l1, c.l2,
                             s.points[train], s.labels[train])


def time_landscape(trainer: Trainer, mode: str, repeats: int,
                   resolution: int | None = 60) -> tuple[float, int]:
    steps, path = trainer.trajectory()
    request = landscape.Request(problem_of(trainer), trainer.snapshot().params, steps, path,
                                mode, (0, 1), 0, resolution)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = landscape.compute(request)
        times.append(time.perf_counter() - started)
    return statistics.median(times), result.resolution


class _NoStatistics:
    """Stands in for LayerStats in the trainer: no statistics taken."""

    @staticmethod
    def later(inputs: object) -> None:
        return None


def time_steps(repeats: int) -> tuple[float, float, float]:
    """Median seconds of a W1 step with and without the statistics (each step followed by
    a read of the history, as a snapshot after every step would: the statistics taken
    are measured then), and of measure_layers()."""
    real = trainer_module.LayerStats  # what the trainer takes them with, swapped out below
    with_stats, without, measure_only = [], [], []
    trainer = Trainer(W1)
    trainer.run_steps(5)  # warm up
    for _ in range(repeats):
        for on, bucket in ((True, with_stats), (False, without)):
            trainer_module.LayerStats = real if on else _NoStatistics  # type: ignore
            try:
                started = time.perf_counter()
                trainer.step()
                trainer.history.layers()
                bucket.append(time.perf_counter() - started)
            finally:
                trainer_module.LayerStats = real  # type: ignore
        s = trainer.snapshot()
        points = s.points[trainer.last_batch]
        started = time.perf_counter()
        measure_layers(s.params, s.grads, s.layer_sizes, "relu", points)
        measure_only.append(time.perf_counter() - started)
    return (statistics.median(with_stats), statistics.median(without),
            statistics.median(measure_only))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 9
    print(f"python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}")

    trainer = Trainer(W1)
    trainer.run_steps(100)
    print("\n1. Loss landscape, W1 after 100 steps (median of "
          f"{repeats}; target 60×60 ≤ 0.5 s)")
    for mode in landscape.MODES:
        seconds, n = time_landscape(trainer, mode, repeats)
        print(f"   {mode:<11} {n}×{n}: {seconds * 1000:7.1f} ms")
    auto = landscape.resolution_for(problem_of(trainer))
    print(f"   grid side the app picks for W1: {auto}")
    big = Trainer(TrainingConfig(n_samples=1000, hidden=(64, 64), test_ratio=0.2))
    big.run_steps(3)
    seconds, n = time_landscape(big, "pca", max(repeats // 3, 1), resolution=None)
    print(f"   MLP(2,[64,64,1]) on 800 training points: the app picks {n}×{n}, "
          f"{seconds * 1000:.1f} ms")

    print(f"\n2. Per-layer statistics, W1 step (median of {repeats * 5}; target ≤ 10 %)")
    on, off, alone = time_steps(repeats * 5)
    print(f"   step with statistics    {on * 1000:7.2f} ms")
    print(f"   step without            {off * 1000:7.2f} ms")
    print(f"   measure() alone         {alone * 1000:7.3f} ms = "
          f"{100 * alone / off:.1f} % of a step")
    print(f"   difference of medians   {100 * (on - off) / off:+.1f} % (noisy: the two "
          "are within run-to-run spread)")


if __name__ == "__main__":
    main()
