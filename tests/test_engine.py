"""The engine: every op's gradient against finite differences, and backward's contract.

Gradients are compared with central differences on randomly generated expressions
(hypothesis), once with float data and once with one array entry per sample. The
strategies keep each example well conditioned instead of loosening the tolerance: an
example is skipped when it comes near a kink (relu, abs), a pole (1/v) or grows large.
"""

from __future__ import annotations

import gc
import math
import weakref
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gradbox.autograd import engine, losses
from gradbox.autograd.engine import Value, take_apart
from gradbox.autograd.nn import MLP

# Written out here, not imported: the engine must say exactly what PyTorch says.
PYTORCH_FREED_TEXT = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
PYTORCH_NON_SCALAR_TEXT = "grad can be implicitly created only for scalar outputs"

# --- finite differences ------------------------------------------------------------
# The five-point central difference, (-f(x+2h) + 8f(x+h) - 8f(x-h) + f(x-2h)) / 12h:
# truncation error ~h^4 instead of the two-point form's h^2, so that expressions with
# steep but legitimate slopes (1 / (1/a + 1/b) near a pole) need no looser tolerance.
STEP = 1e-5
TOLERANCE = 1e-6  # relative to max(1, |gradient|)
GUARD = 0.1  # how far from a kink or a pole an example must stay
LIMIT = 1e3  # largest magnitude any intermediate value may reach


class OutOfDomainError(Exception):
    """The example comes too close to a kink or a pole, or grows too large."""


def central_difference(f: Callable[[list], float], values: list, i: int,
                       sample: int | None = None) -> float:
    """d f / d values[i] (or d f / d values[i][sample]), by five-point central differences."""

    def shifted(delta: float) -> float:
        moved = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
        if sample is None:
            moved[i] = moved[i] + delta
        else:
            moved[i][sample] += delta
        return float(f(moved))

    h = STEP
    return (-shifted(2 * h) + 8 * shifted(h) - 8 * shifted(-h) + shifted(-2 * h)) / (12 * h)


def assert_gradient(analytic: float, numeric: float, what: str = "") -> None:
    scale = max(1.0, abs(analytic), abs(numeric))
    assert abs(analytic - numeric) <= TOLERANCE * scale, (
        f"{what}: analytic {analytic!r} but finite differences give {numeric!r}")


# --- random expressions ---------------------------------------------------------------
# An expression is a nested tuple: ("leaf", i) or (op, operand) or (op, left, right).
# Each op is a function of the operand(s) and a `check` flag; guarded ops raise
# OutOfDomainError when checking and the operand is too close to their kink or pole.


def _near_zero(a: Value) -> bool:
    return float(np.min(np.abs(a.data))) < GUARD


def _kinked(op: Callable[[Value], Value]) -> Callable[[Value, bool], Value]:
    def apply(a: Value, check: bool) -> Value:
        if check and _near_zero(a):
            raise OutOfDomainError
        return op(a)

    return apply


_pole = _kinked  # 1/v near 0 is as hard on finite differences as a kink


def _plain(op: Callable[[Value], Value]) -> Callable[[Value, bool], Value]:
    return lambda a, check: op(a)


UNARY: dict[str, Callable[[Value, bool], Value]] = {
    "neg": _plain(lambda a: -a),
    "tanh": _plain(Value.tanh),
    "sigmoid": _plain(Value.sigmoid),
    "exp": _plain(Value.exp),
    "sin": _plain(Value.sin),
    # log and fractional powers get an argument that stays in their domain.
    "log": _plain(lambda a: (a * a + 0.5).log()),
    "**0.5": _plain(lambda a: (a * a + 0.5) ** 0.5),
    "**-1.5": _plain(lambda a: (a * a + 0.5) ** -1.5),
    "**2": _plain(lambda a: a**2),
    "**3": _plain(lambda a: a**3),
    "**2.0": _plain(lambda a: a**2.0),
    "**-1": _pole(lambda a: a**-1),
    "**-2": _pole(lambda a: a**-2),
    "relu": _kinked(Value.relu),
    "abs": _kinked(abs),
    "2*v": _plain(lambda a: 2 * a),
    "v*3": _plain(lambda a: a * 3),
    "1-v": _plain(lambda a: 1 - a),
    "v-1.5": _plain(lambda a: a - 1.5),
    "2+v": _plain(lambda a: 2 + a),
    "v+0.5": _plain(lambda a: a + 0.5),
    "1/v": _pole(lambda a: 1 / a),
    "v/4": _plain(lambda a: a / 4),
}
REDUCTIONS: dict[str, Callable[[Value, bool], Value]] = {
    "sum": _plain(Value.sum),
    "mean": _plain(Value.mean),
}


