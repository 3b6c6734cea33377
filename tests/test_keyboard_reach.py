"""The keyboard reaches every control, and says which has it (issue 32, item 18)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from gradbox.views.window.main_window import shortcuts_html
from qt_waits import settle

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process


def _focused():  # type: ignore[no-untyped-def]
    return QApplication.focusWidget()


def test_space_on_a_focused_switch_flips_it_and_takes_no_step(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1366, 768))
    box = win.toolbar.ghost
    box.setFocus()
    qtbot.waitUntil(lambda: _focused() is box)
    QTest.keyClick(_focused(), Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.controller.snapshot.ghost)
    assert box.isChecked() and win.controller.snapshot.step == 0  # no Step ran


def test_the_switches_have_keys_and_f1_lists_every_menu_shortcut(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1366, 768))
    win.designer.kind.setFocus()  # keys go to the window from a field too
    QTest.keyClick(win, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: win.controller.snapshot.forget_zero_grad)
    QTest.keyClick(win, Qt.Key.Key_G)  # (F turned the ghost on with it: G turns it off)
    qtbot.waitUntil(lambda: not win.controller.snapshot.ghost)
    menus = [a.menu() for a in win.menuBar().actions() if a.menu() is not None]
    listed = shortcuts_html(menus)
    for key in ("Ctrl+1", "Ctrl+2", "Ctrl+3", "Ctrl+4", "Ctrl+P", "Ctrl+N", "Ctrl+Q",
                "Space", "F1"):
        assert f"<b>{key}</b>" in listed, key
    assert "Forget zero_grad" in listed and "Ghost run" in listed


def test_tab_goes_through_the_hidden_layers_after_the_seed(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1366, 768))
    win.designer.data_seed.setFocus()
    qtbot.waitUntil(lambda: _focused() is not None)
    QTest.keyClick(_focused(), Qt.Key.Key_Tab)
    settle()
    assert _focused() is win.designer.layer_spins[0]


def test_the_timeline_shows_it_has_the_focus(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1366, 768))
    timeline = win.toolbar.timeline
    win.designer.kind.setFocus()
    settle()
    plain = timeline.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    timeline.setFocus()
    qtbot.waitUntil(lambda: timeline.hasFocus())
    timeline.repaint()
    focused = timeline.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    assert plain != focused  # a mark says where ← and → go


def test_after_a_click_on_next_space_is_step_again(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window: Next ▶ clicked, then Space nine times for 'Step until
    step 10' went through the lesson (Space pressed the button that kept the focus)."""
    win = open_window((1366, 768))
    win.lessons.apply_key("zero-grad")
    settle()
    qtbot.mouseClick(win.lessons.next_button, Qt.MouseButton.LeftButton)
    assert win.lessons.step == 1
    focused = _focused() or win
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=10000):
        QTest.keyClick(focused, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 1)
    assert win.lessons.step == 1  # still the second step of the lesson


def test_the_toolbar_does_not_shift_when_run_becomes_pause(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """issue 32, cosmetic: the toolbar shifted when Run became Pause."""
    win = open_window((1366, 768))
    toolbar = win.toolbar
    reset = toolbar.widgetForAction(toolbar.reset_action)
    before = reset.x()
    toolbar.run_action.setText("Pausing…")
    settle()
    assert reset.x() == before
    toolbar.run_action.setText("Run")


def test_alt_arrows_go_through_a_lesson_and_f1_lists_them(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window: a teacher at the projector had no key for Next ▶ or
    ◀ Previous (F1 listed none); only Tab to the button and Space reached them."""
    win = open_window((1024, 700))
    win.lessons.apply_key("chain-rule")
    win.lessons.set_teacher_mode(True)
    settle()
    win.activateWindow()
    qtbot.waitUntil(lambda: win.isActiveWindow())
    focused = _focused() or win
    QTest.keyClick(focused, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: win.lessons.step == 1)
    QTest.keyClick(_focused() or win, Qt.Key.Key_Right, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: win.lessons.step == 2)
    QTest.keyClick(_focused() or win, Qt.Key.Key_Left, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: win.lessons.step == 1)
    menus = [a.menu() for a in win.menuBar().actions() if a.menu() is not None]
    listed = shortcuts_html(menus)
    assert "<b>Alt+Right</b>" in listed and "<b>Alt+Left</b>" in listed


def test_f_unticks_forget_zero_grad_that_a_lesson_ticked(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window: lesson 4 step 5, 'Untick Forget zero_grad and press Step':
    F did nothing the first time (the menu's switch still thought it was off, as the
    lesson had ticked the box from the run), and Space stepped the broken run again."""
    win = open_window((1024, 700))
    win.lessons.apply_key("zero-grad")
    qtbot.waitUntil(lambda: win.toolbar.forget_zero_grad.isChecked()
                    and win.toolbar.ghost.isChecked())
    QTest.keyClick(_focused() or win, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: not win.controller.snapshot.forget_zero_grad)
    assert not win.toolbar.forget_zero_grad.isChecked()
    QTest.keyClick(_focused() or win, Qt.Key.Key_G)
    qtbot.waitUntil(lambda: not win.controller.snapshot.ghost)
    training = next(a.menu() for a in win.menuBar().actions() if a.text() == "&Training")
    checked = {a.text(): a.isChecked() for a in training.actions() if a.isCheckable()}
    assert checked["Forget zero_grad"] is False and checked["Ghost run"] is False
