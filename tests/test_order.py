"""The topological order sorted once per shape (issue 34, `gradbox.autograd.order`).

A kept order must give bit for bit the gradients of a fresh sort, for any network,
features, loss, penalties and batch size; a change of any of those is a new shape,
sorted afresh.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd import engine, features, losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP
from gradbox.autograd.order import OrderCache

LOSSES = ["hinge", "mse", "logistic", "softmax", "regression mse", "mae", "huber"]


def build(hidden: Sequence[int], activation: str, names: Sequence[str], loss: str,
          l2: float, l1: float, points: np.ndarray, truth: np.ndarray, seed: int
          ) -> tuple[Value, list[Value], list[Value]]:
    """A training step's loss, as the Trainer builds it, and everything its making made."""
    softmax = loss == "softmax"
    model = MLP(len(names), [*hidden, 3 if softmax else 1], activation=activation,
                seed=seed)
    params = model.parameters()
    with engine.recording() as made:
        out = model(features.input_nodes(points, names))
        if loss.split()[-1] in ("mae", "huber") or loss.startswith("regression"):
            total = losses.compute_regression_loss(loss.split()[-1], out, truth)
        else:
            total = losses.compute_loss(loss, out, truth)
        if l2:
            total = total + l2 * losses.l2_penalty(params)
        if l1:
            total = total + l1 * losses.l1_penalty(params)
    return total, params, made


def grads(params: Sequence[Value]) -> np.ndarray:
    return np.array([p.grad for p in params])


shapes = st.fixed_dictionaries({
    "hidden": st.lists(st.integers(1, 5), min_size=0, max_size=3),
    "activation": st.sampled_from(["relu", "tanh", "sigmoid", "linear"]),
    "names": st.lists(st.sampled_from(features.NAMES), min_size=1, max_size=4, unique=True
                      ).map(features.canonical),
    "loss": st.sampled_from(LOSSES),
    "l2": st.sampled_from([0.0, 1e-4]),
    "l1": st.sampled_from([0.0, 1e-3]),
    "batch": st.integers(1, 12),
})


