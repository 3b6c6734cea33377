"""Gradient check: analytic gradients beside central finite differences."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gradbox.autograd.engine import Value
from gradbox.autograd.losses import compute_loss, l1_penalty, l2_penalty
from gradbox.autograd.nn import MLP

LossFunction = Callable[[Value | list[Value], np.ndarray], Value]
Backward = Callable[[Value], None]


@dataclass(frozen=True)
class GradCheck:
    """One row per parameter: analytic gradient, numerical gradient, relative error."""

    names: tuple[str, ...]
    analytic: np.ndarray
    numeric: np.ndarray
    relative_error: np.ndarray

    @property
    def worst(self) -> int:
        """Index of the parameter with the largest relative error."""
        return int(np.argmax(self.relative_error)) if len(self.relative_error) else -1

    @property
    def worst_error(self) -> float:
        return float(self.relative_error.max()) if len(self.relative_error) else 0.0

    def passed(self, tolerance: float = 1e-6) -> bool:
        return self.worst_error < tolerance


def relative_error(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| / max(|a|, |b|, 1): relative for large gradients, absolute near zero."""
    return np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1.0)


def gradient_check(
    build: Callable[[], Value],
    params: Sequence[Value],
    names: Sequence[str] | None = None,
    backward: Callable[[Value], None] = lambda root: root.backward(),
    eps: float = 1e-6,
) -> GradCheck:
    """Compare `backward` on `build()` against (f(p+eps) - f(p-eps)) / 2eps for each p.

    `build` must construct the graph afresh from the current parameter data and
    return a scalar. `backward` is the engine's by default; pass a broken variant to
    see the check catch it. Parameter data and grads are left as they were found.
    """
    names = tuple(names) if names is not None else tuple(f"p{i}" for i in range(len(params)))
    saved_grads = [p.grad for p in params]
    originals = [p.data for p in params]
    numeric = np.empty(len(params))
    try:
        for p in params:
            p.grad = 0.0
        backward(build())
        analytic = np.array([float(p.grad) for p in params])
        for i, p in enumerate(params):
            p.data = originals[i] + eps
            plus = build().data
            p.data = originals[i] - eps
            minus = build().data
            p.data = originals[i]
            numeric[i] = (plus - minus) / (2 * eps)
    finally:
        # Even when `build` or `backward` raises, leave every parameter as it was found.
        for p, data, grad in zip(params, originals, saved_grads):
            p.data, p.grad = data, grad
    return GradCheck(names, analytic, numeric, relative_error(analytic, numeric))


def network_gradient_check(model: MLP, x: np.ndarray, y: np.ndarray,
                           loss: str | LossFunction = "hinge",
                           l1: float = 0.0, l2: float = 0.0,
                           backward: Backward | None = None) -> GradCheck:
    """The gradient check for a network: each parameter's gradient beside its finite
    difference, on what training minimises (the data loss over `x` plus the penalties).

    `x` holds the network's inputs (input features, one column each); `loss` is a loss
    name or a function (output, y) -> loss, such as a trainer's `data_loss`.
    Parameters, their data and their grads are left as they were found.
    """
    x = np.asarray(x, dtype=np.float64)
    params = model.parameters()
    loss_fn = loss if callable(loss) else (
        lambda out, labels: compute_loss(loss, out, labels))

    def build() -> Value:
        total = loss_fn(model([x[:, j] for j in range(x.shape[1])]), y)
        if l2:
            total = total + l2 * l2_penalty(params)
        if l1:
            total = total + l1 * l1_penalty(params)
        return total

    names = [name for name, _ in model.named_parameters()]
    return gradient_check(build, params, names,
                          backward=backward or (lambda root: root.backward()))
