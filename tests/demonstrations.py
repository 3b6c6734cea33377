"""Demonstrations checked across seeds: what a lesson claims must happen under its settings.

A test helper (it was gradbox.teaching.demonstrations, which only the tests used). A
lesson's text may only claim what its own settings show, in (almost) every seed a learner
could meet; this module runs those settings and measures.

    forgetting_run     one seed: the run that skips zero_grad beside a correct ghost
    forgetting_claim   how many of the given seeds show the damage the lesson promises

Forgetting zero_grad sums every past gradient into the update: plain SGD on that sum is
momentum with no decay (β = 1). On a plateau (small, steady gradients) that can look like
a good idea for a while; it is how the bug hides. The lesson's settings are chosen so the
damage -- an update that keeps growing and overshoots -- is unmistakable by step 30.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

__all__ = [
    "CLAIM_FACTOR",
    "CLAIM_STEP",
    "ForgettingRun",
    "forgetting_claim",
    "forgetting_run",
]

# The lesson's promise: by this step the broken run's loss is at least this many times
# the correct run's.
CLAIM_STEP = 30
CLAIM_FACTOR = 2.0


@dataclass(frozen=True)
class ForgettingRun:
    """One seed: the losses of the broken run and of its correct ghost, step by step."""

    seed: int
    broken: tuple[float, ...]  # loss at steps 1..n (fewer if the run stopped: non-finite)
    correct: tuple[float, ...]
    # |Δw| of the broken run's update at steps 1..n.
    step_sizes: tuple[float, ...] = ()

    @property
    def stopped(self) -> bool:
        """The broken run's loss or weights became non-finite before the last step."""
        return len(self.broken) < len(self.correct) or not self.broken

    def ratio_at(self, step: int) -> float:
        """Broken loss / correct loss at `step` (inf if the broken run had stopped by then)."""
        if step > len(self.broken):
            return math.inf
        broken, correct = self.broken[step - 1], self.correct[step - 1]
        return broken / correct if correct > 0 else (math.inf if broken > 0 else 1.0)

    def shows_damage(self, step: int = CLAIM_STEP, factor: float = CLAIM_FACTOR) -> bool:
        return self.ratio_at(step) >= factor

    @property
    def correct_learns(self) -> bool:
        """The ghost's loss fell: the settings are sound, only the missing zero_grad hurts."""
        return len(self.correct) > 1 and self.correct[-1] < self.correct[0]


def forgetting_run(config: TrainingConfig, seed: int, steps: int = CLAIM_STEP) -> ForgettingRun:
    """Train `config` with `seed` for `steps` steps without zero_grad, a ghost beside it.

    Both start from the same initial weights and see the same batches, as in the app.
    """
    trainer = Trainer(config.with_changes(seed=seed))
    trainer.set_forget_zero_grad(True)
    trainer.set_ghost(True)
    sizes = []
    for _ in range(steps):
        if trainer.step() is None:
            break
        sizes.append(trainer.snapshot().update_norm)
    broken = tuple(r.loss for r in trainer.history)
    # The ghost is never stopped, but its records end where the broken run's do; finish
    # the correct run alone so the two can always be compared at `steps`.
    correct = [r.ghost_loss for r in trainer.history]
    if len(correct) < steps:
        alone = Trainer(config.with_changes(seed=seed))
        alone.run_steps(steps, stop_diverging=False)  # as the ghost: never stopped
        correct = [r.loss for r in alone.history]
    return ForgettingRun(seed, broken, tuple(correct), tuple(sizes))


def forgetting_claim(config: TrainingConfig, seeds: Iterable[int] = range(10),
                     step: int = CLAIM_STEP, factor: float = CLAIM_FACTOR,
                     ) -> tuple[int, list[ForgettingRun]]:
    """How many seeds show the broken loss at `step` ≥ `factor` × the correct loss."""
    runs = [forgetting_run(config, seed, step) for seed in seeds]
    return sum(run.shows_damage(step, factor) for run in runs), runs
