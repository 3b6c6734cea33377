"""The MLP library: structure, parameters, and the array engine against per-sample graphs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import (
    MLP,
    Layer,
    Neuron,
    numpy_layers,
    parameter_name,
    parameter_names,
    parse_parameter_name,
    unflatten,
)
from gradbox.training import datasets


def numpy_forward(model: MLP, points: np.ndarray) -> np.ndarray:
    """The same network written with matrices, from the model's flat weights."""
    flat = model.get_flat()
    h = points.T
    start = 0
    for i, (nin, nout) in enumerate(zip(model.layer_sizes(), model.layer_sizes()[1:])):
        # parameters() order: per neuron its weights, then its bias.
        block = flat[start:start + nout * (nin + 1)].reshape(nout, nin + 1)
        start += nout * (nin + 1)
        h = block[:, :nin] @ h + block[:, nin:]
        if i < len(model.layers) - 1:
            h = np.maximum(h, 0.0)
    return h


# --- construction ----------------------------------------------------------------------
@pytest.mark.parametrize(("nin", "nouts"), [(2, [0]), (2, []), (0, [1]), (2, [4, 0, 1]),
                                           (2, [-1])])
def test_layer_sizes_below_one_are_a_value_error(nin: int, nouts: list[int]) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        MLP(nin, nouts)


def test_an_unknown_activation_is_a_value_error_listing_the_choices() -> None:
    with pytest.raises(ValueError, match="relu"):
        MLP(2, [3, 1], activation="swish")


def test_parameters_are_listed_layer_by_layer_neuron_by_neuron_weights_then_bias() -> None:
    model = MLP(2, [16, 16, 1], seed=0)
    params = model.parameters()
    assert len(params) == (2 + 1) * 16 + (16 + 1) * 16 + (16 + 1) * 1 == 337
    expected = [p for layer in model.layers for n in layer.neurons for p in [*n.w, n.b]]
    assert all(p is q for p, q in zip(params, expected, strict=True))
    names = [name for name, _ in model.named_parameters()]
    assert names[:3] == ["layers.0.neurons.0.w.0", "layers.0.neurons.0.w.1",
                         "layers.0.neurons.0.b"]
    assert names[-1] == "layers.2.neurons.0.b"
    assert len(set(names)) == len(names)


def test_weights_start_uniform_in_minus_one_one_and_biases_at_zero() -> None:
    model = MLP(2, [8, 1], seed=3)
    weights = [w.data for layer in model.layers for n in layer.neurons for w in n.w]
    biases = [n.b.data for layer in model.layers for n in layer.neurons]
    assert all(-1 <= w <= 1 for w in weights)
    assert biases == [0.0] * 9


def test_the_same_seed_gives_the_same_network_and_another_seed_another() -> None:
    np.testing.assert_array_equal(MLP(2, [4, 1], seed=7).get_flat(),
                                  MLP(2, [4, 1], seed=7).get_flat())
    assert not np.array_equal(MLP(2, [4, 1], seed=7).get_flat(),
                              MLP(2, [4, 1], seed=8).get_flat())


def test_layer_sizes_and_repr_describe_the_structure() -> None:
    model = MLP(2, [3, 1])
    assert model.layer_sizes() == [2, 3, 1]
    assert repr(model) == ("MLP of [Layer of [ReluNeuron(2), ReluNeuron(2), ReluNeuron(2)], "
                           "Layer of [LinearNeuron(3)]]")


def test_flat_parameters_round_trip_and_a_wrong_length_is_refused() -> None:
    model = MLP(2, [3, 1], seed=0)
    values = np.arange(len(model.parameters()), dtype=np.float64)
    model.set_flat(values)
    np.testing.assert_array_equal(model.get_flat(), values)
    assert all(type(p.data) is float for p in model.parameters())
    with pytest.raises(ValueError, match=f"expected {len(values)}"):
        model.set_flat(values[:-1])


def test_zero_grad_clears_every_parameter_gradient() -> None:
    model = MLP(2, [3, 1], seed=0)
    model([0.5, -0.5]).backward()
    assert any(p.grad != 0.0 for p in model.parameters())
    model.zero_grad()
    assert all(p.grad == 0.0 for p in model.parameters())


def test_neuron_and_layer_collect_their_own_parameters() -> None:
    neuron = Neuron(3, rng=np.random.default_rng(0))
    assert neuron.parameters() == [*neuron.w, neuron.b]
    layer = Layer(3, 2, rng=np.random.default_rng(0))
    assert len(layer.parameters()) == 8


# --- forward --------------------------------------------------------------------------------
def test_a_network_takes_exactly_its_number_of_inputs() -> None:
    with pytest.raises(ValueError, match="takes 2 inputs, got 3"):
        MLP(2, [3, 1])([1.0, 2.0, 3.0])


