"""A kept graph's layers computed at once (`gradbox.autograd.fused`): the same nodes and
the same numbers as the engine's node-by-node walk, to the last bit.

Bits, not values: a -0.0 where the engine has 0.0, or an array where it has a float,
fails here (np.array_equal would let both pass).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox import graph
from gradbox.autograd import features, fused
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import Neuron
from gradbox.training import network
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer


def bits(x: object) -> tuple[str, bytes]:
    if type(x) is np.ndarray:
        return "array", np.ascontiguousarray(x, dtype=np.float64).tobytes()
    return type(x).__name__, struct.pack("<d", x)


def every_number(root: Value) -> list[tuple]:
    """Each node's value and gradient, in the graph's own (traced) order, as bits."""
    nodes = graph.trace(root)
    return [(nodes.ops[i], bits(nodes.data(i)), bits(nodes.grad(i))) for i in range(len(nodes))]


CONFIGS = st.fixed_dictionaries({
    "hidden": st.lists(st.integers(1, 6), min_size=0, max_size=3).map(tuple),
    "activation": st.sampled_from(["relu", "tanh", "sigmoid", "linear"]),
    "features": st.lists(st.sampled_from(features.NAMES), min_size=1, max_size=4,
                         unique=True).map(features.canonical),
    "task": st.sampled_from([("moons", "hinge"), ("moons", "mse"), ("xor", "logistic"),
                             ("sine", "mse"), ("sine", "mae"), ("sine", "huber")]),
    "l2": st.sampled_from([0.0, 1e-3]),
    "l1": st.sampled_from([0.0, 1e-2]),
    "n_samples": st.sampled_from([2, 7, 8, 9, 31, 129, 300]),
})


@settings(max_examples=60, deadline=None)
@given(fields=CONFIGS, seed=st.integers(0, 1000), steps=st.integers(2, 4),
       skip_zero_grad=st.booleans())
def test_layers_at_once_give_the_engines_numbers_bit_for_bit(
        fields: dict, seed: int, steps: int, skip_zero_grad: bool) -> None:
    dataset, loss = fields.pop("task")
    config = TrainingConfig(test_ratio=0.0, seed=seed, dataset=dataset, loss=loss,
                            **fields)
    trainer = Trainer(config)
    data, batch = trainer.dataset, trainer.batch_indices(0)
    kept_run = network.build(config, trainer.initial_params)
    fresh_run = network.build(config, trainer.initial_params)
    orders = network.OrderCache()
    rng = np.random.default_rng(seed)
    for step in range(steps):
        root, _, order = network.forward(config, data, kept_run, batch, orders)
        new_root, _, _ = network.forward(config, data, fresh_run, batch)
        assert every_number(root) == every_number(new_root), step  # forward
        if not skip_zero_grad:  # (a forgotten zero_grad: the gradients pile up)
            kept_run.optimizer.zero_grad()
            fresh_run.optimizer.zero_grad()
        network.backward(kept_run, root, order)
        new_root.backward()
        assert every_number(root) == every_number(new_root), step
        assert [bits(p.grad) for p in kept_run.params] == [bits(p.grad)
                                                           for p in fresh_run.params]
        weights = kept_run.values() + rng.normal(0, 0.3, len(kept_run.params))
        kept_run.set_values(weights)
        fresh_run.set_values(weights)
    # Served from the kept graph, its layers ran at once -- all but the first where a
    # coordinate feeds a feature too (x₁ and x₁²: x₁'s gradient from x₁² arrives between
    # the layer's, which run node by node then: see the test below).
    plan = kept_run.kept._plan
    plain = set(config.effective_features) <= {"x1", "x2"} or config.layer_sizes[0] == 1
    assert len(plan.layers) >= len(config.layer_sizes) - (1 if plain else 2)


def test_a_second_backward_through_a_served_graph_adds_as_the_engines_does() -> None:
    config = TrainingConfig(n_samples=40, hidden=(5, 4), l2=1e-3, test_ratio=0.0)
    trainer = Trainer(config)
    kept_run = network.build(config, trainer.initial_params)
    fresh_run = network.build(config, trainer.initial_params)
    orders = network.OrderCache()
    batch = trainer.batch_indices(0)
    for _ in range(2):
        root, _, order = network.forward(config, trainer.dataset, kept_run, batch, orders)
    new_root, _, _ = network.forward(config, trainer.dataset, fresh_run, batch)
    for _ in range(2):  # the inputs hold last pass's gradients: the engine's walk
        network.backward(kept_run, root, order)
        new_root.backward(retain_graph=True)
    assert every_number(root) == every_number(new_root)


def test_numpy_sums_a_row_of_a_matrix_as_it_sums_the_row_alone() -> None:
    """What `LayerSums.backward` relies on for the weights' gradients: np.add.reduce over
    the contiguous rows of a matrix gives each row's own pairwise sum, bit for bit."""
    rng = np.random.default_rng(0)
    shapes = [(3, n) for n in range(1, 2101)] + [(r, n) for r in (1, 2, 64, 300)
                                                  for n in (1, 7, 8, 9, 127, 129, 1000)]
    for shape in shapes:
        rows = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 8, size=(shape[0], 1))
        together = np.empty(shape[0])
        np.add.reduce(rows, axis=1, out=together)  # as LayerSums writes a row of dw
        alone = [np.add.reduce(row.copy()) for row in rows]
        assert [bits(float(x)) for x in together] == [bits(float(x)) for x in alone], shape


