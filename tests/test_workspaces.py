"""Workspaces: Train, Graph, Playground and Lesson, each a layout for 1024 x 700 first, each
remembering its arrangement (versioned settings), with Reset layout."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QSettings, Qt
from PySide6.QtWidgets import QWidget

from gradbox.views.layouts.workspaces import WORKSPACES, settings_key
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

SIZES = [(1024, 700), (1366, 768), (1920, 1080)]


def _inside(win: MainWindow, widget: QWidget) -> bool:
    return win.rect().contains(QRect(widget.mapTo(win, QPoint(0, 0)), widget.size()))


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_each_workspace_fits_and_shows_its_panels(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                  height: int) -> None:
    win = open_window()
    win.resize(width, height)
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height))
    for space in WORKSPACES:
        win.workspaces.actions[space.key].trigger()
        settle()  # the layout the switch queued
        assert win.size().toTuple() == (width, height), space.key
        page = win.tabs.currentWidget()
        assert space.tab in (page.objectName(), *(c.objectName() for c in
                                                   page.findChildren(QWidget, space.tab)))
        for title, dock in win.docks.items():
            assert dock.isVisible() == (title in space.docks), (space.key, title)
            if dock.isVisible():
                assert _inside(win, dock), (space.key, title)
                assert dock.width() >= 200 and dock.height() >= 120, (space.key, title)
        assert page.width() >= 300 and page.height() >= 250, (space.key, page.size())
        assert _inside(win, page)


def test_a_workspace_remembers_its_arrangement_and_reset_designs_it_again(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    win = open_window()
    win.resize(1366, 768)
    qtbot.waitUntil(lambda: win.width() == 1366)
    win.workspaces.switch("graph")
    settle()  # the layout the switch queued
    parameters = win.docks["Parameters && gradients"]
    designed = parameters.width()
    win.resizeDocks([parameters], [designed + 120], Qt.Orientation.Horizontal)
    settle()  # the layout the switch queued
    moved = parameters.width()
    assert moved > designed + 60
    win.workspaces.switch("train")
    settle()  # the layout the switch queued
    assert win.docks["Designer"].isVisible()
    win.workspaces.switch("graph")
    settle()  # the layout the switch queued
    assert parameters.width() == moved  # as the user left it
    assert win.settings is not None
    assert win.settings.value(settings_key("train")) is not None  # versioned key
    win.workspaces.reset()
    settle()  # the layout the switch queued
    assert abs(parameters.width() - designed) < abs(parameters.width() - moved) / 2
    win.save_settings()
    saved = QSettings(win.settings.fileName(), QSettings.IniFormat)
    assert saved.value(settings_key("graph")) is not None


def test_the_workspace_shortcuts_are_in_the_view_menu(open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window()
    texts = {a.shortcut().toString() for a in win.workspaces.actions.values()}
    assert texts == {"Ctrl+1", "Ctrl+2", "Ctrl+3", "Ctrl+4", "Ctrl+5"}
    view_actions = [a.text() for a in win.menus["&View"].actions()]
    assert "&Workspace" in view_actions


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768)])
def test_the_lesson_workspace_shows_what_each_step_names(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                         height: int) -> None:
    from gradbox.teaching.lessons import LESSONS
    from qt_waits import settle
    from test_teacher_presentation import problems

    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height), timeout=3000)
    font = win.font().pointSizeF()
    win.workspaces.switch("lesson")
    settle()
    found = []
    for lesson in LESSONS:
        win.lessons.apply(lesson)
        for k in range(len(lesson.steps)):
            win.lessons.go_to_step(k)
            settle()
            assert win.size().toTuple() == (width, height)
            assert win.font().pointSizeF() == font  # no presentation scaling
            assert not win.presentation.active
            found += [f"{lesson.key} step {k + 1}: {p}"
                      for p in problems(win, (*lesson.steps[k].panels, "lesson_next"))]
            found += [f"{lesson.key} step {k + 1}: {g.what} too small"
                      for g in win.room.shown_too_small()]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("key", ["zero-grad", "moons", "vanishing-gradients"])
def test_switching_to_the_lesson_workspace_mid_lesson_keeps_the_window_on_screen(  # type: ignore[no-untyped-def]
        qtbot, open_window, key: str) -> None:
    # Seen at 1024x700: lesson 4 at step 2 in the window as it opens, Ctrl+4 -> the
    # window grew to 1024 x 902 (the panels were shown before they were arranged).
    win = open_window((1024, 700))
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700), timeout=3000)
    win.lessons.apply_key(key)
    win.lessons.go_to_step(1)
    settle()
    win.workspaces.switch("lesson")
    settle()
    assert win.size().toTuple() == (1024, 700)
