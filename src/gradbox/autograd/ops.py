"""What each engine op is, written once: its local derivative, its formula, what it saves.

The engine (`gradbox.autograd.engine`) keeps every op's forward and `_backward` side by side, as
the article does; this table is everything *else* the app says about an op -- the graph
view's fan-out arithmetic and formulas, the pitfalls' hand-written backward, the
Playground's "local derivative" line, and which ops free a saved value after backward
(`engine.SAVES_NOTHING`). `tests/test_ops.py` checks every entry's derivative against
the engine's own backward on random inputs, so the table cannot drift from the engine.

A derivative is computed from the data on both ends of an edge (the inputs' `.data`
and the output's), never from what the op saved: those saved values are freed after
`backward()`, the data stays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

# A float, or one float per sample (a 1-D array): the engine's `Data`.
Data = Any
# (inputs' data, output's data, operand slot, the op's constant k or None) -> d out/d input
Derivative = Callable[[Sequence[Data], Data, int, float | None], Data]


@dataclass(frozen=True)
class Op:
    """One op of the engine: how it is written and how its gradient flows."""

    name: str
    formula: str          # the local derivative, as the details pane shows it
    saves_value: bool     # does its backward read a value saved at forward time?
    derivative: Derivative


def _relu_slope(out: Data) -> Data:
    return (out > 0).astype(np.float64) if type(out) is np.ndarray else float(out > 0)


def _per_sample(x: Data, slope: float) -> Data:
    """A reduction's slope, once per sample of its input: every sample gets its share."""
    return np.full(x.shape, slope) if type(x) is np.ndarray else slope


def _mean_slope(x: Data) -> Data:
    return _per_sample(x, 1.0 / (x.shape[0] if type(x) is np.ndarray else 1))


def _sign(x: Data) -> Data:
    return np.sign(x) if type(x) is np.ndarray else float((x > 0) - (x < 0))


POWER = "**"
LEAF = ""

OPS: dict[str, Op] = {op.name: op for op in (
    Op("+", "∂(a + b)/∂a = 1,  ∂(a + b)/∂b = 1", False, lambda xs, out, slot, k: 1.0),
    Op("*", "∂(a · b)/∂a = b,  ∂(a · b)/∂b = a", True,
       lambda xs, out, slot, k: xs[1 - slot]),
    Op(POWER, "∂(aᵏ)/∂a = k · aᵏ⁻¹", True,
       lambda xs, out, slot, k: k * xs[0] ** (k - 1)),
    Op("neg", "∂(−a)/∂a = −1", False, lambda xs, out, slot, k: -1.0),
    Op("abs", "∂|a|/∂a = sign(a)", True, lambda xs, out, slot, k: _sign(xs[0])),
    Op("tanh", "∂tanh(a)/∂a = 1 − tanh(a)² = 1 − out²", True,
       lambda xs, out, slot, k: 1 - out * out),
    Op("exp", "∂eᵃ/∂a = eᵃ = out", True, lambda xs, out, slot, k: out),
    Op("log", "∂ln(a)/∂a = 1/a", True, lambda xs, out, slot, k: 1 / xs[0]),
    Op("sin", "∂sin(a)/∂a = cos(a)", True, lambda xs, out, slot, k: np.cos(xs[0])),
    Op("relu", "∂relu(a)/∂a = 1 if out > 0 else 0", True,
       lambda xs, out, slot, k: _relu_slope(out)),
    Op("sigmoid", "∂σ(a)/∂a = σ(a)(1 − σ(a)) = out(1 − out)", True,
       lambda xs, out, slot, k: out * (1 - out)),
    Op("sum", "∂(Σ aᵢ)/∂aᵢ = 1 for every sample", False,
       lambda xs, out, slot, k: _per_sample(xs[0], 1.0)),
    Op("mean", "∂(mean aᵢ)/∂aᵢ = 1/n for every sample", False,
       lambda xs, out, slot, k: _mean_slope(xs[0])),
    Op("l2", "∂(Σ wᵢ²)/∂wᵢ = 2wᵢ", True, lambda xs, out, slot, k: 2 * xs[slot]),
    Op("l1", "∂(Σ |wᵢ|)/∂wᵢ = sign(wᵢ)", True, lambda xs, out, slot, k: _sign(xs[slot])),
    Op(LEAF, "a leaf: no inputs, so backward stops here", False,
       lambda xs, out, slot, k: 0.0),
)}

ACTIVATIONS = frozenset({"relu", "tanh", "sigmoid"})
# One node summing a term of each of its inputs (the parameters): drawn apart, below.
PENALTIES = frozenset({"l2", "l1"})
SAVES_NOTHING = frozenset(name for name, op in OPS.items() if not op.saves_value)


# --- the power op's name: written and read here only ------------------------------
def power_name(k: float) -> str:
    """The op name of ``x ** k``: '**2' for display, but exact (it reads back as k)."""
    short = f"{k:g}"
    return f"{POWER}{short}" if float(short) == k else f"{POWER}{k!r}"


def split(op: str) -> tuple[Op, float | None]:
    """The table entry of an op name and its constant (the k of '**k'), or KeyError."""
    if op.startswith(POWER):
        return OPS[POWER], float(op[len(POWER):])
    if op not in OPS:
        raise KeyError(f"no local derivative is known for the op {op!r}")
    return OPS[op], None


def exponent(op: str) -> float | None:
    """k for a '**k' op, None for any other op."""
    return float(op[len(POWER):]) if op.startswith(POWER) else None


def local_derivative(op: str, inputs: Sequence[Data], out: Data, slot: int) -> Data:
    """d(out)/d(inputs[slot]) of one application of `op`, from the data alone."""
    entry, k = split(op)
    return entry.derivative(inputs, out, slot, k)


def formula(op: str) -> str:
    """The local derivative in words, with k filled in for a power."""
    try:
        entry, k = split(op)
    except KeyError:
        return f"(no formula for {op!r})"
    if k is not None:
        return f"∂(a^{k:g})/∂a = {k:g} · a^{k - 1:g}"
    return entry.formula


def symbol(op: str) -> str:
    """How a box in the drawn graph names its op: ×, +, x^2, tanh ..."""
    k = exponent(op)
    if k is not None:
        return f"x^{k:g}"
    return {"*": "×", "+": "+", "neg": "−x", "l2": "L2 = Σ w²", "l1": "L1 = Σ |w|"}.get(op, op)
