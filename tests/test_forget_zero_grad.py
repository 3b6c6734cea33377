"""Forgetting zero_grad, told whole: passes held, ratio to the true gradient, the lesson's claim."""

from __future__ import annotations

import numpy as np
import pytest

from demonstrations import CLAIM_FACTOR, CLAIM_STEP, forgetting_claim
from gradbox.teaching import lessons
from gradbox.training.config import TrainingConfig
from gradbox.training.history import passes_after
from gradbox.training.trainer import Trainer

SMALL = TrainingConfig(hidden=(4,), n_samples=40)


def test_passes_held_count_each_backward_since_the_last_zero_grad() -> None:
    trainer = Trainer(SMALL)
    assert trainer.snapshot().grad_passes == 0
    trainer.step()
    assert trainer.snapshot().grad_passes == 1
    trainer.set_forget_zero_grad(True)
    seen = []
    for _ in range(3):
        for _phase in range(4):
            trainer.substep()
            seen.append((trainer.snapshot().phase, trainer.snapshot().grad_passes))
    # After step 1 (with zero_grad) the gradients hold 1 pass; each skipped zero_grad
    # keeps them, each backward adds one.
    assert seen == [("zero_grad", 1), ("backward", 1), ("update", 2), ("forward", 2),
                    ("zero_grad", 2), ("backward", 2), ("update", 3), ("forward", 3),
                    ("zero_grad", 3), ("backward", 3), ("update", 4), ("forward", 4)]
    trainer.set_forget_zero_grad(False)
    trainer.substep()
    trainer.substep()  # zero_grad runs: nothing held
    assert trainer.snapshot().grad_passes == 0
    trainer.substep()
    assert trainer.snapshot().grad_passes == 1
    trainer.rewind(3)  # back to after the second skipped step
    assert trainer.snapshot().grad_passes == 3


def test_passes_after_a_history() -> None:
    trainer = Trainer(SMALL)
    trainer.set_forget_zero_grad(True)
    trainer.run_steps(5)  # skipped from step 1: the gradients started at zero
    assert passes_after(trainer.history) == 5
    assert passes_after(()) == 0


def test_with_the_weights_still_the_ratio_to_the_true_gradient_is_the_pass_count() -> None:
    trainer = Trainer(SMALL.with_changes(lr=0.0, l2=0.0))
    trainer.set_forget_zero_grad(True)
    trainer.set_ghost(True)
    for k in range(1, 6):
        trainer.step()
        snap = trainer.snapshot()
        assert snap.grad_passes == k
        assert snap.step_grads is not None and snap.ghost_grads is not None
        # The true gradient at these weights is this pass's own, and the ghost's too.
        np.testing.assert_allclose(snap.step_grads, snap.ghost_grads, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(snap.grads, k * snap.step_grads, rtol=1e-9, atol=1e-12)


def test_switching_on_branches_the_ghost_from_the_same_step() -> None:
    trainer = Trainer(SMALL)
    trainer.set_ghost(True)
    trainer.run_steps(5)
    trainer.set_parameter(trainer.param_names[0], 0.5)  # the ghost does not follow edits
    trainer.set_forget_zero_grad(True)
    assert trainer.ghost is not None
    np.testing.assert_array_equal(trainer.ghost.values(), trainer.run.values())
    trainer.step()
    record = trainer.history[-1]
    assert record.zero_grad_skipped
    assert record.ghost_loss == record.loss  # same weights, same batch at the branch


def test_the_largest_gradient_so_far_survives_smaller_ones_and_rewinds() -> None:
    trainer = Trainer(SMALL)
    trainer.set_forget_zero_grad(True)
    peaks = []
    for _ in range(6):
        trainer.step()
        peaks.append(trainer.snapshot().grad_peak)
    assert peaks == sorted(peaks)
    assert peaks[-1] >= np.abs(trainer.snapshot().grads).max()
    trainer.rewind(2)
    assert trainer.snapshot().grad_peak == pytest.approx(peaks[1])


def test_the_update_size_is_measured() -> None:
    trainer = Trainer(SMALL.with_changes(momentum=0.0))
    before = trainer.run.values()
    trainer.step()
    snap = trainer.snapshot()
    assert snap.update_norm == pytest.approx(np.linalg.norm(snap.params - before))
    # Plain SGD: the step is lr × |grad| (gradients from this forward pass).
    assert snap.update_norm == pytest.approx(snap.config.lr * snap.history[-1].grad_norm)


# --- the lesson's claim, over ten seeds ---------------------------------------------------------
def test_the_forget_zero_grad_lesson_shows_the_damage_in_nine_of_ten_seeds() -> None:
    config = lessons.lesson("zero-grad").setup.config
    assert config is not None
    shown, runs = forgetting_claim(config, range(10), CLAIM_STEP, CLAIM_FACTOR)
    ratios = [round(run.ratio_at(CLAIM_STEP), 2) for run in runs]
    assert shown >= 9, ratios
    # The settings are sound: the correct run learns in every seed, so the damage is
    # the missing zero_grad's, and the broken run stays finite (no overflow banner).
    assert all(run.correct_learns for run in runs), ratios
    assert sum(not run.stopped for run in runs) >= 9, ratios
