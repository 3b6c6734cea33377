"""A lesson's quantitative claims as data: what is measured, how it compares, and when.

Pure Python/numpy, no Qt. A lesson step's sentence ("by step 100 at most two training
points are on the wrong side") carries a `Claim` beside it (wrong_points <= 2 at step
100). A claim reads an `Observed` run (`holds`, `measure`, `first_held`); checking one
against runs -- trained over seeds, or the one on the screen -- is
gradbox.teaching.claim_checks' job.

A claim is plain data (strings and numbers), so lessons written as files can carry them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from gradbox.autograd.nn import unflatten
from gradbox.formatting import fmt
from gradbox.training.goals import identical_layers
from gradbox.training.history import GRAD, History
from gradbox.training.snapshots import Snapshot

__all__ = ["OPS", "QUANTITIES", "Claim", "Observed"]

OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


@dataclass(frozen=True)
class Observed:
    """What a run shows: its history, its weights now, and the run pinned beside it.

    Built from a `Snapshot` (the screen) or a trainer (the seed test:
    gradbox.teaching.claim_checks.observe). `travelled` is how far the weights are from
    where they started (NaN where unknown: the screen's snapshot does not carry the path)."""

    history: History
    layer_sizes: tuple[int, ...]
    params: np.ndarray
    grads: np.ndarray
    n_train: int
    pinned: History | None = None
    travelled: float = math.nan
    pinned_travelled: float = math.nan

    @classmethod
    def from_snapshot(cls, s: Snapshot) -> Observed:
        return cls(s.history, s.layer_sizes, s.params, s.grads,
                   int(np.count_nonzero(~s.is_test)),
                   s.pinned.history if s.pinned is not None else None)


def _column(history: History | None, name: str) -> np.ndarray:
    if history is None:
        return np.zeros(0)
    return np.asarray(history.column(name), dtype=np.float64)


def _ratio(a: np.ndarray, b: np.ndarray | float) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(a, dtype=np.float64) / b


def _first(series: np.ndarray) -> float:
    return float(series[0]) if len(series) else math.nan


def _paired(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two runs' columns over the steps both have."""
    n = min(len(a), len(b))
    return a[:n], b[:n]


def _wrong_points(o: Observed) -> np.ndarray:
    return np.round((1 - _column(o.history, "accuracy")) * o.n_train)


def _layer_factor(o: Observed) -> np.ndarray:
    layers = o.history.layers() if len(o.history) else None
    if layers is None:
        return np.full(len(o.history), math.nan)
    grads = layers[:, :, GRAD]
    return _ratio(grads[:, -1], grads[:, 0])


def _pinned_loss_ratio(o: Observed) -> np.ndarray:
    mine, theirs = _paired(_column(o.history, "loss"), _column(o.pinned, "loss"))
    return _ratio(mine, theirs)


def _largest_weight(o: Observed) -> float:
    """max |w| and |∂L/∂w| over every weight (biases left out), now."""
    weights, _ = unflatten(o.params, o.layer_sizes)
    grads, _ = unflatten(o.grads, o.layer_sizes)
    return float(max(max(np.abs(w).max(), np.abs(g).max()) for w, g in zip(weights, grads)))


@dataclass(frozen=True)
class Quantity:
    """One measurable thing: its words, how a value is written, and how it is read:
    `series` gives its value at every step of the run (index k: step k + 1), `now` its
    value for the run as it is now (for what the history does not keep)."""

    words: str
    series: Callable[[Observed], np.ndarray] | None = None
    now: Callable[[Observed], float] | None = None
    write: Callable[[float], str] = fmt

    @property
    def per_step(self) -> bool:
        return self.series is not None


def _percent(x: float) -> str:
    return f"{x:.1%}"


def _count(x: float) -> str:
    return f"{x:.0f}"


def _times(x: float) -> str:
    return f"{x:.3g}×"


QUANTITIES: Mapping[str, Quantity] = MappingProxyType({
    "train_accuracy": Quantity("the training accuracy",
                               lambda o: _column(o.history, "accuracy"), write=_percent),
    "wrong_points": Quantity("the number of training points on the wrong side",
                             _wrong_points, write=_count),
    "train_loss": Quantity("the training loss", lambda o: _column(o.history, "loss")),
    "loss_drop": Quantity("the loss as a share of step 1's",
                          lambda o: _ratio(_column(o.history, "loss"),
                                           _first(_column(o.history, "loss"))), write=_times),
    "grad_norm_drop": Quantity("the gradient's size |∇| as a share of step 1's",
                               lambda o: _ratio(_column(o.history, "grad_norm"),
                                                _first(_column(o.history, "grad_norm"))),
                               write=_times),
    "ghost_ratio": Quantity("the broken run's loss over the ghost's",
                            lambda o: _ratio(_column(o.history, "loss"),
                                             _column(o.history, "ghost_loss")), write=_times),
    "ghost_gap": Quantity("the gap between the broken run's loss and the ghost's",
                          lambda o: np.abs(_column(o.history, "loss")
                                           - _column(o.history, "ghost_loss"))),
    "ghost_loss_drop": Quantity("the ghost's loss as a share of step 1's",
                                lambda o: _ratio(_column(o.history, "ghost_loss"),
                                                 _first(_column(o.history, "ghost_loss"))),
                                write=_times),
    "layer_grad_factor": Quantity("the output layer's gradient over the first layer's",
                                  _layer_factor, write=_times),
    "log2_gap": Quantity("the loss's distance from log 2 (0.693)",
                         lambda o: np.abs(_column(o.history, "loss") - math.log(2))),
    "pinned_loss_ratio": Quantity("this run's loss over the pinned run's", _pinned_loss_ratio,
                                  write=_times),
    "pinned_travel_ratio": Quantity(
        "how far the weights moved, over the pinned run's",
        now=lambda o: o.travelled / o.pinned_travelled if o.pinned_travelled > 0 else math.nan,
        write=_times),
    "identical_layers": Quantity(
        "the number of hidden layers whose neurons are all alike",
        now=lambda o: float(len(identical_layers(o.params, o.layer_sizes))), write=_count),
    "largest_weight": Quantity("the largest weight or weight gradient", now=_largest_weight),
})

# How a comparison is written in a sentence.
SYMBOLS = {"<": "<", "<=": "≤", ">": ">", ">=": "≥"}


@dataclass(frozen=True)
class Claim:
    """`quantity op value`, read at step `at_step` of the run the step asks for (or, with
    `by`, at any step up to it: "within a hundred steps").

    `run`: the settings the step tells the learner to change, over the lesson's setup
    (empty: the lesson's own run). `pinned`: a run the step compares with, pinned
    beforehand (its settings over the setup's), trained for `at_step` steps too.
    `says`: the claim in the lesson's words, for messages.
    """

    quantity: str
    op: str
    value: float
    at_step: int
    says: str
    run: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    pinned: Mapping[str, Any] | None = None
    by: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "run", MappingProxyType(dict(self.run)))
        if self.pinned is not None:
            object.__setattr__(self, "pinned", MappingProxyType(dict(self.pinned)))
        if self.quantity not in QUANTITIES:
            raise ValueError(f"unknown quantity {self.quantity!r}; known: {list(QUANTITIES)}")
        if self.op not in OPS:
            raise ValueError(f"op must be one of {list(OPS)}, got {self.op!r}")
        if self.at_step < 1:
            raise ValueError(f"a claim is read at step 1 or later, got {self.at_step}")
        if self.by and not QUANTITIES[self.quantity].per_step:
            raise ValueError(f"{self.quantity} is read from the run as it is now, so it "
                             "cannot be claimed 'by' a step")

    @property
    def key(self) -> tuple[Any, ...]:
        """Claims with equal keys are read on the same run."""
        return (tuple(sorted(self.run.items())),
                None if self.pinned is None else tuple(sorted(self.pinned.items())))

    def measure(self, observed: Observed, step: int | None = None) -> float:
        """The quantity at `step` (default `at_step`; NaN if the run has not got there),
        or now for a quantity the history does not keep."""
        quantity = QUANTITIES[self.quantity]
        if quantity.series is None:
            assert quantity.now is not None
            return quantity.now(observed)
        series = quantity.series(observed)
        step = self.at_step if step is None else step
        return float(series[step - 1]) if 1 <= step <= len(series) else math.nan

    def holds(self, observed: Observed) -> bool | None:
        """True or False; None where it cannot be read (the run is short of `at_step`, or
        the quantity is not known here)."""
        if self.by:
            if self.first_held(observed, self.at_step) is not None:
                return True
            return None if len(observed.history) < self.at_step else False
        if len(observed.history) < self.at_step:
            return None
        value = self.measure(observed)
        if math.isnan(value):
            return None
        return OPS[self.op](value, self.value)

    def first_held(self, observed: Observed, until: int | None = None) -> int | None:
        """The first step of the run (up to `until`) at which the comparison held, for a
        quantity the history keeps step by step."""
        series = QUANTITIES[self.quantity].series
        if series is None:
            return None
        values = series(observed)
        if until is not None:
            values = values[:until]
        with np.errstate(invalid="ignore"):
            held = np.flatnonzero(OPS[self.op](values, self.value))
        return int(held[0]) + 1 if len(held) else None
