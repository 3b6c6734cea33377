"""The four phases are named once (gradbox.autograd.phases) and read as plain names."""

from __future__ import annotations

import json

from gradbox.autograd.phases import PHASES, Phase
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer


def test_the_phases_in_the_order_a_step_runs_them() -> None:
    assert PHASES == ("forward", "zero_grad", "backward", "update")
    assert [p.number for p in PHASES] == [1, 2, 3, 4]
    assert Phase("zero_grad").what == "zero_grad: set every gradient to 0"


def test_a_substep_runs_each_phase_in_turn_and_saves_it_as_its_name() -> None:
    trainer = Trainer(TrainingConfig(n_samples=20, hidden=(3,)))
    seen = [trainer.substep() for _ in range(5)]
    assert seen == ["forward", "zero_grad", "backward", "update", "forward"]
    assert json.loads(json.dumps({"phase": trainer.phase})) == {"phase": "zero_grad"}
    assert f"{trainer.phase}" == "zero_grad"  # the next one