def _graph(kind: str, x: list[Value], params: list[Value]) -> Value:
    """Small graphs of neurons (b + w·x chains) whose walk puts a layer in one place or
    another; `params`: three per neuron (w₀, w₁, b)."""
    def neuron(i: int, inputs: list[Value], activation: str = "tanh") -> Value:
        n = Neuron(2, activation, weights=[0.0, 0.0])
        n.w, n.b = params[3 * i:3 * i + 2], params[3 * i + 2]
        return n(inputs)

    if kind == "shared consumer":  # two one-neuron layers, x₀ in both, one '+' reads both
        return (neuron(0, [x[0], x[1]], "linear") + neuron(1, [x[0], x[2]], "linear")).mean()
    outs = [neuron(i, x[:2]) for i in range(3)]
    extra = x[0] * 3.0
    total = outs[0] + outs[1] + outs[2]
    return ((extra + total) if kind == "extra first" else (total + extra)).mean()


@pytest.mark.parametrize(("kind", "layers"), [("extra first", 1), ("extra last", 0),
                                              ("shared consumer", 1)])
def test_a_layer_runs_at_once_only_where_its_inputs_gradients_arrive_in_the_kept_order(
        kind: str, layers: int) -> None:
    """x₀ also feeds another node. Whether its gradient from there arrives before the
    layer's or after depends on the walk: after, the layer runs at once; before, it runs
    node by node (at once it would add x₀'s terms in another order). Of two one-neuron
    layers that both read x₀, the walk's second one adds to what the first gave x₀: it runs
    node by node. The same numbers every time."""
    rng = np.random.default_rng(3)
    start = rng.normal(size=(3, 6)), rng.normal(size=9)
    x = [Value(row.copy()) for row in start[0]]
    params = [Value(float(w)) for w in start[1]]
    root = _graph(kind, x, params)
    plan = fused.Plan(root, [n for n in root.topological_order() if n.inputs])
    assert len(plan.layers) == layers
    for p in params:
        p.data += 0.25
    plan.forward()
    plan.backward()
    fresh_x = [Value(row.copy()) for row in start[0]]
    fresh_params = [Value(float(w) + 0.25) for w in start[1]]
    fresh = _graph(kind, fresh_x, fresh_params)
    fresh.backward()
    assert every_number(root) == every_number(fresh)
    assert [bits(v.grad) for v in x + params] == [bits(v.grad)
                                                  for v in fresh_x + fresh_params]


def test_a_layer_walked_node_by_node_gives_the_same_numbers(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The way out for a neuron output that holds no array of gradients (no op of the
    engine leaves one so): the layer's nodes walked one by one, in the kept order, at the
    layer's time. Forced here for every layer, with two backward passes a step (the
    second from 0 again: the inputs x₁², x₂² are op nodes, so the plan runs it too)."""
    config = TrainingConfig(n_samples=25, hidden=(4, 3), activation="tanh", l2=1e-3,
                            features=("x1^2", "x2^2"), test_ratio=0.0)
    trainer = Trainer(config)
    kept_run = network.build(config, trainer.initial_params)
    fresh_run = network.build(config, trainer.initial_params)
    orders = network.OrderCache()
    batch = trainer.batch_indices(0)
    monkeypatch.setattr(fused.LayerSums, "backward", fused.LayerSums._node_by_node)
    for _ in range(3):
        root, _, order = network.forward(config, trainer.dataset, kept_run, batch, orders)
        new_root, _, _ = network.forward(config, trainer.dataset, fresh_run, batch)
        kept_run.optimizer.zero_grad()
        fresh_run.optimizer.zero_grad()
        for _ in range(2):
            network.backward(kept_run, root, order)
            new_root.backward(retain_graph=True)
            assert every_number(root) == every_number(new_root)
    assert len(kept_run.kept._plan.layers) == 3


def test_a_snapshot_of_the_graph_keeps_its_numbers_when_the_next_step_writes_in_place() -> None:
    trainer = Trainer(TrainingConfig(n_samples=30, hidden=(4, 3), test_ratio=0.0))
    trainer.step()
    trainer.step()
    trainer.capture_current_graph()
    shot = trainer.last_graph
    before = [bits(shot.data(i)) for i in range(len(shot))]
    trainer.step()
    assert trainer.last_root is trainer.run.kept.root  # served again: written in place
    assert [bits(shot.data(i)) for i in range(len(shot))] == before


def test_a_step_abandoned_inside_a_layer_leaves_the_graphs_nodes_to_take_apart_in_pieces(
        monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Pause abandons a step by an exception; the frames' leftovers take the graph apart
    a piece at a time (`gradbox.runner.leftovers`), reading what the frames held. A plan
    in a frame is not a thing they read: its nodes must be held by a list there too, or
    the whole kept graph is freed at once at the end (a big network's: seconds)."""
    from gradbox.runner.child import Abandoned
    from gradbox.runner.leftovers import AbandonedGraph

    config = TrainingConfig(n_samples=30, hidden=(4, 3), test_ratio=0.0)
    trainer, reference = Trainer(config), Trainer(config)
    for t in (trainer, reference):
        t.step()
        t.step()
    root = trainer.run.kept.root
    calls = []

    def second_layer_stops(self) -> None:  # type: ignore[no-untyped-def]
        calls.append(self)
        if len(calls) == 2:
            raise Abandoned

    with monkeypatch.context() as patch:
        patch.setattr(fused.LayerSums, "forward", second_layer_stops)
        try:
            trainer.step()
        except Abandoned as error:
            abandoned = error
    trainer.begin_rewind(trainer.step_count)()
    leftovers = AbandonedGraph(abandoned.__traceback__)
    del abandoned
    while not leftovers.free_piece(100):
        pass
    assert root.inputs == ()  # reached and let go of its inputs in a piece
    record, expected = trainer.step(), reference.step()
    assert record is not None and record.loss == expected.loss
