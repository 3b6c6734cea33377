"""Lessons in the real window: their own dock, set up when entered, numbers from the screen."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from gradbox.teaching import lessons
from gradbox.views.window.main_window import MainWindow

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process

NUMBER = re.compile(r"(?<![\w.])[−-]?\d+(?:\.\d+)?(?![\w.])")


def _numbers(text: str) -> set[float]:
    return {float(m.replace("−", "-")) for m in NUMBER.findall(text)}


@pytest.fixture
def window_size() -> tuple[int, int]:
    return (1024, 700)


@pytest.fixture
def window(window: MainWindow) -> MainWindow:
    window.playground.animation_ms = 1  # the playground's replays without waiting
    return window


def _on_screen(window: MainWindow) -> set[float]:
    """Every number the playground shows: the variables' values and each node's data."""
    pg = window.playground
    shown = set()
    for row in range(pg.table.rowCount()):
        item = pg.table.item(row, 1)
        if item is not None and item.text():
            shown.add(float(item.text().replace("−", "-")))
    graph = pg.graph.graph()
    assert graph is not None
    shown |= {float(graph.data(node)) for node in range(len(graph))}
    return shown


def test_the_lessons_dock_is_never_a_tab_behind_another_panel(window: MainWindow) -> None:
    dock = window.docks["Lessons"]
    assert window.tabifiedDockWidgets(dock) == []
    assert dock.isVisible() and window.docks["Parameters && gradients"].isVisible()
    assert not dock.visibleRegion().isEmpty()
    # "Open the Parameters panel" is a step of a lesson: both stay in view together.
    window.lessons.apply_key("zero-grad")
    assert dock.isVisible() and not dock.visibleRegion().isEmpty()
    assert not window.parameters.visibleRegion().isEmpty()


def test_no_lesson_text_before_a_lesson_is_entered(window: MainWindow) -> None:
    text = window.lessons.text_plain()
    assert "Choose a lesson" in text
    for item in lessons.LESSONS:
        for step in item.steps:
            assert step.look not in text  # nothing claims a state the app is not in
    assert not window.lessons.restart.isEnabled()


@pytest.mark.parametrize("key", [x.key for x in lessons.LESSONS
                                 if x.setup.view == "playground"
                                 and x.steps[0].do.startswith(("Look", "Read"))
                                 and _numbers(x.steps[0].look)])
def test_quoted_numbers_equal_the_widgets_values_after_entry(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                             key: str) -> None:
    """A first step that only asks to look quotes numbers: each must be on screen."""
    item = lessons.lesson(key)
    window.lessons.chooser.setCurrentIndex(lessons.LESSONS.index(item))
    window.lessons.chooser.activated.emit(lessons.LESSONS.index(item))  # as a click does
    quoted = _numbers(item.steps[0].look)
    assert quoted <= _on_screen(window), (quoted, _on_screen(window))
    assert item.steps[0].look in " ".join(window.lessons.text_plain().split())


def test_chain_rule_numbers_are_on_screen_at_entry(window: MainWindow) -> None:
    # Issue 14: the text said a·b = −6 while the screen showed a = 0.3, b = 0.9.
    window.lessons.apply_key("chain-rule")
    assert {2.0, -3.0, 10.0, -6.0, 4.0} <= _on_screen(window)


def test_micro_batch_lesson_quotes_the_difference_on_screen(window: MainWindow) -> None:
    item = lessons.lesson("micro-batches")
    assert "about 1e-16" in item.steps[0].look
    window.lessons.apply_key(item.key)
    shown = re.search(r"Largest difference: (\S+) ", window.playground.microbatches.summary.text()
                      .replace("<b>", "").replace("</b>", ""))
    assert shown is not None and float(shown.group(1)) < 1e-15  # "about 1e-16"


def test_teacher_mode_keeps_the_lessons_steps_in_view(qtbot, window: MainWindow) -> None:
    window.lessons.apply_key("zero-grad")
    window.lessons.next_step()
    window.lessons.set_teacher_mode(True)
    panel = window.lessons
    step = lessons.lesson("zero-grad").steps[1]
    # The current step has a box of its own above the text, always in view ...
    assert panel.current.isVisible() and not panel.current.visibleRegion().isEmpty()
    assert step.look in " ".join(panel.text_plain().split())
    assert panel.current.height() >= panel.current.heightForWidth(panel.current.width())
    # ... and in the list of steps, it sits inside the visible part of the text.
    text = panel.text
    cursor = text.document().find(step.do[:30])
    assert not cursor.isNull()
    rect = text.cursorRect(cursor)
    assert rect.top() >= 0 and rect.bottom() <= text.viewport().height(), rect
    plain = window.lessons.text_plain()
    assert plain.index("Steps") < plain.index(lessons.lesson("zero-grad").intro[:40])
    # The phase indicator is big enough for the back of the room, on its own row, and
    # the lesson's switch stays on the toolbar (not pushed into its overflow menu).
    bar = window.phase_bar
    assert bar.isVisible() and not window.toolbar.phase_action.isVisible()
    assert bar.label.fontInfo().pointSizeF() >= 20
    assert "step 0 · nothing run yet" in bar.label.text()
    assert "next: 1/4 forward" in bar.label.text()
    forget = window.toolbar.forget_zero_grad
    assert forget.isVisible() and _inside_window(window, forget)
    assert window.toolbar.rect().contains(forget.geometry())
    window.lessons.set_teacher_mode(False)
    assert not bar.isVisible() and window.toolbar.phase_action.isVisible()


def test_the_training_loop_dock_is_beside_the_loss_curve(window: MainWindow) -> None:
    loop = window.docks["Training loop"]
    assert window.dockWidgetArea(loop) == Qt.DockWidgetArea.BottomDockWidgetArea
    assert loop.isVisible() and window.tabifiedDockWidgets(loop) == []


# --- the playground's layout: messages wrap inside it ---------------------------------------
def _inside_window(window: MainWindow, widget) -> bool:  # type: ignore[no-untyped-def]
    """Wholly on screen: inside the window and not cut off by a scroll area's edge."""
    top_left = widget.mapTo(window, widget.rect().topLeft())
    bottom_right = widget.mapTo(window, widget.rect().bottomRight())
    inside = window.rect().contains(top_left) and window.rect().contains(bottom_right)
    return inside and widget.visibleRegion().boundingRect().size() == widget.rect().size()


