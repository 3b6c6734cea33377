"""L1 and L2 as one node each (issue 34): the chain of additions' numbers, one box.

The penalty used to be `sum(p * p for p in params)`: two nodes per parameter. It is one
n-ary op now (`Value.sum_of_squares`, `Value.sum_of_sizes`); runs saved before must
replay bit for bit, so its value and every gradient are the chain's to the last bit --
checked here against the chain, written out as it was, and against finite differences
and PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd import engine, features, losses, ops
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP
from gradbox.training import datasets


def chain(params: Sequence[Value], term: Callable[[Value], Value]) -> Value:
    """The penalty as gradbox built it before issue 34: a chain of additions from 0."""
    total = 0
    for p in params:
        total = total + term(p)
    return total


def square(p: Value) -> Value:
    return p * p


FUSED = {"l2": losses.l2_penalty, "l1": losses.l1_penalty}
TERMS = {"l2": square, "l1": abs}


def test_the_penalty_is_one_node_whose_inputs_are_the_parameters() -> None:
    params = [Value(0.5), Value(-2.0), Value(0.0)]
    l2 = losses.l2_penalty(params)
    assert l2.op == "l2" and l2.inputs == tuple(params)
    assert ops.symbol(l2.op) == "L2 = Σ w²"
    l1 = losses.l1_penalty(params)
    assert l1.op == "l1" and ops.symbol(l1.op) == "L1 = Σ |w|"


def network_loss(seed: int, activation: str, loss: str, alpha2: float, alpha1: float,
                 fused: bool) -> tuple[float, np.ndarray]:
    data = datasets.make("moons", 40, 0.2, seed=seed)
    model = MLP(2, [5, 4, 1], activation=activation, seed=seed)
    params = model.parameters()
    out = model(features.input_nodes(data.points, ("x1", "x2")))
    total = losses.compute_loss(loss, out, data.labels)
    for name, alpha in (("l2", alpha2), ("l1", alpha1)):
        if alpha:
            penalty = FUSED[name](params) if fused else chain(params, TERMS[name])
            total = total + alpha * penalty
    total.backward()
    return total.data, np.array([p.grad for p in params])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), activation=st.sampled_from(["relu", "tanh", "sigmoid"]),
       loss=st.sampled_from(["hinge", "mse", "logistic"]),
       alpha2=st.sampled_from([0.0, 1e-4, 0.37]), alpha1=st.sampled_from([0.0, 1e-3, 2.5]))
def test_a_network_loss_and_gradients_equal_the_chains_to_the_last_bit(
        seed: int, activation: str, loss: str, alpha2: float, alpha1: float) -> None:
    chained = network_loss(seed, activation, loss, alpha2, alpha1, fused=False)
    fused = network_loss(seed, activation, loss, alpha2, alpha1, fused=True)
    assert fused[0] == chained[0]  # == on floats: the same bits, not close
    assert np.array_equal(fused[1], chained[1])


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(-1e3, 1e3, allow_subnormal=False), min_size=1, max_size=40),
       held=st.lists(st.floats(-10, 10), min_size=40, max_size=40),
       upstream=st.floats(-5, 5), which=st.sampled_from(["l2", "l1"]))
def test_alone_and_on_top_of_gradients_already_held_it_adds_as_the_chain_did(
        values: list[float], held: list[float], upstream: float, which: str) -> None:
    """Forgetting zero_grad leaves gradients in the parameters: the penalty's share is
    added to them in the chain's order (w·g twice for w², not 2w·g once)."""
    results = []
    for fused in (False, True):
        params = [Value(v) for v in values]
        for p, g in zip(params, held):
            p.grad = g
        penalty = FUSED[which](params) if fused else chain(params, TERMS[which])
        (upstream * penalty).backward()
        results.append((penalty.data, [p.grad for p in params]))
    assert results[0] == results[1]


def test_over_per_sample_arrays_too() -> None:
    """The loss landscape sums penalties of many networks at once: one array per weight."""
    rng = np.random.default_rng(3)
    for which in ("l2", "l1"):
        grads = []
        params = [Value(rng.normal(size=6)) for _ in range(5)]
        for fused in (False, True):
            for p in params:
                p.grad = 0.0
            penalty = FUSED[which](params) if fused else chain(params, TERMS[which])
            penalty.sum().backward()
            grads.append((penalty.data, [p.grad for p in params]))
        assert np.array_equal(grads[0][0], grads[1][0])
        for a, b in zip(grads[0][1], grads[1][1]):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("which", ["l2", "l1"])
def test_the_gradient_against_finite_differences(which: str) -> None:
    rng = np.random.default_rng(7)
    w = rng.uniform(-2, 2, 12)
    w[np.abs(w) < 0.1] = 0.5  # |w| has a kink at 0: stay away from it
    params = [Value(x) for x in w]
    FUSED[which](params).backward()
    analytic = np.array([p.grad for p in params])

    def value(x: np.ndarray) -> float:
        return float(FUSED[which]([Value(v) for v in x]).data)

    h = 1e-6
    numeric = np.array([(value(w + h * e) - value(w - h * e)) / (2 * h)
                        for e in np.eye(len(w))])
    np.testing.assert_allclose(analytic, numeric, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("which", ["l2", "l1"])
def test_value_and_gradient_against_pytorch(which: str) -> None:
    torch = pytest.importorskip("torch")  # CI installs .[test] only: skipped there
    rng = np.random.default_rng(11)
    w = rng.uniform(-2, 2, 50)
    params = [Value(x) for x in w]
    penalty = FUSED[which](params)
    (0.3 * penalty).backward()
    t = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    reference = (t * t).sum() if which == "l2" else t.abs().sum()
    (0.3 * reference).backward()
    assert penalty.data == pytest.approx(float(reference.detach()), rel=1e-14)
    np.testing.assert_allclose([p.grad for p in params], t.grad.numpy(), rtol=1e-14)


def test_a_second_backward_through_it_raises_as_pytorch_does() -> None:
    """w² saves w for its backward (PyTorch's pow does), so the graph is freed after one
    backward, as the chain of w * w nodes was."""
    params = [Value(1.5), Value(-0.5)]
    penalty = losses.l2_penalty(params)
    penalty.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        penalty.backward()
    assert "l2" not in engine.SAVES_NOTHING and "l1" not in engine.SAVES_NOTHING


def test_the_demo_graph_loses_the_chains_674_nodes() -> None:
    data = datasets.make("moons", 100, 0.1, seed=0)
    model = MLP(2, [16, 16, 1], seed=0)
    out = model(features.input_nodes(data.points, ("x1", "x2")))
    loss = losses.hinge(out, data.labels) + 1e-4 * losses.l2_penalty(model.parameters())
    topo = loss.topological_order()
    assert [v.op for v in topo].count("l2") == 1
    assert len(topo) == 1663 - 674
