"""The broken variants give the wrong numbers worked out by hand; the check catches them."""

import math

import numpy as np
import pytest

from gradbox.autograd.engine import FREED_GRAPH_MESSAGE, NON_SCALAR_MESSAGE, Value
from gradbox.autograd.nn import MLP
from gradbox.teaching.pitfalls import (
    MAX_FIRINGS,
    VARIANTS,
    backward_assign,
    backward_twice,
    backward_wrong_order,
    beside_correct,
    check_variants,
    contributions,
    explain_backward_twice,
    forget_zero_grad_demo,
    local_gradients,
    microbatch_accumulation,
    network_gradient_check,
    saving_ops,
    wrong_order_firings,
)
from gradbox.training.datasets import moons

# The neuron of the lesson, tanh(b + w1*h + w2*h), fed the same hidden value h twice --
# as every unit of a hidden layer feeds every neuron of the next.
X0, W1, W2, B = 0.5, 0.5, 0.25, -0.25
X_LEAF = 1.0  # the leaf neuron's input: the same pre-activation, 0.5, as with h = 2 x0


def neuron_with_reused_hidden() -> tuple[Value, dict[str, Value]]:
    x, w1, w2, b = Value(X0, label="x"), Value(W1, label="w1"), Value(W2, label="w2"), \
        Value(B, label="b")
    h = x * 2.0  # h = 1.0, an intermediate value used twice below
    out = (b + w1 * h + w2 * h).tanh()
    return out, {"x": x, "w1": w1, "w2": w2, "b": b, "h": h}


def neuron_with_reused_leaf() -> tuple[Value, dict[str, Value]]:
    x, w1, w2, b = Value(X_LEAF, label="x"), Value(W1, label="w1"), Value(W2, label="w2"), \
        Value(B, label="b")
    out = (b + w1 * x + w2 * x).tanh()
    return out, {"x": x, "w1": w1, "w2": w2, "b": b}


# s = b + w1*h + w2*h = -0.25 + 0.5 + 0.25 = 0.5 in both neurons; the tanh's slope there:
SLOPE = 1 - math.tanh(0.5) ** 2


def chain() -> tuple[Value, Value, Value]:
    a = Value(1.0)
    b = a + a
    c = b + b
    return a, b, c


# --- wrong order ---------------------------------------------------------------------------
def test_wrong_order_on_the_chain_fires_b_once_per_path() -> None:
    a, b, c = chain()
    backward_wrong_order(c)
    # c hands b 1 + 1 = 2 (right). b is reached twice (c uses it twice) and each time
    # hands a 2 + 2: a collects 8, where dc/da = 4.
    assert b.grad == 2.0
    assert a.grad == 8.0


def test_wrong_order_on_a_neuron_with_a_reused_hidden_value() -> None:
    out, v = neuron_with_reused_hidden()
    backward_wrong_order(out)
    g = SLOPE
    # The weights and h itself end up right...
    assert v["w1"].grad == pytest.approx(1.0 * g, rel=1e-15)
    assert v["w2"].grad == pytest.approx(1.0 * g, rel=1e-15)
    assert v["b"].grad == pytest.approx(g, rel=1e-15)
    assert v["h"].grad == pytest.approx((W1 + W2) * g, rel=1e-15)
    # ...but h fired first after w1*h reported (h.grad = w1 g, too early), then again
    # after w2*h (h.grad = (w1 + w2) g): x gets 2·w1·g + 2·(w1 + w2)·g, not 2·(w1 + w2)·g.
    assert v["x"].grad == pytest.approx(2 * W1 * g + 2 * (W1 + W2) * g, rel=1e-15)
    out_ok, ok = neuron_with_reused_hidden()
    out_ok.backward()
    assert ok["x"].grad == pytest.approx(2 * (W1 + W2) * g, rel=1e-15)


def test_wrong_order_is_right_when_only_leaves_are_reused() -> None:
    # A leaf has nothing to pass on, so reaching it early or twice changes nothing.
    out, v = neuron_with_reused_leaf()
    backward_wrong_order(out)
    assert v["x"].grad == pytest.approx((W1 + W2) * SLOPE, rel=1e-15)
    assert v["w1"].grad == pytest.approx(X_LEAF * SLOPE, rel=1e-15)


def test_wrong_order_handles_a_deep_tree_without_recursion() -> None:
    x = Value(0.3)
    y = x
    for _ in range(5000):
        y = y * 1.0 + 0.0
    backward_wrong_order(y)
    assert x.grad == pytest.approx(1.0)


