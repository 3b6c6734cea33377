"""The machine's step time, measured once at launch from whole training steps.

The cost model (gradbox.training.limits) estimates a step from the costs of its parts
(`limits.StepCosts`): the Trainer's own work each step, a node of a graph built and walked
node by node, a node of a kept graph's layer computed a layer at a time, the first step's
sort, the second step's plan, the test loss. Those come from here: small runs trained for
a few steps and timed -- one whose graph is kept and one built anew each step (a mini-
batch), each at a small and a large batch (the difference is the per-sample part), and a
network of one neuron for the Trainer's own work. The result is reported through a
callback (`limits.calibrated` unless told otherwise), so the cost model never builds a
trainer and the trainer never waits for a measurement.
"""

from __future__ import annotations

import mmap
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from gradbox.autograd.nn import numpy_forward, parameter_count
from gradbox.training import limits, network
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

Report = Callable[[limits.StepCosts], None]

# The calibration networks: a narrow one for what a sample costs, a wide one for what a
# node costs in a graph too big for the processor's caches (as wide networks' are), a
# small one for samples past CACHED_BATCH. Most of their nodes are in layers' sums.
NARROW, WIDE, SLIM = (12, 12), (48, 48), (4, 4)
SMALL, LARGE, HUGE = 8, limits.CACHED_BATCH, 48 * limits.CACHED_BATCH  # batch sizes
STEADY_STEPS = 5


class _Run(NamedTuple):
    """CPU seconds of a run's steps, by kind."""

    first: float  # builds the graph and sorts it
    second: float  # plans the kept graph and writes its layers' arrays the first time
    kept: float  # median of a few after: the kept graph, a layer at a time
    built: float  # median of a few with the graph forgotten first: built node by node


def _time(work: Callable[[], object]) -> float:
    """This thread's CPU seconds for `work`. CPU time, because on a shared machine a step
    shorter than the scheduler's slice is either not interrupted or waits a whole slice:
    its elapsed time jumps between two values, and a median of five says little. The
    share of the machine steps get is measured over the whole calibration
    (`StepCosts.elapsed_per_cpu`), and then by the steps actually trained
    (`limits.correction`)."""
    cpu = time.thread_time()
    work()
    return time.thread_time() - cpu


def _run(hidden: tuple[int, ...], batch: int, steady: int = STEADY_STEPS) -> _Run:
    trainer = Trainer(TrainingConfig(hidden=hidden, n_samples=batch, test_ratio=0.0, l2=0.0))
    times = [_time(trainer.step) for _ in range(2 + steady)]

    def built() -> None:
        network.forget_kept_graphs(trainer.run)  # as a mini-batch's step: a new graph
        trainer.step()

    rebuilt = [_time(built) for _ in range(steady)]
    return _Run(times[0], times[1], float(np.median(times[2:])), float(np.median(rebuilt)))


def _evaluate_seconds() -> float:
    """Elapsed seconds per parameter and test point of the test loss's forward pass, on
    a layer wide enough for the matrix library's threads (on a busy machine they wait
    for a core: ~15 ms for what takes 0.2 on one thread)."""
    sizes = [2, 128, 1]
    params = np.linspace(-1, 1, parameter_count(sizes))
    points = np.linspace(-1, 1, 4 * LARGE).reshape(-1, 2)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        numpy_forward(params, sizes, "tanh", points)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) / (len(params) * len(points))


def _call_seconds() -> float:
    """CPU seconds of one numpy call of a layer's kind on a few numbers (`LayerSums`: a
    column of weights times an input, into a kept row)."""
    w, x, out = np.ones(WIDE[0]), np.ones(SMALL), np.empty((WIDE[0], SMALL))
    times = []
    for _ in range(5):
        def calls() -> None:
            for _ in range(200):
                np.multiply(w[:, None], x, out=out)
        times.append(_time(calls) / 200)
    return float(np.median(times))


def _fresh_memory_seconds() -> float:
    """CPU seconds to write a number into memory the process never had (a page fault
    each 512): what a big layer's arrays cost at their first writes. (numpy asks for
    huge pages for a large array: its first writes then cost 1-25 ns a number from one
    launch to the next here, as the system has them to give; small pages, 4-5 ns.)"""
    times = []
    for _ in range(3):
        with mmap.mmap(-1, 2**23) as fresh:
            numbers = np.frombuffer(fresh, dtype=np.float64)
            times.append(_time(lambda numbers=numbers: numbers.fill(1.0)))
            del numbers
    return float(np.median(times)) / 2**20


