"""Every lesson's quantitative claims, checked like code (issue 20).

Each claim sits beside its sentence as data (gradbox.teaching.claims.Claim). The slow test
runs every claim of every lesson on SEEDS -- 48 seeds drawn once from 0..99,999 before any
result was looked at:

    sorted(np.random.default_rng(20261201).choice(100_000, 48, replace=False))

-- and requires each to hold on at least 95 % of them. It takes a few minutes of CPU
(about 3 s a seed on an idle core; far more on a loaded machine), so it is marked `slow`
and left out of the default run; CI runs it (.ci/run). See each claim's pass rate with

    python -m pytest -m slow -rP tests/test_lesson_claims.py

The fast tests check that the claims are well-formed and that the lesson says so, on the
learner's own run, where one does not hold.
"""

from __future__ import annotations

import faulthandler
import math
from dataclasses import fields

import pytest

from gradbox.teaching.claim_checks import check_on_screen, observe, run_claims
from gradbox.teaching.claims import OPS, QUANTITIES, Claim
from gradbox.teaching.lessons import LESSONS, Lesson, lesson
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

SEEDS = (5615, 6397, 8121, 9438, 15486, 18790, 20333, 23061, 23923, 24253, 28770, 29429,
         31236, 33347, 34563, 35099, 35317, 37721, 38839, 41116, 41609, 41747, 42708, 42827,
         49543, 49572, 50212, 51368, 51946, 53266, 53827, 54039, 56032, 61962, 62284, 66583,
         66633, 67761, 71672, 75887, 83347, 83716, 88042, 88674, 92935, 93258, 98670, 99533)
REQUIRED = 0.95
CLAIMING = [item for item in LESSONS if any(step.claims for step in item.steps)]


def _claims(item: Lesson) -> list[tuple[int, Claim]]:
    return [(k, claim) for k, step in enumerate(item.steps) for claim in step.claims]


@pytest.mark.slow
@pytest.mark.parametrize("key", [item.key for item in CLAIMING])
def test_every_claim_holds_on_nearly_every_seed(key: str) -> None:
    # Minutes by design, not a hang: the suite's two-minute stack dump is not wanted here.
    faulthandler.cancel_dump_traceback_later()
    item = lesson(key)
    claims = _claims(item)
    verdicts = [run_claims(item.setup, [c for _, c in claims], seed) for seed in SEEDS]
    lines, failing = [f"{item.title}: each claim on {len(SEEDS)} seeds"], []
    for j, (k, claim) in enumerate(claims):
        held = [seed for seed, v in zip(SEEDS, verdicts) if v[j]]
        rate = len(held) / len(SEEDS)
        missed = [seed for seed in SEEDS if seed not in held]
        lines.append(f"  step {k + 1}: {rate:6.1%}  {claim.says}  "
                     f"({claim.quantity} {claim.op} {claim.value:g} "
                     f"{'by' if claim.by else 'at'} step {claim.at_step})"
                     + (f"  missed on {missed}" if missed else ""))
        if rate < REQUIRED:
            failing.append(claim.says)
    print("\n".join(lines))
    assert not failing, "\n".join(lines)


# --- the claims are well-formed ------------------------------------------------------------------
def test_the_training_lessons_carry_claims() -> None:
    assert {item.key for item in CLAIMING} == {
        "zero-grad", "moons", "features-or-depth", "start-at-zero", "vanishing-gradients",
        "momentum-landscape"}


@pytest.mark.parametrize("key", [item.key for item in CLAIMING])
def test_each_claim_names_a_known_quantity_and_real_settings(key: str) -> None:
    config_fields = {f.name for f in fields(TrainingConfig)}
    item = lesson(key)
    assert item.setup.config is not None
    for _, claim in _claims(item):
        assert claim.quantity in QUANTITIES and claim.op in OPS
        assert set(claim.run) <= config_fields
        assert set(claim.pinned or {}) <= config_fields
        # The settings a step asks for make a valid configuration.
        item.setup.config.with_changes(**claim.run)
        assert claim.says and claim.says[0].islower(), "a phrase that fits in a sentence"


