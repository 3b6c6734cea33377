"""The traced graph: structure, numbers per sample, fan-out, layout cache, DOT, network level."""

from __future__ import annotations

import itertools
import math
import re
import time
from types import SimpleNamespace

import numpy as np
import pytest

from gradbox import graph
from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP, parse_parameter_name
from gradbox.formatting import fmt
from gradbox.graph import layout as layout_module
from gradbox.training import datasets


def demo(seed: int = 0, sizes: tuple[int, ...] = (16, 16, 1)) -> tuple[MLP, Value]:
    """Micrograd's demo: MLP(2, [16, 16, 1]) on 100 moons, hinge loss plus L2."""
    ds = datasets.make("moons", 100, 0.1, seed=0)
    model = MLP(2, list(sizes), seed=seed)
    out = model([ds.points[:, 0], ds.points[:, 1]])
    loss = losses.hinge(out, ds.labels) + 1e-4 * losses.l2_penalty(model.parameters())
    loss.backward(retain_graph=True)
    return model, loss


# --- structure ----------------------------------------------------------------------------
def test_known_expression_nodes_edges_and_numbering() -> None:
    a, b, c = Value(2.0, label="a"), Value(-3.0, label="b"), Value(10.0, label="c")
    out = (a * b + c).tanh()
    g = graph.trace(out)
    assert g.ops == ("", "", "*", "", "+", "tanh")
    assert g.labels == ("a", "b", "", "c", "", "")
    assert g.children == ((), (), (0, 1), (), (2, 3), (4,))
    assert set(g.edges) == {(0, 2), (1, 2), (2, 4), (3, 4), (4, 5)}
    assert g.consumers == ((2,), (2,), (4,), (4,), (5,), ())
    assert g.root == 5 and len(g) == 6
    # ids are the engine's own topological order
    assert [g.node_of(v) for v in out.topological_order()] == list(range(6))
    assert [g.topological_number(i) for i in range(6)] == list(range(6))
    assert g.depth == (0, 0, 1, 0, 2, 3)
    assert all(child < parent for child, parent in g.edges)
    assert not any(g.is_fanout(i) for i in range(6))


def test_reused_value_is_one_node_with_two_uses() -> None:
    a = Value(3.0, label="a")
    b = a + a
    c = b + b
    c.backward()
    g = graph.trace(c)
    assert g.ops == ("", "+", "+")
    assert g.children == ((), (0, 0), (1, 1))
    assert g.edges == ((0, 1), (0, 1), (1, 2), (1, 2))
    assert g.consumers == ((1, 1), (2, 2), ())
    assert g.is_fanout(0) and g.is_fanout(1) and not g.is_fanout(2)
    assert list(g.grads()) == [4.0, 2.0, 1.0]


def test_parameter_names_from_model_or_mapping() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    for name, p in model.named_parameters():
        node = g.find_parameter(name)
        assert node is not None and g.names[node] == name and g.node_of(p) == node
    by_id = graph.trace(loss, {id(p): n for n, p in model.named_parameters()})
    assert by_id.names == g.names
    # an op is never a parameter, and the inputs keep their labels
    assert all(g.names[i] is None for i in range(len(g)) if g.children[i])
    assert {g.labels[i] for i in range(len(g)) if g.labels[i]} == {"x0", "x1"}


def test_demo_graph_size() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    # 1,663 nodes when the L2 penalty was a chain of two nodes per parameter; one now
    assert len(g) == len(loss.topological_order()) == 1663 - 674
    assert len(g.edges) == sum(len(v.inputs) for v in loss.topological_order())


# --- numbers per sample -------------------------------------------------------------------
def test_values_and_grads_per_sample_equal_the_engines_arrays() -> None:
    rng = np.random.default_rng(1)
    x = Value(rng.normal(size=7), label="x")
    w = Value(0.7, label="w")
    h = (w * x + 0.5).tanh()
    y = (h * h).exp() + (-(x.relu())).sigmoid() + abs(x) ** 3
    unused = Value(rng.uniform(1, 2, size=7)).log()
    loss = (y + unused).mean()
    loss.backward(retain_graph=True)
    g = graph.trace(loss)
    nodes = loss.topological_order()
    for sample in (0, 3, 6):
        values, grads = g.values(sample), g.grads(sample)
        for i, v in enumerate(nodes):
            expect_v = v.data[sample] if isinstance(v.data, np.ndarray) else v.data
            expect_g = v.grad[sample] if isinstance(v.grad, np.ndarray) else v.grad
            assert values[i] == expect_v
            assert grads[i] == expect_g
    assert g.n_samples == 7
    # the shared parameter's value is the same for every sample; its grad is the sum
    node = g.node_of(w)
    assert g.values(0)[node] == g.values(5)[node] == 0.7


