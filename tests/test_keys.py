"""Keys that always work: sent by QTest to whichever widget has the focus, as a learner's
keyboard would, after the clicks and typing a learner does."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget

from gradbox.views.window.main_window import MainWindow

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process


def focused(win: MainWindow) -> QWidget:
    """Where a key press goes: the focus widget, or the window when nothing has it."""
    return QApplication.focusWidget() or win


def click_into(qtbot, widget: QWidget) -> None:  # type: ignore[no-untyped-def]
    """A click in a field, as a learner makes it: the field (its line edit) gets the focus."""
    target = widget.findChild(QWidget, "qt_spinbox_lineedit") or widget
    line_edit = getattr(widget, "lineEdit", None)
    if callable(line_edit) and line_edit() is not None:
        target = line_edit()
    qtbot.mouseClick(target, Qt.LeftButton)
    qtbot.waitUntil(lambda: widget.hasFocus() or target.hasFocus())


def type_over(qtbot, win: MainWindow, text: str) -> None:  # type: ignore[no-untyped-def]
    QTest.keyClick(focused(win), Qt.Key_A, Qt.ControlModifier)
    QTest.keyClicks(focused(win), text)


def press(win: MainWindow, key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.NoModifier) -> None:
    QTest.keyClick(focused(win), key, modifier)


def space_steps(qtbot, win: MainWindow) -> None:  # type: ignore[no-untyped-def]
    before = win.controller.snapshot.step
    press(win, Qt.Key_Space)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == before + 1, timeout=5000)


@pytest.mark.parametrize(("field", "typed", "check"), [
    ("data_seed", "5", lambda c: c.seed == 5),
    ("n_samples", "60", lambda c: c.n_samples == 60),
    ("noise", "0.2", lambda c: c.noise == pytest.approx(0.2)),
    ("lr", "0.3", lambda c: c.lr == pytest.approx(0.3)),
    ("l2", "0.001", lambda c: c.l2 == pytest.approx(0.001)),
    ("batch", "10", lambda c: c.batch_size == 10),
])
def test_typed_number_commits_on_enter_then_space_steps(qtbot, window: MainWindow, field: str,
                                                        typed: str, check) -> None:  # type: ignore[no-untyped-def]
    box = getattr(window.designer, field)
    click_into(qtbot, box)
    type_over(qtbot, window, typed)
    press(window, Qt.Key_Return)
    assert QApplication.focusWidget() is None, "Enter gives the keys back"
    qtbot.waitUntil(lambda: check(window.controller.snapshot.config), timeout=5000)
    for _ in range(3):  # every press steps, not only the first
        space_steps(qtbot, window)
    assert check(window.controller.snapshot.config)
    assert window.controller.snapshot.step == 3


def test_hidden_layer_box_commits_and_keys_come_back(qtbot, window: MainWindow) -> None:
    spin = window.designer.layer_spins[0]
    click_into(qtbot, spin)
    type_over(qtbot, window, "3")
    press(window, Qt.Key_Return)
    qtbot.waitUntil(lambda: window.controller.snapshot.config.hidden[0] == 3, timeout=5000)
    space_steps(qtbot, window)


def test_space_in_a_number_box_commits_it_and_steps(qtbot, window: MainWindow) -> None:
    click_into(qtbot, window.designer.data_seed)
    type_over(qtbot, window, "7")
    space_steps(qtbot, window)  # no Enter first
    snapshot = window.controller.snapshot
    assert snapshot.config.seed == 7, "the step used the typed seed"
    assert window.designer.data_seed.text() == "7", "the box is not blanked by the key"
    press(window, Qt.Key_7)  # the keys came back: a digit no longer lands in the box
    assert window.designer.data_seed.value() == 7


def test_tab_commits_and_moves_on(qtbot, window: MainWindow) -> None:
    click_into(qtbot, window.designer.data_seed)
    type_over(qtbot, window, "9")
    press(window, Qt.Key_Tab)
    qtbot.waitUntil(lambda: window.controller.snapshot.config.seed == 9, timeout=5000)
    space_steps(qtbot, window)


def test_escape_puts_the_number_back_and_leaves(qtbot, window: MainWindow) -> None:
    click_into(qtbot, window.designer.data_seed)
    type_over(qtbot, window, "123")
    press(window, Qt.Key_Escape)
    assert QApplication.focusWidget() is None
    assert window.designer.data_seed.value() == 0
    assert window.designer.data_seed.text() == "0"
    space_steps(qtbot, window)
    assert window.controller.snapshot.config.seed == 0


def test_run_and_substep_keys_work_after_typing(qtbot, window: MainWindow) -> None:
    click_into(qtbot, window.designer.lr)
    type_over(qtbot, window, "0.1")
    press(window, Qt.Key_N)  # commits the rate, then one phase
    qtbot.waitUntil(lambda: window.controller.snapshot.phase == "zero_grad", timeout=5000)
    assert window.controller.snapshot.config.lr == pytest.approx(0.1)
    press(window, Qt.Key_R)
    qtbot.waitUntil(lambda: window.controller.snapshot.step >= 3, timeout=5000)
    press(window, Qt.Key_R)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=5000)


def test_space_in_the_expression_field_types_a_space(qtbot, window: MainWindow) -> None:
    window.tabs.setCurrentIndex(2)
    field = window.playground.expression
    click_into(qtbot, field)
    field.selectAll()
    QTest.keyClicks(focused(window), "a")
    press(window, Qt.Key_Space)
    QTest.keyClicks(focused(window), "* b")
    assert field.text() == "a * b"
    QTest.keyClicks(focused(window), " nr")  # N and R are letters here
    assert field.text() == "a * b nr"
    assert window.controller.snapshot.step == 0
    assert window.controller.snapshot.phase == "forward"
    press(window, Qt.Key_Escape)  # Esc leaves a text field, keeping the text
    assert not field.hasFocus()
    assert field.text() == "a * b nr"


def test_clicking_a_tab_takes_the_focus_out_of_a_field(qtbot, window: MainWindow) -> None:
    click_into(qtbot, window.designer.data_seed)
    bar = window.tabs.tabBar()
    qtbot.mouseClick(bar, Qt.LeftButton, pos=bar.tabRect(0).center())
    assert not window.designer.data_seed.hasFocus()
    press(window, Qt.Key_5)
    assert window.designer.data_seed.value() == 0
    space_steps(qtbot, window)


def test_a_lesson_chosen_after_a_playground_lesson_leaves_the_keys_to_the_window(
        qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window at 1024x700 in teacher mode: lesson 1's Backward had the
    focus; Lessons › 4 hid the playground, Qt gave the focus to the next field in line
    (the parameters' filter), and lesson 4's 'press Sub-step four times' (N) typed 'nnnn'
    there, which emptied the table the step points at."""
    win = open_window((1024, 700))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("chain-rule")
    button = win.playground.backward_button
    qtbot.waitUntil(lambda: button.isVisible())
    button.setFocus()
    qtbot.waitUntil(lambda: button.hasFocus())
    win.lessons.apply_key("zero-grad")
    qtbot.waitUntil(lambda: not button.isVisible())
    assert not button.hasFocus()
    qtbot.waitUntil(lambda: win.controller.snapshot.config.hidden == (8, 8))
    before = win.controller.snapshot.phase
    press(win, Qt.Key_N)
    qtbot.waitUntil(lambda: win.controller.snapshot.phase != before, timeout=5000)
    assert win.parameters.filter.text() == ""
