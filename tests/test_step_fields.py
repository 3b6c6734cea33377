"""What a lesson step's words name is on screen (issue 32, item 2): 'set momentum to 0.9'
with the Momentum box scrolled out of the Designer's view at 1366 x 768 and 1024 x 768.
Every field a step names is listed in its panels (lessons.FIELDS) and scrolled into view,
in teacher mode and out of it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QScrollArea, QWidget

from gradbox.teaching import lessons
from gradbox.teaching.lessons import LESSONS
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

STEPS = [(lesson.key, k, name) for lesson in LESSONS for k, step in enumerate(lesson.steps)
         for name in step.panels if name in lessons.FIELDS]


def _whole_on_screen(win: MainWindow, widget: QWidget) -> bool:
    rect = QRect(widget.mapTo(win, QPoint(0, 0)), widget.size())
    shown = QRect(rect)
    parent = widget.parentWidget()
    while parent is not None and parent is not win:
        shown = shown.intersected(QRect(parent.mapTo(win, QPoint(0, 0)), parent.size()))
        parent = parent.parentWidget()
    return widget.isVisible() and shown.intersected(win.rect()) == rect


def test_the_steps_that_name_a_field_list_it() -> None:
    said = {"momentum": lessons.DESIGNER_MOMENTUM, "activation": lessons.DESIGNER_ACTIVATION,
            "Init": lessons.DESIGNER_INIT, "Inputs": lessons.DESIGNER_INPUTS}
    for lesson in LESSONS:
        for step in lesson.steps:
            if "Designer" in step.do:
                for word, name in said.items():
                    if word in step.do:
                        assert name in step.panels, (lesson.key, step.do)
            if "parameter count" in step.do + step.look:  # lesson 8: "under the layers"
                assert lessons.DESIGNER_SUMMARY in step.panels, (lesson.key, step.do)
    assert {name for _key, _k, name in STEPS} == set(lessons.FIELDS)


@pytest.mark.parametrize("teacher", [True, False])
@pytest.mark.parametrize(("width", "height"), [(1366, 768), (1024, 768), (1024, 700)])
def test_each_field_a_step_names_is_scrolled_into_view(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                       height: int, teacher: bool) -> None:
    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height))
    if teacher:
        win.lessons.set_teacher_mode(True)
    for key, k, name in STEPS:
        win.lessons.apply_key(key)
        win.lessons.go_to_step(k)
        settle()
        fields = win.findChildren(QWidget, name)
        assert fields, name
        qtbot.waitUntil(lambda f=fields[0]: _whole_on_screen(win, f), timeout=2000)


def test_lesson_8s_parameter_count_is_in_view_at_1024x700(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window in teacher mode: lesson 8 step 2 says 'read the parameter
    count under the layers', and 'MLP(2, [1]) · 3 parameters' was below the Designer's
    fold (the Inputs row was scrolled into view, the line under it was not)."""
    win = open_window((1024, 700))
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("features-or-depth")
    settle()
    area = win.designer.summary.parentWidget()
    while not isinstance(area, QScrollArea):
        area = area.parentWidget()
    area.verticalScrollBar().setValue(0)  # the Designer as a learner leaves it: at its top
    win.lessons.go_to_step(1)
    settle()
    qtbot.waitUntil(lambda: _whole_on_screen(win, win.designer.summary), timeout=2000)
    assert "parameters" in win.designer.summary.text()


def test_the_init_box_never_cuts_xavier_glorot_silently(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window: lesson 9 step 4 says 'Choose Xavier/Glorot', and in
    teacher mode at 1024x700 the Init box showed 'Xavier/Glorc', cut at its frame (13 px
    short), which reads as a word. Squeezed, it says so: 'Xavier/Glo…', whole in its
    tooltip, as the Loss box does."""
    from PySide6.QtWidgets import QStyle, QStyleOptionComboBox
    win = open_window((1024, 700))
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("start-at-zero")
    win.lessons.go_to_step(3)
    box = win.designer.init
    box.setCurrentIndex(box.findData("xavier"))
    settle()
    option = QStyleOptionComboBox()
    box.initStyleOption(option)
    field = box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                       QStyle.SubControl.SC_ComboBoxEditField, box)
    shown = box.shown_text() if hasattr(box, "shown_text") else box.currentText()
    assert box.fontMetrics().horizontalAdvance(shown) <= field.width(), shown
    assert shown == "Xavier/Glorot" or (shown.endswith("…") and "Xavier/Glorot" in box.toolTip())
