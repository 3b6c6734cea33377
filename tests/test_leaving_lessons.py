"""What a lesson leaves behind (issue 32, 'Also'): Leave gives back the learner's tab
and its panels; a playground lesson in teacher mode shows no run's switches or step."""

from __future__ import annotations

from qt_waits import settle


def test_leave_after_a_playground_lesson_gives_back_the_tab_and_panels(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    win = open_window((1366, 768))
    assert win.tabs.currentWidget() is win.boundary
    win.lessons.apply_key("chain-rule")
    settle()
    assert win.tabs.currentWidget() is win.playground_page()
    assert not win.docks["Designer"].isVisible()  # put away for the playground
    qtbot.mouseClick(win.lessons.leave_button, qtbot_left())
    settle()
    assert win.tabs.currentWidget() is win.boundary
    for title in ("Designer", "Parameters && gradients", "Loss curve", "Training loop"):
        assert win.docks[title].isVisible(), title


def test_a_playground_lesson_in_teacher_mode_shows_no_runs_switches(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session) -> None:
    win = open_window((1366, 768))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("zero-grad")
    settle()
    step_session(win.controller, 3)
    assert win.toolbar.counter.isVisible() and win.toolbar.timeline.isVisible()
    win.lessons.apply_key("chain-rule")
    settle()
    for widget in (win.toolbar.forget_zero_grad, win.toolbar.ghost, win.toolbar.counter,
                   win.toolbar.timeline):
        assert not widget.isVisible(), widget.accessibleName()
    win.lessons.set_teacher_mode(False)
    settle()
    assert win.toolbar.timeline.isVisible()


def qtbot_left():  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    return Qt.MouseButton.LeftButton


def test_an_opened_lesson_is_in_the_chooser_and_open_lesson_in_the_lessons_menu(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    """issue 32, item 15: the opened lesson was not in the chooser; 'Open lesson…' was
    only under File."""
    import dataclasses

    from gradbox.teaching.lessons import LESSONS
    win = open_window((1366, 768))
    menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Lessons")
    assert "Open &lesson…" in [a.text() for a in menu.actions()]
    own = dataclasses.replace(LESSONS[0], title="My own chain rule")  # the same key
    win.lessons.apply(own)
    settle()
    chooser = win.lessons.chooser
    assert chooser.count() == len(LESSONS) + 1
    assert chooser.currentText() == "My own chain rule"
    win.lessons.apply(LESSONS[5])
    chooser.activated.emit(len(LESSONS))  # chosen again from the list
    assert win.lessons.lesson is own
