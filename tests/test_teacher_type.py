"""Teacher mode enlarges the text a step points at in the main views too (issue 32, item
20): the Playground's Variables table, the Layers readout and the value labels under the
Graph's neurons stayed at 9 pt while the rest of the window was at the teacher's size
(the tab widget's tab bar had a style sheet, and Qt then hands a font change on to the
tab widget's pages through a style-sheet style it does not have)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from gradbox.teaching.lessons import LESSONS
from gradbox.views.layouts.presentation import teacher_scale
from qt_waits import settle


def _lesson(key: str):  # type: ignore[no-untyped-def]
    return next(lesson for lesson in LESSONS if lesson.key == key)


@pytest.mark.parametrize("size", [(1024, 700), (1400, 900)])
def test_what_a_step_points_at_in_the_main_views_is_at_the_teachers_size(  # type: ignore[no-untyped-def]
        qtbot, open_window, size: tuple[int, int]) -> None:
    win = open_window(size)
    settle()
    base = QApplication.font().pointSizeF()
    scale = teacher_scale(win.size())
    teacher = pytest.approx(base * scale)
    win.lessons.set_teacher_mode(True)

    # Lesson 1 step 3 points at the Variables table.
    win.lessons.apply(_lesson("chain-rule"))
    win.lessons.go_to_step(2)
    settle()
    assert win.font().pointSizeF() == teacher
    table = win.playground.table
    assert table.isVisible() and table.font().pointSizeF() == teacher
    assert table.horizontalHeader().font().pointSizeF() == teacher

    # Lesson 10 step 1 points at the Layers tab: its readout line.
    win.lessons.apply(_lesson("vanishing-gradients"))
    settle()
    readout = win.layer_stats.readout
    assert readout.isVisible() and readout.font().pointSizeF() == teacher

    # Lesson 6 step 3 points at the Graph: the labels under its neurons.
    win.lessons.apply(_lesson("moons"))
    win.lessons.go_to_step(2)
    settle()
    assert win.graph.isVisible() and win.graph.view.font_scale() == pytest.approx(scale)

    # Off: back to the window's own size everywhere.
    win.lessons.set_teacher_mode(False)
    settle()
    assert table.font().pointSizeF() == pytest.approx(base)
    assert readout.font().pointSizeF() == pytest.approx(base)
    assert win.graph.view.font_scale() == pytest.approx(1.0)


def test_the_layers_small_plots_keep_their_room_in_teacher_type(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    """Lesson 10 step 4 (the Designer beside the Layers tab, 1024x700): in the teacher's
    type the legend and the readout after a run still leave the small plots their
    readable room."""
    win = open_window((1024, 700))
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700), timeout=3000)
    settle()
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("vanishing-gradients")
    win.lessons.go_to_step(3)
    for _ in range(3):
        win.controller.step()
    view = win.layer_stats
    qtbot.waitUntil(lambda: "Step 3" in view.readout.text(), timeout=10_000)
    settle()
    assert view.readout.font().pointSizeF() == pytest.approx(win.font().pointSizeF())
    assert view.isVisible() and view.activations_shown()
    assert not win.room.shown_too_small()