def test_wrong_order_refuses_an_exponential_number_of_paths() -> None:
    a = Value(1.0)
    y = a
    for _ in range(25):  # 2**25 paths from y to a
        y = y + y
    assert MAX_FIRINGS < 2**25
    with pytest.raises(ValueError, match="once per path"):
        backward_wrong_order(y)
    assert a.grad == 0.0


# --- assign instead of accumulate ---------------------------------------------------------
def test_assign_keeps_only_the_last_use() -> None:
    a = Value(3.0)
    backward_assign(a + a)
    assert a.grad == 1.0
    a, b, c = chain()
    backward_assign(c)
    assert (b.grad, a.grad) == (1.0, 1.0)  # the truth: 2 and 4


def test_assign_on_a_neuron_with_a_reused_input() -> None:
    out, v = neuron_with_reused_leaf()
    backward_assign(out)
    # Reverse topological order fires w2*x before w1*x, so w1*x writes last: x keeps
    # w1·g and loses w2·g.
    assert v["x"].grad == pytest.approx(W1 * SLOPE, rel=1e-15)
    assert v["w1"].grad == pytest.approx(X_LEAF * SLOPE, rel=1e-15)
    assert v["w2"].grad == pytest.approx(X_LEAF * SLOPE, rel=1e-15)


def test_assign_is_right_on_a_tree() -> None:
    def build(a: Value, b: Value, c: Value, d: Value, e: Value) -> Value:
        # Every value is used once: each node has exactly one consumer.
        return ((a * b + c).tanh() * 2.0 - (d**2).exp() / 3.0).sigmoid() + abs(e).log()

    data = [0.7, -1.3, 0.4, 0.2, -1.5]
    broken = [Value(v) for v in data]
    backward_assign(build(*broken))
    right = [Value(v) for v in data]
    build(*right).backward()
    for p, q in zip(broken, right):
        assert p.grad == pytest.approx(q.grad, rel=1e-14)


def test_variants_refuse_a_non_scalar_output() -> None:
    x = Value([1.0, 2.0])
    for variant in (backward_wrong_order, backward_assign):
        with pytest.raises(RuntimeError, match=NON_SCALAR_MESSAGE):
            variant(x * 2.0)


# --- local derivatives ---------------------------------------------------------------------
UNARY = {
    "neg": lambda v: -v,
    "abs": abs,
    "tanh": Value.tanh,
    "exp": Value.exp,
    "log": Value.log,
    "relu": Value.relu,
    "sigmoid": Value.sigmoid,
    "**3": lambda v: v**3,
    "**-1": lambda v: v**-1,
    "**0.5": lambda v: v**0.5,
}


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("x", [0.8, 1.7])
def test_local_gradient_of_each_unary_op_matches_finite_differences(op: str, x: float) -> None:
    fn = UNARY[op]
    node = fn(Value(x))
    assert node.op == op
    [(child, local)] = local_gradients(node)
    assert child is node.inputs[0]
    eps = 1e-6
    numeric = (fn(Value(x + eps)).data - fn(Value(x - eps)).data) / (2 * eps)
    assert local == pytest.approx(numeric, rel=1e-7, abs=1e-9)
    assert type(local) is float


def test_local_gradients_of_negative_inputs() -> None:
    assert local_gradients(Value(-2.0).relu())[0][1] == 0.0
    assert local_gradients(abs(Value(-2.0)))[0][1] == -1.0


def test_local_gradients_of_binary_ops_list_each_use() -> None:
    a, b = Value(2.0), Value(5.0)
    assert local_gradients(a * b) == [(a, 5.0), (b, 2.0)]
    assert local_gradients(a + b) == [(a, 1.0), (b, 1.0)]
    square = a * a
    assert local_gradients(square) == [(a, 2.0), (a, 2.0)]  # two uses, summed to 2a
    square.grad = 3.0
    assert contributions(square) == [(a, 6.0), (a, 6.0)]
    assert local_gradients(a) == []


def test_local_gradients_of_reductions_spread_over_samples() -> None:
    x = Value([1.0, 2.0, 4.0, 8.0])
    [(_, total)] = local_gradients(x.sum())
    [(_, mean)] = local_gradients(x.mean())
    np.testing.assert_array_equal(total, np.ones(4))
    np.testing.assert_array_equal(mean, np.full(4, 0.25))


def test_contributions_to_a_shared_parameter_sum_over_samples() -> None:
    w = Value(3.0)
    x = Value([1.0, 2.0, 4.0])
    y = w * x
    y.grad = np.array([1.0, 1.0, 0.5])
    (to_w, grad_w), (to_x, grad_x) = contributions(y)
    assert to_w is w and grad_w == 1.0 + 2.0 + 2.0
    assert to_x is x
    np.testing.assert_array_equal(grad_x, [3.0, 3.0, 1.5])