def data(shape: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    points = rng.uniform(-3, 3, (shape["batch"], 2))
    if shape["loss"] == "softmax":
        truth = rng.integers(0, 3, shape["batch"])
    elif shape["loss"] in ("regression mse", "mae", "huber"):
        truth = rng.normal(size=shape["batch"])
    else:
        truth = rng.integers(0, 2, shape["batch"])
    return points, truth


@settings(max_examples=60, deadline=None)
@given(shape=shapes, seeds=st.lists(st.integers(0, 2**31), min_size=2, max_size=4))
def test_a_kept_order_gives_the_gradients_of_a_fresh_sort_bit_for_bit(
        shape: dict, seeds: list[int]) -> None:
    cache = OrderCache()
    key = tuple(map(str, shape.values()))
    for seed in seeds:  # new weights and points each step, the same shape
        points, truth = data(shape, seed)
        args = (shape["hidden"], shape["activation"], shape["names"], shape["loss"],
                shape["l2"], shape["l1"], points, truth, seed)
        root, params, made = build(*args)
        root.backward(order=cache.order(key, root, made))
        fresh_root, fresh_params, _ = build(*args)
        fresh_root.backward()
        assert np.array_equal(grads(params), grads(fresh_params), equal_nan=True)
    assert cache.sorts == 1  # sorted for the first step only


BASE = {"hidden": [3, 2], "activation": "tanh", "names": ("x1", "x2"), "loss": "hinge",
        "l2": 1e-4, "l1": 0.0, "batch": 6}
CHANGES = {
    "network": {"hidden": [3, 3]},
    "activation": {"activation": "relu"},
    "features": {"names": ("x1", "x2", "x1*x2")},
    "loss": {"loss": "logistic"},
    "penalties": {"l1": 1e-3},
    "batch size": {"batch": 7},
}


def test_each_kind_of_change_is_sorted_afresh() -> None:
    """A change of shape under a new key is sorted again, and its gradients are right."""
    cache = OrderCache()
    shape = dict(BASE)
    for kind, change in [("start", {}), *CHANGES.items()]:
        shape = {**shape, **change}
        points, truth = data(shape, 1)
        args = (shape["hidden"], shape["activation"], shape["names"], shape["loss"],
                shape["l2"], shape["l1"], points, truth, 1)
        sorts = cache.sorts
        root, params, made = build(*args)
        root.backward(order=cache.order(kind, root, made))
        assert cache.sorts == sorts + 1, kind
        fresh_root, fresh_params, _ = build(*args)
        fresh_root.backward()
        assert np.array_equal(grads(params), grads(fresh_params)), kind


def test_a_kept_order_is_not_used_for_another_shape_under_the_same_key() -> None:
    """A key that missed a change (a bug) still finds out when the making differs."""
    cache = OrderCache()
    for change in [{}, *CHANGES.values()]:
        shape = {**BASE, **change}
        points, truth = data(shape, 2)
        args = (shape["hidden"], shape["activation"], shape["names"], shape["loss"],
                shape["l2"], shape["l1"], points, truth, 2)
        root, params, made = build(*args)
        root.backward(order=cache.order("one key for all", root, made))
        fresh_root, fresh_params, _ = build(*args)
        fresh_root.backward()
        # Another making is sorted again; a making of the same count (tanh for relu, a
        # batch of another size) is the same shape: its kept order is still its own.
        assert np.array_equal(grads(params), grads(fresh_params)), change


def test_invalidate_forgets_the_order() -> None:
    cache = OrderCache()
    points, truth = data(BASE, 0)
    args = (BASE["hidden"], BASE["activation"], BASE["names"], BASE["loss"], BASE["l2"],
            BASE["l1"], points, truth, 0)
    for _ in range(2):
        root, _, made = build(*args)
        root.backward(order=cache.order("k", root, made))
    assert cache.sorts == 1
    cache.invalidate()
    root, _, made = build(*args)
    root.backward(order=cache.order("k", root, made))
    assert cache.sorts == 2


def test_recording_sees_only_its_own_thread() -> None:
    import threading

    other: list[Value] = []
    with engine.recording() as made:
        a = Value(1.0)
        thread = threading.Thread(target=lambda: other.append(Value(2.0) * 3))
        thread.start()
        thread.join()
        b = a * 2
    assert made == [a, made[1], b] and len(made) == 3  # a, the constant 2, the product
    assert other and all(v is not other[0] for v in made)


# --- in the Trainer ------------------------------------------------------------------------
from gradbox.training import datasets, network  # noqa: E402
from gradbox.training.config import TrainingConfig  # noqa: E402
from gradbox.training.trainer import Trainer  # noqa: E402

SMALL = TrainingConfig(n_samples=30, hidden=(4, 3), test_ratio=0.2, l2=1e-4)
TRAINER_CHANGES = {
    "network": {"hidden": (4, 4)},
    "activation": {"activation": "relu"},
    "features": {"features": ("x1", "x2", "x1*x2")},
    "loss": {"loss": "logistic"},
    "penalties": {"l1": 1e-3},
    "no L2": {"l2": 0.0},
    "batch size": {"batch_size": 8},
    "regression": {"dataset": "sine", "loss": "mse"},
    "classes": {"dataset": "blobs", "classes": 3},
}


def test_the_trainers_shape_key_changes_with_each_kind_of_change() -> None:
    batch = np.arange(24)
    base = network.shape_key(SMALL, batch)
    keys = {kind: network.shape_key(SMALL.with_changes(**change), batch)
            for kind, change in TRAINER_CHANGES.items()}
    keys["batch size"] = network.shape_key(SMALL, np.arange(8))  # what a batch holds
    assert all(key != base for key in keys.values())
    assert len(set(keys.values())) == len(keys)
    assert network.shape_key(SMALL.with_changes(lr=0.3, seed=5), batch) == base


def fresh_sorts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every step sorted afresh, as before issue 34."""
    keep = OrderCache.order

    def order(self, key, root, made):  # type: ignore[no-untyped-def]
        self.invalidate()
        return keep(self, key, root, made)
    monkeypatch.setattr(OrderCache, "order", order)


def steps(trainer: Trainer, count: int) -> list[np.ndarray]:
    out = []
    for _ in range(count):
        assert trainer.step() is not None, trainer.stop_reason
        out.append(trainer.state().current.run.params)
    return out


def test_a_trainer_sorts_once_per_shape_and_again_when_it_changes(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    trainer = Trainer(SMALL)  # (its first construction measures the engine: it sorts)
    trainer.set_ghost(True)  # the ghost's graph has the run's shape: the same order
    sorts = []
    topological_order = Value.topological_order
    monkeypatch.setattr(Value, "topological_order",
                        lambda self: sorts.append(1) or topological_order(self))
    steps(trainer, 4)
    assert len(sorts) == 1
    trainer.rewind(2)  # a replay too
    steps(trainer, 1)
    assert len(sorts) == 1
    more = datasets.make("moons", 40, 0.1, seed=3, test_ratio=0.2)
    trainer.replace_dataset(more)  # more points: a bigger batch, sorted again
    steps(trainer, 2)
    assert len(sorts) == 2


def test_the_trainer_gives_a_fresh_sorts_numbers_for_each_kind_of_change(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for kind, change in [("start", {}), *TRAINER_CHANGES.items()]:
        config = SMALL.with_changes(**change)
        kept = Trainer(config)
        kept.set_forget_zero_grad(kind == "penalties")  # gradients held across steps too
        kept_steps = steps(kept, 3)
        with monkeypatch.context() as patch:
            fresh_sorts(patch)
            fresh = Trainer(config)
            fresh.set_forget_zero_grad(kind == "penalties")
            fresh_steps = steps(fresh, 3)
        for a, b in zip(kept_steps, fresh_steps):
            assert np.array_equal(a, b), kind
