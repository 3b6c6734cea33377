"""A 'too small to read' banner never covers what it is about (issue 32, items 3, 8, 13):
it takes a row beside its view; teacher mode without a lesson presents the view on show
rather than every panel at once under banners."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QWidget

from gradbox.teaching.lessons import LESSONS
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

FIND_DIRECT = Qt.FindChildOption.FindDirectChildrenOnly


def _covered(win: MainWindow) -> list[str]:
    found = []
    for band in win.room.shown_too_small():
        if band.row is None:
            continue  # a view in no box layout (the landscape): a band over its edge
        # what it must leave readable: its view, or (a band inside the view it is about:
        # the Layers tab's) every other part of that view -- the plots, the readout
        inside = band.parentWidget() is band.view
        parts = ([w for w in band.view.findChildren(QWidget, options=FIND_DIRECT)
                  if w is not band and w.isVisible()] if inside else [band.view])
        rect = QRect(band.mapTo(win, QPoint(0, 0)), band.size())
        for part in parts:
            if rect.intersects(QRect(part.mapTo(win, QPoint(0, 0)), part.size())):
                found.append(f"{band.what} over {part.objectName() or type(part).__name__}")
    return found


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768)])
def test_no_banner_covers_its_view_at_any_step(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                               height: int) -> None:
    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height))
    win.lessons.set_teacher_mode(True)
    for lesson in LESSONS:
        win.lessons.apply(lesson)
        for k in range(len(lesson.steps)):
            win.lessons.go_to_step(k)
            settle()
            assert _covered(win) == [], (lesson.key, k)
    # the parameter table squeezed on purpose: its banner beside it, every row it has shown
    win.lessons.set_teacher_mode(False)
    settle()
    assert _covered(win) == []


def test_teacher_mode_without_a_lesson_presents_the_view_on_show(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1024, 700))
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700))
    win.lessons.teacher.click()
    settle()
    assert win.presentation.active
    assert win.boundary.isVisible() and win.toolbar.isVisible()
    assert win.room.shown_too_small() == []  # the boundary was 95 px high under a banner
    assert win.size().toTuple() == (1024, 700)
    assert win.docks["Lessons"].isVisible()  # to choose a lesson from
    win.lessons.teacher.click()
    settle()
    assert win.docks["Designer"].isVisible()  # given back
