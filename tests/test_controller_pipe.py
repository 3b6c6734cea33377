"""The training process seen from the UI thread: the port reads its pipe as messages
arrive (a socket notifier, gradbox.port.controller), each to its handler, in order."""

from __future__ import annotations

import os
import signal

from gradbox.port.controller import SessionController
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer

CONFIG = TrainingConfig(hidden=(4,), n_samples=40)


def test_a_step_arrives_with_its_answer_and_a_kill_is_said_in_words(qtbot) -> None:
    controller = SessionController(CONFIG)
    try:
        seen: list[tuple[str, int]] = []
        controller.snapshot_changed.connect(lambda s: seen.append(("snapshot", s.step)))
        answers: list[object] = []

        def answered(record: object) -> None:
            # The snapshot came before the answer: the port has it when the answer is in.
            seen.append(("answer", controller.newest.step))
            answers.append(record)
        controller.ask(Session.step, callback=answered)
        qtbot.waitUntil(lambda: bool(answers), timeout=60_000)
        assert ("answer", 1) in seen
        trainer = Trainer(CONFIG)
        assert answers == [trainer.step()]
        qtbot.waitUntil(lambda: controller.snapshot.step == 1, timeout=60_000)
        assert controller.snapshot.params.tobytes() == trainer.snapshot().params.tobytes()
        with qtbot.waitSignal(controller.training_died, timeout=60_000) as death:
            os.kill(controller.training_pid, signal.SIGKILL)
        assert "killed" in death.args[0]
        assert controller.snapshot.step == 1  # what was shown stays readable
    finally:
        controller.shutdown()
