"""The claims of the "Vanishing gradients" and "Momentum on the landscape" lessons, under
their own settings, across seeds: every number their text quotes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradbox.teaching.lessons import LANDSCAPE_TAB, LAYERS_TAB, lesson
from gradbox.training import landscape
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

# The built-in lessons are files now (teaching/builtin_lessons), read by key.
MOMENTUM, VANISHING = lesson("momentum-landscape"), lesson("vanishing-gradients")
SEEDS = range(5)


def _run(config: TrainingConfig, steps: int) -> Trainer:
    trainer = Trainer(config)
    trainer.run_steps(steps)
    return trainer


def _first_step_factor(trainer: Trainer) -> float:
    """Output layer's mean |grad| over the first hidden layer's, at step 1 (the readout's)."""
    grads = trainer.history[0].layers.grad
    return float(grads[-1] / grads[0])


@pytest.mark.parametrize("seed", SEEDS)
def test_vanishing_gradients_sigmoid_starves_the_first_layer(seed: int) -> None:
    config = VANISHING.setup.config.with_changes(seed=seed)
    assert config.activation == "sigmoid" and len(config.hidden) == 6
    sigmoid = _run(config, 100)
    # "more than 50×" at step 1
    assert _first_step_factor(sigmoid) > 50
    # "stays flat near 0.69 — log 2": the network answers ½ everywhere
    assert abs(sigmoid.history[-1].loss - math.log(2)) < 0.01
    assert max(r.loss for r in sigmoid.history[10:]) < math.log(2) + 0.01


@pytest.mark.parametrize("seed", SEEDS)
def test_vanishing_gradients_tanh_at_the_same_depth_learns(seed: int) -> None:
    # The designer keeps the seed and the initial weights' seed when only the activation
    # changes: exactly this configuration.
    config = VANISHING.setup.config.with_changes(seed=seed, activation="tanh")
    tanh = _run(config, 100)
    assert _first_step_factor(tanh) < 10  # "below 10×"
    assert tanh.history[-1].loss < 0.5  # "falls below 0.5" (all 48 seeds of test_lesson_claims)


def test_vanishing_gradients_sigmoid_outputs_are_never_negative() -> None:
    trainer = _run(VANISHING.setup.config, 5)
    for record in trainer.history:
        assert np.all(record.layers.quantiles[:-1, 0] >= 0)
        assert np.all(record.layers.quantiles[:-1, -1] <= 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_momentum_reaches_a_lower_loss_and_travels_further(seed: int) -> None:
    base = MOMENTUM.setup.config.with_changes(seed=seed)
    assert base.optimizer == "sgd" and base.lr == 0.05 and base.momentum == 0.0
    sgd = _run(base, 100)
    heavy = _run(base.with_changes(momentum=0.9), 100)
    # Same initial weights: the designer restarts from them when momentum changes.
    np.testing.assert_array_equal(sgd.initial_params, heavy.initial_params)
    assert heavy.history[-1].loss < sgd.history[-1].loss  # "lower at step 100"
    _, sgd_path = sgd.trajectory()
    _, heavy_path = heavy.trajectory()
    travelled = [float(np.linalg.norm(p[-1] - p[0])) for p in (sgd_path, heavy_path)]
    assert travelled[1] > 2 * travelled[0]  # "moved further from where they started"


def _landscape(trainer: Trainer, mode: str) -> landscape.Landscape:
    s = trainer.snapshot()
    train = ~s.is_test
    c = s.config
    problem = landscape.Problem(s.layer_sizes, c.activation, c.effective_loss, c.l1, c.l2,
                                s.points[train], s.labels[train])
    steps, path = trainer.trajectory()
    return landscape.compute(landscape.Request(problem, s.params, steps, path, mode,
                                               resolution=15))


@pytest.mark.parametrize("seed", SEEDS)
def test_momentum_path_lies_in_the_default_plane_and_nearly_vanishes_in_a_random_one(
        seed: int) -> None:
    trainer = _run(MOMENTUM.setup.config.with_changes(seed=seed, momentum=0.9), 100)
    pca, random = _landscape(trainer, "pca"), _landscape(trainer, "random")
    assert pca.captured > 0.8

    def spread(result: landscape.Landscape) -> float:
        """The path's extent as a share of the plotted range."""
        xy = result.path_xy
        width = result.alphas[-1] - result.alphas[0]
        return float(np.ptp(xy[:, 0]) / width)
    assert spread(random) < 0.2 * spread(pca)


def test_the_lessons_open_their_own_tab() -> None:
    assert VANISHING.setup.main_tab == LAYERS_TAB and LAYERS_TAB in VANISHING.controls
    assert MOMENTUM.setup.main_tab == LANDSCAPE_TAB and LANDSCAPE_TAB in MOMENTUM.controls
