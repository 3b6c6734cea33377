"""The loss landscape: computed with the numpy forward, checked against the engine."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradbox.training import landscape
from gradbox.training.config import TrainingConfig
from gradbox.training.landscape import LandscapeError, Problem, Request
from gradbox.training.trainer import Trainer


def problem_of(trainer: Trainer) -> Problem:
    s = trainer.snapshot()
    train = ~s.is_test
    c = s.config
    return Problem(s.layer_sizes, c.activation, c.effective_loss, c.l1, c.l2,
                   s.points[train], s.labels[train])


def request_of(trainer: Trainer, mode: str, **kw) -> Request:
    steps, path = trainer.trajectory()
    return Request(problem_of(trainer), trainer.snapshot().params, steps, path, mode, **kw)


CONFIGS = [
    TrainingConfig(n_samples=60, hidden=(6, 6), activation="tanh", loss="hinge", seed=2),
    TrainingConfig(n_samples=60, hidden=(5,), activation="relu", loss="logistic", l1=1e-3,
                   seed=3, batch_size=16),
    TrainingConfig(dataset="blobs", classes=3, n_samples=60, hidden=(4,),
                   activation="sigmoid", loss="softmax", l2=1e-3, seed=5),
    TrainingConfig(n_samples=60, hidden=(4, 4), activation="tanh", loss="mse", l2=0.0,
                   optimizer="adam", lr=0.05, seed=6),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("mode", landscape.MODES)
def test_the_value_at_the_current_weights_is_the_current_loss(config: TrainingConfig,
                                                              mode: str) -> None:
    trainer = Trainer(config)
    trainer.run_steps(6)
    result = landscape.compute(request_of(trainer, mode, axes=(0, 3), resolution=15))
    engine = trainer.training_loss()
    assert result.center_loss == pytest.approx(engine, rel=1e-12, abs=1e-14)
    assert result.loss_at(0.0, 0.0) == pytest.approx(engine, rel=1e-12, abs=1e-14)
    # The current weights are the path's last point, at the origin of the plane.
    assert result.path_xy[-1] == pytest.approx([0.0, 0.0], abs=1e-12)


@pytest.mark.parametrize("config", CONFIGS[:2])
def test_every_grid_value_is_the_engines_loss_at_those_weights(config: TrainingConfig) -> None:
    trainer = Trainer(config)
    trainer.run_steps(5)
    result = landscape.compute(request_of(trainer, "random", resolution=15, seed=4))
    center = trainer.snapshot().params.copy()
    rng = np.random.default_rng(0)
    for i, j in rng.integers(0, 15, size=(4, 2)).tolist():
        weights = center + result.alphas[i] * result.directions[0] \
            + result.betas[j] * result.directions[1]
        trainer.run.set_values(weights)  # engine's forward at those weights
        assert result.loss[j, i] == pytest.approx(trainer.training_loss(), rel=1e-10)
    trainer.run.set_values(center)


def test_the_path_ends_at_the_current_weights_and_holds_their_losses() -> None:
    trainer = Trainer(CONFIGS[0])
    trainer.run_steps(8)
    result = landscape.compute(request_of(trainer, "pca", resolution=15))
    assert list(result.path_steps) == list(range(9))
    assert result.path_loss[-1] == pytest.approx(trainer.training_loss(), rel=1e-12)
    # Two principal directions of a short path hold nearly all of its movement.
    assert result.captured > 0.8


def test_two_chosen_parameters_are_the_axes() -> None:
    trainer = Trainer(CONFIGS[0])
    trainer.run_steps(4)
    _, path = trainer.trajectory()
    result = landscape.compute(request_of(trainer, "parameters", axes=(2, 7), resolution=15))
    center = trainer.snapshot().params
    assert result.path_xy[:, 0] == pytest.approx(path[:, 2] - center[2])
    assert result.path_xy[:, 1] == pytest.approx(path[:, 7] - center[7])
    with pytest.raises(LandscapeError, match="two different"):
        landscape.compute(request_of(trainer, "parameters", axes=(2, 2)))


def test_filter_normalised_directions_scale_each_neuron_and_skip_biases() -> None:
    trainer = Trainer(CONFIGS[0])
    center = trainer.snapshot().params
    sizes = trainer.config.layer_sizes
    d = landscape.filter_normalised(center, sizes, np.random.default_rng(1))
    offset = 0
    for nin, nout in itertools.pairwise(sizes):
        block = d[offset: offset + nout * (nin + 1)].reshape(nout, nin + 1)
        weights = center[offset: offset + nout * (nin + 1)].reshape(nout, nin + 1)
        assert np.linalg.norm(block[:, :nin], axis=1) == pytest.approx(
            np.linalg.norm(weights[:, :nin], axis=1))
        assert np.all(block[:, nin] == 0)
        offset += nout * (nin + 1)


def test_the_grid_shrinks_for_big_problems_and_stays_square() -> None:
    small = problem_of(Trainer(CONFIGS[0]))
    big = problem_of(Trainer(TrainingConfig(n_samples=2000, hidden=(64, 64))))
    assert landscape.resolution_for(small) == landscape.MAX_RESOLUTION
    assert landscape.MIN_RESOLUTION <= landscape.resolution_for(big) < 60
    result = landscape.compute(request_of(Trainer(CONFIGS[0]), "random"))
    assert result.loss.shape == (60, 60)


def test_at_step_zero_the_path_is_one_point_and_pca_falls_back_to_random() -> None:
    trainer = Trainer(CONFIGS[0])
    result = landscape.compute(request_of(trainer, "pca", resolution=15))
    assert result.path_xy.shape == (1, 2)
    assert np.all(np.isfinite(result.loss))
    assert np.linalg.matrix_rank(result.directions) == 2
