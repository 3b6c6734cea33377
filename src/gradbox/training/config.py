"""A run's configuration, and what changing it means for the run.

    TrainingConfig      everything that defines a run, checked when made
    network_problems    how large a network may be (one definition, whatever builds it)
    differences, describe   two configurations compared, a run named, in words
    plan_config_change  what a new configuration does: nothing, a new rate, a restart,
                        a new model or new data
    check_task, config_for   which data a configuration can train on
    splits_steps        whether a Run goes one phase at a time (a big network)
"""

from __future__ import annotations

import math
import operator
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.nn import ACTIVATIONS, INITIALIZERS, MLP, parameter_count
from gradbox.autograd.optim import OPTIMIZERS, SCHEDULES
from gradbox.training import datasets
from gradbox.training.datasets import Dataset
from gradbox.training.goals import MAX_RUN_STEPS

# A step estimated to take this long or more gets a warning (gradbox.training.limits).
SLOW_STEP_SECONDS = 0.5
# A configuration this many parameter-samples per step or more is run phase by phase.
SLOW_WORK = 2_000_000


# The largest network gradbox builds, however it is asked for: the Designer, a session or
# model file, a lesson file, a command. Far above what the Designer's defaults or a lesson
# use, low enough that the views stay readable and a step stays a step (a file of 100,000
# layers froze the window for good; a scalar-autograd network of a million parameters
# already takes seconds a step). High enough for 1000x1000 (1,005,001 parameters), the
# big network the Designer has always built and the process benchmark measures; whether
# such a step fits in memory is the memory estimate's question, not this one.
# TrainingConfig checks them, so no network exceeds them.
MAX_HIDDEN_LAYERS = 64
MAX_WIDTH = 4096  # neurons in one hidden layer
MAX_PARAMETERS = 2_000_000


def network_problems(hidden: tuple[int, ...] | list[int],
                     layer_sizes: tuple[int, ...] | list[int] | None = None) -> list[str]:
    """What makes a network with these hidden layers (and, if given, these layer sizes:
    inputs, hidden..., outputs) too large, in words starting with 'hidden'; [] if nothing."""
    if len(hidden) > MAX_HIDDEN_LAYERS:
        return [f"hidden has {len(hidden):,} layers; at most {MAX_HIDDEN_LAYERS} hidden "
                "layers are allowed"]
    wide = [i for i, h in enumerate(hidden) if h > MAX_WIDTH]
    if wide:
        return [f"hidden layer {wide[0] + 1} has {hidden[wide[0]]:,} neurons; at most "
                f"{MAX_WIDTH:,} a layer are allowed"]
    count = parameter_count(layer_sizes) if layer_sizes is not None else 0
    if count > MAX_PARAMETERS:
        return [f"hidden layers {list(hidden)} make {count:,} parameters; at most "
                f"{MAX_PARAMETERS:,} are allowed"]
    return []


class ConfigError(ValueError):
    """A training configuration that cannot be used; the message names the field."""


# The range of a seed, however it arrives (the Designer's spin box, a lesson, a session,
# a command): the spin box's own (a 32-bit integer), so every seed a run has can be shown
# and typed again. (A session once allowed 2**128 and a lesson any number: the Designer
# then failed on every snapshot and went on showing another seed.)
MIN_SEED, MAX_SEED = 0, 2**31 - 1
# The weights' seed: the data seed plus one for each time new weights are drawn; never
# shown, so it only has to fit the random generator and a file's 64-bit integers.
MAX_INIT_SEED = 2**63 - 1


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
        # -0.0 is 0 to a person, but numpy's random draws refuse it as a negative scale
        # (noise -0.0 in a file: 'scale < 0'); adding 0.0 clears the sign, nothing else.
        for name in ("noise", "test_ratio", "lr", "momentum", "l1", "l2", "init_scale"):
            value = getattr(self, name)
            if isinstance(value, float):
                object.__setattr__(self, name, value + 0.0)
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
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or \
                not MIN_SEED <= self.seed <= MAX_SEED:
            p.append(f"seed must be a whole number from {MIN_SEED} to {MAX_SEED:,}, got "
                     f"{_short(self.seed)}")
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
        if not 1 <= self.steps <= MAX_RUN_STEPS:  # (the Designer's box shows that range)
            p.append(f"steps must be from 1 to {MAX_RUN_STEPS:,}, got {_short(self.steps)}")
        p.extend(features.problems(self.features))
        # How large a network may be: one definition, whatever asks for the network.
        p.extend(network_problems(self.hidden, None if p else self.layer_sizes))
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
    return ConfigChange(kind, text)



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



def splits_steps(config: TrainingConfig) -> bool:
    """Whether a Run of this network goes one phase at a time: a step long enough that
    Pause, and the interpreter lock, should not wait for all of it."""
    return config.work_per_step() >= SLOW_WORK


def _short(value: Any) -> str:
    """A value for a message, cut short: a 100-digit seed is not read out in full."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}… ({len(text)} characters)"


# --- how two configurations differ, in words -----------------------------------------------
# Shown in this order when two configurations differ (the fields a learner changes most).
_DIFFERENCE_FIELDS = ("optimizer", "lr", "momentum", "schedule", "batch_size", "activation",
                      "hidden", "loss", "l1", "l2", "dataset", "n_samples", "noise",
                      "classes", "test_ratio", "seed", "steps")


def _show(field: str, value: object) -> str:
    if field == "hidden":
        return "[" + ", ".join(str(h) for h in value) + "]"  # type: ignore[attr-defined]
    if field == "batch_size" and value is None:
        return "full"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def differences(pinned: TrainingConfig, current: TrainingConfig) -> list[str]:
    """What differs between two configurations, as 'lr 0.5 → 0.1' (pinned → current)."""
    return [f"{f.replace('_', ' ')} {_show(f, getattr(pinned, f))} → "
            f"{_show(f, getattr(current, f))}"
            for f in _DIFFERENCE_FIELDS if getattr(pinned, f) != getattr(current, f)]


def describe(config: TrainingConfig) -> str:
    """A short name for a run: optimizer, learning rate, momentum if any, activation."""
    parts = [config.optimizer, f"lr {config.lr:g}"]
    if config.optimizer == "sgd" and config.momentum:
        parts.append(f"momentum {config.momentum:g}")
    parts.append(config.activation)
    return ", ".join(parts)
