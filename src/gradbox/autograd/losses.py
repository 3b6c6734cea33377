"""Losses and penalties, built from engine ops so their graphs can be drawn.

Label convention (one for the whole package): a dataset's labels are class
indices 0..k-1. Two-class losses that want signs (hinge, MSE) use y = 2c - 1,
i.e. class 0 -> -1 and class 1 -> +1; a positive score means class 1.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gradbox.autograd.engine import Value


def signed(labels: np.ndarray) -> np.ndarray:
    """Class indices 0/1 -> targets -1/+1."""
    return 2.0 * np.asarray(labels, dtype=np.float64) - 1.0


# Each loss is written once, per sample: `per_sample` returns one term per sample (an
# array Value, samples on the last axis, any leading axes -- many networks at once -- kept),
# and the training loss is its mean. The landscape and the hover readout use the terms.
def hinge_terms(score: Value, labels: np.ndarray) -> Value:
    """Max-margin loss, micrograd's demo: relu(1 - y * score) per sample."""
    return (1 + -signed(labels) * score).relu()


def mse_terms(score: Value, labels: np.ndarray) -> Value:
    return (score - signed(labels)) ** 2


def logistic_terms(score: Value, labels: np.ndarray) -> Value:
    """Binary cross-entropy on a raw score: log(1 + exp(-y * score)) per sample.

    Written as max(z, 0) + log(1 + exp(-|z|)), the same number without exp overflowing;
    max(z, 0) as (z + |z|) / 2 rather than relu(z), so that at z = 0, where both kinks
    meet, the slopes add up to softplus'(0) = 1/2 instead of 0.
    """
    z = -signed(labels) * score
    return 0.5 * (z + abs(z)) + (1 + (-abs(z)).exp()).log()


def softmax_terms(scores: Sequence[Value], labels: np.ndarray) -> Value:
    """-log softmax(scores)[label] per sample; one score per class."""
    labels = np.asarray(labels)
    if labels.size and (labels.min() < 0 or labels.max() >= len(scores)):
        raise ValueError(f"labels must be class numbers 0..{len(scores) - 1} for "
                         f"{len(scores)} scores, got {labels.min()}..{labels.max()}")
    # Subtracting the per-sample max changes nothing mathematically (it cancels) but
    # keeps exp from overflowing; it is a constant, so no gradient flows through it.
    shape = np.broadcast_shapes(labels.shape, *(np.shape(s.data) for s in scores))
    shift = np.max(np.stack([np.broadcast_to(s.data, shape) for s in scores]), axis=0)
    shifted = [s - shift for s in scores]
    log_sum_exp = sum(z.exp() for z in shifted).log()
    chosen = sum((labels == k).astype(np.float64) * z for k, z in enumerate(shifted))
    return log_sum_exp - chosen


def squared_error_terms(score: Value, targets: np.ndarray) -> Value:
    """Regression: (score - target)^2 per sample."""
    return (score - np.asarray(targets, dtype=np.float64)) ** 2


def absolute_error_terms(score: Value, targets: np.ndarray) -> Value:
    """|score - target| per sample; slope ±1 whatever the error's size."""
    return abs(score - np.asarray(targets, dtype=np.float64))


def huber_terms(score: Value, targets: np.ndarray) -> Value:
    """Huber loss with delta 1: e²/2 where |e| <= 1, |e| - 1/2 beyond (torch's huber_loss).

    Built from engine ops: with a = |e| and m = min(a, 1) = a - relu(a - 1), the loss is
    m²/2 + (a - m): quadratic near the target, linear (robust to outliers) far from it.
    """
    a = abs(score - np.asarray(targets, dtype=np.float64))
    m = a - (a - 1.0).relu()
    return 0.5 * m * m + (a - m)


CLASSIFICATION = "classification"
REGRESSION = "regression"
_SIGNS = "y = 2.0 * labels - 1.0  # class 0 -> -1, class 1 -> +1"