def _divide(a: Value, b: Value, check: bool) -> Value:
    if check and _near_zero(b):
        raise OutOfDomainError
    return a / b


BINARY: dict[str, Callable[[Value, Value, bool], Value]] = {
    "+": lambda a, b, check: a + b,
    "-": lambda a, b, check: a - b,
    "*": lambda a, b, check: a * b,
    "/": _divide,
}
N_LEAVES = 3


def expressions(reductions: bool = False) -> st.SearchStrategy:
    unary = sorted(UNARY) + (sorted(REDUCTIONS) if reductions else [])
    return st.recursive(
        st.tuples(st.just("leaf"), st.integers(0, N_LEAVES - 1)),
        lambda inner: st.one_of(
            st.tuples(st.sampled_from(unary), inner),
            st.tuples(st.sampled_from(sorted(BINARY)), inner, inner),
        ),
        max_leaves=6,
    )


def evaluate(expr: tuple, leaves: Sequence[Value], check: bool = False) -> Value:
    op = expr[0]
    if op == "leaf":
        return leaves[expr[1]]
    if len(expr) == 2:
        fn = UNARY.get(op) or REDUCTIONS[op]
        out = fn(evaluate(expr[1], leaves, check), check)
    else:
        out = BINARY[op](evaluate(expr[1], leaves, check), evaluate(expr[2], leaves, check),
                         check)
    if check and not np.all(np.abs(out.data) < LIMIT):
        raise OutOfDomainError
    return out


def evaluate_checked(expr: tuple, leaves: Sequence[Value]) -> Value:
    try:
        return evaluate(expr, leaves, check=True)
    except OutOfDomainError:
        assume(False)
        raise  # unreachable: assume(False) abandons the example


def forward_only(expr: tuple, reduce: str | None = None) -> Callable[[list], float]:
    """The expression as a plain function of its leaves' data, for finite differences."""

    def f(values: list) -> float:
        out = evaluate(expr, [Value(v) for v in values])
        return (getattr(out, reduce)() if reduce else out).data

    return f


# Leaves stay GUARD away from 0: a kink or a pole applied to a leaf would skip the example.
coordinates = st.floats(GUARD, 2) | st.floats(-2, -GUARD)


@settings(max_examples=400, deadline=None)
@given(expr=expressions(), values=st.lists(coordinates, min_size=N_LEAVES, max_size=N_LEAVES))
def test_float_expressions_match_finite_differences(expr: tuple, values: list) -> None:
    leaves = [Value(v) for v in values]
    out = evaluate_checked(expr, leaves)
    out.backward()
    f = forward_only(expr)
    for i, leaf in enumerate(leaves):
        assert type(leaf.grad) is float  # float data stays plain Python floats
        assert_gradient(leaf.grad, central_difference(f, values, i), f"leaf {i} of {expr}")


@st.composite
def array_leaves(draw: st.DrawFn) -> tuple[list, int]:
    """Leaf data: some floats (parameters), at least one array (an input per sample)."""
    n = draw(st.integers(1, 4))
    is_array = draw(st.lists(st.booleans(), min_size=N_LEAVES, max_size=N_LEAVES))
    is_array[draw(st.integers(0, N_LEAVES - 1))] = True
    values = [np.array(draw(st.lists(coordinates, min_size=n, max_size=n))) if arr
              else draw(coordinates) for arr in is_array]
    return values, n


@settings(max_examples=400, deadline=None)
@given(expr=expressions(reductions=True), leaf_data=array_leaves(),
       reduce=st.sampled_from(["sum", "mean"]))
