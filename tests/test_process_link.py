"""The training process seen from the UI thread: signals as its messages arrive."""

from __future__ import annotations

import os
import signal

from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from gradbox.views.process_link import ProcessLink

CONFIG = TrainingConfig(hidden=(4,), n_samples=40)


def test_a_step_arrives_as_a_signal_and_a_kill_is_said_in_words(qtbot) -> None:
    link = ProcessLink(CONFIG)
    try:
        if link.latest is None:
            with qtbot.waitSignal(link.snapshot_arrived, timeout=60_000):
                pass
        with qtbot.waitSignals([link.snapshot_arrived, link.replied], timeout=60_000,
                               order="strict"):  # the snapshot comes before the answer
            number = link.call("step")
        trainer = Trainer(CONFIG)
        trainer.step()
        assert link.latest.params.tobytes() == trainer.snapshot().params.tobytes()
        with qtbot.waitSignal(link.replied, timeout=60_000) as answer:
            link.call("set_lr", lr=0.25)
        assert answer.args[0] == number + 1
        with qtbot.waitSignal(link.died, timeout=60_000) as death:
            os.kill(link.process.pid, signal.SIGKILL)
        assert "killed" in death.args[0]
        assert link.latest.step == 1  # what was shown stays readable
    finally:
        link.close()
