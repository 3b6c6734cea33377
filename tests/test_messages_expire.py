"""Status messages go once what they say is no longer so (issue 32, items 6 and 10):
a lesson's set-up after its run moved on and after the next lesson, a refused learning
rate after a valid one, panels 'put away' after they came back."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from gradbox.teaching.lessons import LESSONS
from qt_waits import settle

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process


def _lesson(key: str):  # type: ignore[no-untyped-def]
    return next(x for x in LESSONS if x.key == key)


def test_a_lesson_set_up_message_goes_with_the_next_lesson(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                           step_session) -> None:
    win = open_window((1366, 768))
    win.lessons.apply(_lesson("moons"))
    qtbot.waitUntil(lambda: "Lesson set up" in win.messages.text())
    step_session(win.controller, 5)
    assert "step 0" not in win.messages.text()  # the run is at step 5
    win.lessons.apply(_lesson("chain-rule"))  # a playground lesson: the run stays
    settle()
    assert "Lesson set up" not in win.messages.text()


def _type_rate(win, text: str) -> None:  # type: ignore[no-untyped-def]
    win.designer.lr.setFocus()
    focused = QApplication.focusWidget()
    assert focused in (win.designer.lr, win.designer.lr.lineEdit())
    win.designer.lr.lineEdit().selectAll()
    QTest.keyClicks(focused, text)
    QTest.keyClick(focused, Qt.Key.Key_Return)


def test_a_refused_rate_is_not_left_in_the_field_nor_said_after_a_good_one(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    win = open_window((1366, 768))
    used = win.controller.snapshot.config.lr
    _type_rate(win, "1e999")
    assert "Not applied" in win.messages.text() and "1e999" in win.messages.text()
    # item 10: the field shows what the run uses, not the refused text
    assert win.designer.lr.currentText() == f"{used:g}"
    _type_rate(win, f"{used:g}")  # the rate the run has: nothing to apply
    settle()
    assert "Not applied" not in win.messages.text()
    assert "Not applied" not in win.designer.status.text()


def test_put_away_is_not_said_once_the_panels_are_back(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1366, 768))
    win.tabs.setCurrentWidget(win.playground_page())
    settle()
    assert "Put away while this tab shows" in win.messages.text()
    win.docks["Designer"].toggleViewAction().trigger()
    settle()
    assert win.docks["Designer"].isVisible()
    assert "Put away" not in win.messages.text()