@dataclass(frozen=True)
class Loss:
    """Everything gradbox says about one loss, in one place: the trainer, the Designer,
    the training-loop panel and the PyTorch export all read this record.

    A name may serve both tasks ('mse': on class signs ±1, or on target numbers as they
    are); (task, name) picks the record.
    """

    name: str  # the configuration's and the files' spelling
    task: str  # CLASSIFICATION or REGRESSION
    label: str  # short, for readouts
    menu: str  # the Designer's loss menu
    title: str  # the PyTorch script's comment over its loss
    loop_call: str  # the training-loop panel's `loss = ...` right-hand side
    torch_lines: tuple[str, ...]  # the PyTorch script's data_loss body
    terms: Callable[..., Value]  # per-sample terms (scores, labels or targets) -> Value
    per_class: bool = False  # one score per class (softmax), else one output
    # Its graph holds a constant read off the scores (softmax's shift by their max): a
    # graph kept from step to step (`gradbox.autograd.order.KeptGraph`) would keep the old
    # one. Such a loss's graph is built anew each step.
    reads_scores: bool = False


TABLE: tuple[Loss, ...] = (
    Loss("hinge", CLASSIFICATION, "hinge", "Hinge (max-margin)", "hinge (max-margin)",
         "hinge_loss(scores, y)",
         (_SIGNS, "return torch.relu(1.0 - y * scores).mean()  # mean(relu(1 - y*score))"),
         hinge_terms),
    Loss("mse", CLASSIFICATION, "MSE", "Mean squared error", "mean squared error",
         "F.mse_loss(scores, y)", (_SIGNS, "return ((scores - y) ** 2).mean()"), mse_terms),
    Loss("logistic", CLASSIFICATION, "logistic", "Logistic (cross-entropy)",
         "logistic (binary cross-entropy)", "F.soft_margin_loss(scores, y)",
         (_SIGNS, "return F.softplus(-y * scores).mean()  # mean(log(1 + exp(-y*score)))"),
         logistic_terms),
    Loss("softmax", CLASSIFICATION, "softmax", "Softmax cross-entropy",
         "softmax cross-entropy", "F.cross_entropy(scores, y)",
         ("return F.cross_entropy(scores, labels)  # -log softmax(scores)[label], mean",),
         softmax_terms, per_class=True, reads_scores=True),
    # Regression: `labels` holds each point's target number as it is.
    Loss("mse", REGRESSION, "MSE", "Mean squared error", "mean squared error (regression)",
         "F.mse_loss(scores, y)",
         ("return F.mse_loss(scores, labels)  # mean((score - target)²)",),
         squared_error_terms),
    Loss("mae", REGRESSION, "MAE (|error|)", "Mean absolute error",
         "mean absolute error (regression)", "F.l1_loss(scores, y)",
         ("return F.l1_loss(scores, labels)  # mean(|score - target|)",),
         absolute_error_terms),
    Loss("huber", REGRESSION, "Huber", "Huber", "Huber, delta 1 (regression)",
         "F.huber_loss(scores, y)",  # torch's default delta is 1
         ("return F.huber_loss(scores, labels, delta=1.0)  # e²/2 near, |e| - 1/2 far",),
         huber_terms),
)
_BY_KEY = {(loss.task, loss.name): loss for loss in TABLE}
LOSSES = tuple(loss.name for loss in TABLE if loss.task == CLASSIFICATION)
# Regression compares the score with a float target as it is (no class signs).
REGRESSION_LOSSES = tuple(loss.name for loss in TABLE if loss.task == REGRESSION)
ALL_LOSSES = tuple(dict.fromkeys(loss.name for loss in TABLE))
# A name's label and menu text are the same whatever the task (checked by a test).
LOSS_LABELS = {loss.name: loss.label for loss in TABLE}
MENU = {loss.name: loss.menu for loss in TABLE}


def lookup(name: str, regression: bool = False) -> Loss:
    """The record of the loss `name` for regression or classification."""
    task = REGRESSION if regression else CLASSIFICATION
    try:
        return _BY_KEY[task, name]
    except KeyError:
        allowed = REGRESSION_LOSSES if regression else LOSSES
        kind = "regression loss" if regression else "loss"
        raise ValueError(f"unknown {kind} {name!r}; choose from {allowed}") from None