def test_grad_is_zero_where_none_arrived() -> None:
    a = Value(np.arange(3.0))
    out = (a * 2).sum()
    g = graph.trace(out)
    assert list(g.grads(1)) == [0.0] * len(g)


def test_snapshot_keeps_numbers_after_update_and_zero_grad() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    frozen = g.snapshot()
    before_v, before_g = frozen.values(4).copy(), frozen.grads(4).copy()
    for p in model.parameters():
        p.data -= 0.1 * p.grad
    model.zero_grad()
    assert np.array_equal(frozen.values(4), before_v)
    assert np.array_equal(frozen.grads(4), before_g)
    assert not np.array_equal(g.values(4), before_v)  # the live graph follows the model
    assert frozen.structure_key == g.structure_key


def test_a_snapshot_is_its_numbers_and_crosses_as_they_are() -> None:
    # Frozen as the matrices a graph crosses to the window in: the training process
    # writes them as they are, without making them again from a copy per node.
    model, loss = demo()
    g = graph.trace(loss, model)
    frozen = g.snapshot()
    numbers = frozen.numbers()
    assert numbers is not None and all(m is n for m, n in zip(numbers, frozen.numbers()))
    assert all(not m.flags.writeable for m in numbers)  # nobody changes a frozen graph
    live = g.numbers()
    assert all(np.array_equal(m, n) for m, n in zip(numbers, live))
    for node in range(len(g)):
        assert np.array_equal(frozen.data(node), g.data(node))
        assert np.array_equal(frozen.grad(node), g.grad(node))


# --- backward order and fan-out -----------------------------------------------------------
def test_backward_order_is_reverse_topological() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    order = graph.backward_order(g)
    assert order[0] == g.root and sorted(order) == list(range(len(g)))
    place = {node: k for k, node in enumerate(order)}
    # every consumer hands its gradient on before the node it consumes does
    assert all(place[parent] < place[child] for child, parent in g.edges)
    assert order == [g.node_of(v) for v in reversed(loss.topological_order())]


def test_fanout_contributions_for_a_plus_a() -> None:
    a = Value(3.0)
    b = a + a
    c = b * b
    c.backward()
    g = graph.trace(c)
    fan_a = graph.fanout_contributions(g, 0)
    assert [p.consumer for p in fan_a.contributions] == [1, 1]
    assert [p.slot for p in fan_a.contributions] == [0, 1]
    assert [p.amount for p in fan_a.contributions] == [12.0, 12.0]
    assert fan_a.total == fan_a.grad == a.grad == 24.0
    fan_b = graph.fanout_contributions(g, 1)
    assert [p.local for p in fan_b.contributions] == [6.0, 6.0]
    assert fan_b.total == b.grad == 12.0
    root = graph.fanout_contributions(g, g.root)
    assert root.contributions == () and root.grad == 1.0


def test_fanout_contributions_sum_to_every_nodes_grad_after_saved_values_are_freed() -> None:
    rng = np.random.default_rng(2)
    x = Value(rng.uniform(0.5, 2.0, size=9), label="x")
    p = Value(0.3, label="p")
    terms = [x * p, (x + p).tanh(), x.exp() * p, (x * x).log(), (x - p).relu(),
             (p * x).sigmoid(), abs(x - 1.0) ** 2, -x, x ** -1.5]
    total = terms[0]
    for t in terms[1:]:
        total = total + t * x
    loss = total.mean() + (x * p).sum() * 0.01 + p * p
    loss.backward()  # retain_graph=False: every op's saved values are gone
    g = graph.trace(loss, {p: "p"})
    for node in range(len(g) - 1):
        for sample in (0, 5):
            fan = graph.fanout_contributions(g, node, sample)
            assert math.isclose(fan.total, fan.grad, rel_tol=1e-9, abs_tol=1e-12), \
                (node, g.ops[node], fan)
            assert fan.matches
    assert graph.fanout_contributions(g, g.node_of(x)).contributions.__len__() > 10


