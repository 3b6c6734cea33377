"""The gradient check: passes on the engine, catches a broken backward, leaves no trace."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.gradcheck import gradient_check, relative_error
from gradbox.autograd.nn import MLP


def small_problem(activation: str) -> tuple[MLP, Callable[[], Value]]:
    model = MLP(2, [4, 3, 1], activation=activation, seed=2)
    rng = np.random.default_rng(5)
    points, labels = rng.normal(size=(12, 2)), rng.integers(0, 2, 12)

    def build() -> Value:
        score = model([points[:, 0], points[:, 1]])
        return losses.logistic(score, labels) + 1e-3 * losses.l2_penalty(model.parameters())

    return model, build


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "relu"])
def test_the_engine_passes_the_check_on_a_small_mlp(activation: str) -> None:
    model, build = small_problem(activation)
    names = [name for name, _ in model.named_parameters()]
    check = gradient_check(build, model.parameters(), names)
    assert check.names == tuple(names)
    assert check.passed(1e-6), f"worst: {check.names[check.worst]} {check.worst_error:.3g}"
    assert np.max(np.abs(check.analytic)) > 1e-3  # it compared real gradients, not zeros


def _forward_order_backward(root: Value) -> None:
    """A classic mistake: run the closures inputs-first instead of outputs-first."""
    order = root.topological_order()
    root.grad = 1.0
    for node in order:
        node.pass_gradient()


def test_the_check_catches_a_backward_that_runs_in_the_wrong_order() -> None:
    model, build = small_problem("tanh")
    check = gradient_check(build, model.parameters(), backward=_forward_order_backward)
    assert not check.passed()
    assert check.worst_error > 1e-2


def test_parameter_data_and_grads_are_left_as_they_were_found() -> None:
    model, build = small_problem("tanh")
    params = model.parameters()
    for i, p in enumerate(params):
        p.grad = float(i)
    before = model.get_flat()
    gradient_check(build, params)
    np.testing.assert_array_equal(model.get_flat(), before)
    assert [p.grad for p in params] == [float(i) for i in range(len(params))]


def test_default_names_and_the_worst_row() -> None:
    a, b = Value(2.0), Value(-1.0)
    check = gradient_check(lambda: a * a * b, [a, b])
    assert check.names == ("p0", "p1")
    np.testing.assert_allclose(check.analytic, [-4.0, 4.0])
    np.testing.assert_allclose(check.numeric, [-4.0, 4.0], rtol=1e-8)
    assert check.worst in (0, 1)
    assert check.worst_error == check.relative_error[check.worst]


def test_relative_error_is_relative_for_large_values_absolute_near_zero() -> None:
    np.testing.assert_allclose(relative_error(np.array([100.0, 1e-8]), np.array([101.0, 3e-8])),
                               [1 / 101, 2e-8])


def test_an_empty_check_passes_with_no_worst_row() -> None:
    check = gradient_check(lambda: Value(1.0), [])
    assert check.passed()
    assert check.worst == -1
    assert check.worst_error == 0.0


def test_a_failing_build_leaves_parameters_as_found() -> None:
    a, b = Value(1.5), Value(-2.0)
    a.grad, b.grad = 0.25, -0.5
    calls = {"n": 0}

    def build() -> Value:
        calls["n"] += 1
        if calls["n"] == 3:  # fails while a is nudged by +eps
            raise ArithmeticError("boom")
        return a * b

    with pytest.raises(ArithmeticError):
        gradient_check(build, [a, b])
    assert (a.data, b.data, a.grad, b.grad) == (1.5, -2.0, 0.25, -0.5)
