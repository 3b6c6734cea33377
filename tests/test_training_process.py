"""The window and its training process: a crash in training is not the end of the app."""

from __future__ import annotations

import os
import signal

from PySide6.QtWidgets import QMessageBox

from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer


def test_a_killed_training_process_is_said_in_words_and_training_continues(  # type: ignore[no-untyped-def]
        qtbot, window, step_session) -> None:
    controller = window.controller
    step_session(controller, 3)
    states: list[object] = []
    controller.ask("whole_run", callback=states.append)  # as the autosave does
    qtbot.waitUntil(lambda: bool(states), timeout=10000)
    step_session(controller, 2)
    with qtbot.waitSignal(controller.training_died, timeout=10000):
        os.kill(controller.training_pid, signal.SIGKILL)
    # The window stays, still showing step 5, and says what happened and what it offers.
    assert window.isVisible() and controller.snapshot.step == 5
    box = window.error_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "killed (SIGKILL)" in box.text() and "from step 3" in box.text()
    go_on = next(b for b in box.buttons() if b.text() == "Continue training")
    with qtbot.waitSignal(controller.snapshot_changed, timeout=30000):
        go_on.click()
    assert controller.snapshot.step == 3
    step_session(controller, 7)
    # Continuing reproduces the run: step 10 is the in-process run's step 10, bit for bit.
    trainer = Trainer(TrainingConfig())
    trainer.run_steps(10)
    expected = trainer.snapshot()
    assert controller.snapshot.step == 10
    assert controller.snapshot.params.tobytes() == expected.params.tobytes()
    assert controller.snapshot.history == expected.history


def test_shared_memory_is_freed_when_the_window_closes(qtbot, window, step_session) -> None:  # type: ignore[no-untyped-def]
    controller = window.controller
    step_session(controller, 2)
    controller.set_graph_wanted(True)
    step_session(controller, 1)
    window.close()
    controller.shutdown()
    assert controller.shared_memory_left() == []
