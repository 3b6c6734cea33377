"""A lesson in the real window sets the run controls it depends on, gives the learner's
back when left, and says where its claim does not hold on the run on screen (issue 20)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from gradbox.teaching.lessons import lesson
from gradbox.views.window.main_window import MainWindow
from gradbox.views.window.run_controls import SPEEDS


@pytest.fixture
def window_size() -> tuple[int, int]:
    return (1024, 700)


def _choose_stop(win: MainWindow, kind: str, value: float) -> None:
    controls = win.toolbar.run_controls
    controls.stop_kind.setCurrentIndex(controls.stop_kind.findData(kind))
    controls.stop_value.setValue(value)


def test_a_lesson_sets_the_run_controls_and_leaving_gives_them_back(
        qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    controls = window.toolbar.run_controls
    _choose_stop(window, "steps", 50)
    controls.speed.setCurrentIndex(SPEEDS.index(None))
    assert window.controller.goal.steps == 50
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=10000):
        window.lessons.apply_key("start-at-zero")
    # The Xavier run of step 4 needs up to 250 steps: a "for 50 steps" would cut it.
    setup = lesson("start-at-zero").setup
    assert controls.controls() == (setup.run_speed, "never", 0.0)
    assert window.controller.goal.steps is None
    # Another lesson keeps the learner's, not the first lesson's, to give back.
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=10000):
        window.lessons.apply_key("moons")
    qtbot.mouseClick(window.lessons.leave_button, Qt.MouseButton.LeftButton)
    assert window.lessons.lesson is None
    assert controls.controls() == (None, "steps", 50.0)
    assert window.controller.goal.steps == 50
    assert "Choose a lesson" in window.lessons.text_plain()


def test_the_lesson_says_where_its_claim_does_not_hold_on_this_run(
        qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=10000):
        window.lessons.apply_key("moons")
    item = lesson("moons")
    k = next(k for k, step in enumerate(item.steps)
             if any(c.quantity == "wrong_points" for c in step.claims))
    window.lessons.go_to_step(k)
    assert window.lessons.check.notes == [], "nothing to say at step 0"
    assert "On screen:" not in window.lessons.text_plain()
    # The learner lowers the learning rate 25 times and runs 200 steps.
    config = window.controller.snapshot.config.with_changes(lr=0.02)
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=10000):
        window.controller.apply_config(config)
    window.toolbar.run_controls.speed.setCurrentIndex(SPEEDS.index(None))
    window.controller.run(200)
    qtbot.waitUntil(lambda: window.controller.snapshot.step >= 200
                    and not window.controller.running, timeout=120000)
    qtbot.waitUntil(lambda: bool(window.lessons.check.notes), timeout=5000)
    note = window.lessons.check.notes[0]
    assert note.startswith("On this run (lr 0.02) the number of training points on the "
                           "wrong side is ")
    assert "at step 200, not ≤ 1 as the step says" in note
    # Said in the step's box, under its look-for, whole (the box asks for its height).
    shown = window.lessons.current
    assert "On screen: On this run (lr 0.02)" in window.lessons.text_plain()
    assert shown.height() >= shown.heightForWidth(shown.width())
    # Back to the lesson's own settings: a fresh run, nothing to contradict yet.
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=10000):
        window.lessons.apply_key("moons")
    qtbot.waitUntil(lambda: not window.lessons.check.notes, timeout=5000)
    assert "On screen:" not in window.lessons.text_plain()