def test_local_gradients_reject_an_unknown_op() -> None:
    with pytest.raises(ValueError, match="cos"):
        local_gradients(Value(0.0, (Value(1.0),), "cos"))


# --- backward twice ----------------------------------------------------------------------
@pytest.mark.parametrize("build", [
    lambda a, b: a + b,
    lambda a, b: a - b + a,  # negation saves nothing either
    lambda a, b: (a + b) + 3.0,
])
def test_additions_only_graphs_do_not_raise_and_double(build) -> None:
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    result = backward_twice(build(a, b), leaves=[a, b])
    assert not result.raised and result.saving_ops == ()
    assert result.names == ("a", "b")
    first = np.array(result.after_first)
    np.testing.assert_array_equal(np.array(result.after_second), 2 * first)
    assert "saves" in result.explanation and "twice" in result.explanation


@pytest.mark.parametrize(("build", "op"), [
    (lambda a, b: a * b, "*"),
    (lambda a, b: (a + b).tanh(), "tanh"),
    (lambda a, b: (a - b).relu(), "relu"),
])
def test_graphs_that_save_values_raise_pytorchs_error(build, op: str) -> None:
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    result = backward_twice(build(a, b), leaves=[a, b])
    assert result.raised
    assert result.error == FREED_GRAPH_MESSAGE
    assert result.after_second is None
    assert op in result.saving_ops
    shown = {"*": "×"}.get(op, op)  # the explanation names nodes as the graph draws them
    assert shown in result.explanation and "retain_graph=True" in result.explanation
    # The failed second call changed nothing.
    assert (a.grad, b.grad) == result.after_first


def test_retain_graph_lets_the_second_call_run_and_double() -> None:
    a, b = Value(2.0, label="a"), Value(-3.0, label="b")
    result = backward_twice((a * b).tanh(), retain_graph=True, leaves=[a, b])
    assert not result.raised
    assert result.after_first[0] != 0.0
    np.testing.assert_allclose(result.after_second, 2 * np.array(result.after_first), rtol=0)
    assert "retain_graph=True" in result.explanation


def test_backward_twice_names_unlabelled_leaves_by_position() -> None:
    a = Value(1.0, label="a")
    result = backward_twice(a + 5.0)
    assert result.names == ("a", "leaf 1")


# --- forget zero_grad --------------------------------------------------------------------
def test_forgetting_zero_grad_multiplies_the_gradient_by_the_step_count() -> None:
    x, w = Value(0.6, label="x"), Value(-1.2, label="w")
    params = [x, w]
    x.grad, w.grad = 0.125, -7.0  # leftovers the demo must restore

    def build() -> Value:
        return (x * w + x).tanh() + w**2

    result = forget_zero_grad_demo(build, params, steps=4)
    truth = beside_correct(build, params, lambda root: root.backward()).correct
    np.testing.assert_allclose(result.true_gradient, truth, rtol=1e-15)
    assert np.all(truth != 0)
    for k in range(4):
        np.testing.assert_allclose(result.with_zero_grad[k], truth, rtol=1e-15)
        np.testing.assert_allclose(result.without_zero_grad[k], (k + 1) * truth, rtol=1e-14)
    assert result.names == ("x", "w")
    assert (x.grad, w.grad) == (0.125, -7.0)
    assert (x.data, w.data) == (0.6, -1.2)


def test_forget_zero_grad_needs_a_step() -> None:
    with pytest.raises(ValueError, match="steps"):
        forget_zero_grad_demo(lambda: Value(1.0), [], steps=0)


# --- micro-batches ---------------------------------------------------------------------
@pytest.mark.parametrize(("loss", "outputs", "n", "k"), [
    ("mse", 1, 24, 4),
    ("hinge", 1, 24, 3),
    ("logistic", 1, 23, 5),  # unequal micro-batches: 5, 5, 5, 4, 4
    ("softmax", 2, 20, 20),  # one sample per micro-batch
])
def test_microbatches_add_up_to_the_full_batch(loss: str, outputs: int, n: int, k: int) -> None:
    points, y = moons(n, 0.1, np.random.default_rng(3))
    model = MLP(2, [8, outputs], activation="tanh", seed=7)
    result = microbatch_accumulation(model, points, y, k, loss=loss)
    assert sum(result.batch_sizes) == n and len(result.batch_sizes) == k
    assert np.abs(result.full_batch).max() > 1e-3
    assert result.max_difference < 1e-12
    assert result.accumulated_loss == pytest.approx(result.full_loss, rel=1e-12)
    assert len(result.names) == len(model.parameters())
    assert all(p.grad == 0.0 for p in model.parameters())


