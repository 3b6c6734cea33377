"""Checking a lesson's claims against runs: trained over seeds, or the one on the screen.

    over seeds      `run_claims` trains the runs a lesson's claims speak of on a seed and
                    gives each claim's verdict; tests/test_lesson_claims.py requires each
                    to hold on nearly all of many seeds, and `false_claims` tells a
                    teacher which do not hold on the lesson's own seed;
    on the screen   `check_on_screen` reads the run the learner has in front of them and
                    says where a claim of the current step does not hold there.

What a claim is (the quantities, the comparison, the step it is read at) is
gradbox.teaching.claims'; this module trains and reads runs for it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradbox.teaching.claims import QUANTITIES, SYMBOLS, Claim, Observed
from gradbox.teaching.lesson_model import Lesson, Setup
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal, RunLoop
from gradbox.training.snapshots import Snapshot
from gradbox.training.trainer import Trainer


def observe(trainer: Trainer, pinned: Trainer | None = None) -> Observed:
    """What a trainer's run shows, with how far its weights (and the pinned run's) moved."""
    def travelled(t: Trainer) -> float:
        _, path = t.trajectory()
        return float(np.linalg.norm(path[-1] - path[0]))
    base = Observed.from_snapshot(trainer.snapshot())
    return Observed(base.history, base.layer_sizes, base.params, base.grads, base.n_train,
                    base.pinned, travelled(trainer),
                    travelled(pinned) if pinned is not None else math.nan)


# --- over seeds ---------------------------------------------------------------------------
def _trainer(setup: Setup, config: TrainingConfig) -> Trainer:
    trainer = Trainer(config)
    trainer.set_forget_zero_grad(setup.forget_zero_grad)
    trainer.set_ghost(setup.ghost)
    return trainer


Progress = Callable[[int, int], None]
Cancelled = Callable[[], bool]


class ChecksCancelledError(Exception):
    """The check was cancelled before every claim had its verdict."""


def _steps_to_train(claims: Sequence[Claim]) -> int:
    """How many steps `run_claims` trains for these claims (a pinned run twice)."""
    groups: dict[tuple[Any, ...], tuple[int, bool]] = {}
    for claim in claims:
        steps, pinned = groups.get(claim.key, (0, claim.pinned is not None))
        groups[claim.key] = (max(steps, claim.at_step), pinned)
    return sum(steps * (2 if pinned else 1) for steps, pinned in groups.values())


def _train(trainer: Trainer, steps: int, done: list[int], total: int,
           progress: Progress | None, cancelled: Cancelled | None) -> None:
    """`trainer.run_steps(steps)`, telling progress (at most ten times a second) and
    stopping at once if cancelled."""
    run = RunLoop(RunGoal(steps=steps))
    told = 0.0
    while True:
        tick = run.tick(trainer)
        done[0] += 1
        if tick.over:
            return
        if cancelled is not None and cancelled():
            raise ChecksCancelledError
        if progress is not None and time.monotonic() - told > 0.1:
            told = time.monotonic()
            progress(done[0], total)


def run_claims(setup: Setup, claims: Sequence[Claim], seed: int,
               progress: Progress | None = None, cancelled: Cancelled | None = None,
               ) -> list[bool | None]:
    """Each claim's verdict on `seed`, runs shared between claims read on the same run.
    `progress(steps trained, steps to train)` is told as it goes; `cancelled()` is asked
    each step (ChecksCancelledError).

    As in the app: a step's new settings start a fresh run of the lesson's seed (the
    Designer keeps the seed and so the initial weights), and a pinned run is trained
    first, then pinned, then the new settings run beside it. A run stops where the
    window's Run would (a non-finite or a diverging loss): a claim read past that step
    has no verdict (None), as the learner could not see it."""
    return [verdict for verdict, _seen_text in
            _verdicts(setup, claims, seed, progress, cancelled)]


def _verdicts(setup: Setup, claims: Sequence[Claim], seed: int,
              progress: Progress | None = None, cancelled: Cancelled | None = None,
              ) -> list[tuple[bool | None, str]]:
    """`run_claims`' verdicts, each with what the run measured instead when it is False
    ('' otherwise): a teacher told only "does not hold" could not tell by how much."""
    assert setup.config is not None
    base = setup.config.with_changes(seed=seed)
    verdicts: list[tuple[bool | None, str]] = [(None, "")] * len(claims)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, claim in enumerate(claims):
        groups.setdefault(claim.key, []).append(index)
    done, total = [0], _steps_to_train(claims)
    for indices in groups.values():
        first = claims[indices[0]]
        steps = max(claims[i].at_step for i in indices)
        reference = None
        if first.pinned is not None:
            reference = _trainer(setup, base.with_changes(**first.pinned))
            _train(reference, steps, done, total, progress, cancelled)
            reference.pin()
            trainer = reference.with_config(base.with_changes(**first.run))
        else:
            trainer = _trainer(setup, base.with_changes(**first.run))
        _train(trainer, steps, done, total, progress, cancelled)
        observed = observe(trainer, reference)
        for i in indices:
            verdict = claims[i].holds(observed)
            verdicts[i] = (verdict, _seen(claims[i], observed) if verdict is False else "")
    return verdicts


# --- on the screen ------------------------------------------------------------------------------
def _differences(setup_config: TrainingConfig, config: TrainingConfig,
                 asked: Mapping[str, Any]) -> str:
    """How the run on screen differs from the one the lesson describes: 'seed 7, lr 1'."""
    expected = setup_config.with_changes(**asked)
    changed = [f"{name} {getattr(config, name)}" for name in (
        "seed", "dataset", "hidden", "activation", "loss", "optimizer", "lr", "momentum",
        "batch_size", "init", "init_scale", "features", "noise", "n_samples", "l2")
        if getattr(config, name) != getattr(expected, name)]
    return ", ".join(changed)


def applies(claim: Claim, setup: Setup, config: TrainingConfig, has_pinned: bool) -> bool:
    """The run on screen is one the claim speaks of: it has the settings the step asked
    for (the seed and anything else may differ: that is what the check is for)."""
    if setup.config is None:
        return False
    expected = setup.config.with_changes(**claim.run)
    if any(getattr(config, name) != getattr(expected, name) for name in claim.run):
        return False
    return claim.pinned is None or has_pinned


def check_on_screen(lesson: Lesson, step: int, snapshot: Snapshot) -> list[str]:
    """What the current step's claims say that the run on screen does not show.

    One sentence per claim that can be read on this run and does not hold, naming how
    this run differs from the lesson's and what it shows instead: 'On this run (seed 7)
    the number of training points on the wrong side first reached ≤ 2 at step 140, not
    within 100 steps as the step says.'"""
    setup = lesson.setup
    if setup.view != "training" or not 0 <= step < len(lesson.steps) or setup.config is None:
        return []
    observed: Observed | None = None
    notes = []
    for claim in lesson.steps[step].claims:
        if not applies(claim, setup, snapshot.config, snapshot.pinned is not None):
            continue
        observed = observed or Observed.from_snapshot(snapshot)
        verdict = claim.holds(observed)
        if verdict is None or verdict:
            continue
        differs = _differences(setup.config, snapshot.config, claim.run)
        where = f"On this run ({differs})" if differs else "On this run"
        notes.append(f"{where} {_seen(claim, observed)}.")
    return notes


