"""One range for seeds, however a seed arrives (issue 31, item 7): a lesson's seed of
1e29 or a session's 2**40 raised OverflowError in the Designer on every snapshot, and the
Designer went on showing seed 0. Now a seed past the Designer's spin box is refused at
reading, in words, and every seed allowed is shown as it is."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gradbox.files.sessions import SessionError, load_session
from gradbox.teaching.lesson_files import LessonFileError, dump_lesson, load_lesson
from gradbox.teaching.lessons import lesson
from gradbox.training.config import MAX_SEED, ConfigError, TrainingConfig
from gradbox.views.panels.designer import DesignerPanel

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_corpus

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


def test_a_lessons_seed_past_the_range_is_refused_at_its_line() -> None:
    text = dump_lesson(lesson("moons"))
    assert "seed = 0" in text
    big = text.replace("seed = 0", "seed = 100000000000000000000000000000", 1)
    with pytest.raises(LessonFileError, match="seed must be a whole number from 0 to") as caught:
        load_lesson(big, "seeded.toml")
    assert caught.value.field == "setup.config.seed"
    assert big.splitlines()[caught.value.line - 1].startswith("seed = ")  # type: ignore[operator]
    assert load_lesson(text.replace("seed = 0", f"seed = {MAX_SEED}", 1)).setup.config.seed \
        == MAX_SEED  # type: ignore[union-attr]


def test_a_sessions_seed_past_the_range_is_refused(tmp_path: Path) -> None:
    manifest, members = hostile_corpus.seed_members(2)
    for seed in (2**40, 2**128):
        manifest["config"]["seed"] = seed
        path = tmp_path / "seeded.gradbox"
        path.write_bytes(hostile_corpus.session(manifest, members))
        with pytest.raises(SessionError, match="seed"):
            load_session(path)
    with pytest.raises(ConfigError, match="seed must be"):
        TrainingConfig(seed=MAX_SEED + 1)


def test_the_designer_shows_every_seed_allowed(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    designer = DesignerPanel(controller)
    qtbot.addWidget(designer)
    assert designer.data_seed.maximum() == MAX_SEED
    designer.show_config(TrainingConfig(seed=MAX_SEED))
    assert designer.data_seed.value() == MAX_SEED and designer.config().seed == MAX_SEED


def test_a_schedule_longer_than_the_designer_shows_is_refused_too(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    """The same fault as the seed's with `steps` (a lesson's steps = 1e12 raised
    OverflowError in the Designer's spin box): one range, the Designer's."""
    from gradbox.training.goals import MAX_RUN_STEPS

    text = dump_lesson(lesson("moons")).replace("steps = 100\n", "steps = 1000000000000\n", 1)
    with pytest.raises(LessonFileError, match="steps must be from 1 to 1,000,000"):
        load_lesson(text, "long.toml")
    designer = DesignerPanel(controller)
    qtbot.addWidget(designer)
    designer.show_config(TrainingConfig(steps=MAX_RUN_STEPS))
    assert designer.schedule_steps.value() == MAX_RUN_STEPS
