"""Nothing is lost without a way back: in the real window, with the keys a learner uses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from gradbox.files import points_csv
from gradbox.files import sessions as persistence
from gradbox.training import datasets
from gradbox.training.config import TrainingConfig
from gradbox.training.snapshots import Snapshot
from gradbox.training.trainer import Trainer
from gradbox.views.window.main_window import MainWindow

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process


def press(win: MainWindow, key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.NoModifier) -> None:
    QTest.keyClick(QApplication.focusWidget() or win, key, modifier)


def steps_by_space(qtbot, win: MainWindow, n: int) -> None:  # type: ignore[no-untyped-def]
    target = win.controller.snapshot.step + n
    for _ in range(n):
        press(win, Qt.Key_Space)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == target, timeout=10000)


def same_place(a: Snapshot, b: Snapshot) -> bool:
    """The same run at the same step, as far as a wait needs to tell."""
    return (a.step == b.step and a.config == b.config and a.points.shape == b.points.shape
            and bool(np.array_equal(a.points, b.points)))


def seed_5(qtbot, win: MainWindow, _tmp: Path) -> None:  # type: ignore[no-untyped-def]
    box = win.designer.data_seed
    box.setFocus()
    box.lineEdit().selectAll()
    QTest.keyClicks(box, "5")
    press(win, Qt.Key_Return)


def add_layer(qtbot, win: MainWindow, _tmp: Path) -> None:  # type: ignore[no-untyped-def]
    qtbot.mouseClick(win.designer.add_layer, Qt.LeftButton)
    win.designer.apply()


def lesson(_qtbot, win: MainWindow, _tmp: Path) -> None:  # type: ignore[no-untyped-def]
    win.show_training(TrainingConfig(dataset="xor"), forget_zero_grad=False, ghost=False)


def reinitialize(_qtbot, win: MainWindow, _tmp: Path) -> None:  # type: ignore[no-untyped-def]
    press(win, Qt.Key_I, Qt.ControlModifier)


def reset(_qtbot, win: MainWindow, _tmp: Path) -> None:  # type: ignore[no-untyped-def]
    press(win, Qt.Key_R, Qt.ControlModifier | Qt.ShiftModifier)


def open_file(_qtbot, win: MainWindow, tmp: Path) -> None:  # type: ignore[no-untyped-def]
    other = Trainer(TrainingConfig(dataset="circle"))
    other.step()
    persistence.save_session(other, tmp / "other.gradbox")
    win.files.open_session(tmp / "other.gradbox")


def import_csv(_qtbot, win: MainWindow, tmp: Path) -> None:  # type: ignore[no-untyped-def]
    points_csv.save_csv(datasets.make("xor", 40, 0.1, 1, 0.0, 2), tmp / "points.csv")
    win.files.import_csv(tmp / "points.csv")


def new_session(_qtbot, win: MainWindow, _tmp: Path) -> None:  # type: ignore[no-untyped-def]
    win.files.new_session()


@pytest.mark.parametrize("action", [seed_5, add_layer, lesson, reinitialize, reset, open_file,
                                    import_csv, new_session])
def test_undo_brings_back_the_replaced_run_exactly(qtbot, open_window, tmp_path: Path,
                                                   action) -> None:  # type: ignore[no-untyped-def]
    win = open_window(batch_size=20)
    steps_by_space(qtbot, win, 6)
    before = win.controller.snapshot
    messages: list[str] = []
    win.controller.message.connect(messages.append)
    action(qtbot, win, tmp_path)
    qtbot.waitUntil(lambda: win.controller.undo_text != "", timeout=10000)
    assert any("comes back with Edit → Undo (Ctrl+Z)" in m for m in messages), messages
    assert win.undo_action.isEnabled() and win.undo_action.text().startswith("&Undo: ")
    replaced = win.controller.snapshot
    press(win, Qt.Key_Z, Qt.ControlModifier)
    qtbot.waitUntil(lambda: same_place(win.controller.snapshot, before), timeout=10000)
    after = win.controller.snapshot
    assert after.history == before.history
    np.testing.assert_array_equal(after.params, before.params)
    np.testing.assert_array_equal(after.points, before.points)
    assert win.redo_action.isEnabled()
    press(win, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)  # Redo replaces it again
    qtbot.waitUntil(lambda: same_place(win.controller.snapshot, replaced), timeout=10000)
    again = win.controller.snapshot
    assert again.config == replaced.config and again.step == replaced.step
    np.testing.assert_array_equal(again.params, replaced.params)
    np.testing.assert_array_equal(again.points, replaced.points)


def test_timeline_back_and_forward_with_keys_keeps_every_step(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(batch_size=20)
    steps_by_space(qtbot, win, 12)
    end = win.controller.snapshot
    slider = win.toolbar.timeline
    qtbot.mouseClick(slider, Qt.LeftButton, pos=slider.rect().center())  # takes the focus
    qtbot.waitUntil(lambda: win.controller.snapshot.step < 12, timeout=5000)
    press(win, Qt.Key_Home)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 0, timeout=5000)
    assert slider.maximum() == 12, "the later steps are still on the timeline"
    faded = win.loss_curve.ahead_curves["loss"].getData()[1]
    np.testing.assert_array_equal(faded, end.history.column("loss"))
    for _ in range(3):
        press(win, Qt.Key_Right)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 3, timeout=5000)
    press(win, Qt.Key_End)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 12, timeout=5000)
    assert win.controller.snapshot.history == end.history
    np.testing.assert_array_equal(win.controller.snapshot.params, end.params)
    assert win.loss_curve.ahead_curves["loss"].getData()[1] is None or len(
        win.loss_curve.ahead_curves["loss"].getData()[1]) == 0


def test_a_step_from_an_earlier_point_can_be_undone(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(batch_size=20)
    steps_by_space(qtbot, win, 10)
    end = win.controller.snapshot
    win.controller.rewind(4)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 4, timeout=5000)
    win.activateWindow()
    win.setFocus()
    steps_by_space(qtbot, win, 1)  # replaces steps 5..10
    assert win.toolbar.timeline.maximum() == 5
    assert win.controller.undo_text == "Step at step 4"
    press(win, Qt.Key_Z, Qt.ControlModifier)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 4
                    and win.toolbar.timeline.maximum() == 10, timeout=5000)
    win.controller.rewind(10)
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 10, timeout=5000)
    assert win.controller.snapshot.history == end.history
    np.testing.assert_array_equal(win.controller.snapshot.params, end.params)