@pytest.mark.parametrize("text", [
    "a" * 299 + "+",  # a syntax error at the very end of a long line
    "(" + " + ".join(f"x{i}" for i in range(60)) + " +* b",  # spaces, error at the end
    "q" * 300 + "(a)",  # an unknown function with a 300-character name
], ids=["one-word", "spaced", "unknown-name"])
def test_a_300_character_error_leaves_every_control_inside_the_window(
        qtbot, window: MainWindow, text: str, settle) -> None:  # type: ignore[no-untyped-def]
    pg = window.playground
    window.tabs.setCurrentWidget(window.playground_page())
    width = window.width()
    pg.expression.setText(text)
    pg.forward_button.click()
    qtbot.waitUntil(lambda: pg.error.isVisible() or "unknown" in pg.message_text().lower(),
                    timeout=3000)
    settle()  # the layouts the message asked for
    assert window.width() == width
    controls = [pg.forward_button, pg.variant, pg.expression, pg.backward_button,
                pg.check_button, pg.table, pg.graph]
    for control in controls:
        assert control.isVisible()
        assert _inside_window(window, control), control.objectName()
    message = pg.error if pg.error.isVisible() else pg.message
    assert _inside_window(window, message)


@pytest.mark.parametrize("key", ["topological-order", "accumulate"])
def test_the_playground_headers_are_readable_beside_the_lessons(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                                key: str, settle) -> None:
    window.lessons.apply_key(key)
    pg = window.playground
    pg.variant.setCurrentIndex(pg.variant.findData(lessons.lesson(key).setup.variant
                                                   if key != "accumulate" else "assign"))
    pg.backward_button.click()
    settle()  # the layouts the message asked for
    header = pg.table.horizontalHeader()
    metrics = header.fontMetrics()
    for column in range(pg.table.columnCount()):
        if pg.table.isColumnHidden(column):
            continue
        text = pg.table.horizontalHeaderItem(column).text()
        widest = max(metrics.horizontalAdvance(line) for line in text.splitlines())
        assert header.sectionSize(column) >= widest + 4, (text, header.sectionSize(column))


