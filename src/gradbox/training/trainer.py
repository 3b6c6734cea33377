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
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.engine import Value, release_graph
from gradbox.autograd.nn import ACTIVATIONS, INITIALIZERS, MLP, numpy_forward, parameter_count
from gradbox.autograd.optim import OPTIMIZERS, SCHEDULES, Optimizer, Schedule, make_optimizer
from gradbox.autograd.phases import PHASES  # re-exported: older imports read it here
from gradbox.formatting import fmt
from gradbox.graph import Graph, trace
from gradbox.training import datasets, limits
from gradbox.training import statistics as layer_stats
from gradbox.training.compare import PinnedRun
from gradbox.training.datasets import Dataset
from gradbox.training.history import History, HistoryBuffer, StepRecord, history_arrays
from gradbox.training.state import (
    Checkpoint,
    DataChange,
    Event,
    GhostChange,
    ParameterEdit,
    RateChange,
    RunState,
    TrainingState,
    frozen,
    frozen_dataset,
    frozen_optimizer,
)

__all__ = ["PHASES", "SLOW_WORK", "Checkpoint", "CheckpointPolicy", "ConfigChange", "ConfigError",
           "DataChange", "GhostChange", "History", "ParameterEdit", "RateChange", "Snapshot",
           "StepRecord", "Trainer", "TrainingConfig", "TrainingState", "history_arrays",
           "plan_config_change"]

# A step estimated to take this long or more gets a warning.
SLOW_STEP_SECONDS = 0.5
# A configuration this many parameter-samples per step or more is run phase by phase.
SLOW_WORK = 2_000_000


class ConfigError(ValueError):
    """A training configuration that cannot be used; the message names the field."""


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


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
    # The network's inputs (gradbox.autograd.features names), kept in canonical order.
    features: tuple[str, ...] = features.DEFAULT
    # How the weights start (gradbox.autograd.nn.INITIALIZERS) and its one knob (bound, σ, gain).
    init: str = "uniform"
    init_scale: float = 1.0

    def __post_init__(self) -> None:
        try:
            hidden = tuple(operator.index(h) for h in self.hidden)
        except TypeError:
            raise ConfigError(f"hidden must be whole numbers, got {self.hidden!r}") from None
        object.__setattr__(self, "hidden", hidden)
        if not isinstance(self.features, str):
            object.__setattr__(self, "features", tuple(self.features))
            if not features.problems(self.features):
                object.__setattr__(self, "features", features.canonical(self.features))
        problems = self.problems()
        if problems:
            raise ConfigError("; ".join(problems))
        # The loss field says what trains: a class loss on numbers to fit becomes MSE, a
        # regression-only loss on classes becomes hinge (switching datasets both ways).
        if self.is_regression and self.loss not in losses.REGRESSION_LOSSES:
            object.__setattr__(self, "loss", "mse")
        elif not self.is_regression and self.loss not in losses.LOSSES:
            object.__setattr__(self, "loss", "hinge")

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
        if self.loss not in losses.ALL_LOSSES:
            p.append(f"loss must be one of {', '.join(losses.ALL_LOSSES)}, got {self.loss!r}")
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
        p.extend(features.problems(self.features))
        if self.init not in INITIALIZERS:
            p.append(f"init must be one of {', '.join(INITIALIZERS)}, got {self.init!r}")
        if isinstance(self.init_scale, bool) or not isinstance(self.init_scale, (int, float)) \
                or not math.isfinite(self.init_scale) or not 0 <= self.init_scale <= 100:
            p.append(f"init scale must be a number between 0 and 100, got {self.init_scale!r}")
        return p

    @property
    def is_regression(self) -> bool:
        return self.dataset in datasets.REGRESSION_KINDS

    @property
    def effective_features(self) -> tuple[str, ...]:
        """The features the network takes: those of x₁ alone for a 1-D dataset."""
        if self.dataset in datasets.ONE_D_KINDS:
            return features.for_one_dimension(self.features)
        return self.features

    @property
    def effective_classes(self) -> int:
        return self.classes if self.dataset == "blobs" else 2

    @property
    def effective_loss(self) -> str:
        """More than two classes need one score per class: softmax cross-entropy."""
        if self.effective_classes > 2 and not self.is_regression:
            return "softmax"
        return self.loss

    @property
    def outputs(self) -> int:
        return self.effective_classes if self.effective_loss == "softmax" else 1

    @property
    def layer_sizes(self) -> list[int]:
        return [len(self.effective_features), *self.hidden, self.outputs]

    @property
    def network_key(self) -> tuple[Any, ...]:
        """What defines the network and its initial weights: a change makes a new model."""
        return (tuple(self.layer_sizes), self.activation, self.effective_features, self.init,
                self.init_scale)

    def make_model(self, seed: int | None) -> MLP:
        """A freshly initialized network for this configuration."""
        return MLP(len(self.effective_features), [*self.hidden, self.outputs],
                   activation=self.activation, seed=seed, init=self.init,
                   init_scale=float(self.init_scale))

    def inputs(self, points: np.ndarray) -> np.ndarray:
        """The network's input values (n, inputs) for points of the plane."""
        return features.transform(points, self.effective_features)

    def work_per_step(self) -> int:
        return parameter_count(self.layer_sizes) * self.n_samples

    def slow_warning(self) -> str:
        """A plain warning when a step will take long on this machine, or ''. The time
        comes from measured per-node costs (gradbox.training.limits); a network that would not
        fit in memory is refused when it is built, not warned about."""
        estimate = limits.estimate_step(self)
        if estimate.seconds < SLOW_STEP_SECONDS:
            return ""
        return (f"{parameter_count(self.layer_sizes):,} parameters × {self.n_samples:,} "
                f"samples: each step will take about {_duration(estimate.seconds)} on this "
                f"machine and need about {estimate.bytes / 2**20:,.0f} MB")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        d["features"] = list(self.features)
        return d

    def with_changes(self, **changes: Any) -> TrainingConfig:
        return replace(self, **changes)


