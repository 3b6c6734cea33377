"""Teacher mode's numbers say what the captions say (issue 32, item 1): the headline over
the plot shows each figure with the loss curve's digits, whole, at classroom sizes."""

from __future__ import annotations

import math

import pytest

from gradbox.formatting import number, percent
from gradbox.teaching.lessons import LESSONS
from qt_waits import settle


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768)])
def test_the_headline_in_teacher_mode_has_the_captions_digits_whole(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session, width: int, height: int) -> None:
    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height))
    win.lessons.apply(next(x for x in LESSONS if x.key == "moons"))
    win.lessons.teacher.click()
    win.lessons.go_to_step(3)  # the boundary and the loss curve
    settle()
    step_session(win.controller, 25)
    settle()
    last = win.controller.snapshot.history[-1]
    assert win.headline.isVisible()
    for key, label in win.headline.values.items():
        if not label.isVisible():
            continue
        value = getattr(last, key)
        expected = percent(value) if "accuracy" in key else number(value)
        assert math.isfinite(value)
        assert label.text() == expected, key  # the caption's digits (number())
        needed = label.fontMetrics().horizontalAdvance(label.text())
        assert needed <= label.width(), (key, label.text(), needed, label.width())
    assert f"train loss {number(last.loss)}" in win.loss_curve.readout.text()
