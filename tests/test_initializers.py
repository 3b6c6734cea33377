"""Weight initialization: each scheme's statistics, and the symmetry that zeros cannot break."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from gradbox.autograd.nn import INITIALIZERS, MLP, Layer, Neuron, initial_weights
from gradbox.files.sessions import load_session, save_session
from gradbox.training.config import ConfigError, TrainingConfig
from gradbox.training.trainer import Trainer

FAN_IN, FAN_OUT = 300, 200  # 60,000 draws: standard deviations within about 1 %


def _draw(init: str, scale: float) -> np.ndarray:
    return initial_weights(init, scale, FAN_IN, FAN_OUT, np.random.default_rng(7))


@pytest.mark.parametrize(("init", "scale", "bound", "std"), [
    ("uniform", 0.5, 0.5, 0.5 / math.sqrt(3)),
    ("normal", 0.2, None, 0.2),
    ("xavier", 1.0, math.sqrt(6 / (FAN_IN + FAN_OUT)), math.sqrt(2 / (FAN_IN + FAN_OUT))),
    ("xavier", 2.0, 2 * math.sqrt(6 / (FAN_IN + FAN_OUT)), 2 * math.sqrt(2 / (FAN_IN + FAN_OUT))),
    ("he", 1.0, None, math.sqrt(2 / FAN_IN)),
])
def test_random_schemes_have_their_papers_statistics(init: str, scale: float,
                                                     bound: float | None, std: float) -> None:
    w = _draw(init, scale)
    assert w.shape == (FAN_OUT, FAN_IN)
    assert abs(w.mean()) < 4 * std / math.sqrt(w.size)
    assert w.std() == pytest.approx(std, rel=0.02)
    if bound is not None:
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound


def test_constant_and_zeros_give_every_weight_the_same_value() -> None:
    assert np.all(_draw("constant", 0.3) == 0.3)
    assert np.all(_draw("zeros", 5.0) == 0.0)  # zeros ignores the scale


def test_biases_start_at_zero_whatever_the_scheme() -> None:
    for init in INITIALIZERS:
        model = MLP(2, [4, 1], init=init, init_scale=0.7, seed=1)
        assert all(n.b.data == 0.0 for layer in model.layers for n in layer.neurons)


def test_uniform_at_scale_one_is_the_weights_gradbox_always_drew() -> None:
    """Sessions, lessons and tests seeded before initialization was a choice stay the same."""
    rng = np.random.default_rng(3)
    old = [Neuron(5, rng=rng) for _ in range(4)]
    layer = Layer(5, 4, rng=np.random.default_rng(3))
    assert [[w.data for w in n.w] for n in layer.neurons] == [[w.data for w in n.w] for n in old]


def test_an_unknown_scheme_or_a_bad_scale_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="init must be one of"):
        TrainingConfig(init="orthogonal")
    with pytest.raises(ConfigError, match="init scale"):
        TrainingConfig(init_scale=-1.0)
    with pytest.raises(ConfigError, match="init scale"):
        TrainingConfig(init_scale=math.nan)


def _rows(trainer: Trainer, layer: int) -> np.ndarray:
    """Layer `layer`'s neurons as rows of (incoming weights..., bias)."""
    sizes = trainer.config.layer_sizes
    offset = sum((a + 1) * b for a, b in itertools.pairwise(sizes[:layer + 1]))
    nin, nout = sizes[layer], sizes[layer + 1]
    return trainer.run.values()[offset: offset + nout * (nin + 1)].reshape(nout, nin + 1)


@pytest.mark.parametrize("init", ["zeros", "constant"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_symmetric_start_keeps_each_layers_neurons_identical_forever(init: str,
                                                                       seed: int) -> None:
    trainer = Trainer(TrainingConfig(dataset="circle", hidden=(5, 4), init=init,
                                     init_scale=0.5, lr=0.3, seed=seed))
    trainer.run_steps(30)
    assert trainer.history[-1].loss != trainer.history[0].loss  # it did train
    for layer in range(3):
        rows = _rows(trainer, layer)
        assert np.all(rows == rows[0]), f"layer {layer} neurons differ after 30 steps"
    # a random start breaks the symmetry at once
    broken = Trainer(trainer.config.with_changes(init="uniform"))
    broken.run_steps(1)
    assert not np.all(_rows(broken, 0) == _rows(broken, 0)[0])


def test_initialization_survives_save_and_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    trainer = Trainer(TrainingConfig(init="he", init_scale=1.5, activation="relu"))
    trainer.run_steps(2)
    save_session(trainer, tmp_path / "s.json")
    loaded = load_session(tmp_path / "s.json")
    assert (loaded.config.init, loaded.config.init_scale) == ("he", 1.5)
    assert np.array_equal(loaded.initial_params, trainer.initial_params)
    loaded.reinitialize(trainer.init_seed)  # a new draw uses the same scheme and seed
    assert np.array_equal(loaded.initial_params, trainer.initial_params)
