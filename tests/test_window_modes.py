"""One owner for the workspace and teacher mode (issue 32, item 5): the View › Workspace
menu, its shortcuts, the Lessons menu's teacher mode and the screen never disagree --
in teacher mode, after it, and after a restart."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from gradbox.views.layouts.workspaces import WORKSPACES
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle


def _shows(win: MainWindow, key: str) -> list[str]:
    """What disagrees with workspace `key` on screen and in the menu."""
    space = next(s for s in WORKSPACES if s.key == key)
    wrong = [f"{title} {'shown' if dock.isVisible() else 'hidden'}"
             for title, dock in win.docks.items() if dock.isVisible() != (title in space.docks)]
    page = win.tabs.currentWidget()
    if page.objectName() != space.tab and not page.findChildren(QWidget, space.tab):
        wrong.append(f"tab {page.objectName()}")
    checked = [k for k, a in win.workspaces.actions.items() if a.isChecked()]
    if checked != [key]:
        wrong.append(f"menu says {checked}")
    return wrong


def test_a_workspace_shortcut_in_teacher_mode_shows_that_workspace(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1366, 768))
    win.lessons.apply_key(next(iter(win.lessons._menu_actions)))
    win.lessons.teacher.click()
    settle()
    assert win.presentation.active
    QTest.keyClick(win, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    settle()
    qtbot.waitUntil(lambda: not win.presentation.active)
    settle()
    assert _shows(win, "graph") == []
    assert not win.lessons.teacher.isChecked()
    assert "Teacher mode" in win.messages.text()  # said, not silent
    QTest.keyClick(win, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    settle()
    assert _shows(win, "train") == []


def test_the_workspace_comes_back_after_a_restart_as_the_menu_says(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                                   tmp_path) -> None:
    settings = QSettings(str(tmp_path / "shared.ini"), QSettings.IniFormat)
    first = open_window((1366, 768), settings=settings)
    QTest.keyClick(first, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    settle()
    first.save_settings()
    first.close()
    again = open_window((1366, 768), settings=QSettings(settings.fileName(),
                                                        QSettings.IniFormat))
    settle()
    assert _shows(again, "graph") == []
    QTest.keyClick(again, Qt.Key.Key_1, Qt.KeyboardModifier.ControlModifier)
    settle()
    assert _shows(again, "train") == []
    QTest.keyClick(again, Qt.Key.Key_2, Qt.KeyboardModifier.ControlModifier)
    settle()
    assert _shows(again, "graph") == []
