"""The last stage's payoff: the moons trained on the learner's own MLP, beside gradbox's.

Micrograd's demo, step for step: per sample, each step builds the graph of every
sample's max-margin loss `(1 - y·score).relu()`, averages them, adds `1e-4 · Σ p²`, calls
`model.zero_grad()`, `backward()`, and moves each parameter by `-lr · grad` with
`lr = 1 - 0.9 · step / 100`. The same data (`gradbox.training.datasets.moons`) and the same
initial weights (gradbox's `MLP(2, [16, 16, 1], seed)`, set through `parameters()`) feed
gradbox's own engine -- vectorised over samples, the same arithmetic -- whose loss is the
ghost the learner's run is drawn against.

`start_training(source, setup)` runs it in the sandbox's child (`gradbox.build.child`):
gradbox's curve is computed there *before* the learner's file is run (nothing the
learner's code does can reach it), then the learner's steps stream back one JSON line
each. `rough_estimate(setup)` says how slow it will be before anything starts; the
child's first step replaces it with a measured one. `train_case` is stage 10's check: five
steps on 20 points must follow gradbox's loss to 1e-6.
"""

from __future__ import annotations

import gc
import itertools
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from gradbox.build.report import CaseResult

__all__ = ["SECONDS_PER_NODE", "TrainHandle", "TrainPoint", "TrainProgress", "TrainSetup",
           "gradbox_curve", "rough_estimate", "start_training", "train_case"]

ALPHA = 1e-4  # micrograd's demo: L2 on every parameter
# A scalar engine's cost per node of a step (forward, backward, and the cyclic collector
# freeing the graph its closures keep alive), measured on this machine with the
# written-out correct engine (tests/build_solutions/correct.py), 30 moons: 0.12-0.16 s of
# step and 0.2-0.24 s of collection for ~21,000 nodes, ~15 us a node. (With the
# collector left to run inside the step, it grew from 0.55 to 1.2 s a step by the third:
# each step's garbage is collected once, after it, instead.)
SECONDS_PER_NODE = 1.5e-5


@dataclass(frozen=True)
class TrainSetup:
    """What the run trains: micrograd's demo by default (100 moons, noise 0.1)."""

    n_samples: int = 100
    noise: float = 0.1
    seed: int = 0
    hidden: tuple[int, ...] = (16, 16)
    steps: int = 100


@dataclass(frozen=True)
class TrainPoint:
    step: int
    loss: float
    accuracy: float
    seconds: float = 0.0  # wall time of this step (the learner's run)


@dataclass(frozen=True)
class TrainProgress:
    """What a view draws: gradbox's curve (the ghost), the learner's so far, the
    measured seconds per step once known, and how it ended."""

    ghost: tuple[TrainPoint, ...]
    yours: tuple[TrainPoint, ...]
    seconds_per_step: float | None
    done: bool
    error: str | None = None
    mistake: str | None = None
    line: int | None = None
    parted_at: int | None = None  # the first step whose losses differ by more than 1e-6


def nodes_per_step(setup: TrainSetup) -> int:
    """Nodes a per-sample step builds: each weight a * and a + per sample, a relu per
    unit, the loss's few, and the regularisation's two per parameter."""
    sizes = [2, *setup.hidden, 1]
    weights = sum(a * b for a, b in itertools.pairwise(sizes))
    units = sum(sizes[1:])
    per_sample = 2 * weights + 2 * units + 6
    params = weights + units
    return setup.n_samples * per_sample + 3 * params


def rough_estimate(setup: TrainSetup) -> float:
    """Seconds a step of the learner's engine will take, before anything has run."""
    return nodes_per_step(setup) * SECONDS_PER_NODE


def moons(setup: TrainSetup) -> tuple[np.ndarray, np.ndarray]:
    """The points and their labels as ±1 (micrograd's `y * 2 - 1`)."""
    from gradbox.training import datasets
    points, labels = datasets.moons(setup.n_samples, setup.noise,
                                    np.random.default_rng(setup.seed))
    return points.astype(np.float64), labels.astype(np.float64) * 2 - 1


def initial_weights(setup: TrainSetup) -> list[float]:
    from gradbox.autograd.nn import MLP
    return [float(w) for w in MLP(2, [*setup.hidden, 1], seed=setup.seed).get_flat()]


def learning_rate(step: int) -> float:
    return 1.0 - 0.9 * step / 100


