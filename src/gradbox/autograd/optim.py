"""Optimizers and learning-rate schedules, with PyTorch's update formulas."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradbox.autograd.engine import Value

OPTIMIZERS = ("sgd", "adam")
SCHEDULES = ("constant", "linear", "step")


class Optimizer:
    """Holds the parameters; `step()` moves them against their gradients."""

    def __init__(self, params: Sequence[Value], lr: float) -> None:
        self.params = list(params)
        self.lr = float(lr)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = 0.0

    def _values_and_grads(self, values: np.ndarray | None, grads: np.ndarray | None
                          ) -> tuple[np.ndarray, np.ndarray]:
        """The parameters' values and gradients: as given (a trainer that has just read
        them), or read from the parameters."""
        n = len(self.params)
        if values is None:
            values = np.fromiter((p.data for p in self.params), np.float64, n)
        if grads is None:
            grads = np.fromiter((p.grad for p in self.params), np.float64, n)
        return values, grads

    def _write(self, values: np.ndarray) -> np.ndarray:
        for p, v in zip(self.params, values.tolist()):
            p.data = v
        return values

    def step(self, values: np.ndarray | None = None, grads: np.ndarray | None = None
             ) -> np.ndarray:
        """Move every parameter; return their new values. `values` and `grads`, if given,
        must be what the parameters hold now (saves reading them again)."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, np.ndarray | int]:
        return {}

    def load_state_dict(self, state: dict[str, np.ndarray | int]) -> None:
        """Restore what `state_dict()` returned (copied, so the caller's arrays stay theirs)."""


class SGD(Optimizer):
    """p -= lr * v, with v = momentum * v + grad (PyTorch's form; v = grad without momentum)."""

    def __init__(self, params: Sequence[Value], lr: float = 0.1, momentum: float = 0.0) -> None:
        super().__init__(params, lr)
        self.momentum = float(momentum)
        self.velocity = np.zeros(len(self.params))
        self.steps = 0

    def step(self, values: np.ndarray | None = None, grads: np.ndarray | None = None
             ) -> np.ndarray:
        values, grads = self._values_and_grads(values, grads)
        # The buffer starts at zero, so the first step is plain SGD, as in PyTorch.
        self.velocity = self.momentum * self.velocity + grads
        self.steps += 1
        return self._write(values - self.lr * self.velocity)

    def state_dict(self) -> dict[str, np.ndarray | int]:
        return {"velocity": self.velocity.copy(), "steps": self.steps}

    def load_state_dict(self, state: dict[str, np.ndarray | int]) -> None:
        self.velocity = np.array(state["velocity"], dtype=np.float64)
        self.steps = int(state["steps"])


class Adam(Optimizer):
    """Adam with bias correction, as `torch.optim.Adam` computes it."""

    def __init__(self, params: Sequence[Value], lr: float = 0.01,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> None:
        super().__init__(params, lr)
        self.betas = (float(betas[0]), float(betas[1]))
        self.eps = float(eps)
        self.m = np.zeros(len(self.params))
        self.v = np.zeros(len(self.params))
        self.steps = 0

    def step(self, values: np.ndarray | None = None, grads: np.ndarray | None = None
             ) -> np.ndarray:
        values, grads = self._values_and_grads(values, grads)
        b1, b2 = self.betas
        self.steps += 1
        self.m = b1 * self.m + (1 - b1) * grads
        self.v = b2 * self.v + (1 - b2) * grads * grads
        m_hat = self.m / (1 - b1**self.steps)
        v_hat = self.v / (1 - b2**self.steps)
        return self._write(values - self.lr * m_hat / (np.sqrt(v_hat) + self.eps))

    def state_dict(self) -> dict[str, np.ndarray | int]:
        return {"m": self.m.copy(), "v": self.v.copy(), "steps": self.steps}

    def load_state_dict(self, state: dict[str, np.ndarray | int]) -> None:
        self.m = np.array(state["m"], dtype=np.float64)
        self.v = np.array(state["v"], dtype=np.float64)
        self.steps = int(state["steps"])


def make_optimizer(name: str, params: Sequence[Value], lr: float,
                   momentum: float = 0.0) -> Optimizer:
    if name == "sgd":
        return SGD(params, lr, momentum)
    if name == "adam":
        return Adam(params, lr)
    raise ValueError(f"unknown optimizer {name!r}; choose from {OPTIMIZERS}")


@dataclass(frozen=True)
class Schedule:
    """Learning rate as a function of the step number (0-based).

    constant: lr.  linear: lr -> lr * final_fraction over `steps` (micrograd's demo:
    1.0 -> 0.1 over 100 steps).  step: lr * gamma ** (step // every).
    """

    kind: str = "constant"
    lr: float = 0.1
    steps: int = 100
    final_fraction: float = 0.1
    gamma: float = 0.5
    every: int = 50

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise ValueError(f"unknown schedule {self.kind!r}; choose from {SCHEDULES}")

    def lr_at(self, step: int) -> float:
        if self.kind == "linear":
            progress = min(step / max(self.steps, 1), 1.0)
            return self.lr * (1.0 - (1.0 - self.final_fraction) * progress)
        if self.kind == "step":
            return self.lr * self.gamma ** (step // max(self.every, 1))
        return self.lr
