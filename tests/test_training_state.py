"""The state API and the sparse history: rewinds replay from far-apart checkpoints bit for
bit, states are immutable and continue exactly, memory stays small."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradbox.training.config import TrainingConfig, plan_config_change
from gradbox.training.record import CheckpointPolicy
from gradbox.training.trainer import Trainer

CONFIG = TrainingConfig(n_samples=30, hidden=(4, 3), test_ratio=0.2, momentum=0.9,
                        batch_size=8, l1=1e-3)
# Checkpoints 25 steps apart and only the last 2 steps whole: most rewinds replay.
SPARSE = CheckpointPolicy(every=25, min_recent=2, max_recent=2)


def bits(a: np.ndarray) -> bytes:
    return np.asarray(a, np.float64).tobytes()


def fingerprint(t: Trainer) -> tuple:
    """Everything continuing depends on, as bits."""
    opt = t.run.optimizer.state_dict()
    ghost = None if t.ghost is None else (bits(t.ghost.values()), bits(t.ghost.grads()))
    return (bits(t.run.values()), bits(t.run.grads()),
            tuple((k, bits(v) if isinstance(v, np.ndarray) else v) for k, v in opt.items()),
            ghost, t.lr, t.step_count, t.phase, t.history.column("loss").tobytes(),
            t.edits, bits(t.dataset.points))


def user(t: Trainer, step: int) -> None:
    """Switches flipped, weights typed, points added and the rate changed along the way."""
    t.set_forget_zero_grad(step % 13 in (4, 5))
    if step == 17:
        t.set_ghost(True)
    if step == 61:
        t.set_ghost(False)
    if step == 33:
        t.set_lr(0.2)
    if step == 44:
        t.set_parameter(t.param_names[1], 0.5)
    if step == 52:
        d = t.dataset.copy()
        d.add_point(0.3, -0.2, 1)
        t.replace_dataset(d)


def drive(t: Trainer, start: int, end: int) -> None:
    for step in range(start, end):
        user(t, step)
        assert t.step() is not None


@pytest.fixture(scope="module")
def reference() -> list[tuple]:
    """The fingerprint after each step of the run and the user's changes that followed it
    (what a rewind to that step restores), trained straight through."""
    t = Trainer(CONFIG, policy=SPARSE)
    out = []
    for step in range(90):
        user(t, step)
        out.append(fingerprint(t))
        assert t.step() is not None
    out.append(fingerprint(t))
    return out


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(targets=st.lists(st.integers(0, 90), min_size=1, max_size=3))
def test_rewinds_replay_from_far_checkpoints_and_continue_bit_for_bit(
        reference: list[tuple], targets: list[int]) -> None:
    t = Trainer(CONFIG, policy=SPARSE)
    drive(t, 0, 90)
    assert len(t.state().checkpoints) < 20  # sparse: far fewer than the 90 steps
    end = 90
    for target in targets:
        target = min(target, end)
        t.rewind(target)
        end = target
        if target < 52:  # a rewind keeps the new points; the reference had the old ones
            continue
        assert fingerprint(t) == reference[target]
    if 52 <= end < 90:
        # The changes after step `end` are already made; the switch is not rewound.
        t.set_forget_zero_grad(end % 13 in (4, 5))
        assert t.step() is not None
        drive(t, end + 1, 90)
        assert fingerprint(t) == reference[90]


def test_a_rewind_before_a_data_change_replays_with_the_old_points_and_keeps_the_new() -> None:
    t = Trainer(CONFIG, policy=SPARSE)
    drive(t, 0, 60)
    fresh = Trainer(CONFIG, policy=CheckpointPolicy(every=1))
    drive(fresh, 0, 48)
    t.rewind(48)
    assert bits(t.run.values()) == bits(fresh.run.values())
    assert len(t.dataset) == 31 and t.dataset_version == 1  # the new points stay


@pytest.mark.parametrize("phase", [0, 1, 2, 3])
def test_a_state_continues_bit_for_bit_from_any_phase(phase: int) -> None:
    a = Trainer(CONFIG, policy=SPARSE)
    drive(a, 0, 40)
    a.set_forget_zero_grad(True)
    for _ in range(phase):
        a.substep()
    a.set_forget_zero_grad(False)  # after its zero_grad: the step keeps what it did
    state = a.state()
    b = Trainer.from_state(state, policy=SPARSE)
    assert b.phase == a.phase and fingerprint(b) == fingerprint(a)
    drive(a, 40, 70)
    drive(b, 40, 70)
    assert fingerprint(a) == fingerprint(b)
    b.rewind(20)
    a.rewind(20)
    assert fingerprint(a) == fingerprint(b)


def test_a_state_is_immutable_and_unaffected_by_later_training() -> None:
    t = Trainer(CONFIG, policy=SPARSE)
    drive(t, 0, 30)
    state = t.state()
    loss = state.history.column("loss").copy()
    params = state.current.run.params.copy()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.phase = "update"  # type: ignore[misc]
    with pytest.raises(ValueError):
        state.current.run.params[0] = 1.0
    with pytest.raises(TypeError):
        state.current.run.optimizer["steps"] = 0  # type: ignore[index]
    with pytest.raises(AttributeError):
        state.dataset.add_point(0, 0, 0)
    drive(t, 30, 60)
    t.rewind(10)
    drive(t, 10, 40)
    assert state.step == 30 and state.history.column("loss").tobytes() == loss.tobytes()
    assert bits(state.current.run.params) == bits(params)
    assert Trainer.from_state(state).step_count == 30


def test_memory_per_step_is_small_with_the_default_policy() -> None:
    t = Trainer(TrainingConfig(hidden=(16, 16)))
    t.run_steps(400)
    grown = t.state().nbytes - Trainer(TrainingConfig(hidden=(16, 16))).state().nbytes
    recent = t.policy.recent_count(t.state().current.nbytes) * t.state().current.nbytes
    # Beyond the last steps kept whole, well under 1 kB per step.
    assert (grown - recent) / 400 < 1000


def test_parameter_history_is_exact_where_known_and_shows_edits() -> None:
    t = Trainer(CONFIG, policy=SPARSE)
    dense = Trainer(CONFIG, policy=CheckpointPolicy(every=1, max_recent=1000))
    for trainer in (t, dense):
        drive(trainer, 0, 60)
    steps, values, grad_steps, grads = t.parameter_history(1)
    d_steps, d_values, d_grad_steps, d_grads = dense.parameter_history(1)
    assert list(d_steps) == list(range(61)) and list(d_grad_steps) == list(range(1, 61))
    assert 44 in steps and values[list(steps).index(44)] == 0.5  # the edit, exactly
    for s, v in zip(steps, values):
        assert v == d_values[s]
    for s, g in zip(grad_steps, grads):
        assert g == d_grads[s - 1]


@pytest.mark.parametrize(("changes", "kind"), [
    ({}, "none"), ({"lr": 0.1}, "lr"), ({"l2": 0.0}, "restart"), ({"momentum": 0.5}, "restart"),
    ({"hidden": (5,)}, "network"), ({"activation": "relu"}, "network"),
    ({"noise": 0.2}, "data"), ({"seed": 4, "hidden": (5,)}, "data"),
])
def test_a_config_change_is_planned_in_the_core(changes: dict, kind: str) -> None:
    assert plan_config_change(CONFIG, CONFIG.with_changes(**changes)).kind == kind


def test_with_config_keeps_what_the_change_allows() -> None:
    t = Trainer(CONFIG)
    t.set_ghost(True)
    t.set_forget_zero_grad(True)
    t.run_steps(5)
    restarted = t.with_config(CONFIG.with_changes(l2=0.0))
    assert restarted.step_count == 0 and restarted.ghost_enabled and restarted.forget_zero_grad
    assert bits(restarted.run.values()) == bits(t.initial_params)
    assert restarted.dataset is t.dataset
    new_data = t.with_config(CONFIG.with_changes(noise=0.3))
    assert new_data.dataset_version == 1 and bits(new_data.initial_params) == bits(t.initial_params)
    new_net = t.with_config(CONFIG.with_changes(hidden=(6,)))
    assert len(new_net.initial_params) != len(t.initial_params)


def test_a_step_reads_the_parameters_once_and_its_checkpoint_holds_them(monkeypatch) -> None:
    """Issue 34: a step reads the gradients once (after backward) and the weights never
    (the update returns them); the next step's checkpoint keeps what the update left,
    unless something changed the parameters since (an edit: read again)."""
    from gradbox.training.network import ModelAndOptimizer
    trainer = Trainer(CONFIG)
    trainer.step()
    reads: list[str] = []
    values, grads = ModelAndOptimizer.values, ModelAndOptimizer.grads
    monkeypatch.setattr(ModelAndOptimizer, "values",
                        lambda self: reads.append("values") or values(self))
    monkeypatch.setattr(ModelAndOptimizer, "grads",
                        lambda self: reads.append("grads") or grads(self))
    for _ in range(3):
        trainer.step()
    assert reads == ["grads"] * 3
    monkeypatch.undo()
    trainer.set_parameter(trainer.param_names[0], 0.25)
    trainer.substep()  # forward: the step's checkpoint
    start = trainer._record.checkpoints.start
    assert start is not None and start.run.params[0] == 0.25
    assert bits(start.run.params) == bits(trainer.run.values())
    assert bits(start.run.grads) == bits(trainer.run.grads())
