"""The machine's step time, measured once at launch from whole training steps.

The cost model (gradbox.training.limits) estimates a step from a per-node and a per-node-
and-sample time. Those come from here: small runs trained for a few steps, timed, at a
small and a large batch (the difference is the per-sample part). The result is reported
through a callback (`limits.calibrated` unless told otherwise), so the cost model never
builds a trainer and the trainer never waits for a measurement.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

from gradbox.training import limits
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

Report = Callable[[float, float], None]


def _step_seconds(hidden: tuple[int, ...], n_samples: int) -> tuple[float, int, int]:
    """Median seconds of a whole training step of a small run, its nodes and batch."""
    config = TrainingConfig(hidden=hidden, n_samples=n_samples, test_ratio=0.0, l2=0.0)
    trainer = Trainer(config)
    trainer.step()  # the first step pays for imports and caches
    times = []
    for _ in range(5):
        start = time.perf_counter()
        trainer.step()
        times.append(time.perf_counter() - start)
    nodes, _ = limits.graph_nodes(config.layer_sizes, config.activation, False, False)
    return float(np.median(times)), nodes, n_samples


def measure_step_time(report: Report = limits.calibrated) -> tuple[float, float]:
    """Measure (seconds per node, per node and sample) on this machine from whole
    training steps (the median of five, so a busy machine counts as busy), at a small
    and a large batch: the difference is the per-sample part. Blocks for a second or two;
    the result goes to `report` (by default the cost model, for every later estimate)."""
    t_small, nodes_small, small = _step_seconds((12, 12), 8)
    t_large, nodes_large, large = _step_seconds((12, 12), 1024)
    per_sample = max((t_large - t_small) / (nodes_large * (large - small)), 0.0)
    per_node = max(t_small / nodes_small - per_sample * small, 1e-7)
    report(per_node, per_sample)
    return per_node, per_sample


def measure_in_background(report: Report = limits.calibrated) -> threading.Thread:
    thread = threading.Thread(target=measure_step_time, args=(report,), name="gradbox-measure",
                              daemon=True)
    thread.start()
    return thread
