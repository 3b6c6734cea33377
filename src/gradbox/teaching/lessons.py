"""Guided lessons: each rule of autograd, shown by setting the app up and breaking it.

The built-in lessons are plain TOML files in builtin_lessons/, one per lesson, in the order
of their file names (docs/lessons.md says how to write one; File → Open lesson… opens a
teacher's own). This module reads them, strictly (gradbox.teaching.lesson_files), and
names what a lesson is (gradbox.teaching.lesson_model: the setup, the steps, the panels).

The text is the app's own, in the voice of the article the app grew from: short,
concrete, and always "why", never "remember to". Every quantitative sentence carries its
claim beside it ([[steps.claims]]), tested over many seeds.

Pure data, no Qt.
"""

from __future__ import annotations

from pathlib import Path

from gradbox.teaching.lesson_files import load_lesson
from gradbox.teaching.lesson_model import (
    ALL_CONTROLS,
    BOUNDARY,
    BUILD_TAB,
    DESIGNER,
    DESIGNER_ACTIVATION,
    DESIGNER_INIT,
    DESIGNER_INPUTS,
    DESIGNER_MOMENTUM,
    DESIGNER_SUMMARY,
    FIELDS,
    FORGET_ZERO_GRAD,
    GHOST,
    GRAPH_TAB,
    LANDSCAPE_TAB,
    LAYERS_TAB,
    LOSS_CURVE,
    PARAMETERS,
    PG_BACKWARD,
    PG_BACKWARD_AGAIN,
    PG_CHECK,
    PG_EXAMPLES,
    PG_EXPRESSION,
    PG_EXTRAS,
    PG_FORWARD,
    PG_GRAPH,
    PG_MESSAGE,
    PG_RETAIN,
    PG_TABLE,
    PG_VARIANT,
    PG_ZERO,
    PHASE_INDICATOR,
    PLAYGROUND_CONTROLS,
    PLAYGROUND_TAB,
    STEP_NAMES,
    TRAINING_CONTROLS,
    TRAINING_LOOP,
    TRAINING_TOOLBAR,
    Lesson,
    Setup,
    Step,
)

__all__ = [
    "ALL_CONTROLS",
    "BOUNDARY",
    "BUILD_TAB",
    "BUILTIN_LESSONS",
    "DESIGNER",
    "DESIGNER_ACTIVATION",
    "DESIGNER_INIT",
    "DESIGNER_INPUTS",
    "DESIGNER_MOMENTUM",
    "DESIGNER_SUMMARY",
    "FIELDS",
    "FORGET_ZERO_GRAD",
    "GHOST",
    "GRAPH_TAB",
    "LANDSCAPE_TAB",
    "LAYERS_TAB",
    "LESSONS",
    "LOSS_CURVE",
    "PARAMETERS",
    "PG_BACKWARD",
    "PG_BACKWARD_AGAIN",
    "PG_CHECK",
    "PG_EXAMPLES",
    "PG_EXPRESSION",
    "PG_EXTRAS",
    "PG_FORWARD",
    "PG_GRAPH",
    "PG_MESSAGE",
    "PG_RETAIN",
    "PG_TABLE",
    "PG_VARIANT",
    "PG_ZERO",
    "PHASE_INDICATOR",
    "PLAYGROUND_CONTROLS",
    "PLAYGROUND_TAB",
    "STEP_NAMES",
    "TRAINING_CONTROLS",
    "TRAINING_LOOP",
    "TRAINING_TOOLBAR",
    "Lesson",
    "Setup",
    "Step",
    "lesson",
]

BUILTIN_LESSONS = Path(__file__).resolve().with_name("builtin_lessons")


def _builtin() -> tuple[Lesson, ...]:
    files = sorted(BUILTIN_LESSONS.glob("*.toml"))
    if not files:
        raise RuntimeError(f"the built-in lessons are missing from {BUILTIN_LESSONS}")
    return tuple(load_lesson(path.read_text(encoding="utf-8"), path.name) for path in files)


LESSONS: tuple[Lesson, ...] = _builtin()


def lesson(key: str) -> Lesson:
    """The lesson with this key."""
    for item in LESSONS:
        if item.key == key:
            return item
    raise KeyError(f"no lesson {key!r}; the lessons are {[x.key for x in LESSONS]}")