def test_array_expressions_match_finite_differences(expr: tuple, leaf_data: tuple,
                                                    reduce: str) -> None:
    values, n = leaf_data
    leaves = [Value(v) for v in values]
    root = getattr(evaluate_checked(expr, leaves), reduce)()
    root.backward()
    f = forward_only(expr, reduce)
    for i, leaf in enumerate(leaves):
        if isinstance(values[i], np.ndarray):
            assert np.shape(leaf.grad) in ((), (n,))  # untouched leaves keep 0.0
            for s in range(n):
                assert_gradient(float(np.broadcast_to(leaf.grad, (n,))[s]),
                                central_difference(f, values, i, s), f"leaf {i}[{s}] of {expr}")
        else:
            # A parameter shared by every sample: one float, the sum over samples.
            assert type(leaf.grad) is float
            assert_gradient(leaf.grad, central_difference(f, values, i), f"leaf {i} of {expr}")


@settings(max_examples=200, deadline=None)
@given(expr=expressions(), leaf_data=array_leaves())
def test_array_graph_equals_one_float_graph_per_sample(expr: tuple, leaf_data: tuple) -> None:
    values, n = leaf_data
    leaves = [Value(v) for v in values]
    # A zero per sample makes an output that depends on no input count once per sample,
    # as it does when the float graphs are built sample by sample.
    batched = evaluate_checked(expr, leaves) + np.zeros(n)
    batched.sum().backward()

    total = 0.0
    grads = [np.zeros(n) if isinstance(v, np.ndarray) else 0.0 for v in values]
    for s in range(n):
        sample_leaves = [Value(v[s] if isinstance(v, np.ndarray) else v) for v in values]
        out = evaluate(expr, sample_leaves)
        out.backward()
        total += out.data
        for i, leaf in enumerate(sample_leaves):
            if isinstance(values[i], np.ndarray):
                grads[i][s] = leaf.grad
            else:
                grads[i] += leaf.grad  # the per-sample gradients of a shared parameter add up
    assert batched.sum().data == pytest.approx(total, rel=1e-12, abs=1e-12)
    for leaf, expected in zip(leaves, grads):
        np.testing.assert_allclose(leaf.grad, expected, rtol=1e-9, atol=1e-12)


# --- each op on its own, with both kinds of data ---------------------------------------
@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("data", [0.7, -1.3, np.array([0.7, -1.3, 1.9])], ids=["pos", "neg", "arr"])
def test_each_unary_op_matches_finite_differences(op: str, data: float | np.ndarray) -> None:
    leaf = Value(data)
    UNARY[op](leaf, True).sum().backward()
    f = forward_only((op, ("leaf", 0)), "sum")
    for s in range(np.size(data)):
        sample = s if isinstance(data, np.ndarray) else None
        analytic = leaf.grad[s] if sample is not None else leaf.grad
        assert_gradient(analytic, central_difference(f, [data], 0, sample), op)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("float_left", [True, False])
def test_each_binary_op_matches_finite_differences(op: str, float_left: bool) -> None:
    values = [0.8 if float_left else np.array([0.8, -0.4]), np.array([1.7, -0.6])]
    leaves = [Value(v) for v in values]
    BINARY[op](*leaves, True).sum().backward()
    f = forward_only((op, ("leaf", 0), ("leaf", 1)), "sum")
    assert_gradient(leaves[0].grad if float_left else leaves[0].grad[0],
                    central_difference(f, values, 0, None if float_left else 0), op)
    for s in range(2):
        assert_gradient(leaves[1].grad[s], central_difference(f, values, 1, s), op)


def test_reductions_spread_the_gradient_over_samples() -> None:
    x = Value(np.array([1.0, 2.0, 3.0, 4.0]))
    (x.sum() * 3).backward()
    np.testing.assert_array_equal(x.grad, [3.0, 3.0, 3.0, 3.0])
    y = Value(np.array([1.0, 2.0, 3.0, 4.0]))
    m = y.mean()
    assert m.data == 2.5
    (m * 2).backward()
    np.testing.assert_array_equal(y.grad, [0.5, 0.5, 0.5, 0.5])


def test_reductions_of_a_float_are_the_float_itself() -> None:
    a = Value(3.0)
    s, m = a.sum(), a.mean()
    assert (s.data, m.data) == (3.0, 3.0)
    (s + m).backward()
    assert a.grad == 2.0