def test_fanout_contributions_on_demo_graph_and_leftover_gradient() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    fanouts = [i for i in range(len(g)) if g.is_fanout(i)]
    assert len(fanouts) > 337  # every parameter is used by the network and by p*p
    for node in fanouts:
        fan = graph.fanout_contributions(g, node, 7)
        assert fan.matches, (node, fan)
    # a second backward without zero_grad: leaves keep the old pass's gradient
    loss.backward(retain_graph=True)
    w = g.find_parameter("layers.0.neurons.0.w.0")
    fan = graph.fanout_contributions(g, w, 7)
    assert not fan.matches and math.isclose(fan.grad, 2 * fan.total)
    assert "zero_grad" in graph.details(g, w, 7)


def test_local_derivative_of_power_reads_the_exponent() -> None:
    x = Value(4.0)
    g = graph.trace(x ** 0.5)
    assert graph.local_derivative(g, 1, 0) == pytest.approx(0.25)
    assert "0.5" in graph.details(g, 1)


def test_details_text() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    w = g.find_parameter("layers.1.neurons.3.w.2")
    text = graph.details(g, w, 5)
    assert "layers.1.neurons.3.w.2" in text
    # by its neuron and by the L2 penalty (w * w used it twice, before issue 34)
    assert "used 2 times" in text and "sum =" in text and "= grad" in text
    assert "(l2), operand" in text
    assert "sum over 100 samples" in text
    relu = graph.neuron_nodes(g, 0, 1).output
    text = graph.details(g, relu, 5)
    assert "relu" in text and "1 if out > 0" in text and "inputs:" in text
    assert f"value (sample 5): {fmt(g.values(5)[relu])}" in text


# --- layout -------------------------------------------------------------------------------
def test_same_structure_same_key_and_same_layout_object(monkeypatch: pytest.MonkeyPatch) -> None:
    graph.clear_layout_cache()
    model, loss = demo()
    g1 = graph.trace(loss, model)
    _, loss2 = demo(seed=5)  # other weights, other numbers, same shape
    g2 = graph.trace(loss2)
    assert g1.structure_key == g2.structure_key
    calls = []
    real = layout_module._compute_layout
    monkeypatch.setattr(layout_module, "_compute_layout", lambda *a: calls.append(1) or real(*a))
    first = graph.layered_layout(g1)
    assert graph.layered_layout(g2) is first
    assert len(calls) == 1
    _, other = demo(sizes=(8, 1))
    g3 = graph.trace(other)
    assert g3.structure_key != g1.structure_key
    assert graph.layered_layout(g3) is not first
    assert len(calls) == 2


def test_structure_key_sees_ops_and_edges() -> None:
    a, b = Value(1.0), Value(2.0)
    keys = {graph.trace(a + b).structure_key, graph.trace(a * b).structure_key,
            graph.trace(a + a).structure_key, graph.trace(b + a).structure_key}
    assert len(keys) == 3  # a+b and b+a have the same shape
    assert hash(graph.trace(a + b).structure_key) == hash(graph.trace(b + a).structure_key)


def _assert_no_overlap(layout: dict[int, tuple[float, float]]) -> None:
    columns: dict[float, list[float]] = {}
    for x, y in layout.values():
        columns.setdefault(x, []).append(y)
    for ys in columns.values():
        ys.sort()
        assert all(b - a >= 1 - 1e-9 for a, b in itertools.pairwise(ys))


def test_layout_left_to_right_without_overlaps() -> None:
    graph.clear_layout_cache()
    a, b, c = Value(2.0), Value(-3.0), Value(10.0)
    g = graph.trace((a * b + c).tanh())
    layout = graph.layered_layout(g)
    assert all(layout[child][0] < layout[parent][0] for child, parent in g.edges)
    _assert_no_overlap(layout)
    model, loss = demo()
    big = graph.trace(loss, model)
    layout = graph.layered_layout(big)
    assert set(layout) == set(range(len(big)))
    _assert_no_overlap(layout)
    # unfolded edges point right; the loss is the rightmost node
    assert layout[big.root][0] == max(x for x, _ in layout.values())
    assert layout[graph.neuron_nodes(big, 0, 0).inputs[0]][0] == 0