@pytest.mark.parametrize("key", [x.key for x in lessons.LESSONS])
def test_going_through_a_lesson_in_teacher_mode_keeps_each_step_in_the_list(
        window: MainWindow, key: str, settle) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window at 1024x700: from Next in teacher mode, the list of steps
    was scrolled past the current one (lesson 6 step 3: its first lines above the view,
    only steps 4 and 5 showing) -- the text was scrolled to it while teacher mode laid
    the docks out again, at a narrower width, and its lines then moved up."""
    panel = window.lessons
    panel.set_teacher_mode(True)
    panel.apply_key(key)
    text = panel.text
    for k, step in enumerate(lessons.lesson(key).steps):
        panel.go_to_step(k)
        settle()
        cursor = text.document().find(step.do)
        for _same in range(sum(s.do == step.do for s in lessons.lesson(key).steps[:k])):
            cursor = text.document().find(step.do, cursor)  # lesson 11 says one twice
        assert not cursor.isNull()
        rect = text.cursorRect(cursor)
        assert rect.top() >= 0 and rect.bottom() <= text.viewport().height(), (k, rect)


def test_lesson_5s_last_step_does_what_its_look_for_says(qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window: lesson 5 step 5, 'Press Zero grads, then Backward', looks
    for 'One pass, one gradient, and the check passes again' -- with no check pressed,
    the finite differences stood at '–' and nothing said it passed. The buttons the step
    names, pressed in its order, show what it says."""
    from PySide6.QtCore import Qt as _Qt
    pg = window.playground
    window.lessons.apply_key("backward-twice")
    pg.retain.setChecked(True)  # step 3's state, then step 4's check
    for button in (pg.backward_button, pg.backward_again_button, pg.check_button):
        qtbot.mouseClick(button, _Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "FAILED" in pg.message.text())
    step = lessons.lesson("backward-twice").steps[4]
    buttons = {"Zero grads": pg.zero_button, "Backward": pg.backward_button,
               "Gradient check": pg.check_button}
    for name in sorted((n for n in buttons if n in step.do), key=step.do.index):
        qtbot.mouseClick(buttons[name], _Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "passed" in pg.message.text(), timeout=3000)


def test_lesson_8s_node_details_show_both_uses_of_x1(qtbot, window: MainWindow, settle) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window in teacher mode, at 1024x700 and 1366x768: lesson 8 step 3
    says 'Click x₁: backward adds the shares of both uses into its gradient', and the
    details pane under the graph kept its two lines: the node's number and its order in
    backward, not the two uses. Clicked, the pane shows every line of the node's story."""
    panel = window.lessons
    panel.set_teacher_mode(True)
    panel.apply_key("features-or-depth")
    panel.go_to_step(1)
    boxes = window.designer.feature_boxes
    for name, on in (("x1^2", True), ("x2^2", True), ("x1", False), ("x2", False)):
        boxes[name].setChecked(on)
    qtbot.waitUntil(lambda: window.controller.snapshot.config.features == ("x1^2", "x2^2"))
    window.toolbar.step_action.trigger()
    qtbot.waitUntil(lambda: window.controller.snapshot.step == 1, timeout=10000)
    panel.go_to_step(2)
    graph = window.graph
    graph.view.set_level("operation")
    settle()
    shown = graph.view.graph()
    assert shown is not None
    graph.view.select_node(shown.labels.index("x₁"))
    settle()
    details = graph.details
    assert "used 2 times" in details.toPlainText()
    assert details.isVisible() and details.verticalScrollBar().maximum() == 0
