"""W1, micrograd's demo, three ways in one run: micrograd, gradbox per sample, gradbox arrays.

The workload is the training loop of micrograd's demo notebook: 100 moons (noise 0.1),
MLP(2, [16, 16, 1]) with ReLU, hinge loss + 1e-4 * L2, full batch, SGD with learning
rate 1.0 - 0.9 k / 100. All three start from the same weights (gradbox's, copied into
micrograd's MLP in the same order: layer, neuron, weights then bias), so their
gradients can be compared number for number.

  (a) micrograd 0.1.0 (the `bench` extra), one float graph per sample, as in the demo
  (b) gradbox, the same code with gradbox's Value: one float graph per sample
  (c) gradbox, one graph whose values are arrays over the samples

Each is timed with Python's cyclic garbage collector running (the default) and paused
during the step. gradbox's graphs hold no reference cycles, so pausing the collector
costs nothing later (the run checks that a paused step leaves no cyclic garbage);
micrograd's graphs are cycles, so its paused time includes the gc.collect() that the
pause only postpones.

Run:  python benchmarks/bench_engine.py          (about a minute)
      python benchmarks/bench_engine.py --quick  (fewer steps, for a smoke test)
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP
from gradbox.training import datasets

try:
    import micrograd.engine
    import micrograd.nn
except ImportError:  # a benchmark-only dependency: pip install -e '.[bench]'
    micrograd = None

ALPHA = 1e-4
SEED = 0
HIDDEN = [16, 16, 1]
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def learning_rate(k: int) -> float:
    return 1.0 - 0.9 * k / 100


# --- the three ways of computing one step's loss ---------------------------------------
def per_sample_loss(model: Any, points: np.ndarray, y: np.ndarray, value: type) -> Any:
    """micrograd's demo `loss()`, verbatim but for the Value class it is given."""
    inputs = [list(map(value, row)) for row in points.tolist()]
    scores = list(map(model, inputs))
    per_sample = [(1 + -yi * si).relu() for yi, si in zip(y.tolist(), scores)]
    data_loss = sum(per_sample) * (1.0 / len(per_sample))
    reg_loss = ALPHA * sum(p * p for p in model.parameters())
    return data_loss + reg_loss


def array_loss(model: MLP, points: np.ndarray, labels: np.ndarray) -> Value:
    """The same loss as one graph: each node holds one number per sample."""
    score = model([points[:, 0], points[:, 1]])
    return losses.hinge(score, labels) + ALPHA * losses.l2_penalty(model.parameters())


def count_nodes(root: Any) -> int:
    """Nodes of a graph, for either engine (micrograd's `_prev` is a set, gradbox's a tuple)."""
    seen = {id(root)}
    stack = [root]
    while stack:
        for child in stack.pop().inputs:
            if id(child) not in seen:
                seen.add(id(child))
                stack.append(child)
    return len(seen)


class Engine:
    """One way of running the demo: a model and a function from it to the loss."""

    def __init__(self, name: str, model: Any, loss: Callable[[], Any],
                 cyclic: bool = False) -> None:
        self.name, self.model, self.loss, self.cyclic = name, model, loss, cyclic
        self.initial = [p.data for p in model.parameters()]

    def reset(self) -> None:
        for p, w in zip(self.model.parameters(), self.initial):
            p.data = w

    def step(self, k: int) -> Any:
        """forward, zero_grad, backward, update: one step of the demo's loop."""
        total = self.loss()
        self.model.zero_grad()
        total.backward()
        lr = learning_rate(k)
        for p in self.model.parameters():
            p.data -= lr * p.grad
        return total

    def gradients(self) -> tuple[float, np.ndarray, np.ndarray]:
        """Loss, gradients and weights after one step from the initial weights."""
        self.reset()
        total = self.step(0)
        grads = np.array([p.grad for p in self.model.parameters()], dtype=np.float64)
        weights = np.array([p.data for p in self.model.parameters()], dtype=np.float64)
        self.reset()
        return float(total.data), grads, weights

    def nodes(self) -> int:
        return count_nodes(self.loss())

    def time_steps(self, steps: int, pause_gc: bool,
                   clock: Callable[[], float] = time.process_time) -> list[float]:
        """Milliseconds of each of `steps` training steps from the initial weights."""
        self.reset()
        gc.collect()
        times = []
        for k in range(steps):
            start = clock()
            if pause_gc:
                gc.disable()
            try:
                self.step(k)
            finally:
                gc.enable()
            if pause_gc and self.cyclic:
                gc.collect()  # the work the pause postponed; it belongs to this step
            times.append((clock() - start) * 1e3)
            if pause_gc and not self.cyclic:
                # Nothing was postponed: a paused step leaves no cyclic garbage behind.
                assert gc.collect() == 0, f"{self.name}: a step left reference cycles"
        self.reset()
        return times


