"""Losses and penalties, built from engine ops so their graphs can be drawn.

Label convention (one for the whole package): a dataset's labels are class
indices 0..k-1. Two-class losses that want signs (hinge, MSE) use y = 2c - 1,
i.e. class 0 -> -1 and class 1 -> +1; a positive score means class 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gradbox.autograd.engine import Value

LOSSES = ("hinge", "mse", "logistic", "softmax")
# Regression compares the score with a float target as it is (no class signs).
REGRESSION_LOSSES = ("mse", "mae", "huber")
LOSS_LABELS = {"hinge": "hinge", "mse": "MSE", "logistic": "logistic", "softmax": "softmax",
               "mae": "MAE (|error|)", "huber": "Huber"}


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


REGRESSION = {"mse": squared_error_terms, "mae": absolute_error_terms, "huber": huber_terms}


def squared_error(score: Value, targets: np.ndarray) -> Value:
    """Regression MSE: mean((score - target)^2)."""
    return squared_error_terms(score, targets).mean()


def absolute_error(score: Value, targets: np.ndarray) -> Value:
    """Mean absolute error: mean(|score - target|)."""
    return absolute_error_terms(score, targets).mean()


def huber(score: Value, targets: np.ndarray) -> Value:
    return huber_terms(score, targets).mean()


def regression_terms(name: str, output: Value | Sequence[Value], targets: np.ndarray) -> Value:
    """The regression loss of each sample against its float target."""
    if name not in REGRESSION_LOSSES:
        raise ValueError(f"unknown regression loss {name!r}; choose from {REGRESSION_LOSSES}")
    if isinstance(output, (list, tuple)):
        raise ValueError(f"regression needs a network with one output, got {len(output)}")
    return REGRESSION[name](output, targets)


def compute_regression_loss(name: str, output: Value | Sequence[Value],
                            targets: np.ndarray) -> Value:
    return regression_terms(name, output, targets).mean()


def per_sample(name: str, output: Value | Sequence[Value], labels: np.ndarray,
               regression: bool = False) -> Value:
    """The loss of each sample (not averaged); `compute_loss` is its mean. With
    `regression`, `labels` are float targets and `name` a regression loss."""
    if regression:
        return regression_terms(name, output, labels)
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; choose from {LOSSES}")
    if name == "softmax":
        scores = output if isinstance(output, (list, tuple)) else [output]
        if len(scores) < 2:
            raise ValueError("softmax cross-entropy needs one output per class (at least 2)")
        return softmax_terms(scores, labels)
    if isinstance(output, (list, tuple)):
        raise ValueError(f"the {name} loss needs a network with one output, got {len(output)}")
    return {"hinge": hinge_terms, "mse": mse_terms, "logistic": logistic_terms}[name](
        output, labels)


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
    """sum(p^2), as in micrograd's demo (multiply by alpha outside)."""
    return sum(p * p for p in params)


def l1_penalty(params: Sequence[Value]) -> Value:
    return sum(abs(p) for p in params)


def predictions(output: np.ndarray | Sequence[np.ndarray]) -> np.ndarray:
    """Class index predicted from raw output data: sign for one score, argmax for several."""
    if isinstance(output, (list, tuple)):
        return np.argmax(np.stack([np.asarray(o) for o in output]), axis=0)
    return (np.asarray(output) > 0).astype(np.int64)


def accuracy(output: np.ndarray | Sequence[np.ndarray], labels: np.ndarray) -> float:
    return float(np.mean(predictions(output) == np.asarray(labels)))