def measure_step_time(report: Report = limits.calibrated) -> limits.StepCosts:
    """Measure the step costs on this machine from whole training steps (medians of CPU
    time). Blocks for a second or so; the result goes to `report` (by default the cost
    model, for every later estimate)."""
    fresh = _fresh_memory_seconds()
    started, cpu = time.perf_counter(), time.thread_time()
    step = _run((1,), SMALL).kept
    narrow = [_run(NARROW, SMALL), _run(NARROW, LARGE)]
    wide, slim = _run(WIDE, SMALL, 3), _run(SLIM, HUGE, 2)
    n, w, s = (limits.count_nodes(TrainingConfig(hidden=h, n_samples=SMALL, test_ratio=0.0),
                                  SMALL, SMALL) for h in (NARROW, WIDE, SLIM))

    def beyond(seconds: float, nodes: int, at_large: float) -> float:
        """Per node and sample past LARGE, from `seconds` of `nodes` at HUGE samples that
        would cost `at_large` each at LARGE."""
        return max(seconds / nodes - at_large, 0.0) / (HUGE - LARGE)

    built_sample = max((narrow[1].built - narrow[0].built) / (n.sample * (LARGE - SMALL)),
                       0.0)
    built = max((wide.built - step) / w.sample - built_sample * SMALL, 1e-8)
    costs = limits.StepCosts(step, built, built_sample)
    costs = replace(costs, built_beyond=max(beyond(
        slim.built - step, s.sample, costs.built_node(LARGE)), built_sample))

    def layers(seconds: float, batch: int, of: limits.GraphCounts) -> float:
        """The part of a kept graph's step its layers take. (Its other nodes --
        activations, the loss -- cost as built ones: an upper bound; they are
        recomputed, not made.)"""
        return seconds - step - of.other * costs.built_node(batch)

    narrow_layers = [layers(run.kept, b, n) for run, b in zip(narrow, (SMALL, LARGE))]
    fused_sample = max((narrow_layers[1] - narrow_layers[0]) / (n.fused * (LARGE - SMALL)), 0.0)
    # A numpy call of a layer, timed alone; the rest of the wide network's layers, per node.
    call = _call_seconds()
    fused = max((layers(wide.kept, SMALL, w) - w.calls * call) / w.fused
                - fused_sample * SMALL, 1e-8)
    costs = replace(costs, fused=fused, fused_call=call, fused_sample=fused_sample)
    costs = replace(costs, fused_beyond=max(beyond(
        layers(slim.kept, HUGE, s) - s.calls * call, s.fused, costs.fused_node(LARGE)),
        fused_sample))
    # The first step: on top of a built one (the wide network's, per node; the narrow
    # one's per sample; the slim one's past LARGE).
    first = max((wide.first - wide.built) / w.sample, 0.0)
    first_sample = max(((narrow[1].first - narrow[1].built)
                        - (narrow[0].first - narrow[0].built)) / (n.sample * (LARGE - SMALL)),
                       0.0)
    first_beyond = max(beyond(slim.first - slim.built, s.sample,
                              first + first_sample * LARGE), first_sample)
    # The second: the plan (per node, the wide one's), its arrays' memory (the slim one's).
    plan = max((wide.second - wide.kept) / w.fused, 0.0)
    # Its arrays' first writes, per number: at most what memory new to the process costs
    # (the slim run's second step often reuses memory the steps before it let go).
    plan_sample = max((slim.second - slim.kept) / s.fused - plan, 0.0) / HUGE
    plan_sample = max(plan_sample, fresh)
    costs = replace(costs, first=first, first_sample=first_sample, first_beyond=first_beyond,
                    plan=plan, plan_sample=plan_sample, plan_nodes=w.fused)
    # The share of the machine the steps had: elapsed over CPU time, over the whole
    # measurement (many of the scheduler's slices; a step's own is too short to say).
    elapsed = (time.perf_counter() - started) / max(time.thread_time() - cpu, 1e-9)
    costs = replace(costs, evaluate=_evaluate_seconds(), elapsed_per_cpu=max(elapsed, 1.0))
    report(costs)
    return costs


def measure_in_background(report: Report = limits.calibrated) -> threading.Thread:
    thread = threading.Thread(target=measure_step_time, args=(report,), name="gradbox-measure",
                              daemon=True)
    thread.start()
    return thread
