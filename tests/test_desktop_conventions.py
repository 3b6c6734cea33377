"""Desktop conventions in the real window: the wheel scrolls the panel, not an unfocused
box under the pointer; a click on the timeline's groove lands where clicked."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyle, QStyleOptionSlider

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process


def _wheel(widget, notches: int = -1) -> None:  # type: ignore[no-untyped-def]
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * notches), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_over_an_unfocused_spin_box_scrolls_the_designer(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window()
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.width() == 1024)
    spin = win.designer.layer_spins[0]
    area = win.docks["Designer"].widget()
    before, scrolled = spin.value(), area.verticalScrollBar().value()
    win.boundary.setFocus()
    _wheel(spin)
    assert spin.value() == before  # a layer of 8 stays 8: the run is not replaced
    assert area.verticalScrollBar().value() > scrolled  # the panel scrolled instead
    for combo in (win.designer.activation, win.toolbar.run_controls.speed):
        text = combo.currentText()
        _wheel(combo)
        assert combo.currentText() == text
    # Once the box has the focus (clicked, tabbed into), the wheel changes it.
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus)
    _wheel(spin)
    assert spin.value() == before - 1


def test_a_click_on_the_timeline_groove_lands_where_clicked(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                           step_session) -> None:
    win = open_window()
    step_session(win.controller, 60)
    slider = win.toolbar.timeline
    qtbot.waitUntil(lambda: slider.maximum() == 60)
    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    groove = slider.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                           QStyle.SubControl.SC_SliderGroove, slider)
    handle = slider.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                           QStyle.SubControl.SC_SliderHandle, slider)
    span = groove.width() - handle.width()
    x = groove.left() + handle.width() // 2 + span // 4  # a quarter of the way: step 15
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        QTest.mouseClick(slider, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         QPoint(x, slider.height() // 2))
    qtbot.waitUntil(lambda: win.controller.snapshot.step != 60, timeout=5000)
    assert abs(win.controller.snapshot.step - 15) <= 1, win.controller.snapshot.step
    assert slider.value() == win.controller.snapshot.step


def test_regression_names_its_tab_fit_and_shows_no_accuracy(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                            step_session) -> None:
    win = open_window(dataset="sine", loss="mse")
    step_session(win.controller, 1)
    assert win.tabs.tabText(win.tabs.indexOf(win.boundary)) == "Fit"
    assert not win.headline.values["accuracy"].isVisible()
    assert not win.headline.captions["test_accuracy"].isVisible()
    assert win.headline.values["loss"].isVisible()
    win.files.new_session()  # the default run: classes again
    qtbot.waitUntil(lambda: win.tabs.tabText(win.tabs.indexOf(win.boundary))
                    == "Decision boundary")
    assert win.headline.values["accuracy"].isVisible()