def gradbox_curve(setup: TrainSetup) -> list[TrainPoint]:
    """gradbox's own engine on the same data and weights: one graph for all samples."""
    from gradbox.autograd.engine import Value
    from gradbox.autograd.nn import MLP
    points, y = moons(setup)
    model = MLP(2, [*setup.hidden, 1], seed=setup.seed)
    model.set_flat(np.array(initial_weights(setup)))
    params = model.parameters()
    out = []
    for step in range(setup.steps):
        scores = model([Value(points[:, 0]), Value(points[:, 1])])
        losses = (1 + -y * scores).relu()
        data_loss = losses.sum() * (1.0 / len(y))
        reg_loss = ALPHA * sum(p * p for p in params)
        total = data_loss + reg_loss
        accuracy = float(np.mean((y > 0) == (scores.data > 0)))
        model.zero_grad()
        total.backward()
        for p in params:
            p.data -= learning_rate(step) * p.grad
        out.append(TrainPoint(step, float(total.data), accuracy))
    return out


class LearnerRun:
    """The learner's MLP on the same data and weights, a step at a time (in the child)."""

    def __init__(self, ns: dict[str, Any], setup: TrainSetup) -> None:
        self.ns = ns
        self.points, self.y = moons(setup)
        self.model = ns["MLP"](2, [*setup.hidden, 1])
        params = list(self.model.parameters())
        weights = initial_weights(setup)
        if len(params) != len(weights):
            raise ValueError(f"your MLP(2, {[*setup.hidden, 1]}).parameters() lists "
                             f"{len(params)} values; it should list {len(weights)}")
        for p, w in zip(params, weights, strict=True):
            p.data = w
        self.step = 0

    def run_step(self) -> TrainPoint:
        started = time.perf_counter()
        # A step's graph is garbage in one piece: collected after the step. Left as found:
        # in a process whose collector is off (the window's, a test worker) it stays off.
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            point = self._step(started)
        finally:
            if was_enabled:
                gc.enable()
        gc.collect()
        point = replace(point, seconds=time.perf_counter() - started)
        self.step += 1
        return point

    def _step(self, started: float) -> TrainPoint:
        value = self.ns["Value"]
        model = self.model
        inputs = [[value(float(x)) for x in row] for row in self.points]
        scores = [model(x) for x in inputs]
        losses = [(1 + -float(yi) * score).relu() for yi, score in zip(self.y, scores,
                                                                        strict=True)]
        data_loss = sum(losses) * (1.0 / len(losses))
        reg_loss = ALPHA * sum(p * p for p in model.parameters())
        total = data_loss + reg_loss
        accuracy = float(np.mean([(yi > 0) == (s.data > 0) for yi, s in zip(
            self.y, scores, strict=True)]))
        model.zero_grad()
        total.backward()
        lr = learning_rate(self.step)
        for p in model.parameters():
            p.data -= lr * p.grad
        return TrainPoint(self.step, float(total.data), accuracy,
                          time.perf_counter() - started)


def parted_at(ghost: list[TrainPoint] | tuple[TrainPoint, ...],
              yours: list[TrainPoint] | tuple[TrainPoint, ...], tol: float = 1e-6) -> int | None:
    for g, m in zip(ghost, yours, strict=False):
        if not (abs(g.loss - m.loss) <= tol * max(1.0, abs(g.loss))):
            return g.step
    return None


def train_case(case: Any, learner: Any) -> CaseResult:
    """Stage 10's check: four steps on 10 points follow gradbox's loss to 1e-6 (four: a
    gradient carried over from one step shows in the loss two steps later)."""
    from gradbox.build.explain import explain_error, number
    setup = TrainSetup(n_samples=10, steps=4)
    ghost = gradbox_curve(setup)
    yours: list[TrainPoint] = []
    try:
        run = LearnerRun(learner.ns, setup)
        for _ in range(setup.steps):
            yours.append(run.run_step())
    except Exception as error:  # the learner's code, in the child
        explained = explain_error(error, learner.filename)
        return CaseResult(case.name, False, case.code, f"Training stopped at step "
                          f"{len(yours)}: {explained.message}", explained.mistake,
                          explained.line)
    part = parted_at(ghost, yours)
    if part is None:
        return CaseResult(case.name, True, case.code, "passed: your engine's loss follows "
                          f"gradbox's for {setup.steps} steps "
                          f"({number(yours[0].loss)} → {number(yours[-1].loss)})")
    g, m = ghost[part], yours[part]
    return CaseResult(case.name, False, case.code,
                      f"Your engine's run parts from gradbox's at step {part}: loss "
                      f"{number(m.loss)} where gradbox's engine has {number(g.loss)} on the "
                      "same data and weights. " + ("The first step's loss is already "
                                                   "different: compare the forward pass."
                                                   if part == 0 else "The first steps "
                                                   "agree: look at what carries over from "
                                                   "step to step (zero_grad, the update)."),
                      "trains-differently")