def test_several_outputs_come_back_as_a_list() -> None:
    out = MLP(2, [4, 3], seed=0)([0.1, 0.2])
    assert isinstance(out, list)
    assert len(out) == 3


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 1000), n=st.integers(1, 20))
def test_the_array_forward_equals_the_same_network_written_with_matrices(seed: int,
                                                                          n: int) -> None:
    model = MLP(2, [5, 4, 1], seed=seed)
    points = np.random.default_rng(seed).normal(size=(n, 2))
    score = model([points[:, 0], points[:, 1]])
    np.testing.assert_allclose(score.data, numpy_forward(model, points)[0], rtol=1e-12,
                               atol=1e-12)


def test_inputs_are_wrapped_once_so_first_layer_neurons_share_the_leaves() -> None:
    model = MLP(2, [3, 1], seed=0)
    out = model([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    inputs = {id(n) for n in out.topological_order() if n.label in ("x0", "x1")}
    assert len(inputs) == 2


# --- the array engine against micrograd's way: one float graph per sample ------------------
def test_micrograd_demo_loss_and_gradients_match_per_sample_graphs_to_1e_12() -> None:
    data = datasets.make("moons", 100, 0.1, seed=0)
    points, labels = data.points, data.labels
    model = MLP(2, [16, 16, 1], seed=1)
    params = model.parameters()

    # gradbox: one graph whose values are arrays over the 100 samples.
    score = model([points[:, 0], points[:, 1]])
    loss = losses.hinge(score, labels) + 1e-4 * losses.l2_penalty(params)
    model.zero_grad()
    loss.backward()
    batched_loss, batched_grads = loss.data, np.array([p.grad for p in params])

    # micrograd's demo: one graph per sample, combined with sum(...) * (1/n).
    model.zero_grad()
    y = losses.signed(labels)
    per_sample = [(1 + -float(yi) * model([Value(float(a)), Value(float(b))])).relu()
                  for (a, b), yi in zip(points, y)]
    data_loss = sum(per_sample) * (1.0 / len(per_sample))
    total = data_loss + 1e-4 * sum(p * p for p in params)
    total.backward()
    float_grads = np.array([p.grad for p in params])

    assert type(batched_loss) is float
    assert abs(batched_loss - total.data) < 1e-12
    assert np.max(np.abs(batched_grads - float_grads)) < 1e-12
    assert np.max(np.abs(float_grads)) > 1e-3  # the comparison is not between zeros
    # The array graph is the graph of one sample: about 1/100 of the float graphs' size.
    assert len(loss.topological_order()) * 30 < len(total.topological_order())


@settings(max_examples=30, deadline=None)
@given(activation=st.sampled_from(["relu", "tanh", "sigmoid", "linear"]),
       hidden=st.lists(st.integers(1, 6), min_size=0, max_size=3),
       outputs=st.integers(1, 3), seed=st.integers(0, 1000))
def test_the_boundarys_numpy_forward_equals_the_engine(activation: str, hidden: list[int],
                                                       outputs: int, seed: int) -> None:
    """The decision boundary is drawn by gradbox.autograd.nn.numpy_forward; it must be the engine's
    network, number for number."""
    from gradbox.autograd.nn import numpy_forward as fast_forward

    model = MLP(2, [*hidden, outputs], activation=activation, seed=seed)
    points = np.random.default_rng(seed).normal(scale=2.0, size=(40, 2))
    out = model([points[:, 0], points[:, 1]])
    engine = np.stack([o.data for o in (out if isinstance(out, list) else [out])], axis=1)
    fast = fast_forward(model.get_flat(), model.layer_sizes(), activation, points)
    np.testing.assert_allclose(fast, engine, rtol=1e-12, atol=1e-12)


# --- parameter names: one place builds and reads them ---------------------------------
def test_parameter_names_parse_back() -> None:
    assert parse_parameter_name("layers.1.neurons.12.w.3") == (1, 12, 3)
    assert parse_parameter_name("layers.0.neurons.2.b") == (0, 2, None)
    assert parse_parameter_name("x0") is None
    assert parse_parameter_name("layers.0.neurons.2.b.extra") is None
    for name in parameter_names([3, 4, 2]):
        assert parameter_name(*parse_parameter_name(name)) == name


def test_model_names_are_the_built_names() -> None:
    model = MLP(3, [4, 2], seed=0)
    assert [n for n, _ in model.named_parameters()] == parameter_names([3, 4, 2])
    # PyTorch's order: each neuron's weights, then its bias
    assert model.named_parameters()[3][0] == "layers.0.neurons.0.b"


def test_numpy_layers_match_the_engine() -> None:
    model = MLP(2, [5, 3, 1], activation="tanh", seed=1)
    points = np.random.default_rng(0).normal(size=(7, 2))
    weights, biases = unflatten(model.get_flat(), model.layer_sizes())
    outs = numpy_layers(weights, biases, ["tanh", "tanh", "linear"], points)
    assert [o.shape for o in outs] == [(7, 2), (7, 5), (7, 3), (7, 1)]
    engine = model([points[:, 0], points[:, 1]])
    np.testing.assert_allclose(outs[-1][:, 0], engine.data, rtol=1e-12)
