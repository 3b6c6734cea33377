"""Runs of flagged steps (where zero_grad was skipped), read whole or a step at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from gradbox.training.history import extend_flag_runs, flag_runs


def test_runs_of_flagged_steps() -> None:
    steps = np.arange(1, 7)
    assert flag_runs(steps, np.array([0, 1, 1, 0, 0, 1], bool)) == [(2, 3), (6, 6)]
    assert flag_runs(steps, np.zeros(6, bool)) == []
    assert flag_runs(steps, np.ones(6, bool)) == [(1, 6)]
    assert flag_runs(steps[:0], np.zeros(0, bool)) == []


@given(st.lists(st.booleans(), max_size=60), st.data())
def test_extending_step_by_step_gives_the_runs_of_the_whole(flags: list[bool], data) -> None:  # type: ignore[no-untyped-def]
    steps, flagged = np.arange(1, len(flags) + 1), np.array(flags, bool)
    expected = flag_runs(steps, flagged)
    # The naive reading: a run is a maximal stretch of consecutive flagged steps.
    naive, start = [], None
    for step, flag in zip(steps.tolist(), flags):
        if flag and start is None:
            start = step
        if not flag and start is not None:
            naive.append((start, step - 1))
            start = None
    if start is not None:
        naive.append((start, len(flags)))
    assert expected == naive
    cuts = sorted(data.draw(st.lists(st.integers(0, len(flags)), max_size=6)))
    runs: list[tuple[int, int]] = []
    for a, b in zip([0, *cuts], [*cuts, len(flags)]):
        runs = extend_flag_runs(runs, steps[a:b], flagged[a:b])
    assert runs == expected