def _seen(claim: Claim, observed: Observed) -> str:
    """What the run shows instead of the claim: 'the boundary needed 140 steps'."""
    quantity = QUANTITIES[claim.quantity]
    wanted = f"{SYMBOLS[claim.op]} {quantity.write(claim.value)}"
    first = claim.first_held(observed)
    if claim.by:
        if first is not None:
            return (f"{quantity.words} first reached {wanted} at step {first}, not within "
                    f"{claim.at_step} steps as the step says")
        return (f"{quantity.words} has not reached {wanted} in "
                f"{len(observed.history)} steps (the step says within {claim.at_step})")
    seen = (f"{quantity.words} is {quantity.write(claim.measure(observed))} at step "
            f"{claim.at_step}, not {wanted} as the step says")
    if first is not None and first > claim.at_step:
        seen += f"; it got there at step {first}"
    elif first is not None:
        seen += f" (it was at step {first}, then left it)"
    elif quantity.per_step:
        seen += f"; not yet by step {len(observed.history)}"
    return seen


# --- on the lesson's own setup ------------------------------------------------------------
def claim_step(sentence: str) -> int | None:
    """The step (from 0) a sentence of `false_claims` names, or None."""
    head, _colon, _rest = sentence.partition(": ")
    number = head.removeprefix("Step ")
    return int(number) - 1 if head.startswith("Step ") and number.isdigit() else None


def false_claims(lesson: Lesson, progress: Progress | None = None,
                 cancelled: Cancelled | None = None) -> list[str]:
    """What a teacher must hear before class: each of the lesson's claims that does not
    hold on the lesson's own setup (its seed), or cannot be read there, in a sentence
    naming its step. Empty when every claim holds. Trains the runs the claims speak of
    (seconds for the built-in lessons; a lesson from a file may ask for hours): the app
    runs it in a capped process of its own (gradbox.runner.lesson_check) with progress
    and Cancel (see `run_claims`)."""
    claims = [(number, claim) for number, step in enumerate(lesson.steps, start=1)
              for claim in step.claims]
    if not claims or lesson.setup.config is None:
        return []
    verdicts = _verdicts(lesson.setup, [c for _, c in claims], lesson.setup.config.seed,
                         progress, cancelled)
    out = []
    for (number, claim), (verdict, seen) in zip(claims, verdicts):
        if verdict is False:
            out.append(f"Step {number}: “{claim.says}” does not hold on the lesson's setup "
                       f"(seed {lesson.setup.config.seed}): {seen}.")
        elif verdict is None:
            out.append(f"Step {number}: “{claim.says}” could not be checked: the run did "
                       f"not reach step {claim.at_step}.")
    return out
