"""Right after Forget zero_grad is toggled, the loop and the parameters say what the step
on show did and from which step the switch acts (issue 32, item 11): '.grad = 0
everywhere' stood under the struck-out zero_grad line."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gradbox.autograd.phases import Phase
from gradbox.teaching.loop_code import loop_state


def test_toggled_at_a_step_boundary_the_loop_and_the_note_say_from_when(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session, after_snapshot) -> None:
    win = open_window((1366, 768))
    step_session(win.controller, 3)
    box = win.toolbar.forget_zero_grad
    with qtbot.waitSignal(win.controller.snapshot_changed):
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)
    assert win.controller.snapshot.forget_zero_grad
    figure = loop_state(win.controller.snapshot).figures[Phase.ZERO_GRAD]
    assert figure == "this step: .grad = 0 everywhere; skipped from step 4 on"
    assert "skipped from step 4 on" in win.training_loop.code.toPlainText()
    warning = win.parameters.warning.text()
    assert "skipped from step 4 on" in warning and "sum of" not in warning
    step_session(win.controller, 2)  # step 3's pass and two more: the true pile-up
    assert "sum of 3 backward passes" in win.parameters.warning.text()
    with qtbot.waitSignal(win.controller.snapshot_changed):
        qtbot.mouseClick(box, Qt.MouseButton.LeftButton)  # off again
    assert win.parameters.warning.isVisible()  # the gradients are still a pile
    assert "runs again from step 6 on" in win.parameters.warning.text()
    assert "runs again from step 6 on" in win.training_loop.code.toPlainText()
