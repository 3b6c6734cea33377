"""Snapshots carry revision numbers, so views know what changed without diffing arrays."""

from __future__ import annotations

from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer

SMALL = TrainingConfig(n_samples=30, hidden=(3,), seed=4)


def test_nothing_changed_means_the_same_numbers() -> None:
    t = Trainer(SMALL)
    t.step()
    a, b = t.snapshot(), t.snapshot()
    assert (a.run_id, a.params_rev, a.graph_rev, a.history_len) == \
        (b.run_id, b.params_rev, b.graph_rev, b.history_len)


def test_steps_grow_the_history_of_the_same_run_and_move_the_weights() -> None:
    t = Trainer(SMALL)
    seen = [t.snapshot()]
    for _ in range(3):
        t.step()
        seen.append(t.snapshot())
    assert len({s.run_id for s in seen}) == 1
    assert [s.history_len for s in seen] == [0, 1, 2, 3]
    assert len({s.params_rev for s in seen}) == 4
    t.substep()  # a phase changes what the snapshot holds too
    assert t.snapshot().params_rev != seen[-1].params_rev
    assert t.snapshot().run_id == seen[-1].run_id


def test_a_rewind_to_an_earlier_step_or_a_reset_is_a_new_past() -> None:
    t = Trainer(SMALL)
    for _ in range(4):
        t.step()
    before = t.snapshot()
    t.rewind(2)
    back = t.snapshot()
    assert back.run_id != before.run_id and back.history_len == 2
    t.step()
    t.step()  # as long as before, but not the same steps' numbers to a view
    assert t.snapshot().history_len == before.history_len
    assert t.snapshot().run_id == back.run_id != before.run_id
    t.reset()
    assert t.snapshot().run_id not in (back.run_id, before.run_id)


def test_a_weight_typed_in_moves_params_rev_only() -> None:
    t = Trainer(SMALL)
    t.step()
    a = t.snapshot()
    t.set_parameter(a.param_names[0], 0.25)
    b = t.snapshot()
    assert b.params_rev != a.params_rev
    assert (b.run_id, b.graph_rev, b.history_len) == (a.run_id, a.graph_rev, a.history_len)


def test_graph_rev_moves_when_a_graph_is_captured() -> None:
    t = Trainer(SMALL)
    t.step()
    a = t.snapshot()
    assert a.graph is None
    t.capture_current_graph()
    b = t.snapshot()
    assert b.graph is not None and b.graph_rev != a.graph_rev
    assert t.snapshot().graph_rev == b.graph_rev


def test_numbers_are_never_reused_across_runs() -> None:
    session = Session(Trainer(SMALL))
    session.command("step")
    first = session.snapshot()
    session.command("reinitialize")
    second = session.snapshot()
    session.command("undo")
    again = session.snapshot()
    assert len({first.run_id, second.run_id, again.run_id}) == 3
    assert again.history == first.history
    other = Trainer(SMALL).snapshot()
    assert other.run_id not in (first.run_id, second.run_id, again.run_id)
