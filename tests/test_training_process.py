"""The window and its training process: a crash in training is not the end of the app."""

from __future__ import annotations

import gc
import os
import signal

from PySide6.QtWidgets import QMessageBox

from gradbox.runner.shared import SHM_FOLDER
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.window.files.autosave import signature


def test_a_killed_training_process_is_said_in_words_and_training_continues(  # type: ignore[no-untyped-def]
        qtbot, window, step_session) -> None:
    controller = window.controller
    step_session(controller, 3)
    states: list[object] = []
    controller.ask(Session.whole_run, callback=states.append)  # as the autosave does
    qtbot.waitUntil(lambda: bool(states), timeout=10000)
    step_session(controller, 2)
    with qtbot.waitSignal(controller.training_died, timeout=10000):
        os.kill(controller.training_pid, signal.SIGKILL)
    # The window stays, still showing step 5, and says what happened and what it offers.
    assert window.isVisible() and controller.snapshot.step == 5
    box = window.error_box
    assert isinstance(box, QMessageBox) and box.isVisible()
    assert "killed (SIGKILL)" in box.text() and "from step 3" in box.text()
    continue_and_check(qtbot, box, controller, step_session)


def test_shared_memory_is_freed_when_the_window_closes(qtbot, window, step_session) -> None:  # type: ignore[no-untyped-def]
    controller = window.controller
    step_session(controller, 2)
    controller.set_graph_wanted(True)
    step_session(controller, 1)
    window.close()
    controller.shutdown()
    assert controller.shared_memory_left() == []


def test_once_a_file_holds_the_run_the_window_keeps_no_copy_and_a_death_continues_from_it(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session, tmp_path) -> None:
    """The autosave's whole run (checkpoints, history, data: a hundred megabytes and more
    for a 1000x1000 network) is let go of once written: no block of it stays mapped in
    the window's process. A killed training process then continues from the file, read
    by the new one, and the run goes on bit for bit."""
    window = open_window(autosave_path=tmp_path / "autosave.gradbox")
    controller = window.controller
    step_session(controller, 3)
    window.autosaver.autosave_now()
    qtbot.waitUntil(lambda: window.autosaver._autosaved_signature
                    == signature(controller.snapshot), timeout=20000)
    qtbot.waitUntil(lambda: controller._process.last_step == 3, timeout=10000)
    gc.collect()
    qtbot.waitUntil(lambda: whole_run_blocks(controller) == [], timeout=5000)
    assert controller._process.last_start == str(tmp_path / "autosave.gradbox")
    step_session(controller, 2)
    with qtbot.waitSignal(controller.training_died, timeout=10000):
        os.kill(controller.training_pid, signal.SIGKILL)
    box = window.error_box
    assert "from step 3, as saved in autosave.gradbox" in box.text()
    continue_and_check(qtbot, box, controller, step_session)


def whole_run_blocks(controller) -> list[str]:  # type: ignore[no-untyped-def]
    """The shared blocks of whole runs (lazy answers) this process still maps."""
    prefix = os.path.join(SHM_FOLDER, controller._process.prefix + "b")
    with open("/proc/self/maps", encoding="utf-8") as maps:
        return [line.split()[5] for line in maps if prefix in line]


def continue_and_check(qtbot, box, controller, step_session) -> None:  # type: ignore[no-untyped-def]
    """Press the death box's "Continue training" (the run comes back at step 3), take 7
    steps: step 10 is the in-process run's step 10, bit for bit."""
    go_on = next(b for b in box.buttons() if b.text() == "Continue training")
    with qtbot.waitSignal(controller.snapshot_changed, timeout=30000):
        go_on.click()
    assert controller.snapshot.step == 3
    step_session(controller, 7)
    trainer = Trainer(TrainingConfig())
    trainer.run_steps(10)
    expected = trainer.snapshot()
    assert controller.snapshot.step == 10
    assert controller.snapshot.params.tobytes() == expected.params.tobytes()
    assert controller.snapshot.history == expected.history
