"""Optimizers against updates computed by hand with PyTorch's formulas; schedules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP
from gradbox.autograd.optim import SGD, Adam, Schedule, make_optimizer
from gradbox.training import datasets

# Three steps of made-up gradients for two parameters.
START = [0.5, -1.0]
GRADS = [[0.2, -0.4], [0.1, 0.3], [-0.5, 0.05]]


def run(optimizer_for: type, steps: int = 3, **kwargs: float) -> list[list[float]]:
    params = [Value(x) for x in START]
    opt = optimizer_for(params, **kwargs)
    history = []
    for grads in GRADS[:steps]:
        opt.zero_grad()
        for p, g in zip(params, grads):
            p.grad = g
        opt.step()
        history.append([p.data for p in params])
    return history


def test_plain_sgd_moves_against_the_gradient() -> None:
    lr = 0.1
    expected, p = [], list(START)
    for grads in GRADS:
        p = [pi - lr * gi for pi, gi in zip(p, grads)]
        expected.append(p)
    np.testing.assert_allclose(run(SGD, lr=lr), expected, rtol=0, atol=1e-15)


def test_sgd_with_momentum_follows_pytorchs_buffer() -> None:
    # torch.optim.SGD: b_1 = g_1; b_t = momentum * b_{t-1} + g_t; p -= lr * b_t
    lr, mu = 0.1, 0.9
    p0, p1 = START
    b0, b1 = 0.2, -0.4
    step1 = [p0 - lr * b0, p1 - lr * b1]
    b0, b1 = mu * b0 + 0.1, mu * b1 + 0.3
    step2 = [step1[0] - lr * b0, step1[1] - lr * b1]
    b0, b1 = mu * b0 - 0.5, mu * b1 + 0.05
    step3 = [step2[0] - lr * b0, step2[1] - lr * b1]
    np.testing.assert_allclose(run(SGD, lr=lr, momentum=mu), [step1, step2, step3],
                               rtol=0, atol=1e-15)


def test_adam_follows_pytorchs_bias_corrected_update() -> None:
    # torch.optim.Adam's implementation: step_size = lr / (1 - b1^t);
    # denom = sqrt(v) / sqrt(1 - b2^t) + eps; p -= step_size * m / denom.
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    p, m, v = list(START), [0.0, 0.0], [0.0, 0.0]
    expected = []
    for t, grads in enumerate(GRADS, start=1):
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            denom = math.sqrt(v[i]) / math.sqrt(1 - b2**t) + eps
            p[i] -= lr / (1 - b1**t) * m[i] / denom
        expected.append(list(p))
    np.testing.assert_allclose(run(Adam, lr=lr), expected, rtol=1e-12, atol=1e-15)


@settings(max_examples=50, deadline=None)
@given(g=st.floats(-100, 100).filter(lambda g: abs(g) > 1e-3), lr=st.floats(1e-4, 1.0))
def test_adams_first_step_has_size_lr_whatever_the_gradient(g: float, lr: float) -> None:
    p = Value(1.0)
    opt = Adam([p], lr=lr)
    p.grad = g
    opt.step()
    # m_hat / sqrt(v_hat) = g / |g| on the first step; eps shifts it by < 1e-5 here.
    assert abs(p.data - (1.0 - lr * math.copysign(1.0, g))) <= lr * 1e-5


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_a_saved_state_continues_exactly_where_it_stopped(name: str) -> None:
    straight = [Value(x) for x in START]
    opt = make_optimizer(name, straight, 0.05, momentum=0.9)
    resumed = [Value(x) for x in START]
    first = make_optimizer(name, resumed, 0.05, momentum=0.9)
    for i, grads in enumerate(GRADS):
        for p, q, g in zip(straight, resumed, grads):
            p.grad = q.grad = g
        opt.step()
        first.step()
        if i == 0:  # hand the state to a fresh optimizer, then mutate the old one
            state = first.state_dict()
            first = make_optimizer(name, resumed, 0.05, momentum=0.9)
            first.load_state_dict(state)
            for value in state.values():
                if isinstance(value, np.ndarray):
                    value[:] = 123.0  # the loaded copy must not share this array
    assert [p.data for p in resumed] == [p.data for p in straight]


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_a_saved_state_is_a_copy_the_optimizer_does_not_share(name: str) -> None:
    undisturbed = [Value(x) for x in START]
    disturbed = [Value(x) for x in START]
    opts = [make_optimizer(name, ps, 0.05, momentum=0.9) for ps in (undisturbed, disturbed)]
    for i, grads in enumerate(GRADS):
        for opt in opts:
            for p, g in zip(opt.params, grads):
                p.grad = g
            opt.step()
        if i == 0:
            for value in opts[1].state_dict().values():
                if isinstance(value, np.ndarray):
                    value[:] = 123.0
    assert [p.data for p in disturbed] == [p.data for p in undisturbed]


def test_make_optimizer_refuses_an_unknown_name() -> None:
    with pytest.raises(ValueError, match="sgd"):
        make_optimizer("rmsprop", [Value(1.0)], 0.1)


def test_optimizer_zero_grad_clears_its_parameters() -> None:
    params = [Value(1.0), Value(2.0)]
    for p in params:
        p.grad = 3.0
    SGD(params).zero_grad()
    assert [p.grad for p in params] == [0.0, 0.0]


def test_sgd_on_micrograds_demo_lowers_the_loss() -> None:
    data = datasets.make("moons", 100, 0.1, seed=0)
    model = MLP(2, [16, 16, 1], seed=0)
    opt = SGD(model.parameters(), lr=1.0)
    schedule = Schedule("linear", lr=1.0, steps=100)
    inputs = [data.points[:, 0], data.points[:, 1]]
    history = []
    for k in range(20):
        loss = losses.hinge(model(inputs), data.labels) + 1e-4 * losses.l2_penalty(
            model.parameters())
        opt.zero_grad()
        loss.backward()
        opt.lr = schedule.lr_at(k)
        opt.step()
        history.append(loss.data)
    assert history[-1] < 0.5 * history[0]


# --- schedules ---------------------------------------------------------------------------------
def test_constant_schedule() -> None:
    schedule = Schedule("constant", lr=0.3)
    assert [schedule.lr_at(k) for k in (0, 1, 50, 10_000)] == [0.3] * 4


def test_linear_schedule_is_micrograds_one_to_a_tenth_over_100_steps() -> None:
    schedule = Schedule("linear", lr=1.0, steps=100, final_fraction=0.1)
    for k in range(100):
        assert schedule.lr_at(k) == pytest.approx(1.0 - 0.9 * k / 100, abs=1e-15)
    assert schedule.lr_at(100) == pytest.approx(0.1)
    assert schedule.lr_at(500) == pytest.approx(0.1)  # it stays at the final rate


def test_step_schedule_decays_by_gamma_every_n_steps() -> None:
    schedule = Schedule("step", lr=0.8, gamma=0.5, every=10)
    assert [schedule.lr_at(k) for k in (0, 9, 10, 19, 20, 35)] == [0.8, 0.8, 0.4, 0.4, 0.2, 0.1]


def test_an_unknown_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="linear"):
        Schedule("cosine")