def make_engines(n: int) -> tuple[list[Engine], MLP]:
    data = datasets.make("moons", n, 0.1, seed=SEED)
    points, labels = data.points, data.labels
    y = losses.signed(labels)
    reference = MLP(2, HIDDEN, seed=SEED)
    weights = reference.get_flat()

    def gradbox_model() -> MLP:
        model = MLP(2, HIDDEN, seed=SEED)
        model.set_flat(weights)
        return model

    engines = []
    if micrograd is not None:
        mg_model = micrograd.nn.MLP(2, list(HIDDEN))
        mg_params = mg_model.parameters()
        assert len(mg_params) == len(weights)
        for p, w in zip(mg_params, weights.tolist()):
            p.data = w
        engines.append(Engine("(a) micrograd 0.1.0", mg_model,
                              lambda: per_sample_loss(mg_model, points, y,
                                                      micrograd.engine.Value),
                              cyclic=True))
    per_sample_model = gradbox_model()
    engines.append(Engine("(b) gradbox, float graph per sample", per_sample_model,
                          lambda: per_sample_loss(per_sample_model, points, y, Value)))
    array_model = gradbox_model()
    engines.append(Engine("(c) gradbox, array graph", array_model,
                          lambda: array_loss(array_model, points, labels)))
    return engines, reference


# --- report ------------------------------------------------------------------------------
def describe(times: Sequence[float]) -> str:
    return (f"{statistics.median(times):9.2f} ms  "
            f"(min {min(times):.2f}, max {max(times):.2f}, {len(times)} steps)")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (a smoke test)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu: this process's CPU time (default; other work on the "
                             "machine disturbs it less); wall: elapsed time")
    args = parser.parse_args(argv)
    clock = CLOCKS[args.clock]
    steps = {"(a)": 2, "(b)": 2, "(c)": 10} if args.quick else {"(a)": 5, "(b)": 7, "(c)": 100}

    print(__doc__.split("\n\n")[0])
    print(f"Python {platform.python_version()}, numpy {np.__version__}, "
          f"{platform.machine()}; step = forward + zero_grad + backward + update; "
          f"{args.clock} time\n")
    engines, _ = make_engines(100)
    if micrograd is None:
        print("(a) skipped: micrograd is not importable (pip install -e '.[bench]')\n")

    print("Gradients after one step from the same weights, against (c):")
    c_loss, c_grads, c_weights = engines[-1].gradients()
    for engine in engines[:-1]:
        loss, grads, weights = engine.gradients()
        print(f"  {engine.name:38s} loss diff {abs(loss - c_loss):.1e}   "
              f"max |grad diff| {np.max(np.abs(grads - c_grads)):.1e}   "
              f"max |weight diff| {np.max(np.abs(weights - c_weights)):.1e}")
    print(f"  (largest gradient: {np.max(np.abs(c_grads)):.3f}; target: equal to 1e-12)\n")

    print("Graph size of one step (nodes):")
    for engine in engines:
        print(f"  {engine.name:38s} {engine.nodes():7d}")
    print()

    medians: dict[tuple[str, bool], float] = {}
    for pause_gc in (False, True):
        print("Cyclic gc paused during the step:" if pause_gc
              else "Cyclic gc running (Python's default):")
        for engine in engines:
            times = engine.time_steps(steps[engine.name[:3]], pause_gc, clock)
            medians[engine.name[:3], pause_gc] = statistics.median(times)
            print(f"  {engine.name:38s} {describe(times)}")
        print()

    print("Ratios of median step times (target: a/c >= 300):")
    for pause_gc in (False, True):
        label = "gc paused " if pause_gc else "gc running"
        c = medians["(c)", pause_gc]
        parts = [f"{key}/c {medians[key, pause_gc] / c:7.1f}x" for key in ("(a)", "(b)")
                 if (key, pause_gc) in medians]
        print(f"  {label}: " + "   ".join(parts))
    if ("(a)", False) in medians:
        print(f"  micrograd as people run it (gc running) / (c) as gradbox's Trainer runs it "
              f"(gc paused): {medians['(a)', False] / medians['(c)', True]:.1f}x")
    print()

    print("(c) against the number of samples (target: 200/25 <= 1.5):")
    sizes = (25, 50, 100, 200)
    by_size = {n: make_engines(n)[0][-1] for n in sizes}
    times: dict[tuple[int, bool], list[float]] = {(n, g): [] for n in sizes for g in (0, 1)}
    # Round-robin over the sizes, so a burst of other work on the machine hits all alike.
    rounds = 2 if args.quick else 6
    for _ in range(rounds):
        for n in sizes:
            for pause_gc in (False, True):
                times[n, pause_gc] += by_size[n].time_steps(steps["(c)"] // rounds + 1,
                                                            pause_gc, clock)
    per_size = {key: statistics.median(value) for key, value in times.items()}
    for n in sizes:
        print(f"  {n:4d} samples: {per_size[n, False]:6.2f} ms (gc running)   "
              f"{per_size[n, True]:6.2f} ms (gc paused)")
    for pause_gc in (False, True):
        print(f"  200/25 ({'gc paused' if pause_gc else 'gc running'}): "
              f"{per_size[200, pause_gc] / per_size[25, pause_gc]:.2f}x")

if __name__ == "__main__":
    main()