# --- in the child ----------------------------------------------------------------------------
def run_training(job: dict[str, Any], emit: Callable[..., None]) -> None:
    """The child's side of `start_training`: gradbox's curve first, then the learner's."""
    from gradbox.build.checks import load_learner
    from gradbox.build.explain import explain_error
    setup = TrainSetup(**{**job["setup"], "hidden": tuple(job["setup"]["hidden"])})
    emit("ghost", points=[asdict(p) for p in gradbox_curve(setup)])
    learner, failed = load_learner(job["source"], job.get("filename") or "engine.py")
    if failed is not None:
        emit("error", message=failed.error, mistake=failed.mistake, line=failed.line)
        return
    try:
        run = LearnerRun(learner.ns, setup)
        for _ in range(setup.steps):
            point = run.run_step()
            if not math.isfinite(point.loss):
                emit("point", **asdict(point))
                emit("error", message=f"the loss is {point.loss} at step {point.step}",
                     mistake="trains-differently", line=None)
                return
            emit("point", **asdict(point))
    except BaseException as error:
        explained = explain_error(error, learner.filename)
        emit("error", message=explained.message, mistake=explained.mistake,
             line=explained.line)
        return
    emit("done")


class TrainHandle:
    """The learner's training under way. `poll()` gives a `TrainProgress` (cheap: it reads
    what the child has sent); `cancel()` stops it at once."""

    def __init__(self, source: str, setup: TrainSetup, timeout: float,
                 filename: str) -> None:
        from gradbox.build.sandbox import SandboxProcess
        self.setup = setup
        self.estimate = rough_estimate(setup)
        job = {"kind": "train", "source": source, "filename": filename,
               "setup": asdict(setup), "stages": []}
        self._process = SandboxProcess(job, timeout=timeout)
        self._final: TrainProgress | None = None

    def poll(self) -> TrainProgress:
        if self._final is not None:
            return self._final
        ended = self._process.finished()
        progress = self._progress(ended)
        if ended:
            self._final = progress
        return progress

    def wait(self) -> TrainProgress:
        """Block until the run has ended (for tests and the command line)."""
        if self._final is None:
            self._process.wait()
            self._final = self._progress(True)
        return self._final

    def cancel(self) -> None:
        if self._final is None:
            self._process.cancel()
            self._final = self._progress(True, "stopped: cancelled")

    def _progress(self, ended: bool, stopped: str | None = None) -> TrainProgress:
        ghost: tuple[TrainPoint, ...] = ()
        yours: list[TrainPoint] = []
        error = mistake = None
        line = None
        done = False
        for event in self._process.events():
            kind = event.get("event")
            if kind == "ghost":
                ghost = tuple(TrainPoint(**p) for p in event["points"])
            elif kind == "point":
                yours.append(TrainPoint(int(event["step"]), float(event["loss"]),
                                        float(event["accuracy"]), float(event["seconds"])))
            elif kind == "error":
                error, mistake, line = event.get("message"), event.get("mistake"), \
                    event.get("line")
            elif kind == "done":
                done = True
        if ended and not done and error is None:
            from gradbox.build.ending import report_after_end
            report = report_after_end(
                [e for e in self._process.events() if e.get("event") == "started"],
                self._process.stderr(), self._process.proc.returncode,
                timeout=self._process.limit, killed_for_time=self._process.killed_for_time,
                cancelled=self._process.cancelled)
            error, mistake, line = stopped or report.error, report.mistake, report.line
        measured = [p.seconds for p in yours]
        per_step = float(np.median(measured)) if measured else None
        return TrainProgress(ghost, tuple(yours), per_step, ended or done, error, mistake,
                             line, parted_at(ghost, yours))


def start_training(source: str, setup: TrainSetup | None = None, *,
                   timeout: float | None = None, filename: str = "engine.py") -> TrainHandle:
    """Train the moons on the learner's engine in a sandbox child; returns at once.
    The wall limit defaults to ten times the rough estimate, at least a minute."""
    setup = setup or TrainSetup()
    if timeout is None:
        timeout = max(60.0, 10 * rough_estimate(setup) * setup.steps)
    return TrainHandle(source, setup, timeout, filename)
