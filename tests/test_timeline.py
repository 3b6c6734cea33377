"""A non-destructive timeline and undo for run replacements, on the core `Timeline`."""

from __future__ import annotations

import numpy as np
import pytest

from gradbox.training.config import TrainingConfig
from gradbox.training.state import TrainingState
from gradbox.training.timeline import Timeline, Undoable, UndoStack
from gradbox.training.trainer import Trainer


def trained(steps: int, **config: object) -> Trainer:
    trainer = Trainer(TrainingConfig(**config))  # type: ignore[arg-type]
    for _ in range(steps):
        assert trainer.step() is not None
    return trainer


def same_run(a: Trainer, b: Trainer) -> None:
    assert a.step_count == b.step_count
    assert a.history == b.history
    np.testing.assert_array_equal(a.snapshot().params, b.snapshot().params)
    np.testing.assert_array_equal(a.snapshot().grads, b.snapshot().grads)


def test_back_and_forward_restores_the_later_steps_bit_for_bit() -> None:
    timeline = Timeline(trained(30, batch_size=10))
    reference = trained(30, batch_size=10)
    timeline.move_to(10)
    assert timeline.trainer.step_count == 10 and timeline.end == 30
    same_run(timeline.trainer, trained(10, batch_size=10))
    assert timeline.ahead_history == reference.history  # what the faded curves draw
    timeline.move_to(25)
    same_run(timeline.trainer, trained(25, batch_size=10))
    timeline.move_to(3)
    timeline.move_to(30)
    same_run(timeline.trainer, reference)
    assert timeline.ahead is None, "at the end again, nothing is held"
    # and the run continues exactly as if it had never moved
    timeline.trainer.step()
    reference.step()
    same_run(timeline.trainer, reference)


def test_a_step_from_an_earlier_point_replaces_the_later_ones_undoably() -> None:
    timeline = Timeline(trained(30))
    timeline.move_to(12)
    note = timeline.diverge("Step")
    assert note.startswith("Step at step 12 replaced steps 13–30")
    timeline.trainer.step()
    assert timeline.end == 13 and timeline.ahead is None
    assert timeline.undo_stack.undo_text == "Step at step 12"
    assert timeline.undo() == "Step at step 12"
    same_run(timeline.trainer, trained(12))
    timeline.move_to(30)
    same_run(timeline.trainer, trained(30))


@pytest.mark.parametrize(("steps", "named"), [
    (0, "the previous setup (nothing trained yet)"), (1, "the previous run (1 step)")])
def test_the_hint_names_the_run_replaced_as_a_person_would(steps: int, named: str) -> None:
    timeline = Timeline(trained(steps))
    hint = timeline.replace("Re-initialized", lambda t: t.reinitialize())
    assert hint == f"{named} comes back with Edit → Undo (Ctrl+Z)"
    assert "0 steps" not in hint


def test_undo_and_redo_a_replacement_restore_the_exact_runs() -> None:
    timeline = Timeline(trained(20))
    hint = timeline.replace("Re-initialized", lambda t: t.reinitialize())
    assert hint == "the previous run (20 steps) comes back with Edit → Undo (Ctrl+Z)"
    timeline.trainer.step()
    after = timeline.trainer.state()
    assert timeline.undo() == "Re-initialized"
    same_run(timeline.trainer, trained(20))
    assert timeline.undo_stack.redo_text == "Re-initialized"
    assert timeline.redo() == "Re-initialized"
    same_run(timeline.trainer, Trainer.from_state(after))
    assert timeline.undo() == "Re-initialized"
    assert timeline.undo() == "", "nothing older"


def test_undo_brings_back_the_later_steps_the_timeline_held() -> None:
    timeline = Timeline(trained(15))
    timeline.move_to(5)
    timeline.replace("New data", lambda t: t.with_config(t.config.with_changes(seed=3)))
    assert timeline.ahead is None and timeline.trainer.step_count == 0
    timeline.undo()
    assert timeline.trainer.step_count == 5 and timeline.end == 15
    timeline.move_to(15)
    same_run(timeline.trainer, trained(15))


def test_a_failed_replacement_changes_nothing() -> None:
    timeline = Timeline(trained(4))

    def fail(_trainer: Trainer) -> Trainer:
        raise ValueError("no")
    with pytest.raises(ValueError, match="no"):
        timeline.replace("Broken", fail)
    assert len(timeline.undo_stack) == 0
    same_run(timeline.trainer, trained(4))


def test_the_undo_stack_is_bounded_by_memory() -> None:
    states = [trained(3).state() for _ in range(4)]
    size = states[0].nbytes
    stack = UndoStack(budget_bytes=int(2.5 * size))
    for n, state in enumerate(states):
        stack.push(Undoable(f"action {n}", state))
    assert len(stack) == 2 and stack.undo_text == "action 3"
    assert stack.nbytes <= 2.5 * size
    huge = UndoStack(budget_bytes=1)
    huge.push(Undoable("only", states[0]))
    assert len(huge) == 1, "the newest undo is kept however large"
    assert isinstance(states[0], TrainingState)