def test_a_numpy_array_on_the_left_builds_one_value_not_an_array_of_values() -> None:
    w = Value(2.0)
    out = np.array([1.0, 2.0, 3.0]) * w
    assert isinstance(out, Value)
    np.testing.assert_array_equal(out.data, [2.0, 4.0, 6.0])
    out.sum().backward()
    assert w.grad == 6.0


def test_exp_overflows_to_inf_for_floats_as_numpy_does_for_arrays() -> None:
    assert Value(1000.0).exp().data == math.inf
    with np.errstate(over="ignore"):
        assert Value(np.array([1000.0])).exp().data[0] == math.inf


def test_sigmoid_does_not_overflow_for_large_scores() -> None:
    assert Value(-1000.0).sigmoid().data == 0.0
    assert Value(1000.0).sigmoid().data == 1.0
    np.testing.assert_array_equal(Value(np.array([-1000.0, 1000.0])).sigmoid().data, [0.0, 1.0])


def test_relu_and_abs_take_slope_zero_at_their_kink() -> None:
    a, b = Value(0.0), Value(0.0)
    (a.relu() + abs(b)).backward()
    assert (a.grad, b.grad) == (0.0, 0.0)


# --- the accumulation rule, and backward's contract --------------------------------------
def test_a_reused_node_collects_the_gradient_of_every_use() -> None:
    a = Value(1.0)
    b = a + a
    c = b + b
    c.backward()
    assert a.grad == 4.0
    assert b.grad == 2.0
    assert c.grad == 1.0


def test_a_node_used_as_both_operands_of_a_product() -> None:
    a = Value(3.0)
    (a * a).backward()
    assert a.grad == 6.0


def test_topological_order_puts_each_node_once_after_its_inputs() -> None:
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    d = c + a
    e = (d * c).tanh() + b
    order = e.topological_order()
    assert len(order) == len(set(map(id, order)))
    assert {id(n) for n in order} >= {id(a), id(b), id(c), id(d), id(e)}
    position = {id(n): i for i, n in enumerate(order)}
    for node in order:
        for child in node._prev:
            assert position[id(child)] < position[id(node)]
    assert order[-1] is e


def _backward_twice_graph(op: str) -> tuple[Value, Value, Value, Value]:
    a, b = Value(0.5), Value(-1.5)
    mid = {
        "+": lambda: a + b,
        "-": lambda: a - b,
        "neg": lambda: -a + b,
        "sum": lambda: (a + b).sum(),
        "mean": lambda: (a + b).mean(),
        "*": lambda: a * b,
        "/": lambda: a / b,
        "**": lambda: a**2 + b,
        "tanh": lambda: (a + b).tanh(),
        "relu": lambda: (a - b).relu(),
        "exp": lambda: (a + b).exp(),
        "log": lambda: (a - b).log(),
        "sigmoid": lambda: (a + b).sigmoid(),
        "abs": lambda: abs(a + b),
        "sin": lambda: (a + b).sin(),
    }[op]()
    root = mid + 0.0  # one more `+` on top, so `mid` is an intermediate node
    return a, b, mid, root


SAVES_NOTHING = ["+", "-", "neg", "sum", "mean"]
SAVES_INPUTS = ["*", "/", "**", "tanh", "relu", "exp", "log", "sigmoid", "abs", "sin"]


@pytest.mark.parametrize("op", SAVES_NOTHING)
def test_backward_twice_through_ops_that_save_nothing_doubles_the_leaf_grads(op: str) -> None:
    a, b, _, root = _backward_twice_graph(op)
    root.backward()
    first = (a.grad, b.grad)
    root.backward()  # PyTorch does not raise here either: nothing was freed
    assert (a.grad, b.grad) == (2 * first[0], 2 * first[1])


@pytest.mark.parametrize("op", SAVES_INPUTS)
def test_backward_twice_through_an_op_that_saved_values_raises_pytorchs_error(op: str) -> None:
    a, b, mid, root = _backward_twice_graph(op)
    root.backward()
    before = (a.grad, b.grad, mid.grad, root.grad)
    with pytest.raises(RuntimeError) as raised:
        root.backward()
    assert str(raised.value) == engine.FREED_GRAPH_MESSAGE == PYTORCH_FREED_TEXT
    assert (a.grad, b.grad, mid.grad, root.grad) == before  # a refused call changes nothing