def regression_terms(name: str, output: Value | Sequence[Value], targets: np.ndarray) -> Value:
    """The regression loss of each sample against its float target."""
    loss = lookup(name, regression=True)
    if isinstance(output, (list, tuple)):
        raise ValueError(f"regression needs a network with one output, got {len(output)}")
    return loss.terms(output, targets)


def compute_regression_loss(name: str, output: Value | Sequence[Value],
                            targets: np.ndarray) -> Value:
    return regression_terms(name, output, targets).mean()


def per_sample(name: str, output: Value | Sequence[Value], labels: np.ndarray,
               regression: bool = False) -> Value:
    """The loss of each sample (not averaged); `compute_loss` is its mean. With
    `regression`, `labels` are float targets and `name` a regression loss."""
    if regression:
        return regression_terms(name, output, labels)
    loss = lookup(name)
    if loss.per_class:
        scores = output if isinstance(output, (list, tuple)) else [output]
        if len(scores) < 2:
            raise ValueError(f"{loss.title} needs one output per class (at least 2)")
        return loss.terms(scores, labels)
    if isinstance(output, (list, tuple)):
        raise ValueError(f"the {name} loss needs a network with one output, got {len(output)}")
    return loss.terms(output, labels)


def hinge(score: Value, labels: np.ndarray) -> Value:
    return hinge_terms(score, labels).mean()


def mse(score: Value, labels: np.ndarray) -> Value:
    return mse_terms(score, labels).mean()


def logistic(score: Value, labels: np.ndarray) -> Value:
    return logistic_terms(score, labels).mean()


def softmax_cross_entropy(scores: Sequence[Value], labels: np.ndarray) -> Value:
    return softmax_terms(scores, labels).mean()


def compute_loss(name: str, output: Value | Sequence[Value], labels: np.ndarray) -> Value:
    return per_sample(name, output, labels).mean()


def sample_losses(name: str, output: np.ndarray, labels: np.ndarray,
                  regression: bool = False) -> np.ndarray:
    """Per-sample losses from raw network outputs (..., n, k) as plain numbers (..., n).

    Leading axes are other networks on the same samples (the loss landscape): they are
    laid end to end, since the engine's values are one number per sample.
    """
    output = np.asarray(output, dtype=np.float64)
    labels = np.asarray(labels)
    lead = output.shape[:-2]
    flat = output.reshape(-1, output.shape[-1])
    tiled = np.tile(labels, int(np.prod(lead, dtype=np.int64)))
    scores = [Value(flat[:, j]) for j in range(flat.shape[1])]
    with np.errstate(all="ignore"):
        terms = per_sample(name, scores if len(scores) > 1 else scores[0], tiled,
                           regression).data
    return np.broadcast_to(terms, tiled.shape).reshape(*lead, len(labels))


def l2_penalty(params: Sequence[Value]) -> Value:
    """sum(p^2), as in micrograd's demo (multiply by alpha outside): one node
    (`Value.sum_of_squares`), equal to the demo's chain of additions to the last bit."""
    return Value.sum_of_squares(params)


def l1_penalty(params: Sequence[Value]) -> Value:
    """sum(|p|): one node (`Value.sum_of_sizes`)."""
    return Value.sum_of_sizes(params)


def predictions(output: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
    """Class index predicted from raw output data: sign for one score, argmax for several."""
    if isinstance(output, (list, tuple)):
        return np.argmax(np.stack([np.asarray(o) for o in output]), axis=0)
    return (np.asarray(output) > 0).astype(np.int64)


def accuracy(output: np.ndarray | Sequence[np.ndarray], labels: np.ndarray) -> float:
    # A count over the size: np.mean's number (an exact sum, one division), sooner.
    right = predictions(output) == np.asarray(labels)
    return np.count_nonzero(right) / right.size if right.size else math.nan
