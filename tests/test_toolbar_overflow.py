"""In teacher mode no toolbar item goes into the » overflow (issue 32, items 4 and 12):
the Ghost run switch at 1024 x 768 and the timeline at 1366 x 768 were there, beside the
phase bar on one row; and what a step's words name is on screen (lesson 4 step 1's ghost)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QToolBar, QToolButton, QWidget

from gradbox.teaching import lessons
from gradbox.teaching.lessons import LESSONS
from gradbox.views.panels.lesson_panel import presented
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle


def _overflowing(win: MainWindow) -> list[str]:
    found = []
    for bar in win.findChildren(QToolBar):
        extension = bar.findChild(QToolButton, "qt_toolbar_ext_button")
        if bar.isVisible() and extension is not None and extension.isVisible():
            found.append(bar.objectName())
    return found


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1024, 768), (1366, 768)])
def test_no_toolbar_overflows_at_any_step_in_teacher_mode(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                          height: int) -> None:
    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height))
    win.lessons.set_teacher_mode(True)
    for lesson in LESSONS:
        win.lessons.apply(lesson)
        for k in range(len(lesson.steps)):
            win.lessons.go_to_step(k)
            settle()
            assert _overflowing(win) == [], (lesson.key, k)
            # the timeline row where the step needs its switches (whole, not in »)
            if {lessons.FORGET_ZERO_GRAD, lessons.GHOST} & set(presented(lesson, k)):
                assert win.toolbar.timeline.isVisible(), (lesson.key, k)


def test_lesson_4_step_1_shows_the_ghost_it_speaks_of(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1024, 768))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("zero-grad")
    settle()
    step = win.lessons.lesson.steps[0]
    assert "ghost" in step.look
    assert lessons.GHOST in step.panels and lessons.PARAMETERS in step.panels
    assert win.toolbar.ghost.isVisible() and win.parameters.isVisible()
    for name in step.panels:
        assert any(w.isVisible() for w in win.findChildren(QWidget, name)), name
