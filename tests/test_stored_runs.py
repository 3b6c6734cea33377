"""A run saved before issue 34 opens and replays bit for bit with today's engine.

tests/fixtures/w1-2000.gradbox: 2,000 W1 steps (micrograd's demo) saved by main at
d3f86fd, when the L2 penalty was a chain of 337 additions and the topological order was
sorted at every step (tests/fixtures/make_w1_runs.py made it). Today the penalty is one
node and the order is kept per shape: the same arithmetic, so the same bits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gradbox.files.sessions import load_session, load_state

FIXTURE = Path(__file__).parent / "fixtures" / "w1-2000.gradbox"
RECORDED = ("loss", "test_loss", "accuracy", "test_accuracy", "grad_norm", "lr")


def test_a_run_saved_before_issue_34_replays_bit_for_bit() -> None:
    saved = load_state(FIXTURE)
    trainer = load_session(FIXTURE)
    assert trainer.step_count == 2000
    kept = [cp.step for cp in saved.checkpoints]
    assert 1500 in kept and not any(1500 < s <= 1750 for s in kept)
    # Between two kept checkpoints: a rewind replays 250 steps from step 1,500 ...
    trainer.rewind(1750)
    # ... and 250 more steps are trained as the window's Run trains them.
    for step in range(1751, 2001):
        record = trainer.step()
        assert record is not None and record.step == step
        stored = saved.history[step - 1]
        for name in RECORDED:
            mine, theirs = getattr(record, name), getattr(stored, name)
            assert mine == theirs or (np.isnan(mine) and np.isnan(theirs)), (step, name)
        assert record.layers == stored.layers, step
    now = trainer.state().current.run
    assert np.array_equal(now.params, saved.current.run.params)
    assert np.array_equal(now.grads, saved.current.run.grads)
    assert np.array_equal(now.optimizer["velocity"], saved.current.run.optimizer["velocity"])