@pytest.mark.parametrize("op", SAVES_INPUTS)
def test_retain_graph_allows_a_second_backward_and_the_leaf_grads_double(op: str) -> None:
    a, b, mid, root = _backward_twice_graph(op)
    root.backward(retain_graph=True)
    first = (a.grad, b.grad, mid.grad)
    root.backward()
    assert (a.grad, b.grad) == (2 * first[0], 2 * first[1])  # leaves accumulate
    assert mid.grad == first[2]  # an intermediate node shows this pass's gradient
    with pytest.raises(RuntimeError, match="a second time"):
        root.backward()  # the second call did not retain the graph


def test_backward_through_a_graph_freed_by_another_roots_backward_raises() -> None:
    a, b = Value(2.0), Value(3.0)
    shared = a * b
    first, second = shared + 1, shared + 2
    first.backward()
    with pytest.raises(RuntimeError, match="a second time"):
        second.backward()
    assert (a.grad, b.grad) == (3.0, 2.0)


def test_backward_of_a_leaf_sets_its_own_gradient() -> None:
    a = Value(5.0)
    a.backward()
    a.backward()
    assert a.grad == 2.0


def test_a_100000_node_chain_backpropagates_without_recursion() -> None:
    x = Value(0.5)
    y = x
    for _ in range(100_000):
        y = y + x
    assert len(y.topological_order()) == 100_001
    y.backward()
    assert x.grad == 100_001.0
    assert y.data == 0.5 * 100_001


def test_a_deep_chain_of_products_gives_the_product_of_the_slopes() -> None:
    x = Value(1.0)
    y = x
    for _ in range(50_000):
        y = y * 1.00001
    y.backward()
    assert x.grad == pytest.approx(1.00001**50_000, rel=1e-9)


# --- memory: graphs die by reference counting ------------------------------------------------
def _mlp_loss(model: MLP, points: np.ndarray, labels: np.ndarray) -> tuple[Value, Value]:
    score = model([points[:, 0], points[:, 1]])
    return losses.hinge(score, labels) + 1e-4 * losses.l2_penalty(model.parameters()), score


@pytest.mark.parametrize("retain_graph", [False, True, None], ids=["backward", "retain", "none"])
def test_graphs_are_freed_by_reference_counting_alone(retain_graph: bool | None) -> None:
    model = MLP(2, [16, 16, 1], seed=0)
    rng = np.random.default_rng(0)
    points, labels = rng.normal(size=(50, 2)), rng.integers(0, 2, 50)
    was_enabled = gc.isenabled()  # the app's tests run with it off: leave it as found
    gc.collect()
    gc.disable()
    try:
        loss, score = _mlp_loss(model, points, labels)
        if retain_graph is not None:
            loss.backward(retain_graph=retain_graph)
        # Values have __slots__ and no weakref slot; an array they own stands in for them.
        alive = weakref.ref(score.data)
        del loss, score
        assert alive() is None, "the graph outlived its last reference"
        assert gc.collect() == 0, "building or running the graph created reference cycles"
    finally:
        if was_enabled:
            gc.enable()


def _product_whose_closure_reads_its_output(a: Value, b: Value) -> Value:
    out = a * b

    def _backward(grad: float) -> None:
        a._accumulate(b.data * out.grad)  # micrograd's way: read `out`, not the argument

    out._backward = _backward
    return out


def test_the_cycle_check_would_see_a_closure_that_reaches_back_to_its_output() -> None:
    # The control for the test above: out -> _backward -> out is a reference cycle,
    # so such a graph waits for the cyclic collector.
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        _product_whose_closure_reads_its_output(Value(2.0), Value(3.0))
        assert gc.collect() > 0
    finally:
        if was_enabled:
            gc.enable()


# --- bad input ----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", ["abc", b"1", None, True, {"a": 1}, ["a", "b"], object()],
                         ids=lambda bad: type(bad).__name__ if type(bad) is object else repr(bad))
def test_data_that_is_not_a_number_is_a_type_error(bad: object) -> None:
    with pytest.raises(TypeError, match="number"):
        Value(bad)


def test_a_two_dimensional_array_is_a_value_error_naming_its_shape() -> None:
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        Value(np.zeros((2, 3)))


