"""The training process seen from the UI thread: signals as its messages arrive."""

from __future__ import annotations

import os
import signal

from gradbox.port.process_link import ProcessLink
from gradbox.runner.process import TrainingProcess
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

CONFIG = TrainingConfig(hidden=(4,), n_samples=40)


def test_a_step_arrives_as_a_signal_and_a_kill_is_said_in_words(qtbot) -> None:
    process = TrainingProcess(CONFIG)
    link = ProcessLink(process)
    try:
        if process.latest is None:
            with qtbot.waitSignal(link.snapshot_arrived, timeout=60_000):
                pass
        with qtbot.waitSignals([link.snapshot_arrived, link.replied], timeout=60_000,
                               order="strict"):  # the snapshot comes before the answer
            number = process.call("step")
        trainer = Trainer(CONFIG)
        trainer.step()
        assert process.latest.params.tobytes() == trainer.snapshot().params.tobytes()
        with qtbot.waitSignal(link.replied, timeout=60_000) as answer:
            process.call("set_lr", lr=0.25)
        assert answer.args[0] == number + 1
        with qtbot.waitSignal(link.died, timeout=60_000) as death:
            os.kill(link.process.pid, signal.SIGKILL)
        assert "killed" in death.args[0]
        assert process.latest.step == 1  # what was shown stays readable
    finally:
        link.close()
        process.close()
