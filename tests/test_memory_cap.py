"""The training process's memory is capped, and a network past the cap is refused in
words that name it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradbox.runner.process import CommandError, TrainingProcess
from gradbox.training import limits
from gradbox.training.config import TrainingConfig

BIG = TrainingConfig(hidden=(1000, 1000))


def _address_space_limit(pid: int) -> int | None:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            soft = line.split()[3]
            return None if soft == "unlimited" else int(soft)
    return None


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="Linux's /proc")
def test_the_training_process_runs_under_the_cap_and_the_window_does_not() -> None:
    process = TrainingProcess(TrainingConfig(hidden=(4,)))
    try:
        process.wait_for_snapshot(60)
        cap = limits.training_memory_cap()
        assert cap is not None
        assert _address_space_limit(process.pid) == cap
        import os
        assert _address_space_limit(os.getpid()) != cap  # the window's process is not capped
    finally:
        process.close()


def test_a_network_past_the_cap_is_refused_naming_the_cap(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv(limits.TRAINING_MEMORY_ENV, "64")
    assert limits.training_memory_cap() == 64 * 2**20
    why = limits.fits_in_memory(BIG)
    assert "the training process may use at most 64 MB" in why
    assert "fewer or narrower layers" in why
    assert limits.fits_in_memory(TrainingConfig(hidden=(4,))) == ""


def test_a_memory_error_in_training_says_the_cap(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(limits, "_address_space_cap", lambda: 3 * 2**30)
    text = limits.describe_error(MemoryError())
    assert text.startswith("Out of memory") and "may use at most 3.0 GB" in text
    assert "nothing was changed" in text


def test_a_too_big_network_is_refused_by_the_training_process_in_words() -> None:
    huge = BIG.with_changes(n_samples=5000)  # tens of GB a step: past any cap here
    assert limits.fits_in_memory(huge)
    with pytest.raises(CommandError) as refused:
        TrainingProcess(huge).wait_for_snapshot(60)
    assert "would need about" in str(refused.value)
    assert "use fewer or narrower layers" in str(refused.value)