# --- what a configuration change means for the run ---------------------------------------
# Fields that define the points: changing one makes new data (and so a new model).
DATA_FIELDS = ("dataset", "n_samples", "noise", "test_ratio", "classes", "seed")


@dataclass(frozen=True)
class ConfigChange:
    """What applying a new configuration does to a run (see `plan_config_change`)."""

    kind: str  # "none", "lr", "restart", "network" or "data"
    message: str


def plan_config_change(old: TrainingConfig, new: TrainingConfig) -> ConfigChange:
    """Decide what a new configuration needs: nothing, a new learning rate from the next
    step on, a restart from the same initial weights (other training settings), a new
    model (the network's shape changed) or new data and a new model."""
    if new == old:
        return ConfigChange("none", "")
    if new == old.with_changes(lr=new.lr):
        return ConfigChange("lr", f"Learning rate set to {new.lr:g} from the next step on")
    if any(getattr(new, f) != getattr(old, f) for f in DATA_FIELDS):
        kind, text = "data", "New data: the model was re-created"
    elif new.network_key != old.network_key:
        kind, text = "network", "Network changed: a new model was created"
    else:
        kind, text = "restart", "Training settings changed: restarted from the same initial weights"
    warning = new.slow_warning()
    return ConfigChange(kind, text + (f". Warning: {warning}" if warning else ""))


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
    history: History
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
    # How many backward passes the gradients now hold (1 while zero_grad runs each step;
    # k after k steps without it), and the last backward pass's own contribution: the
    # true gradient at these weights, what zero_grad would have left (None before any).
    grad_passes: int = 0
    step_grads: np.ndarray | None = None
    # The largest |gradient| of the run so far (main and ghost), for bars on a fixed scale.
    grad_peak: float = 0.0
    # The size of the last update, |Δθ| (NaN before the first update of this history).
    update_norm: float = math.nan
    # The loss of the last forward pass, also mid-step (NaN after a rewind).
    forward_loss: float = math.nan
    # A regression dataset's float targets (None for classes).
    targets: np.ndarray | None = None
    # The dataset indices of the last forward pass's batch (empty before the first).
    batch: np.ndarray = field(default_factory=lambda: np.arange(0))
    # A run pinned for comparison, or None.
    pinned: PinnedRun | None = None

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

    def predict(self, points: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """Network output (n, outputs) for the given points, from this snapshot's weights
        (in `dtype`: float32 is 3x faster, for pictures)."""
        return numpy_forward(self.params, self.layer_sizes, self.config.activation,
                             self.config.inputs(points), dtype=dtype)


@dataclass(frozen=True)
class CheckpointPolicy:
    """How far apart full checkpoints are kept (see `Trainer` and gradbox.training.state).

    A checkpoint is kept once `replay_seconds` of measured training have passed since the
    last one -- so reaching any step replays at most that long -- but never closer than
    `bytes_per_step` of checkpoint per step of history allows. The last steps are also
    kept whole (up to `recent_bytes`), so stepping back a little is instant. `every`, if
    set, replaces the measured rule by a fixed spacing (tests and benchmarks).
    """

    replay_seconds: float = 0.2
    bytes_per_step: int = 700
    recent_bytes: int = 2 * 2**20
    min_recent: int = 2
    max_recent: int = 256
    every: int | None = None

    def recent_count(self, checkpoint_bytes: int) -> int:
        fit = self.recent_bytes // max(checkpoint_bytes, 1)
        return int(min(max(fit, self.min_recent), self.max_recent))

    def keep(self, steps_since: int, seconds_since: float, checkpoint_bytes: int) -> bool:
        if self.every is not None:
            return steps_since >= self.every
        return (seconds_since >= self.replay_seconds
                and steps_since * self.bytes_per_step >= checkpoint_bytes)


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

    def state(self) -> RunState:
        return RunState(frozen(self.values()), frozen(self.grads()),
                        frozen_optimizer(self.optimizer.state_dict()))

    def load(self, state: RunState) -> None:
        self.set_values(state.params)
        self.set_grads(state.grads)
        self.optimizer.load_state_dict(dict(state.optimizer))


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


def check_task(config: TrainingConfig, dataset: Dataset) -> None:
    """Refuse data whose kind (classes, targets over the plane, y = f(x)) the network
    is not set up for, with words that say what to choose instead."""
    if dataset.is_regression != config.is_regression:
        have = "targets to fit (regression)" if dataset.is_regression else "classes"
        want = ("a regression dataset (" + ", ".join(datasets.REGRESSION_KINDS) + ")"
                if dataset.is_regression else "a classification dataset")
        raise ConfigError(f"these points have {have} but the network is set up for "
                          f"{config.dataset}; choose {want} first")
    one_d = config.dataset in datasets.ONE_D_KINDS
    if dataset.is_regression and dataset.one_dimensional != one_d:
        raise ConfigError("these points are " + ("a 1-D function y = f(x)" if
                          dataset.one_dimensional else "targets over the plane")
                          + f" but the network is set up for {config.dataset}; choose "
                          + ("sine, abs or step" if dataset.one_dimensional else
                             "plane or multi_gaussian") + " first")


def config_for(dataset: Dataset, config: TrainingConfig) -> TrainingConfig:
    """`config`, or the nearest one that can train on `dataset` (imported points): a
    dataset kind of the data's task, and blobs with one output per class for > 2 classes."""
    if dataset.is_regression:
        one_d = config.dataset in datasets.ONE_D_KINDS
        if not config.is_regression or dataset.one_dimensional != one_d:
            config = config.with_changes(dataset="sine" if dataset.one_dimensional else "plane")
    elif config.is_regression:
        config = config.with_changes(dataset="moons")
    if dataset.classes > max(config.outputs, 2):
        config = config.with_changes(dataset="blobs", classes=dataset.classes, loss="softmax")
    return config


class Trainer:
    """Owns the dataset, the model, the optimizer and the history of one run.

    Other code reads a run through `snapshot()` (for views) and `state()` (the whole
    run, to save, hand over or keep for undo), and changes it through the methods below.
    """

    def __init__(self, config: TrainingConfig | None = None, dataset: Dataset | None = None,
                 init_seed: int | None = None, initial_params: np.ndarray | None = None,
                 policy: CheckpointPolicy | None = None) -> None:
        self.config = config or TrainingConfig()
        c = self.config
        n_train = None if dataset is None else int(np.count_nonzero(~dataset.is_test))
        too_big = limits.fits_in_memory(c, n_train)
        if too_big:  # refused before building a network that would not fit
            raise ConfigError(too_big)
        self._dataset = frozen_dataset(dataset if dataset is not None else datasets.make(
            c.dataset, c.n_samples, c.noise, c.seed, c.test_ratio, c.effective_classes))
        check_task(c, self._dataset)
        self.dataset_version = 0
        self.init_seed = c.seed if init_seed is None else init_seed
        self.forget_zero_grad = False
        self.policy = policy or CheckpointPolicy()
        # Tracing costs about as much as a step, so it is done only when a view wants it.
        self.capture_graph = False
        self.pinned: PinnedRun | None = None  # kept across reset, reinitialize, with_config
        self._build(initial_params)

    # --- construction -----------------------------------------------------------------
    def _new_run(self, values: np.ndarray) -> _Run:
        c = self.config
        model = c.make_model(seed=0)
        model.set_flat(values)
        return _Run(model, make_optimizer(c.optimizer, model.parameters(), self.lr, c.momentum))

    def _build(self, initial: np.ndarray | None = None, ghost: bool = False) -> None:
        """A fresh run at step 0 from `initial` weights (default: drawn from init_seed)."""
        c = self.config
        if initial is None:
            initial = c.make_model(seed=self.init_seed).get_flat()
        self.initial_params = frozen(initial, np.float64)
        self.run = self._new_run(self.initial_params)
        self.model = self.run.model
        self.ghost: _Run | None = None
        self.param_names = tuple(name for name, _ in self.model.named_parameters())
        self._history = HistoryBuffer()
        self._events: list[Event] = [DataChange(0, self._dataset, self.dataset_version)]
        self._sparse: list[Checkpoint] = []
        self._recent: deque[Checkpoint] = deque()
        self._start: Checkpoint | None = None  # the step under way began here
        self._since_sparse = 0.0  # seconds of training since the last sparse checkpoint
        self._phase_index = 0
        self._zero_grad_skipped = False
        self.stop_reason = ""
        self._path = _Path(self.initial_params)
        self._clear_graph()
        # Cumulative largest |gradient| after each step (see `_grad_peak`).
        self._peaks: list[float] = []
        if ghost:
            self.set_ghost(True)

    def _clear_step_state(self) -> None:
        """Forget what the phases of a half-done (or dropped) step measured."""
        self._mid_passes: int | None = None  # passes held, once this step's zero_grad ran
        self._step_grads: np.ndarray | None = None
        self._update_norm = math.nan

    @property
    def grad_passes(self) -> int:
        """How many backward passes the gradients hold now (0 right after zero_grad)."""
        if self._mid_passes is not None:
            return self._mid_passes
        return passes_after(self._history.view())

    def _clear_graph(self) -> None:
        self._clear_step_state()
        self.last_root: Value | None = None
        self.last_output: Value | list[Value] | None = None
        self.last_batch: np.ndarray = np.arange(0)
        self._traced: Graph | None = None
        self._traced_root: Value | None = None
        self.last_graph: Graph | None = None
        self.last_graph_batch: np.ndarray | None = None

    @property
    def dataset(self) -> Dataset:
        """The points the next step trains on (read-only arrays; use replace_dataset)."""
        return self._dataset

    @property
    def history(self) -> History:
        return self._history.view()

    @property
    def edits(self) -> tuple[ParameterEdit, ...]:
        return tuple(e for e in self._events if isinstance(e, ParameterEdit))

    @property
    def step_count(self) -> int:
        return len(self._history)

    @property
    def phase(self) -> str:
        """The phase the next `substep()` will run."""
        return PHASES[self._phase_index]

    @property
    def lr(self) -> float:
        """The base learning rate (before the schedule); it can change between steps."""
        return self.config.lr

    @property
    def schedule(self) -> Schedule:
        c = self.config
        return Schedule(c.schedule, self.lr, c.steps)

    @property
    def ghost_enabled(self) -> bool:
        return self.ghost is not None

    # --- switches -----------------------------------------------------------------------
    def set_forget_zero_grad(self, on: bool) -> None:
        """Skip zero_grad from the next step on (or stop skipping it).

        Switched on with a ghost running, the ghost starts again from the current
        weights: the correct run and the broken one branch from the same step, so the
        difference between their curves is the missing zero_grad and nothing else.
        """
        if on and not self.forget_zero_grad and self.ghost is not None:
            self.set_ghost(False)
            self.set_ghost(True)
        self.forget_zero_grad = bool(on)

    def set_ghost(self, on: bool) -> None:
        """A ghost run trains a copy correctly on the same batches, for comparison.

        Turned on at step 0 it starts from the same initial weights as the main run;
        turned on later it starts from the main run's current weights.
        """
        if bool(on) == (self.ghost is not None):
            return
        if on:
            self.ghost = self._new_run(self.run.values())
            self.ghost.optimizer.load_state_dict(self.run.optimizer.state_dict())
        else:
            self.ghost = None
        self._event(GhostChange(self.step_count, bool(on)))

    def set_lr(self, lr: float) -> None:
        if not math.isfinite(lr) or lr < 0:
            raise ConfigError(f"learning rate must be a finite number >= 0, got {lr}")
        if float(lr) != self.config.lr:
            self.config = self.config.with_changes(lr=float(lr))
            self._event(RateChange(self.step_count, float(lr)))

    def _event(self, event: Event) -> None:
        """Record a change between steps. Mid-step (only the rate and the ghost can change
        then: they act in the update), the step's starting checkpoint takes it in too, so
        that it stays 'the start of this step, after its events'."""
        self._events.append(event)
        if self._start is not None:
            ghost = self.ghost.state() if self.ghost is not None else None
            self._start = replace(self._start, lr=self.lr, ghost=ghost)
            self._recent[-1] = self._start
            if self._sparse and self._sparse[-1].step == self._start.step:
                self._sparse[-1] = self._start

    # --- the four phases ---------------------------------------------------------------------
    def batch_indices(self, step: int, dataset: Dataset | None = None) -> np.ndarray:
        """The training points step `step + 1` uses (all of them, or a seeded batch)."""
        train = np.flatnonzero(~(dataset or self._dataset).is_test)
        size = self.config.batch_size
        if size is None or size >= len(train):
            return train
        # Seeded by the step number, so replaying from a checkpoint sees the same batches.
        rng = np.random.default_rng([self.config.seed, step])
        return np.sort(rng.choice(train, size, replace=False))

    def _forward(self, run: _Run, batch: np.ndarray) -> tuple[Value, Value | list[Value]]:
        c = self.config
        points, truth = self._dataset.points[batch], self._dataset.truth[batch]
        # The inputs are engine nodes too (x₁² is x₁ * x₁), so the graph shows them.
        output = run.model(features.input_nodes(points, c.effective_features))
        loss = self.data_loss(output, truth)
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
        started = time.perf_counter()
        with np.errstate(all="ignore"), cyclic_gc_paused():
            getattr(self, f"_phase_{phase}")()
            if self.capture_graph and not self.stop_reason and phase != "update" and (
                    capture_every_phase or phase == "backward"):
                self._capture_graph()
        self._since_sparse += time.perf_counter() - started
        if not self.stop_reason:
            self._phase_index = (self._phase_index + 1) % len(PHASES)
        return phase

    def capture_current_graph(self) -> None:
        """Capture the last forward pass's graph now, as it was before its update.

        After a whole step the optimizer has already moved the weights; the graph must
        show the weights the forward pass used, so they are put back while it is frozen.
        """
        if self.last_root is None:
            return
        if self._phase_index == 0 and self._recent:
            current = self.run.values()
            self.run.set_values(self._recent[-1].run.params)
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
        self.last_graph_batch = frozen(self.last_batch)

    def _phase_forward(self) -> None:
        step = self.step_count
        self._keep_checkpoint(self._checkpoint())
        self.last_batch = self.batch_indices(step)
        if len(self.last_batch) == 0:
            self._stop("there are no training points: add some, or hold fewer out for testing")
            return
        self._release_last_graph()
        self.last_root, self.last_output = self._forward(self.run, self.last_batch)
        if not math.isfinite(self.last_root.data):
            self._stop(f"the loss became {self.last_root.data} at step {step + 1}: "
                       "the learning rate is probably too large. Rewind or lower it.")

    def _release_last_graph(self) -> None:
        """Free the last step's graph in slices (see `release_graph`) before the next one
        is built, rather than all at once when its last reference goes."""
        old = self.last_root
        if old is None:
            return
        self.last_root = self.last_output = None
        if self._traced_root is old:
            self._traced = self._traced_root = None
        release_graph(old)

    def _phase_zero_grad(self) -> None:
        self._zero_grad_skipped = self.forget_zero_grad
        if self._zero_grad_skipped:
            self._mid_passes = passes_after(self._history.view())
        else:
            self.run.optimizer.zero_grad()
            self._mid_passes = 0

    def _phase_backward(self) -> None:
        assert self.last_root is not None
        held = self.run.grads() if self._mid_passes else None
        self.last_root.backward()
        grads = self.run.grads()
        # This pass's own gradient: what is in .grad now, less what was already there.
        self._step_grads = grads if held is None else grads - held
        self._mid_passes = (self._mid_passes or 0) + 1
        if not np.all(np.isfinite(grads)):
            self._stop(f"a gradient became non-finite at step {self.step_count + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")

    def _train_ghost(self, batch: np.ndarray, lr: float) -> float:
        """One correct step of the ghost run on the same batch; its loss."""
        assert self.ghost is not None
        ghost_root, _ = self._forward(self.ghost, batch)
        self.ghost.optimizer.zero_grad()
        ghost_root.backward()
        self.ghost.optimizer.lr = lr
        self.ghost.optimizer.step()
        loss = ghost_root.data
        release_graph(ghost_root)
        return loss

    def _phase_update(self) -> None:
        assert self.last_root is not None
        step = self.step_count
        lr = self.schedule.lr_at(step)
        grads = self.run.grads()
        ghost_loss = math.nan
        if self.ghost is not None:
            ghost_loss = self._train_ghost(self.last_batch, lr)
        test_loss, test_acc = self._evaluate(self._dataset.is_test)
        # From the weights the forward pass used, before the optimizer moves them.
        stats = layer_stats.measure(self.run.values(), grads, self.config.layer_sizes,
                                    self.config.activation,
                                    self.config.inputs(self._dataset.points[self.last_batch]))
        output = self.last_output
        out_data = [o.data for o in output] if isinstance(output, list) else output.data
        before = self.run.values()
        self.run.optimizer.lr = lr
        self.run.optimizer.step()
        after = self.run.values()
        if not np.all(np.isfinite(after)):
            self._stop(f"a weight became non-finite in the update of step {step + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")
            return
        self._history.append(StepRecord(
            step=step + 1, loss=float(self.last_root.data), test_loss=test_loss,
            accuracy=self._accuracy(out_data, self.last_batch),
            test_accuracy=test_acc, grad_norm=float(np.linalg.norm(grads)), lr=lr,
            zero_grad_skipped=self._zero_grad_skipped, ghost_loss=ghost_loss, layers=stats))
        self._path.add(step + 1, self.run.values())
        self._start = None
        self._update_norm = float(np.linalg.norm(after - before))
        self._mid_passes = None
        self._peaks.append(max(self._peaks[-1] if self._peaks else 0.0,
                               self._grad_peak_of(grads)))

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        self._phase_index = 0
        # Drop the half-done step: the last finite state stays the current one.
        assert self._start is not None
        self._restore(self._start)
        self._start = None

    def step(self, pause: Callable[[], bool] | None = None) -> StepRecord | None:
        """One whole iteration (finishing a partly sub-stepped one). None if it stopped
        (`stop_reason` says why) or if `pause()` said so at a phase boundary: a long step
        of a big network then stays half done, as Substep leaves it."""
        while True:
            phase = self.substep(capture_every_phase=False)
            if self.stop_reason:
                return None
            if phase == "update":
                return self._history.last()
            if pause is not None and pause():
                return None

    def run_steps(self, max_steps: int | None = None, target_loss: float | None = None,
                  ) -> str:
        """Train until a step count, a target loss, or a non-finite loss; return why it stopped."""
        goal = RunGoal(steps=max_steps, loss=target_loss)
        if max_steps is not None and max_steps <= 0:
            return "ran 0 steps"
        done = 0
        while True:
            record = self.step()
            if record is None:
                return self.stop_reason
            done += 1
            reached = goal.reached(record, done)
            if reached:
                return reached

    # --- evaluation ------------------------------------------------------------------------
    def _evaluate(self, mask: np.ndarray) -> tuple[float, float]:
        """Loss (without penalties) and accuracy on the masked points, by plain numpy."""
        if not mask.any():
            return math.nan, math.nan
        points, truth = self._dataset.points[mask], self._dataset.truth[mask]
        out = numpy_forward(self.run.values(), self.config.layer_sizes,
                            self.config.activation, self.config.inputs(points))
        outputs = [out[:, k] for k in range(out.shape[1])]
        scores = [Value(o) for o in outputs]
        loss = self.data_loss(scores if len(scores) > 1 else scores[0], truth)
        return float(loss.data), self._accuracy(outputs if len(outputs) > 1 else outputs[0],
                                                np.flatnonzero(mask))

    def data_loss(self, output: Value | list[Value], truth: np.ndarray) -> Value:
        """The loss (without penalties) of network output against the data's truth:
        targets for regression, class labels otherwise."""
        if self.config.is_regression:
            return losses.compute_regression_loss(self.config.effective_loss, output, truth)
        return losses.compute_loss(self.config.effective_loss, output, truth)

    def _accuracy(self, output: Any, indices: np.ndarray) -> float:
        """Fraction classified right; NaN for regression, where nothing is a class."""
        if self.config.is_regression:
            return math.nan
        return losses.accuracy(output, self._dataset.labels[indices])

    # --- checkpoints, rewind -------------------------------------------------------------------
    def _checkpoint(self) -> Checkpoint:
        ghost = self.ghost.state() if self.ghost is not None else None
        return Checkpoint(self.step_count, self.lr, self.run.state(), ghost)

    def _keep_checkpoint(self, cp: Checkpoint) -> None:
        """The start of a step: kept as the step under way's start, among the last few
        steps, and sparsely for good (always at step 0 and after any event)."""
        self._start = cp
        while self._recent and self._recent[-1].step >= cp.step:
            self._recent.pop()
        self._recent.append(cp)
        while len(self._recent) > self.policy.recent_count(cp.nbytes):
            self._recent.popleft()
        if self._sparse and self._sparse[-1].step == cp.step:
            self._sparse[-1] = cp
            return
        last = self._sparse[-1].step if self._sparse else -1
        evented = self._events[-1].step == cp.step
        if (last < 0 or evented
                or self.policy.keep(cp.step - last, self._since_sparse, cp.nbytes)):
            self._sparse.append(cp)
            self._since_sparse = 0.0

    def _restore(self, cp: Checkpoint) -> None:
        self.run.load(cp.run)
        self.config = self.config.with_changes(lr=cp.lr)
        if cp.ghost is None:
            self.ghost = None
        else:
            self.ghost = self._new_run(cp.ghost.params)
            self.ghost.load(cp.ghost)
        self._clear_graph()

    def _nearest_checkpoint(self, step: int) -> Checkpoint:
        best = None
        for cp in (*self._sparse, *self._recent):
            if cp.step <= step and (best is None or cp.step > best.step):
                best = cp
        assert best is not None, "step 0 is always kept"
        return best

    def _data_at(self, step: int) -> Dataset:
        """The points the step after `step` steps trained on."""
        data = self._events[0]
        for event in self._events:
            if isinstance(event, DataChange) and event.step <= step:
                data = event
        assert isinstance(data, DataChange)
        return data.dataset

    def _replay(self, cp: Checkpoint, step: int) -> None:
        """From checkpoint `cp` to the start of step `step + 1`, by training again.

        No event lies strictly between `cp` and `step` (a checkpoint is kept at every
        step with one), so the points, the ghost and the rate stay those of `cp`;
        each step's learning rate and zero_grad come from its record.
        """
        self._restore(cp)
        self._dataset = self._data_at(cp.step)
        history = self._history.view()
        before = None
        with np.errstate(all="ignore"), cyclic_gc_paused():
            for s in range(cp.step, step):
                record = history[s]
                batch = self.batch_indices(s)
                root, _ = self._forward(self.run, batch)
                if not record.zero_grad_skipped:
                    self.run.optimizer.zero_grad()
                root.backward()
                if self.ghost is not None:
                    self._train_ghost(batch, record.lr)
                self.run.optimizer.lr = record.lr
                if s == step - 1:
                    before = self.run.values()
                self.run.optimizer.step()
        if before is not None:  # the training loop's |Δw| of the last step, as it was
            self._update_norm = float(np.linalg.norm(self.run.values() - before))

    def _last_update_norm(self) -> float:
        """|Δw| of the last step, from the kept weights at its start and now (its own
        update: a weight typed in after it is taken back out); NaN if its start is not
        kept."""
        last = self.step_count
        start = next((cp for cp in (*self._sparse, *self._recent) if cp.step == last - 1),
                     None)
        if start is None:
            return math.nan
        after = self.run.values().copy()
        for event in reversed(self._events):
            if isinstance(event, ParameterEdit) and event.step == last:
                after[self.param_names.index(event.name)] = event.old
        return float(np.linalg.norm(after - start.run.params))

    def rewind(self, step: int) -> None:
        """Go back to the state just after `step` steps (0 = the initial weights).

        Parameters, gradients, optimizer state and history are restored exactly, so
        continuing reproduces the original run bit for bit. The points stay the current
        ones: a rewind takes back training, not the data.
        """
        if not 0 <= step <= self.step_count:
            raise ValueError(f"can rewind to steps 0..{self.step_count}, not {step}")
        if step == self.step_count and self._phase_index == 0:
            return
        data, version = self._dataset, self.dataset_version
        if step == self.step_count:
            assert self._start is not None
            self._restore(self._start)
        else:
            self._replay(self._nearest_checkpoint(step), step)
            self._history.truncate(step)
            del self._peaks[step:]
            self._path.truncate(step)
            self._events = [e for e in self._events if e.step <= step]
            self._sparse = [cp for cp in self._sparse if cp.step <= step]
            self._recent = deque(cp for cp in self._recent if cp.step <= step)
            self._dataset = data
            if self._data_at(step) is not data:
                self._events.append(DataChange(step, data, version))
            last = self._sparse[-1].step
            self._since_sparse = 0.0 if step == last else self.policy.replay_seconds / 2
        self._start = None
        self._phase_index = 0
        self.stop_reason = ""
        if math.isnan(self._update_norm):
            self._update_norm = self._last_update_norm()

    def reset(self) -> None:
        """Back to step 0 with the same initial weights (and the current points and rate)."""
        self._build(self.initial_params, ghost=self.ghost is not None)

    def reinitialize(self, seed: int | None = None) -> None:
        """Back to step 0 with new initial weights (a new seed, or the next one)."""
        self.init_seed = self.init_seed + 1 if seed is None else int(seed)
        self._build(ghost=self.ghost is not None)

    def set_parameter(self, name: str, value: float) -> ParameterEdit:
        """Type a weight in by hand. It takes effect from the next step and is kept in
        the history: rewinding to before the edit undoes it and rewinding to after it
        keeps it."""
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
        self._event(edit)
        self.last_graph = self.last_graph_batch = None
        return edit

    def parameter_history(self, index: int) -> tuple[np.ndarray, np.ndarray,
                                                     np.ndarray, np.ndarray]:
        """(steps, values, gradient steps, gradients) of one parameter, where known.

        values[i] is the weight at the start of step steps[i] + 1 (after that step's
        edits); gradients[i] is what the backward pass of step grad_steps[i] left. Known at
        every kept checkpoint (every step near the end, sparser further back) and now.
        """
        kept = {cp.step: cp for cp in (*self._sparse, *self._recent)
                if cp.step < self.step_count}
        steps = sorted(kept)
        values = [kept[s].run.params[index] for s in steps]
        grad_steps = [s for s in steps if s > 0]
        grads = [kept[s].run.grads[index] for s in grad_steps]
        steps.append(self.step_count)
        values.append(self.run.params[index].data)
        grad_steps.append(self.step_count)
        grads.append(float(self.run.params[index].grad))
        return (np.array(steps, np.int64), np.array(values, np.float64),
                np.array(grad_steps, np.int64), np.array(grads, np.float64))

    # --- dataset edits --------------------------------------------------------------------------
    def replace_dataset(self, dataset: Dataset) -> None:
        """Train on new points from the next step on; weights and history stay.

        Earlier history records keep what was measured on the old points, and a rewind
        restores earlier weights but keeps the new points.
        """
        check_task(self.config, dataset)
        if dataset.classes > max(self.config.outputs, 2):
            raise ConfigError(f"the data has {dataset.classes} classes but this network has "
                              f"{self.config.outputs} output(s); choose blobs with "
                              f"{dataset.classes} classes so it gets one output per class")
        self.rewind(self.step_count)  # a half-done step belongs to the old points
        self._dataset = frozen_dataset(dataset)
        self.dataset_version += 1
        self._event(DataChange(self.step_count, self._dataset, self.dataset_version))

    def with_config(self, config: TrainingConfig) -> Trainer:
        """A new run for `config` (see `plan_config_change`), keeping what it allows:
        the points unless the data changed, the initial weights unless the network did,
        and the switches."""
        new_data = plan_config_change(self.config, config).kind == "data"
        same_network = config.network_key == self.config.network_key
        fresh = Trainer(config, None if new_data else self._dataset, init_seed=self.init_seed,
                        initial_params=self.initial_params if same_network else None,
                        policy=self.policy)
        fresh.forget_zero_grad = self.forget_zero_grad
        fresh.pinned = self.pinned  # comparing across settings is what a pin is for
        fresh.set_ghost(self.ghost is not None)
        fresh.dataset_version = self.dataset_version + (1 if new_data else 0)
        fresh._events[0] = DataChange(0, fresh._dataset, fresh.dataset_version)
        return fresh

    # --- state ----------------------------------------------------------------------------------
    def state(self) -> TrainingState:
        """The whole run as an immutable value (cheap: only the current weights are copied)."""
        current = self._start if self._start is not None else self._checkpoint()
        kept = {cp.step: cp for cp in (*self._sparse, *self._recent) if cp.step < current.step}
        return TrainingState(
            config=self.config, init_seed=self.init_seed, initial_params=self.initial_params,
            dataset=self._dataset, dataset_version=self.dataset_version,
            forget_zero_grad=self.forget_zero_grad, history=self._history.view(),
            events=tuple(self._events), checkpoints=tuple(kept[s] for s in sorted(kept)),
            current=current, phase=self.phase, zero_grad_skipped=self._zero_grad_skipped,
            stop_reason=self.stop_reason, pinned=self.pinned)

    @classmethod
    def from_state(cls, state: TrainingState, policy: CheckpointPolicy | None = None,
                   ) -> Trainer:
        """A trainer that continues `state` bit for bit (mid-step, the phases done are run
        again from the step's start). The state is not changed."""
        trainer = cls(state.config, state.dataset, init_seed=state.init_seed,
                      initial_params=state.initial_params, policy=policy)
        trainer.dataset_version = state.dataset_version
        trainer._dataset = state.dataset
        trainer.forget_zero_grad = state.forget_zero_grad
        trainer._history = HistoryBuffer(state.history)
        trainer._events = list(state.events)
        trainer._sparse = list(state.checkpoints)
        recent = trainer.policy.recent_count(state.current.nbytes)
        trainer._recent = deque(state.checkpoints[-recent:])
        trainer.pinned = state.pinned
        # The path so far is known where the weights are: at the kept checkpoints.
        for cp in state.checkpoints[1:]:
            trainer._path.add(cp.step, cp.run.params)
        trainer._restore(state.current)
        trainer._update_norm = trainer._last_update_norm()
        trainer.stop_reason = state.stop_reason
        phases = PHASES.index(state.phase)
        if phases:
            forget = trainer.forget_zero_grad
            trainer.forget_zero_grad = state.zero_grad_skipped
            try:
                for _ in range(phases):
                    trainer.substep()
            finally:
                trainer.forget_zero_grad = forget
        return trainer

    # --- what forgetting zero_grad does ---------------------------------------------------------
    def _grad_peak_of(self, grads: np.ndarray) -> float:
        """The largest |gradient| in `grads` and the ghost's (NaN and inf ignored)."""
        arrays = [grads] if self.ghost is None else [grads, self.ghost.grads()]
        magnitudes = np.abs(np.concatenate(arrays))
        magnitudes = magnitudes[np.isfinite(magnitudes)]
        return float(magnitudes.max()) if len(magnitudes) else 0.0

    def _grad_peak(self) -> float:
        """The largest |gradient| of the run so far, from step 1 to now."""
        if len(self._peaks) < self.step_count:
            # A run restored from a state: its steps' gradients are known only at the
            # kept checkpoints (checkpoint s holds those after step s); use those.
            kept = sorted((cp.step, float(np.abs(cp.run.grads).max(initial=0.0)))
                          for cp in (*self._sparse, *self._recent))
            known = dict(kept)
            while len(self._peaks) < self.step_count:
                s = len(self._peaks) + 1
                self._peaks.append(max(self._peaks[-1] if self._peaks else 0.0,
                                       known.get(s, 0.0)))
        return max(self._peaks[-1] if self._peaks else 0.0,
                   self._grad_peak_of(self.run.grads()))

    # --- snapshots --------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        ghost_grads = self.ghost.grads() if self.ghost is not None else None
        step_grads = self._step_grads
        return Snapshot(
            step=self.step_count, phase=self.phase, config=self.config,
            layer_sizes=tuple(self.config.layer_sizes), param_names=self.param_names,
            params=frozen(self.run.values()), grads=frozen(self.run.grads()),
            history=self._history.view(), points=self._dataset.points,
            labels=self._dataset.labels, is_test=self._dataset.is_test,
            classes=self._dataset.classes, forget_zero_grad=self.forget_zero_grad,
            ghost=self.ghost is not None,
            ghost_grads=frozen(ghost_grads) if ghost_grads is not None else None,
            stop_reason=self.stop_reason, lr=self.lr, dataset_version=self.dataset_version,
            graph=self.last_graph, graph_batch=self.last_graph_batch, edits=self.edits,
            grad_passes=self.grad_passes,
            step_grads=frozen(step_grads) if step_grads is not None else None,
            grad_peak=self._grad_peak(), update_norm=self._update_norm,
            forward_loss=float(self.last_root.data) if self.last_root is not None else math.nan,
            targets=self._dataset.targets,
            batch=frozen(self.last_batch), pinned=self.pinned)

    # --- comparison, and the path taken ---------------------------------------------------------
    def pin(self) -> None:
        """Keep this run's configuration and records, to compare the next run with."""
        self.pinned = PinnedRun(self.config, self._history.view())

    def unpin(self) -> None:
        self.pinned = None

    def trajectory(self) -> tuple[np.ndarray, np.ndarray]:
        """The weights along the run so far: (steps, (steps, P) weights), from step 0 to
        now, at most PATH_POINTS of them, evenly thinned (see `_Path`)."""
        return self._path.arrays(self.step_count, self.run.values())

    def training_loss(self) -> float:
        """The loss backward would differentiate at the current weights, on the whole
        training set (penalties included), computed by the engine."""
        train = np.flatnonzero(~self._dataset.is_test)
        if len(train) == 0:
            return math.nan
        with np.errstate(all="ignore"), cyclic_gc_paused():
            loss, _ = self._forward(self.run, train)
        return float(loss.data)


def passes_after(history: Sequence[StepRecord]) -> int:
    """How many backward passes the gradients hold after the last step of `history`.

    A step that ran zero_grad leaves one; each step that skipped it adds one to what
    the step before left (and the gradients start at zero before step 1).
    """
    if isinstance(history, History):
        skipped = history.column("zero_grad_skipped").astype(bool)
    else:
        skipped = np.array([r.zero_grad_skipped for r in history], dtype=bool)
    ran = np.flatnonzero(~skipped)
    if len(ran) == 0:
        return len(skipped)
    return len(skipped) - int(ran[-1])

PATH_POINTS = 512  # weights kept along a run, for the loss landscape's path
PATH_BYTES = 8 * 2**20


class _Path:
    """The weights after every `stride`-th step, from step 0: when more than PATH_POINTS
    (or PATH_BYTES) are held, every other one is dropped and the stride doubles. Cheap and
    bounded however long the run; kept apart from the checkpoints, which may be far apart."""

    def __init__(self, initial: np.ndarray) -> None:
        self.steps: list[int] = [0]
        self.weights: list[np.ndarray] = [frozen(initial, np.float64)]
        self.stride = 1
        self.limit = max(16, min(PATH_POINTS, PATH_BYTES // max(8 * len(initial), 1)))

    def add(self, step: int, weights: np.ndarray) -> None:
        if step % self.stride or (self.steps and step <= self.steps[-1]):
            return
        self.steps.append(step)
        self.weights.append(frozen(weights, np.float64))
        if len(self.steps) > self.limit:
            self.stride *= 2
            keep = [i for i, s in enumerate(self.steps) if s % self.stride == 0]
            self.steps = [self.steps[i] for i in keep]
            self.weights = [self.weights[i] for i in keep]

    def truncate(self, step: int) -> None:
        while len(self.steps) > 1 and self.steps[-1] > step:
            self.steps.pop()
            self.weights.pop()

    def arrays(self, now: int, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        steps, weights = list(self.steps), list(self.weights)
        if steps[-1] == now:
            weights[-1] = current  # an edit typed in since may have changed them
        else:
            steps.append(now)
            weights.append(current)
        return np.array(steps, np.int64), np.stack(weights)

# --- when a Run stops by itself --------------------------------------------------------------
# A loss this far above its best (and above where it started), or past DIVERGED_LOSS, is
# a run going the wrong way: Run pauses as it does for a non-finite loss.
DIVERGED_RATIO = 100.0
DIVERGED_LOSS = 1e6


def divergence(history: History | Sequence[StepRecord], forget_zero_grad: bool = False) -> str:
    """Why the run of `history` is diverging, naming the likely cause, or '' if it is not.
    (One pass over the loss column: cheap enough to ask after every step.)"""
    if not len(history):
        return ""
    history = history if isinstance(history, History) else History.from_records(history)
    losses = history.column("loss")
    last = history[-1]
    best = history[int(np.argmin(losses))]
    far_above = (last.loss > DIVERGED_RATIO * best.loss and last.loss > losses[0]
                 and best.loss > 0)
    if not (last.loss > DIVERGED_LOSS or far_above):
        return ""
    cause = ("zero_grad is skipped, so every step's gradient piles onto the last ones"
             if forget_zero_grad else
             f"the learning rate ({last.lr:g}) is probably too large. Rewind or lower it")
    times = f"{last.loss / best.loss:,.0f} ×" if best.loss > 0 else "far above"
    return (f"the loss rose to {fmt(last.loss)} at step {last.step}, {times} its best "
            f"({fmt(best.loss)} at step {best.step}): {cause}.")


@dataclass(frozen=True)
class RunGoal:
    """When a Run stops by itself: after `steps` steps, at a train loss <= `loss`, at a
    train accuracy >= `accuracy` (each None: no such limit)."""

    steps: int | None = None
    loss: float | None = None
    accuracy: float | None = None

    def reached(self, record: StepRecord, steps_done: int) -> str:
        """What was reached after this step of the run, or ''."""
        if self.loss is not None and record.loss <= self.loss:
            return f"reached loss {fmt(record.loss)} ≤ {self.loss:g} at step {record.step}"
        if self.accuracy is not None and record.accuracy >= self.accuracy:
            return (f"reached accuracy {record.accuracy:.1%} ≥ {self.accuracy:.0%} "
                    f"at step {record.step}")
        if self.steps is not None and steps_done >= self.steps:
            return f"ran {steps_done} step{'s' if steps_done != 1 else ''}"
        return ""