def test_numbers_and_one_dimensional_sequences_are_accepted() -> None:
    assert type(Value(3).data) is float
    assert type(Value(np.float32(1.5)).data) is float
    assert type(Value(np.array(2.0)).data) is float
    np.testing.assert_array_equal(Value([1, 2, 3]).data, [1.0, 2.0, 3.0])
    assert Value(np.array([1, 2])).data.dtype == np.float64


def test_a_value_copies_the_array_it_is_given() -> None:
    data = np.array([1.0, 2.0])
    v = Value(data)
    data[0] = 99.0
    assert v.data[0] == 1.0


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_mismatched_sample_counts_are_a_value_error_naming_both_counts(op: str) -> None:
    three, five = Value(np.ones(3)), Value(np.ones(5))
    with pytest.raises(ValueError, match=r"3 and 5 samples"):
        BINARY[op](three, five, False)
    with pytest.raises(ValueError, match=r"5 and 3 samples"):
        BINARY[op](five, np.ones(3), False)


@pytest.mark.parametrize("data", [0.0, -2.0, np.array([1.0, 0.0]), np.array([3.0, -1.0])],
                         ids=["zero", "negative", "array-zero", "array-negative"])
def test_log_of_a_non_positive_number_is_a_value_error(data: float | np.ndarray) -> None:
    with pytest.raises(ValueError, match="non-positive"):
        Value(data).log()


@pytest.mark.parametrize("data", [-8.0, np.array([4.0, -1.0])], ids=["float", "array"])
def test_a_negative_base_with_a_fractional_exponent_is_a_value_error(data: engine.Data) -> None:
    # Python would answer with a complex number; the engine refuses, as log does.
    with pytest.raises(ValueError, match="not a real number"):
        Value(data) ** 0.5
    assert Value(data) ** 3.0 is not None  # an integral exponent is fine for any base


def test_float_division_by_zero_raises_as_python_does() -> None:
    with pytest.raises(ZeroDivisionError):
        Value(1.0) / 0.0


def test_backward_of_a_per_sample_value_is_refused_as_pytorch_refuses_it() -> None:
    x = Value(np.array([1.0, 2.0]))
    y = x * 2
    with pytest.raises(RuntimeError) as raised:
        y.backward()
    assert str(raised.value) == engine.NON_SCALAR_MESSAGE == PYTORCH_NON_SCALAR_TEXT
    assert x.grad == 0.0


@pytest.mark.parametrize("exponent", [Value(2.0), True, "2", None, np.array([2.0])],
                         ids=repr)
def test_an_exponent_that_is_not_an_int_or_float_is_a_type_error(exponent: object) -> None:
    with pytest.raises(TypeError, match="exponent"):
        Value(2.0) ** exponent


# --- display ----------------------------------------------------------------------------
def test_repr_shows_data_and_grad_briefly() -> None:
    assert repr(Value(2.0)) == "Value(data=2, grad=0)"
    v = Value(0.1234567891)
    v.grad = -1.5
    assert repr(v) == "Value(data=0.123457, grad=-1.5)"
    assert repr(Value(np.array([1.0, 2.5]))) == "Value(data=[1. , 2.5], grad=0)"


def test_an_op_result_records_its_inputs_and_op_for_drawing() -> None:
    a, b = Value(1.0, label="a"), Value(2.0, label="b")
    c = a * b
    assert c._prev == (a, b)
    assert c._op == "*"
    assert c.inputs == (a, b) and c.op == "*"  # what other modules read
    assert a.label == "a"
    assert (a**3)._op == "**3"



def test_release_graph_takes_a_graph_apart_and_keeps_its_numbers() -> None:
    a, b = Value(2.0), Value(-3.0)
    c = a * b
    d = c + a
    e = d.relu() + c * c
    e.backward()
    nodes = e.topological_order()
    numbers = [(n.data, n.grad) for n in nodes]
    take_apart(e)
    assert all(n._prev == () for n in nodes)  # no node holds its inputs any more
    assert [(n.data, n.grad) for n in nodes] == numbers
    # The leaves (parameters) are untouched and train on in the next graph.
    a.grad = b.grad = 0.0
    (a * b).backward()
    assert (a.grad, b.grad) == (-3.0, 2.0)
