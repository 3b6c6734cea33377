"""The op table against the engine: each entry's derivative is what `_backward` sends."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd import engine, ops
from gradbox.autograd.engine import Value

# How to build each op from Values, and where its inputs may come from.
BUILD: dict[str, tuple[Callable[..., Value], int, tuple[float, float]]] = {
    "+": (lambda a, b: a + b, 2, (-3, 3)),
    "*": (lambda a, b: a * b, 2, (-3, 3)),
    "**": (lambda a: a ** 3, 1, (-3, 3)),
    "neg": (lambda a: -a, 1, (-3, 3)),
    "abs": (lambda a: abs(a), 1, (-3, 3)),
    "tanh": (lambda a: a.tanh(), 1, (-3, 3)),
    "exp": (lambda a: a.exp(), 1, (-3, 3)),
    "log": (lambda a: a.log(), 1, (0.1, 5)),
    "sin": (lambda a: a.sin(), 1, (-4, 4)),
    "relu": (lambda a: a.relu(), 1, (-3, 3)),
    "sigmoid": (lambda a: a.sigmoid(), 1, (-3, 3)),
    "sum": (lambda a: a.sum(), 1, (-3, 3)),
    "mean": (lambda a: a.mean(), 1, (-3, 3)),
    "l2": (lambda a, b, c: Value.sum_of_squares([a, b, c]), 3, (-3, 3)),
    "l1": (lambda a, b, c: Value.sum_of_sizes([a, b, c]), 3, (-3, 3)),
}


def test_every_engine_op_has_an_entry_and_every_entry_a_test() -> None:
    assert set(BUILD) | {ops.LEAF} == set(ops.OPS)


@pytest.mark.parametrize("name", sorted(BUILD))
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), samples=st.sampled_from([0, 1, 5]),
       upstream=st.floats(-2, 2))
def test_derivative_matches_the_engines_backward(name: str, seed: int, samples: int,
                                                 upstream: float) -> None:
    build, arity, (low, high) = BUILD[name]
    rng = np.random.default_rng(seed)
    if name in ("sum", "mean") and samples == 0:
        samples = 3  # a reduction over one float is the float itself
    shape = () if samples == 0 else (samples,)
    inputs = [Value(rng.uniform(low, high, shape)) for _ in range(arity)]
    out = build(*inputs)
    assert ops.split(out._op)[0].name == name
    grad = np.full(out.data.shape, upstream) if type(out.data) is np.ndarray else upstream
    out._backward(grad)
    for slot, x in enumerate(inputs):
        local = ops.local_derivative(out._op, [v.data for v in inputs], out.data, slot)
        expected = np.broadcast_to(np.asarray(local * grad, dtype=float), np.shape(x.data))
        np.testing.assert_allclose(x.grad, expected, rtol=1e-12, atol=1e-12)


def test_saves_nothing_is_the_tables() -> None:
    assert {"+", "neg", "sum", "mean", ""} == engine.SAVES_NOTHING
    # a second backward through an op that saves nothing works, through one that saves
    # a value it is PyTorch's error
    a = Value(2.0)
    out = a + a
    out.backward()
    out.backward()
    assert a.grad == 4.0
    b = Value(2.0)
    square = b * b
    square.backward()
    with pytest.raises(RuntimeError, match="second time"):
        square.backward()


def test_power_names_round_trip_exactly() -> None:
    for k in (2, -1, 0.5, 1 / 3, 2.5e-7):
        name = ops.power_name(k)
        assert ops.exponent(name) == k and ops.split(name)[1] == k
    assert ops.power_name(2) == "**2"
    assert ops.exponent("*") is None
    assert (Value(2.0) ** 3)._op == ops.power_name(3)


def test_formulas() -> None:
    assert ops.formula("**0.5") == "∂(a^0.5)/∂a = 0.5 · a^-0.5"
    assert ops.formula("*") == "∂(a · b)/∂a = b,  ∂(a · b)/∂b = a"
    assert "no formula" in ops.formula("nonsense")
    assert ops.symbol("*") == "×" and ops.symbol("**2") == "x^2" and ops.symbol("tanh") == "tanh"
    with pytest.raises(KeyError):
        ops.local_derivative("nonsense", [1.0], 1.0, 0)
