"""The step-time estimate (gradbox.training.limits) against real `Trainer.step` times.

The estimate is what the user reads: the warning after a change to a slow network ("each
step will take about ..."), and the sizes warned about. Here it is set beside the time of
real steps over a spread of networks -- widths 2 to 512, depths 1 to 23, 10 to 100,000
points, extra features, mini-batches, every kind of loss -- in three kinds of step:

  first    the first step of a run: its graph is built node by node and sorted
  second   the next one: the kept graph's plan is made (`gradbox.autograd.fused`) and its
           layers' arrays are first written
  steady   the median of the steps after: the kept graph's layers a layer at a time, or,
           where no graph is kept (mini-batches, softmax), a graph built each step

The estimate is calibrated first, in this process, the way the app does at launch
(`calibration.measure_step_time`); then, as in the app, the steps trained correct it
(`limits.correction`: the median of the last steps' measured over predicted time), so a
row's estimate is what the window would have said before that network's first step, after
the rows above had trained. `--launch` switches the correction off: the launch figure's
own error. Times are elapsed time (what the user waits), on a shared machine: the load
average is printed before and after; compare runs made back to back. The band is stated
for steps of 20 ms or more: a shorter step is shorter than the scheduler's slice, and its
median elapsed time is its CPU time, while the estimate (and the mean) count the slices
other work takes.

    python benchmarks/bench_estimate.py [--quick] [--only 3,7] [--max-seconds 1.0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import fields

from gradbox.training import calibration, limits
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

ALL_FEATURES = ("x1", "x2", "x1^2", "x2^2", "x1*x2", "sin x1", "sin x2")

# (what it is, the configuration); test_ratio 0.2 by default, as the Designer's.
SPREAD: list[tuple[str, TrainingConfig]] = [
    ("width 2, 10 points", TrainingConfig(hidden=(2,), n_samples=10)),
    ("default 8x8, 100", TrainingConfig()),
    ("W1 16x16 relu, 100", TrainingConfig(hidden=(16, 16), activation="relu")),
    ("W3 6x8 spiral mse, 500", TrainingConfig(hidden=(8,) * 6, dataset="spiral",
                                              n_samples=500, loss="mse")),
    ("W2 64x64x64 relu, 1000", TrainingConfig(hidden=(64, 64, 64), n_samples=1000,
                                              activation="relu")),
    ("64x64, 1000, batch 100", TrainingConfig(hidden=(64, 64), n_samples=1000,
                                              batch_size=100)),
    ("32x32 softmax 3 classes, 300", TrainingConfig(hidden=(32, 32), n_samples=300,
                                                    dataset="blobs", classes=3)),
    ("8x8 all features, 500", TrainingConfig(hidden=(8, 8), n_samples=500,
                                             features=ALL_FEATURES)),
    ("depth 23 of 4, 200", TrainingConfig(hidden=(4,) * 23, n_samples=200)),
    ("32 x 8 layers, 300", TrainingConfig(hidden=(32,) * 8, n_samples=300)),
    ("128x128, 10 points", TrainingConfig(hidden=(128, 128), n_samples=10)),
    ("256x256, 10 points", TrainingConfig(hidden=(256, 256), n_samples=10)),
    ("512 wide, 1000", TrainingConfig(hidden=(512,), n_samples=1000)),
    ("16x16 logistic L1, 5000", TrainingConfig(hidden=(16, 16), n_samples=5000,
                                               loss="logistic", l1=1e-3)),
    ("32x32 sine mse, 1000", TrainingConfig(hidden=(32, 32), dataset="sine",
                                            n_samples=1000)),
    ("8x8, 100000 points", TrainingConfig(hidden=(8, 8), n_samples=100_000)),
    ("128 wide, 20000, batch 64", TrainingConfig(hidden=(128,), n_samples=20_000,
                                                 batch_size=64)),
    ("64 x 3 all features, 2000", TrainingConfig(hidden=(64,) * 3, n_samples=2000,
                                                 features=ALL_FEATURES)),
]


def measure(config: TrainingConfig, max_seconds: float, most: int) -> tuple[float, ...]:
    """(first, second, steady median) seconds of `config`'s Trainer.steps."""
    trainer = Trainer(config)
    times = []
    spent = 0.0
    while len(times) < 2 + most and (len(times) < 5 or spent < max_seconds):
        start = time.perf_counter()
        trainer.step()
        took = time.perf_counter() - start
        times.append(took)
        spent += took
    return times[0], times[1], statistics.median(times[2:])


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:9.1f}" if seconds >= 0.01 else f"{seconds * 1e3:9.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launch", action="store_true",
                        help="the launch figure alone, never corrected by the steps timed")
    parser.add_argument("--quick", action="store_true", help="fewer steady steps")
    parser.add_argument("--only", default="", help="rows to run, by number: 1,4,5")
    parser.add_argument("--max-seconds", type=float, default=1.0,
                        help="time spent on a row's steady steps (at least 3 steps)")
    args = parser.parse_args()
    rows = [(i, *row) for i, row in enumerate(SPREAD, 1)
            if not args.only or str(i) in args.only.split(",")]
    print("load average (1, 5, 15 min) before:", *os.getloadavg())
    start = time.perf_counter()
    costs = calibration.measure_step_time()
    print(f"calibration: {time.perf_counter() - start:.2f} s, "
          + ", ".join(f"{f.name} {getattr(costs, f.name):.3g}" for f in fields(costs)))
    if args.launch:
        limits.OBSERVE_MIN_SECONDS = float("inf")  # no correction from the steps timed here
    print(f"\n{'':2} {'network':31} {'nodes':>8} {'batch':>6} | {'first step ms':^29} | "
          f"{'second step ms':^29} | {'steady step ms':^29} | correction")
    print(f"{'':2} {'':31} {'':>8} {'':>6} | {'estimate':>9} {'measured':>9} {'ratio':>9} | "
          f"{'estimate':>9} {'measured':>9} {'ratio':>9} | "
          f"{'estimate':>9} {'measured':>9} {'ratio':>9}")
    ratios, long_ratios = [], []
    for i, name, config in rows:
        estimate, correction = limits.estimate_step(config), limits.correction()
        first_estimate = estimate.first_seconds or estimate.seconds
        second_estimate = estimate.second_seconds or estimate.seconds
        first, second, steady = measure(config, 0.3 if args.quick else args.max_seconds,
                                        3 if args.quick else 40)
        pairs = [(first_estimate, first), (second_estimate, second),
                 (estimate.seconds, steady)]
        ratios += [e / m for e, m in pairs]
        long_ratios += [e / m for e, m in pairs if m >= 0.02]
        print(f"{i:2} {name:31} {estimate.nodes:8,} {estimate.batch:6,} | "
              f"{_ms(first_estimate)} {_ms(first)} {first_estimate / first:8.2f}x | "
              f"{_ms(second_estimate)} {_ms(second)} {second_estimate / second:8.2f}x | "
              f"{_ms(estimate.seconds)} {_ms(steady)} "
              f"{estimate.seconds / steady:8.2f}x | {correction:.2f}", flush=True)
    for what, values in (("all", ratios), ("steps of 20 ms or more", long_ratios)):
        if values:
            inside = sum(0.5 <= r <= 2 for r in values)
            print(f"estimate / measured, {what} ({len(values)}): {min(values):.2f}x to "
                  f"{max(values):.2f}x, median {statistics.median(values):.2f}x; "
                  f"{inside} within 0.5-2x")
    print("\nload average (1, 5, 15 min) after:", *os.getloadavg())


if __name__ == "__main__":
    main()
