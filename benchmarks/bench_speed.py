"""Issue 34: gradbox's step against PyTorch and numpy by hand, and the Trainer's own cost.

One process, three workloads:

  W1  micrograd's demo: 100 moons (noise 0.1), MLP(2, [16, 16, 1]) ReLU, hinge + 1e-4 L2,
      full-batch SGD (learning rate 1.0 -> 0.1 over 100 steps)
  W3  TensorFlow Playground's largest network: 500 spiral points (noise 0.1), six hidden
      layers of 8 tanh units, mean squared error on the class signs + 1e-4 L2, SGD 0.03
  W2  MLP(2, [64, 64, 64, 1]) ReLU on 1,000 moons, hinge + 1e-4 L2, SGD 0.05

For each, the median time of one training step (forward, zero_grad, backward, update):

  gradbox engine   the engine alone, as the Trainer drives it (`engine step` below)
  PyTorch          the same network and loss in torch, float64, one thread
  numpy by hand    the same step written with matrix products and hand-made gradients

and, for W1, a `Trainer.step()` against the bare engine step. The implementations are
timed round-robin (a block of steps of each in turn), so a burst of other work on the
shared machine hits them alike; each block starts from the same weights. Every
implementation's loss and gradients after one step from the same weights are checked
against gradbox's first.

`--app` also runs the desktop app's Run at the fastest speed (offscreen, a real main
window and its training process) interleaved with bare `Trainer.step()`s in this process:
runs of Run, then bare steps, several times, on the boundary and the graph tabs.

    python benchmarks/bench_speed.py [--rounds 7] [--only W1,W3] [--app] [--clock wall]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from unittest import mock

import numpy as np
from threadpoolctl import threadpool_limits

from gradbox.autograd import fused
from gradbox.autograd.collector import in_a_training_process
from gradbox.autograd.order import OrderCache
from gradbox.training import network
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

try:
    import torch
except ImportError:  # pip install -e '.[bench]'
    torch = None

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


@dataclass(frozen=True)
class Workload:
    name: str
    config: TrainingConfig
    block: int  # steps per timed block


WORKLOADS = (
    Workload("W1", TrainingConfig(dataset="moons", n_samples=100, noise=0.1, test_ratio=0.0,
                                  hidden=(16, 16), activation="relu", loss="hinge", l2=1e-4,
                                  optimizer="sgd", lr=1.0, schedule="linear", steps=100), 40),
    Workload("W3", TrainingConfig(dataset="spiral", n_samples=500, noise=0.1, test_ratio=0.0,
                                  hidden=(8,) * 6, activation="tanh", loss="mse", l2=1e-4,
                                  optimizer="sgd", lr=0.03, schedule="constant"), 20),
    Workload("W2", TrainingConfig(dataset="moons", n_samples=1000, noise=0.1, test_ratio=0.0,
                                  hidden=(64, 64, 64), activation="relu", loss="hinge",
                                  l2=1e-4, optimizer="sgd", lr=0.05, schedule="constant"), 3),
)


# --- gradbox's engine, as the Trainer drives it --------------------------------------------
class EngineStep:
    """The Trainer's forward, zero_grad, backward and update with nothing around them:
    no history, checkpoints, statistics or snapshots. `how`:

      "layers"  as the Trainer runs them now: the order sorted once per shape, the graph
                kept, its layers' weighted sums computed at once (gradbox.autograd.fused)
      "nodes"   the same kept graph, computed node by node (before the layers at once:
                the last session's path, W2 95.7 ms)
      "built"   a graph built and sorted every step (before issue 34)
    """

    def __init__(self, trainer: Trainer, how: str = "layers") -> None:
        self.trainer = trainer
        self.config = trainer.config
        self.run = network.build(self.config, trainer.initial_params)
        self.initial = trainer.initial_params
        self.dataset = trainer.dataset
        self.batch = trainer.batch_indices(0)
        self.orders = None if how == "built" else OrderCache()
        # node by node: a plan that finds no layer runs every node through its closures
        self.plans = (mock.patch.object(fused, "find_layers", lambda *_: [])
                      if how == "nodes" else contextlib.nullcontext())
        self.k = 0

    def reset(self) -> None:
        self.run.set_values(self.initial)
        self.k = 0

    def step(self) -> float:
        was = gc.isenabled()
        gc.disable()  # as the Trainer does (its graphs hold no cycles)
        try:
            with self.plans:
                loss, _, order = network.forward(self.config, self.dataset, self.run,
                                                 self.batch, self.orders)
            self.run.optimizer.zero_grad()
            if self.orders is not None:
                network.backward(self.run, loss, order)
            else:
                loss.backward(order=order)
            self.run.optimizer.lr = self.trainer.schedule.lr_at(self.k)
            self.run.optimizer.step()
        finally:
            if was:
                gc.enable()
        self.k += 1
        return float(loss.data)

    def first(self) -> tuple[float, np.ndarray]:
        self.reset()
        loss, _, _ = network.forward(self.config, self.dataset, self.run, self.batch)
        self.run.optimizer.zero_grad()
        loss.backward()
        grads = self.run.grads()
        self.reset()
        return float(loss.data), grads


# --- PyTorch ---------------------------------------------------------------------------------
class TorchStep:
    """The same network in torch (float64, one thread), weights copied from gradbox's."""

    def __init__(self, trainer: Trainer) -> None:
        c = trainer.config
        self.config = c
        self.schedule = trainer.schedule
        sizes = c.layer_sizes
        data = trainer.dataset
        self.x = torch.tensor(c.inputs(data.points), dtype=torch.float64)
        self.truth = torch.tensor(np.asarray(data.truth, dtype=np.float64))
        self.y = 2.0 * self.truth - 1.0
        self.initial = np.asarray(trainer.initial_params)
        self.weights, self.biases = [], []
        offset = 0
        for nin, nout in itertools.pairwise(sizes):
            block = self.initial[offset:offset + nout * (nin + 1)].reshape(nout, nin + 1)
            self.weights.append(torch.tensor(block[:, :nin].copy(), requires_grad=True))
            self.biases.append(torch.tensor(block[:, nin].copy(), requires_grad=True))
            offset += nout * (nin + 1)
        self.params = [t for pair in zip(self.weights, self.biases) for t in pair]
        self.k = 0
        self._initial_tensors = [p.detach().clone() for p in self.params]

    def reset(self) -> None:
        with torch.no_grad():
            for p, p0 in zip(self.params, self._initial_tensors):
                p.copy_(p0)
        self.k = 0

    def loss(self):  # -> torch.Tensor
        c = self.config
        act = {"relu": torch.relu, "tanh": torch.tanh}[c.activation]
        h = self.x
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ w.T + b
            if i < last:
                h = act(h)
        score = h[:, 0]
        if c.loss == "hinge":
            data = torch.relu(1.0 - self.y * score).mean()
        else:  # mse on the class signs
            data = ((score - self.y) ** 2).mean()
        penalty = sum((p * p).sum() for p in self.params)
        return data + c.l2 * penalty

    def step(self) -> float:
        loss = self.loss()
        for p in self.params:
            p.grad = None
        loss.backward()
        lr = self.schedule.lr_at(self.k)
        with torch.no_grad():
            for p in self.params:
                p -= lr * p.grad
        self.k += 1
        return float(loss.detach())

    def first(self) -> tuple[float, np.ndarray]:
        self.reset()
        loss = self.loss()
        for p in self.params:
            p.grad = None
        loss.backward()
        grads = _flat([w.grad.numpy() for w in self.weights], [b.grad.numpy()
                                                               for b in self.biases])
        self.reset()
        return float(loss.detach()), grads


def _flat(weights: list[np.ndarray], biases: list[np.ndarray]) -> np.ndarray:
    """Per layer W (nout, nin) and b (nout,) -> gradbox's order: each neuron's weights,
    then its bias."""
    return np.concatenate([np.column_stack([w, b]).ravel() for w, b in zip(weights, biases)])


# --- numpy by hand -----------------------------------------------------------------------------
class NumpyStep:
    """The step with matrix products and the gradients written out by hand."""

    def __init__(self, trainer: Trainer) -> None:
        c = trainer.config
        self.config = c
        self.schedule = trainer.schedule
        self.sizes = c.layer_sizes
        data = trainer.dataset
        self.x = np.asarray(c.inputs(data.points), dtype=np.float64)
        self.y = 2.0 * np.asarray(data.truth, dtype=np.float64) - 1.0
        self.initial = np.array(trainer.initial_params)
        self.reset()

    def reset(self) -> None:
        self.weights, self.biases = [], []
        offset = 0
        for nin, nout in zip(self.sizes, self.sizes[1:]):
            block = self.initial[offset:offset + nout * (nin + 1)].reshape(nout, nin + 1)
            self.weights.append(block[:, :nin].copy())
            self.biases.append(block[:, nin].copy())
            offset += nout * (nin + 1)
        self.k = 0

    def gradients(self) -> tuple[float, list[np.ndarray], list[np.ndarray]]:
        c = self.config
        relu = c.activation == "relu"
        hs = [self.x]
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            z = hs[-1] @ w.T + b
            if i < last:
                z = np.maximum(z, 0.0) if relu else np.tanh(z)
            hs.append(z)
        score = hs[-1][:, 0]
        n = len(score)
        if c.loss == "hinge":
            margin = 1.0 - self.y * score
            data = np.maximum(margin, 0.0).mean()
            dscore = np.where(margin > 0, -self.y, 0.0) / n
        else:
            err = score - self.y
            data = (err * err).mean()
            dscore = 2.0 * err / n
        penalty = sum(float((w * w).sum() + (b * b).sum())
                      for w, b in zip(self.weights, self.biases))
        dw, db = [None] * len(self.weights), [None] * len(self.weights)
        delta = dscore[:, None]
        for i in range(last, -1, -1):
            dw[i] = delta.T @ hs[i] + 2.0 * c.l2 * self.weights[i]
            db[i] = delta.sum(axis=0) + 2.0 * c.l2 * self.biases[i]
            if i:
                back = delta @ self.weights[i]
                delta = back * (hs[i] > 0) if relu else back * (1.0 - hs[i] * hs[i])
        return data + c.l2 * penalty, dw, db

    def step(self) -> float:
        loss, dw, db = self.gradients()
        lr = self.schedule.lr_at(self.k)
        for w, g in zip(self.weights, dw):
            w -= lr * g
        for b, g in zip(self.biases, db):
            b -= lr * g
        self.k += 1
        return loss

    def first(self) -> tuple[float, np.ndarray]:
        self.reset()
        loss, dw, db = self.gradients()
        return loss, _flat(dw, db)


# --- the Trainer ----------------------------------------------------------------------------------
class TrainerStep:
    """`Trainer.step()`, and a read of the history every `read_every` steps: the layer
    statistics the steps took are measured then, in one batch (`HistoryBuffer`), as the
    training process measures them when it publishes a snapshot -- each frame the window
    asks for, ~8 W1 steps apart at 60 Hz; 1: a snapshot after every step."""

    def __init__(self, config: TrainingConfig, read_every: int = 8) -> None:
        self.config = config
        self.read_every = read_every
        self.reset()

    def reset(self) -> None:
        self.trainer = Trainer(self.config)

    def step(self) -> float:
        record = self.trainer.step()
        assert record is not None, self.trainer.stop_reason
        if record.step % self.read_every == 0:
            self.trainer.history.layers()
        return record.loss


def _same_steps(trainer: Trainer, steps: int = 4) -> str:
    """Does the kept graph, its layers at once, train as a graph built each step does?"""
    at_once, built = EngineStep(trainer), EngineStep(trainer, "built")
    at_once.reset()
    built.reset()
    for _ in range(steps):
        if at_once.step() != built.step():
            return "DIFFER (loss)"
        for a, b in ((at_once.run.grads(), built.run.grads()),
                     (at_once.run.values(), built.run.values())):
            if a.tobytes() != b.tobytes():
                return "DIFFER"
    return "equal bit for bit"


def timed_blocks(steppers: dict[str, object], block: int, rounds: int,
                 clock: Callable[[], float]) -> dict[str, list[float]]:
    """ms per step of each block of `block` steps, round-robin over the steppers."""
    times: dict[str, list[float]] = {name: [] for name in steppers}
    for _ in range(rounds):
        for name, stepper in steppers.items():
            stepper.reset()
            stepper.step()  # warm: the first step of a fresh run may do more
            start = clock()
            for _ in range(block):
                stepper.step()
            times[name].append((clock() - start) * 1e3 / block)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="", help="comma-separated: W1,W3,W2")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu")
    parser.add_argument("--app", action="store_true",
                        help="also the app's Run against bare steps, interleaved")
    parser.add_argument("--app-rounds", type=int, default=4)
    parser.add_argument("--app-steps", type=int, default=300)
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
    if torch is not None:
        torch.set_num_threads(1)
    # One BLAS thread for numpy too: an idle BLAS thread spins, and CPU time counts it.
    threadpool_limits(1)
    # The Trainer is timed as the app's training process runs it (what lives is frozen,
    # each step's young objects too: see gradbox.autograd.collector).
    in_a_training_process()
    load = os.getloadavg()
    print(f"Python {platform.python_version()}, numpy {np.__version__}, torch "
          f"{torch.__version__ if torch is not None else '(not installed)'}; "
          f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"{args.clock} time, median of {args.rounds} blocks\n")
    wanted = {w for w in args.only.split(",") if w}
    rows = []
    for workload in WORKLOADS:
        if wanted and workload.name not in wanted:
            continue
        trainer = Trainer(workload.config)
        steppers: dict[str, object] = {"gradbox engine": EngineStep(trainer),
                                       "node by node": EngineStep(trainer, "nodes"),
                                       "built each step": EngineStep(trainer, "built")}
        if torch is not None:
            steppers["PyTorch f64"] = TorchStep(trainer)
        steppers["numpy by hand"] = NumpyStep(trainer)
        if workload.name == "W1":
            steppers["Trainer.step"] = TrainerStep(workload.config)
            steppers["read each step"] = TrainerStep(workload.config, read_every=1)
        ref_loss, ref_grads = steppers["gradbox engine"].first()
        for name, stepper in steppers.items():
            if hasattr(stepper, "first") and name != "gradbox engine":
                loss, grads = stepper.first()
                print(f"  {workload.name} {name:14s} against gradbox: loss diff "
                      f"{abs(loss - ref_loss):.1e}, max |grad diff| "
                      f"{np.max(np.abs(grads - ref_grads)):.1e}")
        print(f"  {workload.name} engine (layers at once) against built each step, 4 steps: "
              f"losses, gradients and weights {_same_steps(trainer)}")
        times = timed_blocks(steppers, workload.block, args.rounds, clock)
        medians = {name: statistics.median(t) for name, t in times.items()}
        engine = medians["gradbox engine"]
        print(f"{workload.name}: " + ", ".join(
            f"{name} {m:.3f} ms (min {min(times[name]):.3f})" for name, m in medians.items()))
        rows.append((workload.name, medians))
        del engine
    print()
    print("| workload | gradbox engine (ms) | kept, node by node (ms) | built and sorted "
          "each step (ms) | PyTorch f64 (ms) | numpy by hand (ms) | engine / PyTorch | "
          "node by node / PyTorch | engine / numpy | Trainer.step / engine (history "
          "read every 8 steps; every step) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, m in rows:
        engine = m["gradbox engine"]
        torch_ms = m.get("PyTorch f64")
        trainer_ms, each_ms = m.get("Trainer.step"), m.get("read each step")

        def ratio(ms: float, torch_ms: float | None = torch_ms) -> str:
            return "-" if torch_ms is None else f"{ms / torch_ms:.1f}x"

        print(f"| {name} | {engine:.3f} | {m['node by node']:.3f} | "
              f"{m['built each step']:.3f} | "
              f"{torch_ms if torch_ms is None else f'{torch_ms:.3f}'}"
              f" | {m['numpy by hand']:.3f} | {ratio(engine)} | "
              f"{ratio(m['node by node'])} | {engine / m['numpy by hand']:.1f}x | "
              f"{'-' if trainer_ms is None else f'{trainer_ms / engine:.2f}x'}"
              f"{'' if each_ms is None else f'; {each_ms / engine:.2f}x'} |")
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.app:
        from bench_speed_app import run_app  # Qt only when asked
        run_app(WORKLOADS[0].config, args.app_rounds, args.app_steps)


if __name__ == "__main__":
    main()