def test_microbatches_with_a_callable_loss() -> None:
    points, y = moons(12, 0.1, np.random.default_rng(0))
    model = MLP(2, [4, 1], seed=1)
    result = microbatch_accumulation(model, points, y, 3,
                                     loss=lambda out, labels: (out * out).mean())
    assert result.max_difference < 1e-12
    assert np.abs(result.full_batch).max() > 0


def test_microbatch_count_must_fit_the_batch() -> None:
    points, y = moons(6, 0.1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="between 1 and"):
        microbatch_accumulation(MLP(2, [1], seed=0), points, y, 7)


# --- the gradient check catches each variant --------------------------------------------
def test_gradient_check_flags_the_broken_variants_on_a_reused_graph() -> None:
    out, v = neuron_with_reused_hidden()
    params = [v["x"], v["w1"], v["w2"], v["b"]]

    def build() -> Value:
        h = params[0] * 2.0
        return (params[3] + params[1] * h + params[2] * h).tanh()

    assert build().data == out.data
    results = {r.name: r for r in check_variants(build, params, names=["x", "w1", "w2", "b"])}
    assert list(results) == list(VARIANTS)
    assert results["engine"].passed
    assert results["engine"].check.worst_error < 1e-6
    for name in ("wrong order", "assign", "backward twice"):
        assert not results[name].passed, name
        assert results[name].check.worst_error > 1e-6
    # Wrong order and assign both get x wrong and only x.
    assert results["wrong order"].check.names[results["wrong order"].check.worst] == "x"
    assert results["assign"].check.names[results["assign"].check.worst] == "x"


def test_gradient_check_passes_wrong_order_and_assign_on_a_tree() -> None:
    a, b = Value(0.3), Value(-0.8)

    def build() -> Value:
        return (a * b + 1.0).tanh().exp()

    results = {r.name: r.passed for r in check_variants(build, [a, b])}
    assert results == {"engine": True, "wrong order": True, "assign": True,
                       "backward twice": False}


def test_check_variants_rejects_an_unknown_name() -> None:
    with pytest.raises(ValueError, match="unknown variants"):
        check_variants(lambda: Value(1.0), [], variants=["typo"])


def test_beside_correct_marks_the_wrong_rows() -> None:
    a = Value(1.5, label="a")
    k = Value(2.0, label="k")

    def build() -> Value:
        b = a * k
        return b * b + k

    columns = beside_correct(build, [a, k], backward_assign)
    assert columns.names == ("a", "k")
    # d/da (a k)^2 = 2 a k^2 = 12; assign keeps one use of b: a k · k = 6.
    assert columns.correct[0] == pytest.approx(12.0)
    assert columns.broken[0] == pytest.approx(6.0)
    assert columns.differs.tolist() == [True, True]
    assert (a.grad, k.grad) == (0.0, 0.0)


def test_wrong_order_firings_list_each_visit_of_the_naive_recursion() -> None:
    a = Value(1.0, label="a")
    b = a + a
    b.label = "b"
    c = b + b
    c.label = "c"
    # b fires twice: the first time with only one of c's two contributions in hand.
    assert [n.label for n in wrong_order_firings(c)] == ["c", "b", "a", "a", "b", "a", "a"]


def test_saving_ops_and_the_explanations_name_them() -> None:
    a, b = Value(2.0, label="a"), Value(3.0, label="b")
    assert saving_ops(a + b) == ()
    assert saving_ops((a * b).tanh() + a) == ("*", "tanh")
    raised = explain_backward_twice(("*", "tanh"), retain_graph=False, raised=True)
    assert "× and tanh saved" in raised and "retain_graph=True" in raised
    assert "twice" in explain_backward_twice((), retain_graph=False, raised=False)
    assert "retain_graph=True kept" in explain_backward_twice(("*",), True, raised=False)


def test_network_gradient_check_passes_the_engine_and_flags_assign() -> None:
    data = moons(40, 0.1, np.random.default_rng(1))
    model = MLP(2, [4, 4, 1], activation="tanh", seed=3)
    before = model.get_flat()
    check = network_gradient_check(model, *data, loss="mse", l2=1e-3)
    assert check.passed()
    assert len(check.names) == len(model.parameters())
    assert (model.get_flat() == before).all()
    assert all(p.grad == 0.0 for p in model.parameters())
    # Hidden units feed several neurons: assigning keeps one consumer's share only.
    assert not network_gradient_check(model, *data, loss="mse", backward=backward_assign).passed()