def chained_l2(params: list[Value]) -> Value:
    """The L2 penalty as a learner writes it (and gradbox did before issue 34): a chain."""
    total = 0
    for p in params:
        total = total + p * p
    return total


def test_long_sum_chain_is_folded_into_rows() -> None:
    graph.clear_layout_cache()
    ds = datasets.make("moons", 100, 0.1, seed=0)
    model = MLP(2, [16, 16, 1], seed=0)
    out = model([ds.points[:, 0], ds.points[:, 1]])
    loss = losses.hinge(out, ds.labels) + 1e-4 * chained_l2(model.parameters())
    g = graph.trace(loss, model)
    layout = graph.layered_layout(g)
    width = max(x for x, _ in layout.values()) - min(x for x, _ in layout.values())
    assert width < 80  # 341 columns unfolded
    chains = layout_module._long_chains(g.ops, g.children, g.consumers)
    assert [len(c) for c in chains] == [337]


def test_the_penalty_node_is_drawn_below_the_network_a_column_before_its_use() -> None:
    graph.clear_layout_cache()
    model, loss = demo()
    g = graph.trace(loss, model)
    [penalty] = [i for i in range(len(g)) if g.ops[i] == "l2"]
    assert len(g.children[penalty]) == 337
    layout = graph.layered_layout(g)
    others = [y for i, (_, y) in layout.items() if i != penalty]
    assert layout[penalty][1] > max(others)
    [use] = g.consumers[penalty]
    assert layout[penalty][0] == layout[use][0] - 1


def test_layout_of_demo_graph_takes_well_under_a_second() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    start = time.perf_counter()
    layout_module._compute_layout(g.ops, g.children, g.consumers, 4)
    assert time.perf_counter() - start < 1.0


def test_pooling_spreads_positions_apart_in_order() -> None:
    assert layout_module._spread([0.0, 0.0, 0.0]) == [-1.0, 0.0, 1.0]
    assert layout_module._spread([0.0, 5.0]) == [0.0, 5.0]
    spread = layout_module._spread([3.0, 1.0, 2.0])
    assert all(b - a >= 1 - 1e-12 for a, b in itertools.pairwise(spread))


# --- neurons, subgraphs, network level -----------------------------------------------------
def test_neuron_nodes_follow_the_bias_chain() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    found = graph.neuron_nodes(g, 1, 3)
    assert found is not None
    assert len(found.ops) == 16 + 16 + 1  # products, additions, relu
    assert g.ops[found.output] == "relu"
    assert [g.names[w] for w in found.weights] == [
        *(f"layers.1.neurons.3.w.{i}" for i in range(16)), "layers.1.neurons.3.b"]
    out = graph.neuron_nodes(g, 2, 0)
    assert g.ops[out.output] == "+"  # a linear output unit ends with its last addition
    assert graph.neuron_nodes(g, 5, 0) is None


def test_subgraph_renumbers_and_keeps_numbers() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    part = graph.neuron_subgraph(g, 0, 2)
    assert part is not None and len(part) == 5 + 3 + 2  # ops, w0 w1 b, x0 x1
    assert list(part.original_ids) == sorted(part.original_ids)
    assert {part.labels[i] for i in part.boundary} == {"x0", "x1"}
    for k, old in enumerate(part.original_ids):
        assert part.values(3)[k] == g.values(3)[old]
        assert part.grads(3)[k] == g.grads(3)[old]
    assert all(c < p for c, p in part.edges)