def test_a_claim_refuses_what_it_cannot_check() -> None:
    with pytest.raises(ValueError, match="unknown quantity"):
        Claim("happiness", ">", 1, 10, "it is happy")
    with pytest.raises(ValueError, match="op must be"):
        Claim("train_loss", "==", 1, 10, "it is one")
    with pytest.raises(ValueError, match="cannot be claimed 'by'"):
        Claim("identical_layers", ">=", 2, 10, "alike", by=True)


def test_by_and_at_read_the_run_differently() -> None:
    trainer = Trainer(TrainingConfig(seed=3))
    trainer.run_steps(60)
    observed = observe(trainer)
    losses = trainer.history.column("loss")
    best = int(losses.argmin()) + 1
    at = Claim("train_loss", "<=", float(losses.min()), 60, "the loss reaches its best")
    by = Claim("train_loss", "<=", float(losses.min()), 60, "the loss reaches its best",
               by=True)
    assert by.holds(observed) is True and by.first_held(observed) == best
    assert at.holds(observed) is (best == 60)
    later = Claim("train_loss", "<=", 0.0, 100, "the loss reaches 0", by=True)
    assert later.holds(observed) is None, "the run is not at step 100 yet"
    assert math.isnan(Claim("train_loss", "<", 1, 80, "x").measure(observed))


# --- the lesson checks itself on the learner's run -----------------------------------------------
def _run_on_screen(config: TrainingConfig, steps: int, ghost: bool = False) -> Trainer:
    trainer = Trainer(config)
    trainer.set_ghost(ghost)
    trainer.run_steps(steps)
    return trainer


def test_a_claim_that_fails_on_this_run_is_said_with_what_the_run_shows() -> None:
    # The moons lesson at a learning rate 25 times smaller: by step 200 the boundary has
    # not got there, and the note names the changed setting and what the run shows.
    item = lesson("moons")
    k, claim = next((k, c) for k, c in _claims(item) if c.quantity == "wrong_points")
    config = item.setup.config
    assert config is not None and not claim.by
    trainer = _run_on_screen(config.with_changes(lr=0.02), claim.at_step)
    observed = observe(trainer)
    assert claim.holds(observed) is False
    notes = check_on_screen(item, k, trainer.snapshot())
    assert notes == [
        "On this run (lr 0.02) the number of training points on the wrong side is "
        f"{claim.measure(observed):.0f} at step 200, not ≤ 1 as the step says; not yet by "
        "step 200."]


def test_a_within_claim_says_when_it_got_there() -> None:
    # "With x₁², x₂² every point is on its side within 30 steps": at a tenth of the rate it
    # takes longer, and the note says how long.
    item = lesson("features-or-depth")
    k, claim = next((k, c) for k, c in _claims(item) if c.by and "x1^2" in
                    c.run.get("features", ()))
    config = item.setup.config
    assert config is not None
    slow = config.with_changes(lr=0.03, **claim.run)
    trainer = _run_on_screen(slow, 600)
    observed = observe(trainer)
    first = claim.first_held(observed)
    assert claim.holds(observed) is False
    note = check_on_screen(item, k, trainer.snapshot())[0]
    assert note.startswith("On this run (lr 0.03)")
    if first is None:
        assert "has not reached ≤ 0 in 600 steps (the step says within 30)" in note
    else:
        assert first > 30 and f"first reached ≤ 0 at step {first}, not within 30" in note


def test_nothing_is_said_where_the_claim_holds_or_cannot_be_read_yet() -> None:
    item = lesson("vanishing-gradients")
    config = item.setup.config
    assert config is not None
    k, claim = next((k, c) for k, c in _claims(item) if c.quantity == "log2_gap")
    young = _run_on_screen(config, 10)
    assert check_on_screen(item, k, young.snapshot()) == [], "not at step 100 yet"
    grown = _run_on_screen(config, 100)
    assert claim.holds(observe(grown))
    assert check_on_screen(item, k, grown.snapshot()) == []


def test_a_claim_about_other_settings_waits_for_them() -> None:
    # "With Xavier the boundary wraps around both moons" is not read on the zeros run.
    item = lesson("start-at-zero")
    config = item.setup.config
    assert config is not None
    k = next(k for k, c in _claims(item) if c.run.get("init") == "xavier")
    zeros = _run_on_screen(config, 300)
    assert check_on_screen(item, k, zeros.snapshot()) == []
