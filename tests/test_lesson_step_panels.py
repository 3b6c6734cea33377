"""Each lesson step names what it points at: the data teacher mode presents."""

from __future__ import annotations

import pytest

from gradbox.teaching.lessons import DESIGNER, FIELDS, LESSONS, Lesson

LOOP_PHASES = ("", "forward", "zero_grad", "backward", "update")


@pytest.mark.parametrize("item", LESSONS, ids=lambda x: x.key)
def test_every_step_names_panels_the_lesson_has(item: Lesson) -> None:
    for number, step in enumerate(item.steps, 1):
        assert step.panels, f"{item.key} step {number} names no panel"
        # a field (lessons.FIELDS) lives in the Designer, which the lesson must have
        fields = {name for name in step.panels if name in FIELDS}
        assert not fields or DESIGNER in item.controls, (item.key, number)
        unknown = set(step.panels) - set(item.controls) - fields
        assert not unknown, f"{item.key} step {number}: {unknown} not among its controls"
        assert step.loop_line in LOOP_PHASES


def test_a_step_that_quotes_a_loop_line_names_the_loop() -> None:
    from gradbox.teaching.lessons import TRAINING_LOOP
    quoting = [(x.key, k) for x in LESSONS for k, s in enumerate(x.steps) if s.loop_line]
    assert quoting  # lesson 4 points at zero_grad(), backward() and step()
    for key, k in quoting:
        step = next(x for x in LESSONS if x.key == key).steps[k]
        assert TRAINING_LOOP in step.panels