def test_network_level_from_model_and_from_snapshot_like() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    net = graph.network_level(model, g, sample=5, extent=(-2, 3, -1.5, 2), resolution=8)
    assert net.layer_sizes == (2, 16, 16, 1)
    assert net.activations == ("relu", "relu", "linear")
    w = model.layers[1].neurons[3].w[2]
    assert net.weights[1][3, 2] == w.data and net.weight_grads[1][3, 2] == w.grad
    assert net.biases[0][4] == model.layers[0].neurons[4].b.data
    # unit values for the sample are the engine's neuron outputs
    out = graph.neuron_nodes(g, 1, 7).output
    assert net.units[2][7] == g.values(5)[out] and net.unit_grads[2][7] == g.grads(5)[out]
    assert net.loss == loss.data
    assert [m.shape for m in net.maps] == [(2, 8, 8), (16, 8, 8), (16, 8, 8), (1, 8, 8)]
    # the maps are the network's function: the last one is its output over the grid
    xs, ys = np.linspace(-2, 3, 8), np.linspace(2, -1.5, 8)
    gx, gy = np.meshgrid(xs, ys)
    direct = model([gx.ravel(), gy.ravel()]).data.reshape(8, 8)
    assert np.allclose(net.maps[-1][0], direct)
    snap = SimpleNamespace(layer_sizes=(2, 16, 16, 1),
                           param_names=[n for n, _ in model.named_parameters()],
                           params=model.get_flat(),
                           grads=np.array([p.grad for p in model.parameters()]),
                           config=SimpleNamespace(activation="relu"), graph=g)
    from_snap = graph.network_level(snap, sample=5)
    for mine, theirs in ((from_snap.weights, net.weights),
                         (from_snap.weight_grads, net.weight_grads),
                         (from_snap.biases, net.biases), (from_snap.bias_grads, net.bias_grads)):
        for a, b in zip(mine, theirs):
            assert np.array_equal(a, b)
    assert np.array_equal(from_snap.units[1], net.units[1])


def test_network_level_places_each_networks_parameters() -> None:
    """Where each parameter goes is worked out once per network: another network's
    snapshot (other names, other shapes), then the first again, each get their own."""
    def snapshot_of(hidden: list[int]) -> SimpleNamespace:
        model = MLP(2, [*hidden, 1])
        names = tuple(n for n, _ in model.named_parameters())
        return SimpleNamespace(layer_sizes=(2, *hidden, 1), param_names=names,
                               params=np.arange(len(names), dtype=np.float64),
                               grads=-np.arange(len(names), dtype=np.float64),
                               config=SimpleNamespace(activation="relu"), graph=None)

    first, second = snapshot_of([3]), snapshot_of([4, 2])
    for snap in (first, second, first, SimpleNamespace(**{**vars(first),
                                                           "param_names": tuple(
                                                               first.param_names)})):
        net = graph.network_level(snap)
        for k, name in enumerate(snap.param_names):
            layer, unit, src = parse_parameter_name(name)
            weight = net.biases[layer][unit] if src is None else net.weights[layer][unit, src]
            grad = (net.bias_grads[layer][unit] if src is None
                    else net.weight_grads[layer][unit, src])
            assert (weight, grad) == (k, -k), name


def test_gradient_bins_sign_and_magnitude() -> None:
    bins = graph.gradient_bins(np.array([0.0, 1.0, -1.0, 0.1, -1e-9, np.nan]))
    assert bins[0] == 0 and bins[1] == 6 and bins[2] == -6
    assert 0 < bins[3] < 6 and bins[4] == -1 and bins[5] == 0
    assert list(graph.gradient_bins(np.zeros(3))) == [0, 0, 0]


# --- DOT ----------------------------------------------------------------------------------
def test_dot_export_parses_back_to_the_same_counts() -> None:
    model, loss = demo()
    g = graph.trace(loss, model)
    text = graph.to_dot(g, sample=3)
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert graph.parse_dot_counts(text) == (len(g), len(g.edges))
    # and independently of the helper
    assert len(re.findall(r"^\s*n\d+ \[label=", text, re.MULTILINE)) == len(g)
    assert len(re.findall(r"->", text)) == len(g.edges)
    value = fmt(g.values(3)[g.root])
    assert f'n{g.root} [label="#{g.root} +\\ndata {value}\\ngrad 1"' in text


def test_dot_escapes_labels() -> None:
    a = Value(1.0, label='say "hi" \\ there')
    g = graph.trace(a * 2)
    text = graph.to_dot(g)
    assert 'say \\"hi\\" \\\\ there' in text
    assert graph.parse_dot_counts(text) == (3, 2)


def test_local_derivative_of_sin_is_the_cosine_the_engine_passed_back() -> None:
    x = Value(np.array([0.3, -1.2, 2.5]))
    out = x.sin()
    g = graph.trace(out.sum())
    out.sum().backward(retain_graph=True)
    node = g.node_of(out)
    assert node is not None
    np.testing.assert_allclose(graph.local_derivative(g, node, 0), x.grad)
    assert "local derivative: ∂sin(a)/∂a = cos(a)" in graph.details(g, node)
