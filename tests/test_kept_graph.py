"""A step's graph kept and computed again on new weights (issue 34, `KeptGraph`).

For a step on the same points with the same settings, the Trainer keeps last step's
nodes and calls each op's `_forward` again in the kept order instead of building
thousands of new nodes. Every node's value and gradient must be what a new graph's
would be, bit for bit; anything else builds anew.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox import graph
from gradbox.autograd import engine, features
from gradbox.autograd.engine import Value
from gradbox.autograd.order import OrderCache
from gradbox.training import datasets, network
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

CONFIGS = st.fixed_dictionaries({
    "hidden": st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    "activation": st.sampled_from(["relu", "tanh", "sigmoid", "linear"]),
    "features": st.lists(st.sampled_from(features.NAMES), min_size=1, max_size=3,
                         unique=True).map(features.canonical),
    "task": st.sampled_from([("moons", "hinge"), ("moons", "mse"), ("xor", "logistic"),
                             ("blobs", "softmax"), ("sine", "mae"), ("sine", "huber")]),
    "l2": st.sampled_from([0.0, 1e-3]),
    "l1": st.sampled_from([0.0, 1e-2]),
    "n_samples": st.integers(4, 30),
})


def numbers(root: Value) -> tuple[list, list]:
    """Every node's data and gradient, in the graph's own order."""
    nodes = graph.trace(root)
    return ([nodes.data(i) for i in range(len(nodes))],
            [nodes.grad(i) for i in range(len(nodes))])


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b))


@settings(max_examples=40, deadline=None)
@given(fields=CONFIGS, seed=st.integers(0, 1000), steps=st.integers(2, 4))
def test_a_kept_graph_holds_a_new_graphs_numbers_bit_for_bit(fields: dict, seed: int,
                                                            steps: int) -> None:
    dataset, loss = fields.pop("task")
    config = TrainingConfig(test_ratio=0.0, seed=seed, dataset=dataset, loss=loss,
                            classes=3 if dataset == "blobs" else 2, **fields)
    trainer = Trainer(config)
    data = trainer.dataset
    batch = trainer.batch_indices(0)
    kept_run = network.build(config, trainer.initial_params)
    fresh_run = network.build(config, trainer.initial_params)
    orders = OrderCache()
    rng = np.random.default_rng(seed)
    first = None
    for step in range(steps):
        root, _, order = network.forward(config, data, kept_run, batch, orders)
        first = first or root
        # the same nodes from the second step on; softmax's graph holds a constant read
        # off the scores (its shift): built anew
        assert step == 0 or (root is first) == (loss != "softmax")
        kept_run.optimizer.zero_grad()
        network.backward(kept_run, root, order)
        new_root, _, _ = network.forward(config, data, fresh_run, batch)
        fresh_run.optimizer.zero_grad()
        new_root.backward()
        assert same(numbers(root)[0], numbers(new_root)[0]), step
        assert same(numbers(root)[1], numbers(new_root)[1]), step
        # new weights for the next step, the same in both
        weights = kept_run.values() + rng.normal(0, 0.3, len(kept_run.params))
        kept_run.set_values(weights)
        fresh_run.set_values(weights)


def test_a_trainer_keeps_its_graph_while_the_points_and_settings_stay() -> None:
    trainer = Trainer(TrainingConfig(n_samples=30, hidden=(4, 3), l2=1e-4))
    trainer.step()
    root = trainer.last_root
    trainer.step()
    assert trainer.last_root is root  # kept
    trainer.set_lr(0.2)  # the rate is not in the graph
    trainer.step()
    assert trainer.last_root is root
    trainer.replace_dataset(datasets.make("moons", 30, 0.2, seed=9))  # new points
    trainer.step()
    assert trainer.last_root is not root
    root = trainer.last_root
    trainer.rewind(1)  # a rewind builds again (a step cut short may leave it half done)
    trainer.step()
    assert trainer.last_root is not root


def test_mini_batches_build_a_graph_per_step() -> None:
    trainer = Trainer(TrainingConfig(n_samples=40, hidden=(3,), batch_size=8, test_ratio=0.0))
    trainer.step()
    root = trainer.last_root
    trainer.step()
    assert trainer.last_root is not root  # other points: other constants (labels) in it


def test_without_a_trainer_every_forward_builds_as_before() -> None:
    """The Playground, the README's examples and `network.forward` without an order cache
    build a new graph each time, freed after backward as PyTorch frees its own."""
    config = TrainingConfig(n_samples=20, hidden=(3,))
    trainer = Trainer(config)
    run = network.build(config, trainer.initial_params)
    batch = trainer.batch_indices(0)
    a, _, order = network.forward(config, trainer.dataset, run, batch)
    b, _, _ = network.forward(config, trainer.dataset, run, batch)
    assert a is not b and order is None and run.kept is None
    x = Value(2.0)
    y = (x * x + 1).tanh()
    y.backward()
    assert x.grad == (1 - np.tanh(5.0) ** 2) * 4.0
    assert y._backward is engine._freed_backward  # (tanh saves its output)


def test_recompute_computes_each_node_again_from_its_inputs() -> None:
    a, b = Value(2.0), Value(np.array([1.0, -3.0]))
    out = ((a * b).relu() + a.exp()).mean()
    order = [n for n in out.topological_order() if n.inputs]
    out.backward(retain_graph=True)
    a.data, b.data = -1.0, np.array([0.5, 4.0])
    engine.recompute(order)
    assert all(n.grad == 0.0 for n in order)
    a2, b2 = Value(-1.0), Value(np.array([0.5, 4.0]))
    fresh = ((a2 * b2).relu() + a2.exp()).mean()
    assert out.data == fresh.data
    a.grad = b.grad = 0.0
    out.backward(order=order)
    fresh.backward()
    assert a.grad == a2.grad and np.array_equal(b.grad, b2.grad)


def test_a_step_abandoned_mid_forward_builds_its_graph_anew(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Pause abandons a step by an exception, and what the step's frames held is taken
    apart afterwards (runner.leftovers) -- mid-forward, that is the kept graph's nodes.
    The next step must not compute them again (it did: 'NoneType is not callable')."""
    from gradbox.autograd import fused
    from gradbox.runner.child import Abandoned
    from gradbox.runner.leftovers import AbandonedGraph

    config = TrainingConfig(n_samples=30, hidden=(4, 3), test_ratio=0.0)
    trainer, reference = Trainer(config), Trainer(config)
    for t in (trainer, reference):
        t.step()
        t.step()

    def halfway(order):  # type: ignore[no-untyped-def]
        for i, node in enumerate(order):
            if i == len(order) // 2:
                raise Abandoned
            node.data = node._forward()

    with monkeypatch.context() as patch:
        patch.setattr(fused, "recompute", halfway)  # the nodes between the layers
        try:
            trainer.step()
        except Abandoned as error:
            abandoned = error
    trainer.begin_rewind(trainer.step_count)()
    leftovers = AbandonedGraph(abandoned.__traceback__)
    while not leftovers.free_piece(100):  # between the training process's messages
        pass
    record, expected = trainer.step(), reference.step()
    assert record is not None and record.loss == expected.loss
    assert np.array_equal(trainer.state().current.run.params,
                          reference.state().current.run.params)
