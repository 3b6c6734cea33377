"""Input features: engine nodes of the coordinates, the same numbers everywhere they are used."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox import graph
from gradbox.autograd import features
from gradbox.autograd.engine import Value
from gradbox.autograd.gradcheck import gradient_check
from gradbox.autograd.nn import MLP, numpy_forward
from gradbox.files.sessions import load_session, save_session
from gradbox.training.config import ConfigError, TrainingConfig
from gradbox.training.trainer import Trainer

POINTS = np.array([[0.5, -1.5], [2.0, 0.25], [-3.0, 4.0], [0.0, -0.7]])
EXPECTED = {
    "x1": POINTS[:, 0], "x2": POINTS[:, 1], "x1^2": POINTS[:, 0] ** 2,
    "x2^2": POINTS[:, 1] ** 2, "x1*x2": POINTS[:, 0] * POINTS[:, 1],
    "sin x1": np.sin(POINTS[:, 0]), "sin x2": np.sin(POINTS[:, 1]),
}


def test_each_feature_is_the_formula_it_is_named_after() -> None:
    assert set(EXPECTED) == set(features.NAMES)
    table = features.transform(POINTS, features.NAMES)
    for j, name in enumerate(features.NAMES):
        np.testing.assert_allclose(table[:, j], EXPECTED[name], rtol=1e-15, atol=0)


def test_features_are_engine_nodes_of_two_coordinate_leaves() -> None:
    nodes = features.input_nodes(POINTS, features.NAMES)
    leaves = {id(n) for n in nodes[0].topological_order() + nodes[1].topological_order()}
    assert [n.label for n in nodes] == features.labels(features.NAMES)
    assert [n.op for n in nodes] == ["", "", "*", "*", "*", "sin", "sin"]
    for node in nodes[2:]:  # every computed feature reaches back to the coordinate leaves
        assert {id(leaf) for leaf in node.topological_order() if not leaf.inputs} <= leaves


def test_the_gradient_reaches_the_coordinates_through_each_feature() -> None:
    """d(loss)/d(x₁) per sample, through x₁², x₁x₂ and sin x₁, against central differences."""
    model = MLP(len(features.NAMES), [3, 1], activation="tanh", seed=4)

    def loss_of(points: np.ndarray) -> float:
        out = numpy_forward(model.get_flat(), model.layer_sizes(), "tanh",
                            features.transform(points, features.NAMES))
        return float(np.sum(out ** 2))

    nodes = features.input_nodes(POINTS, features.NAMES)
    x1, x2 = nodes[0], nodes[1]
    (model(nodes) ** 2).sum().backward()
    h = 1e-6
    for s in range(len(POINTS)):
        for column, leaf in ((0, x1), (1, x2)):
            up, down = POINTS.copy(), POINTS.copy()
            up[s, column] += h
            down[s, column] -= h
            numeric = (loss_of(up) - loss_of(down)) / (2 * h)
            assert leaf.grad[s] == pytest.approx(numeric, rel=1e-6, abs=1e-8)


def test_a_config_keeps_features_in_canonical_order_and_refuses_unknown_ones() -> None:
    c = TrainingConfig(features=("sin x1", "x1", "x1"))
    assert c.features == ("x1", "sin x1") and c.layer_sizes[0] == 2
    with pytest.raises(ConfigError, match="unknown feature 'cos x1'"):
        TrainingConfig(features=("cos x1",))
    with pytest.raises(ConfigError, match="at least one input feature"):
        TrainingConfig(features=())


def test_a_one_dimensional_dataset_keeps_only_the_features_of_x1() -> None:
    c = TrainingConfig(dataset="sine", features=("x1", "x2", "x1*x2", "sin x1"))
    assert c.effective_features == ("x1", "sin x1") and c.layer_sizes[0] == 2
    assert TrainingConfig(dataset="sine", features=("x2",)).effective_features == ("x1",)


def test_the_trainer_graph_shows_the_features_and_the_snapshot_predicts_as_the_engine() -> None:
    config = TrainingConfig(dataset="circle", features=("x1", "x2", "x1^2", "x2^2", "sin x2"),
                            hidden=(3,), n_samples=30)
    trainer = Trainer(config)
    trainer.capture_graph = True
    trainer.substep()  # forward
    g = trainer.last_graph
    assert g is not None
    shown = {g.labels[i]: g.ops[i] for i in range(len(g)) if g.labels[i]}
    assert shown == {"x₁": "", "x₂": "", "x₁²": "*", "x₂²": "*", "sin x₂": "sin"}
    used = trainer.snapshot().params  # the weights this step's forward pass used
    trainer.step()
    snapshot = trainer.snapshot()
    batch = trainer.last_batch
    engine = trainer.last_output.data  # the forward pass of the step just taken
    before = numpy_forward(used, snapshot.layer_sizes,
                           config.activation, config.inputs(snapshot.points[batch]))
    np.testing.assert_allclose(before[:, 0], engine, rtol=1e-12, atol=1e-12)
    # the boundary's numbers: the snapshot's weights through the same features
    model = config.make_model(seed=0)
    model.set_flat(snapshot.params)
    points = snapshot.points[:10]
    engine_now = model(features.input_nodes(points, config.effective_features)).data
    np.testing.assert_allclose(snapshot.predict(points)[:, 0], engine_now, rtol=1e-12,
                               atol=1e-12)


def test_the_network_view_maps_the_inputs_as_features_over_the_plane() -> None:
    trainer = Trainer(TrainingConfig(features=("x1^2", "sin x2"), hidden=(2,)))
    net = graph.network_level(trainer.snapshot(), extent=(-2.0, 2.0, -2.0, 2.0), resolution=5)
    assert net.maps is not None
    xs = np.linspace(-2, 2, 5)
    np.testing.assert_allclose(net.maps[0][0], np.tile(xs ** 2, (5, 1)))
    np.testing.assert_allclose(net.maps[0][1], np.tile(np.sin(xs[::-1])[:, None], (1, 5)))


def test_features_survive_save_and_load_and_training_continues_bit_for_bit(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = TrainingConfig(dataset="xor", features=("x1", "x2", "x1*x2"), hidden=(4,))
    trainer = Trainer(config)
    trainer.run_steps(5)
    save_session(trainer, tmp_path / "s.json")
    loaded = load_session(tmp_path / "s.json")
    assert loaded.config == trainer.config and loaded.config.features == ("x1", "x2", "x1*x2")
    trainer.run_steps(3)
    loaded.run_steps(3)
    assert [r.loss for r in loaded.history] == [r.loss for r in trainer.history]


# --- properties, on random points ------------------------------------------------------------
# The seven features written directly in numpy, apart from the engine's expressions.
FORMULAS = {
    "x1": lambda x1, x2: x1, "x2": lambda x1, x2: x2,
    "x1^2": lambda x1, x2: x1 ** 2, "x2^2": lambda x1, x2: x2 ** 2,
    "x1*x2": lambda x1, x2: x1 * x2,
    "sin x1": lambda x1, x2: np.sin(x1), "sin x2": lambda x1, x2: np.sin(x2),
}
coordinate = st.floats(-20.0, 20.0, allow_nan=False, allow_infinity=False)
point_sets = st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=12).map(
    lambda rows: np.array(rows, dtype=np.float64))


@settings(max_examples=60, deadline=None)
@given(points=point_sets, names=st.sets(st.sampled_from(features.NAMES), min_size=1))
def test_the_engines_features_are_the_numpy_formulas_on_any_points(
        points: np.ndarray, names: set[str]) -> None:
    assert set(FORMULAS) == set(features.NAMES)
    chosen = features.canonical(names)
    nodes = features.input_nodes(points, chosen)
    table = features.transform(points, chosen)
    assert table.shape == (len(points), len(chosen))
    for j, (name, node) in enumerate(zip(chosen, nodes)):
        expected = FORMULAS[name](points[:, 0], points[:, 1])
        np.testing.assert_allclose(np.broadcast_to(node.data, expected.shape), expected,
                                   rtol=1e-15, atol=0, err_msg=name)
        np.testing.assert_allclose(table[:, j], expected, rtol=1e-15, atol=0, err_msg=name)


@settings(max_examples=60, deadline=None)
@given(x1=coordinate, x2=coordinate, w=st.floats(-2.0, 2.0), name=st.sampled_from(features.NAMES))
def test_the_gradient_through_each_feature_agrees_with_finite_differences(
        x1: float, x2: float, w: float, name: str) -> None:
    """d/dx₁ and d/dx₂ of a loss downstream of one feature, as in test_gradcheck."""
    a, b = Value(x1, label=features.X1_LABEL), Value(x2, label=features.X2_LABEL)

    def build() -> Value:
        return (features.FEATURES[name].build(a, b) * w - 0.5) ** 2

    check = gradient_check(build, [a, b], ["x1", "x2"])
    assert check.passed(1e-6), (name, check.analytic, check.numeric)
    # The engine's gradient is also the formula's own derivative, written out.
    f = FORMULAS[name](x1, x2)
    df = {"x1": (1.0, 0.0), "x2": (0.0, 1.0), "x1^2": (2 * x1, 0.0), "x2^2": (0.0, 2 * x2),
          "x1*x2": (x2, x1), "sin x1": (np.cos(x1), 0.0), "sin x2": (0.0, np.cos(x2))}[name]
    outer = 2 * (f * w - 0.5) * w
    np.testing.assert_allclose(check.analytic, [outer * df[0], outer * df[1]],
                               rtol=1e-12, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(points=point_sets, seed=st.integers(0, 1000))
def test_per_sample_gradients_through_all_features_agree_with_finite_differences(
        points: np.ndarray, seed: int) -> None:
    """A batch as training builds it (one node per feature, holding every sample): each
    sample's d(loss)/d(coordinate) against central differences of the engine's forward."""
    model = MLP(len(features.NAMES), [3, 1], activation="tanh", seed=seed)

    def loss_of(p: np.ndarray) -> float:
        return float((model(features.input_nodes(p, features.NAMES)) ** 2).sum().data)

    nodes = features.input_nodes(points, features.NAMES)
    (model(nodes) ** 2).sum().backward()
    h = 1e-6
    for column, leaf in ((0, nodes[0]), (1, nodes[1])):
        grads = np.broadcast_to(leaf.grad, (len(points),))
        for s in range(len(points)):
            up, down = points.copy(), points.copy()
            up[s, column] += h
            down[s, column] -= h
            numeric = (loss_of(up) - loss_of(down)) / (2 * h)
            assert grads[s] == pytest.approx(numeric, rel=1e-5, abs=1e-6)
