"""Per-layer statistics: each step's record against a direct computation with the engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd.engine import Value
from gradbox.training.config import TrainingConfig
from gradbox.training.history import COLUMNS, QUANTILES, LayerStats
from gradbox.training.trainer import Trainer


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "relu"])
def test_a_steps_statistics_match_the_engines_own_numbers(activation: str) -> None:
    trainer = Trainer(TrainingConfig(n_samples=40, hidden=(5, 3), activation=activation,
                                     batch_size=12, seed=4))
    trainer.run_steps(3)
    for _ in range(3):  # forward, zero_grad, backward: the update is next
        trainer.substep()
    model = trainer.model
    batch = trainer.last_batch
    points = trainer.dataset.points[batch]
    # The engine's own activations, layer by layer, for the batch of this step.
    h: list[Value] = [Value(points[:, 0]), Value(points[:, 1])]
    outputs = []
    for layer in model.layers:
        h = layer(h)
        outputs.append(np.stack([v.data for v in h], axis=1))
    grads = [np.array([p.grad for p in layer.parameters()]) for layer in model.layers]
    trainer.substep()  # update: the record is written
    stats = trainer.history[-1].layers
    assert stats is not None and stats.layers == 3
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        assert stats.grad[i] == pytest.approx(np.mean(np.abs(grad)), rel=1e-12)
        assert stats.quantiles[i] == pytest.approx(np.percentile(out, QUANTILES), abs=1e-12)
    flat = {"tanh": np.abs(outputs[0]) > 0.99,
            "sigmoid": (outputs[0] < 0.005) | (outputs[0] > 0.995),
            "relu": outputs[0] == 0}[activation]
    assert stats.saturated[0] == pytest.approx(np.mean(flat))
    assert np.isnan(stats.saturated[-1])  # the output layer is linear


def test_statistics_are_saved_rewound_and_compared_by_value(tmp_path) -> None:
    from gradbox.files import sessions as persistence
    trainer = Trainer(TrainingConfig(n_samples=30, hidden=(4,), seed=1))
    trainer.run_steps(4)
    path = tmp_path / "s.gradbox"
    persistence.save_session(trainer, path)
    loaded = persistence.load_session(path)
    assert [r.layers for r in loaded.history] == [r.layers for r in trainer.history]
    assert loaded.history == trainer.history
    trainer.rewind(2)
    assert len(trainer.history) == 2 and trainer.history[-1].layers == loaded.history[1].layers
    trainer.step()  # replayed and continued: the same statistics again
    assert trainer.history[-1].layers == loaded.history[2].layers


def test_a_version_1_session_has_no_statistics_and_still_trains() -> None:
    from pathlib import Path

    from gradbox.files import sessions as persistence
    loaded = persistence.load_session(Path(__file__).parent / "fixtures"
                                      / "session_v1.gradbox.json")
    assert all(r.layers is None for r in loaded.history) and loaded.pinned is None
    loaded.step()
    assert loaded.history.layers() is None  # a table cannot have holes: none, not some


def test_the_table_is_read_only_and_checked() -> None:
    stats = LayerStats(np.zeros((2, COLUMNS)))
    with pytest.raises(ValueError):
        stats.table[0, 0] = 1.0
    with pytest.raises(ValueError):
        LayerStats(np.zeros((2, 3)))


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 4), size=st.integers(1, 40), seed=st.integers(0, 2**31),
       special=st.sampled_from([None, np.nan, np.inf, -np.inf, 0.0]))
def test_percentiles_of_same_size_layers_in_one_call_equal_one_call_each(
        rows: int, size: int, seed: int, special: float | None) -> None:
    """measure_layers takes the layers of one size in one percentile call (issue 34)."""
    values = np.random.default_rng(seed).normal(size=(rows, size))
    if special is not None:
        values[0, seed % size] = special
    together = np.percentile(values, QUANTILES, axis=1).T
    for row, expected in zip(values, together):
        assert np.array_equal(np.percentile(row, QUANTILES), expected, equal_nan=True)
