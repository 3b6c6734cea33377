"""The training model: one step in four phases, history, rewind, and the broken switch.

Pure Python/numpy, no Qt: the desktop app drives a `Trainer` from a worker thread and
reads only the immutable `Snapshot`s it hands out.

    forward   -> build the graph of one sample (every node holds all samples), compute loss
    zero_grad -> set every parameter's gradient to 0 (skipped when forget_zero_grad is on)
    backward  -> loss.backward(): gradients flow from the loss to every parameter
    update    -> the optimizer moves each parameter against its gradient
"""

from __future__ import annotations

import contextlib
import gc
import math
import operator
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from gradbox import datasets, losses
from gradbox.datasets import Dataset
from gradbox.engine import Value
from gradbox.formatting import fmt
from gradbox.graph import Graph, trace
from gradbox.nn import ACTIVATIONS, MLP, numpy_forward, parameter_count
from gradbox.optim import OPTIMIZERS, SCHEDULES, Optimizer, Schedule, make_optimizer

PHASES = ("forward", "zero_grad", "backward", "update")
# A configuration this many parameter-samples per step or more will train slowly.
SLOW_WORK = 2_000_000


class ConfigError(ValueError):
    """A training configuration that cannot be used; the message names the field."""


@dataclass(frozen=True)
class TrainingConfig:
    """Everything that defines a run. Every field has a default that trains at once."""

    dataset: str = "moons"
    n_samples: int = 100
    noise: float = 0.1
    test_ratio: float = 0.2
    classes: int = 2
    hidden: tuple[int, ...] = (8, 8)
    # tanh at 0.5 separates the default moons in about 50 steps from most seeds.
    activation: str = "tanh"
    loss: str = "hinge"
    optimizer: str = "sgd"
    lr: float = 0.5
    momentum: float = 0.0
    schedule: str = "constant"
    batch_size: int | None = None
    l1: float = 0.0
    l2: float = 1e-4
    seed: int = 0
    steps: int = 100

    def __post_init__(self) -> None:
        try:
            hidden = tuple(operator.index(h) for h in self.hidden)
        except TypeError:
            raise ConfigError(f"hidden must be whole numbers, got {self.hidden!r}") from None
        object.__setattr__(self, "hidden", hidden)
        problems = self.problems()
        if problems:
            raise ConfigError("; ".join(problems))

    def problems(self) -> list[str]:
        p = []
        if self.dataset not in datasets.KINDS:
            p.append(f"dataset must be one of {', '.join(datasets.KINDS)}, got {self.dataset!r}")
        if not 2 <= self.n_samples <= 100_000:
            p.append(f"n_samples must be between 2 and 100000, got {self.n_samples}")
        if not 0 <= self.noise <= datasets.NOISE_MAX:
            p.append(f"noise must be between 0 and {datasets.NOISE_MAX}, got {self.noise}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            p.append(f"seed must be a whole number >= 0, got {self.seed!r}")
        if not (math.isfinite(self.momentum) and 0 <= self.momentum < 1):
            p.append(f"momentum must be in [0, 1), got {self.momentum}")
        for name in ("n_samples", "classes", "steps", "batch_size"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                p.append(f"{name} must be a whole number, got {v!r}")
        if p:
            return p
        if not 0 <= self.test_ratio < 1:
            p.append(f"test_ratio must be in [0, 1), got {self.test_ratio}")
        if not 2 <= self.classes <= datasets.MAX_CLASSES:
            p.append(f"classes must be between 2 and {datasets.MAX_CLASSES}, got {self.classes}")
        if any(h < 1 for h in self.hidden):
            p.append(f"every hidden layer needs at least 1 neuron, got {list(self.hidden)}")
        if self.activation not in ACTIVATIONS:
            p.append(f"activation must be one of {', '.join(ACTIVATIONS)}")
        if self.loss not in losses.LOSSES:
            p.append(f"loss must be one of {', '.join(losses.LOSSES)}, got {self.loss!r}")
        if self.optimizer not in OPTIMIZERS:
            p.append(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        if not math.isfinite(self.lr) or self.lr < 0:
            p.append(f"learning rate must be a finite number >= 0, got {self.lr}")
        if self.schedule not in SCHEDULES:
            p.append(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if self.batch_size is not None and self.batch_size < 1:
            p.append(f"batch size must be at least 1 (None: full batch), got {self.batch_size}")
        if not (math.isfinite(self.l1) and math.isfinite(self.l2)) or self.l1 < 0 or self.l2 < 0:
            p.append("L1 and L2 strengths must be finite numbers >= 0")
        if self.steps < 1:
            p.append(f"steps must be at least 1, got {self.steps}")
        return p

    @property
    def effective_classes(self) -> int:
        return self.classes if self.dataset == "blobs" else 2

    @property
    def effective_loss(self) -> str:
        """More than two classes need one score per class: softmax cross-entropy."""
        return "softmax" if self.effective_classes > 2 else self.loss

    @property
    def outputs(self) -> int:
        return self.effective_classes if self.effective_loss == "softmax" else 1

    @property
    def layer_sizes(self) -> list[int]:
        return [2, *self.hidden, self.outputs]

    def work_per_step(self) -> int:
        return parameter_count(self.layer_sizes) * self.n_samples

    def slow_warning(self) -> str:
        """A plain warning when a step will take long, or '' (there is no hard cap)."""
        work = self.work_per_step()
        if work < SLOW_WORK:
            return ""
        return (f"{parameter_count(self.layer_sizes):,} parameters × {self.n_samples:,} samples: "
                f"each step will take a while (roughly {work / SLOW_WORK * 0.1:.1f} s or more)")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        return d

    def with_changes(self, **changes: Any) -> TrainingConfig:
        return replace(self, **changes)


@dataclass(frozen=True)
class StepRecord:
    """What one step measured. Losses and accuracies are those of the forward pass."""

    step: int
    loss: float
    test_loss: float
    accuracy: float
    test_accuracy: float
    grad_norm: float
    lr: float
    zero_grad_skipped: bool
    ghost_loss: float = math.nan


@dataclass(frozen=True)
class ParameterEdit:
    """A weight typed in by hand between steps `step` and `step + 1`."""

    step: int
    name: str
    old: float
    new: float


@dataclass(frozen=True)
class Snapshot:
    """An immutable picture of the trainer, safe to hand to another thread."""

    step: int
    phase: str
    config: TrainingConfig
    layer_sizes: tuple[int, ...]
    param_names: tuple[str, ...]
    params: np.ndarray
    grads: np.ndarray
    history: tuple[StepRecord, ...]
    points: np.ndarray
    labels: np.ndarray
    is_test: np.ndarray
    classes: int
    forget_zero_grad: bool
    ghost: bool
    ghost_grads: np.ndarray | None
    stop_reason: str
    lr: float
    dataset_version: int
    # The computation graph of the last forward pass, numbers frozen after the last phase
    # run (None unless the trainer was asked to capture it), and the dataset index of
    # each of its samples.
    graph: Graph | None = None
    graph_batch: np.ndarray | None = None
    edits: tuple[ParameterEdit, ...] = ()

    def graph_position(self, sample: int) -> int:
        """Where dataset sample `sample` sits in the graph's per-sample arrays, or -1."""
        if self.graph_batch is None:
            return -1
        position = int(np.searchsorted(self.graph_batch, sample))
        found = position < len(self.graph_batch) and self.graph_batch[position] == sample
        return position if found else -1

    @property
    def loss(self) -> float:
        return self.history[-1].loss if self.history else math.nan

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Network output (n, outputs) for the given points, from this snapshot's weights."""
        return numpy_forward(self.params, self.layer_sizes, self.config.activation, points)


@dataclass
class _Checkpoint:
    """Everything needed to continue bit for bit from the start of a step."""

    params: np.ndarray
    grads: np.ndarray
    optimizer: dict[str, Any]
    ghost: tuple[np.ndarray, dict[str, Any]] | None
    lr: float


@dataclass
class _Run:
    model: MLP
    optimizer: Optimizer
    params: list[Value] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.params = self.model.parameters()

    def values(self) -> np.ndarray:
        return np.fromiter((p.data for p in self.params), np.float64, len(self.params))

    def grads(self) -> np.ndarray:
        return np.fromiter((float(p.grad) for p in self.params), np.float64, len(self.params))

    def set_values(self, values: np.ndarray) -> None:
        for p, v in zip(self.params, values.tolist()):
            p.data = v

    def set_grads(self, grads: np.ndarray) -> None:
        for p, g in zip(self.params, grads.tolist()):
            p.grad = g


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one training step.

    The engine's graphs contain no reference cycles (closures receive the gradient as
    an argument instead of holding their output), so reference counting frees every
    node; the cyclic collector would only re-scan thousands of fresh nodes for nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=array.dtype, copy=True)
    array.flags.writeable = False
    return array


class Trainer:
    """Owns the dataset, the model, the optimizer and the history of one run."""

    def __init__(self, config: TrainingConfig | None = None, dataset: Dataset | None = None,
                 init_seed: int | None = None) -> None:
        self.config = config or TrainingConfig()
        c = self.config
        self.dataset = dataset if dataset is not None else datasets.make(
            c.dataset, c.n_samples, c.noise, c.seed, c.test_ratio, c.effective_classes)
        self.dataset_version = 0
        self.init_seed = c.seed if init_seed is None else init_seed
        self.forget_zero_grad = False
        self.ghost_enabled = False
        self.selected_sample = 0
        # Tracing costs about as much as a step, so it is done only when a view wants it.
        self.capture_graph = False
        self._build(self.init_seed)

    # --- construction -----------------------------------------------------------------
    def _new_run(self, values: np.ndarray) -> _Run:
        c = self.config
        model = MLP(2, [*c.hidden, c.outputs], activation=c.activation, seed=0)
        model.set_flat(values)
        return _Run(model, make_optimizer(c.optimizer, model.parameters(), self.lr, c.momentum))

    def _build(self, init_seed: int) -> None:
        c = self.config
        initial = MLP(2, [*c.hidden, c.outputs], activation=c.activation, seed=init_seed)
        self.initial_params = _frozen(initial.get_flat())
        self.run = self._new_run(self.initial_params)
        self.model = self.run.model
        self.ghost: _Run | None = None
        self.param_names = tuple(name for name, _ in self.model.named_parameters())
        self.history: list[StepRecord] = []
        self.edits: list[ParameterEdit] = []
        self.checkpoints: list[_Checkpoint] = []
        self.phase_index = 0
        self.stop_reason = ""
        self.last_root: Value | None = None
        self.last_output: Value | list[Value] | None = None
        self.last_batch: np.ndarray = np.arange(0)
        self._traced: Graph | None = None
        self._traced_root: Value | None = None
        self.last_graph: Graph | None = None
        self.last_graph_batch: np.ndarray | None = None
        self._pending: dict[str, Any] = {}
        if self.ghost_enabled:
            self.ghost = self._new_run(self.initial_params)

    @property
    def step_count(self) -> int:
        return len(self.history)

    @property
    def phase(self) -> str:
        """The phase the next `substep()` will run."""
        return PHASES[self.phase_index]

    @property
    def lr(self) -> float:
        """The base learning rate (before the schedule); it can change between steps."""
        return self.config.lr

    @property
    def schedule(self) -> Schedule:
        c = self.config
        return Schedule(c.schedule, self.lr, c.steps)

    # --- switches -----------------------------------------------------------------------
    def set_forget_zero_grad(self, on: bool) -> None:
        self.forget_zero_grad = bool(on)

    def set_ghost(self, on: bool) -> None:
        """A ghost run trains a copy correctly on the same batches, for comparison.

        Turned on at step 0 it starts from the same initial weights as the main run;
        turned on later it starts from the main run's current weights.
        """
        self.ghost_enabled = bool(on)
        if on and self.ghost is None:
            self.ghost = self._new_run(self.run.values())
            self.ghost.optimizer.load_state_dict(self.run.optimizer.state_dict())
        elif not on:
            self.ghost = None

    def set_lr(self, lr: float) -> None:
        if not math.isfinite(lr) or lr < 0:
            raise ConfigError(f"learning rate must be a finite number >= 0, got {lr}")
        self.config = self.config.with_changes(lr=float(lr))

    # --- the four phases ---------------------------------------------------------------------
    def _batch_indices(self, step: int) -> np.ndarray:
        train = np.flatnonzero(~self.dataset.is_test)
        size = self.config.batch_size
        if size is None or size >= len(train):
            return train
        # Seeded by the step number, so replaying from a checkpoint sees the same batches.
        rng = np.random.default_rng([self.config.seed, step])
        return np.sort(rng.choice(train, size, replace=False))

    def _forward(self, run: _Run, batch: np.ndarray) -> tuple[Value, Value | list[Value]]:
        c = self.config
        points, labels = self.dataset.points[batch], self.dataset.labels[batch]
        output = run.model([points[:, 0], points[:, 1]])
        loss = losses.compute_loss(c.effective_loss, output, labels)
        if c.l2:
            loss = loss + c.l2 * losses.l2_penalty(run.params)
        if c.l1:
            loss = loss + c.l1 * losses.l1_penalty(run.params)
        return loss, output

    def substep(self, capture_every_phase: bool = True) -> str:
        """Run the next phase and return its name; after 'update' a step is complete."""
        phase = self.phase
        if self.stop_reason and phase == "forward":
            self.stop_reason = ""
        with np.errstate(all="ignore"), cyclic_gc_paused():
            getattr(self, f"_phase_{phase}")()
            if self.capture_graph and not self.stop_reason and phase != "update" and (
                    capture_every_phase or phase == "backward"):
                self._capture_graph()
        if not self.stop_reason:
            self.phase_index = (self.phase_index + 1) % len(PHASES)
        return phase

    def capture_current_graph(self) -> None:
        """Capture the last forward pass's graph now, as it was before its update.

        After a whole step the optimizer has already moved the weights; the graph must
        show the weights the forward pass used, so they are put back while it is frozen.
        """
        if self.last_root is None:
            return
        if self.phase_index == 0 and self.checkpoints:
            current = self.run.values()
            self.run.set_values(self.checkpoints[-1].params)
            try:
                self._capture_graph()
            finally:
                self.run.set_values(current)
        else:
            self._capture_graph()

    def _capture_graph(self) -> None:
        """Freeze the current graph's numbers (before the update moves the weights)."""
        if self.last_root is None:
            return
        if self._traced is None or self._traced_root is not self.last_root:
            self._traced = trace(self.last_root, self.model)
            self._traced_root = self.last_root
        self.last_graph = self._traced.snapshot()
        self.last_graph_batch = _frozen(self.last_batch)

    def _phase_forward(self) -> None:
        step = self.step_count
        self.checkpoints.append(self._checkpoint())
        self.last_batch = self._batch_indices(step)
        if len(self.last_batch) == 0:
            self._stop("there are no training points: add some, or hold fewer out for testing")
            return
        self.last_root, self.last_output = self._forward(self.run, self.last_batch)
        if not math.isfinite(self.last_root.data):
            self._stop(f"the loss became {self.last_root.data} at step {step + 1}: "
                       "the learning rate is probably too large. Rewind or lower it.")

    def _phase_zero_grad(self) -> None:
        if not self.forget_zero_grad:
            self.run.optimizer.zero_grad()

    def _phase_backward(self) -> None:
        assert self.last_root is not None
        self.last_root.backward()
        if not np.all(np.isfinite(self.run.grads())):
            self._stop(f"a gradient became non-finite at step {self.step_count + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")

    def _phase_update(self) -> None:
        assert self.last_root is not None
        step = self.step_count
        lr = self.schedule.lr_at(step)
        grads = self.run.grads()
        ghost_loss = math.nan
        if self.ghost is not None:
            ghost_root, _ = self._forward(self.ghost, self.last_batch)
            self.ghost.optimizer.zero_grad()
            ghost_root.backward()
            self.ghost.optimizer.lr = lr
            self.ghost.optimizer.step()
            ghost_loss = ghost_root.data
        test_loss, test_acc = self._evaluate(self.dataset.is_test)
        output = self.last_output
        out_data = [o.data for o in output] if isinstance(output, list) else output.data
        self.run.optimizer.lr = lr
        self.run.optimizer.step()
        if not np.all(np.isfinite(self.run.values())):
            self._stop(f"a weight became non-finite in the update of step {step + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")
            return
        self.history.append(StepRecord(
            step=step + 1, loss=float(self.last_root.data), test_loss=test_loss,
            accuracy=losses.accuracy(out_data, self.dataset.labels[self.last_batch]),
            test_accuracy=test_acc, grad_norm=float(np.linalg.norm(grads)), lr=lr,
            zero_grad_skipped=self.forget_zero_grad, ghost_loss=ghost_loss))

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        self.phase_index = 0
        # Drop the half-done step: the last finite state stays the current one.
        self._restore(self.checkpoints.pop())

    def step(self) -> StepRecord | None:
        """One whole iteration (finishing a partly sub-stepped one). None if it stopped."""
        while True:
            phase = self.substep(capture_every_phase=False)
            if self.stop_reason:
                return None
            if phase == "update":
                return self.history[-1]

    def run_steps(self, max_steps: int | None = None, target_loss: float | None = None,
                  ) -> str:
        """Train until a step count, a target loss, or a non-finite loss; return why it stopped."""
        done = 0
        while max_steps is None or done < max_steps:
            record = self.step()
            if record is None:
                return self.stop_reason
            done += 1
            if target_loss is not None and record.loss <= target_loss:
                return f"reached loss {fmt(record.loss)} ≤ {target_loss:g} at step {record.step}"
        return f"ran {done} steps"

    # --- evaluation ------------------------------------------------------------------------
    def _evaluate(self, mask: np.ndarray) -> tuple[float, float]:
        """Loss (without penalties) and accuracy on the masked points, by plain numpy."""
        if not mask.any():
            return math.nan, math.nan
        points, labels = self.dataset.points[mask], self.dataset.labels[mask]
        out = numpy_forward(self.run.values(), self.config.layer_sizes,
                            self.config.activation, points)
        outputs = [out[:, k] for k in range(out.shape[1])]
        scores = [Value(o) for o in outputs]
        loss = losses.compute_loss(self.config.effective_loss,
                                   scores if len(scores) > 1 else scores[0], labels)
        return float(loss.data), losses.accuracy(outputs if len(outputs) > 1 else outputs[0],
                                                 labels)

    # --- reset, rewind -----------------------------------------------------------------------
    def _checkpoint(self) -> _Checkpoint:
        ghost = None
        if self.ghost is not None:
            ghost = (self.ghost.values(), self.ghost.optimizer.state_dict())
        return _Checkpoint(self.run.values(), self.run.grads(),
                           self.run.optimizer.state_dict(), ghost, self.lr)

    def _restore(self, cp: _Checkpoint) -> None:
        self.run.set_values(cp.params)
        self.run.set_grads(cp.grads)
        self.run.optimizer.load_state_dict(cp.optimizer)
        self.config = self.config.with_changes(lr=cp.lr)
        if cp.ghost is None:
            self.ghost = None
        else:
            self.ghost = self._new_run(cp.ghost[0])
            self.ghost.optimizer.load_state_dict(cp.ghost[1])
        self.ghost_enabled = self.ghost is not None
        self.last_root = self.last_output = None
        self.last_graph = self.last_graph_batch = None

    def reset(self) -> None:
        """Back to step 0 with the same initial weights."""
        self._build_from(self.initial_params)

    def reinitialize(self, seed: int | None = None) -> None:
        """Back to step 0 with new initial weights (a new seed, or the next one)."""
        self.init_seed = self.init_seed + 1 if seed is None else int(seed)
        self._build(self.init_seed)

    def _build_from(self, initial: np.ndarray) -> None:
        self._build(self.init_seed)
        self.initial_params = _frozen(initial)
        self.run.set_values(self.initial_params)
        if self.ghost is not None:
            self.ghost.set_values(self.initial_params)

    def rewind(self, step: int) -> None:
        """Go back to the state just after `step` steps (0 = the initial weights).

        Parameters, gradients, optimizer state and history are restored exactly, so
        continuing reproduces the original run bit for bit.
        """
        if not 0 <= step <= self.step_count:
            raise ValueError(f"can rewind to steps 0..{self.step_count}, not {step}")
        if step == self.step_count and self.phase_index == 0:
            return
        target = self.checkpoints[step] if step < len(self.checkpoints) else self._checkpoint()
        self._restore(target)
        del self.history[step:]
        del self.checkpoints[step:]
        self.edits = [e for e in self.edits if e.step <= step]  # made after `step` steps
        self.phase_index = 0
        self.stop_reason = ""

    def set_parameter(self, name: str, value: float) -> ParameterEdit:
        """Type a weight in by hand. It takes effect from the next step and is kept in
        the history: the next step's checkpoint holds it, so rewinding to before the edit
        undoes it and rewinding to after it keeps it."""
        if name not in self.param_names:
            raise KeyError(f"there is no parameter named {name!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"a weight must be a finite number, got {value}")
        self.rewind(self.step_count)  # a half-done step was computed with the old weight
        index = self.param_names.index(name)
        param = self.run.params[index]
        edit = ParameterEdit(self.step_count, name, float(param.data), value)
        param.data = value
        self.edits.append(edit)
        self.last_graph = self.last_graph_batch = None
        return edit

    def parameter_history(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """Value and gradient of one parameter at the start of each step so far, and now."""
        values = [cp.params[index] for cp in self.checkpoints[: self.step_count]]
        grads = [cp.grads[index] for cp in self.checkpoints[1: self.step_count]]
        values.append(self.run.values()[index])
        grads.append(self.run.grads()[index])
        return np.array(values), np.array(grads)

    # --- dataset edits --------------------------------------------------------------------------
    def replace_dataset(self, dataset: Dataset) -> None:
        """Train on new points from the next step on; weights and history stay.

        Earlier history records keep what was measured on the old points, and a rewind
        restores earlier weights but keeps the new points.
        """
        if dataset.classes > max(self.config.outputs, 2):
            raise ConfigError(f"the data has {dataset.classes} classes but this network has "
                              f"{self.config.outputs} output(s); choose blobs with "
                              f"{dataset.classes} classes so it gets one output per class")
        self.rewind(self.step_count)  # a half-done step belongs to the old points
        self.dataset = dataset
        self.dataset_version += 1

    # --- snapshots --------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        ghost_grads = self.ghost.grads() if self.ghost is not None else None
        return Snapshot(
            step=self.step_count, phase=self.phase, config=self.config,
            layer_sizes=tuple(self.config.layer_sizes), param_names=self.param_names,
            params=_frozen(self.run.values()), grads=_frozen(self.run.grads()),
            history=tuple(self.history), points=_frozen(self.dataset.points),
            labels=_frozen(self.dataset.labels), is_test=_frozen(self.dataset.is_test),
            classes=self.dataset.classes, forget_zero_grad=self.forget_zero_grad,
            ghost=self.ghost is not None,
            ghost_grads=_frozen(ghost_grads) if ghost_grads is not None else None,
            stop_reason=self.stop_reason, lr=self.lr, dataset_version=self.dataset_version,
            graph=self.last_graph, graph_batch=self.last_graph_batch, edits=tuple(self.edits))


def history_arrays(history: Sequence[StepRecord]) -> dict[str, np.ndarray]:
    """Column arrays (step, loss, test_loss, ...) for plotting."""
    names = [f for f in StepRecord.__dataclass_fields__ if f != "zero_grad_skipped"]
    return {name: np.array([getattr(r, name) for r in history], dtype=np.float64)
            for name in names}
