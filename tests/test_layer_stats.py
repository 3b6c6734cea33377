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


@settings(max_examples=80, deadline=None)
@given(hidden=st.lists(st.integers(1, 70), min_size=1, max_size=3),
       inputs=st.integers(1, 3), outputs=st.integers(1, 3), steps=st.integers(1, 12),
       samples=st.integers(1, 120), shared=st.booleans(),
       activation=st.sampled_from(["relu", "tanh", "sigmoid", "linear"]),
       scale=st.sampled_from([1e-3, 1.0, 50.0]), seed=st.integers(0, 2**31))
def test_steps_measured_in_one_batch_equal_one_measure_each(
        hidden: list[int], inputs: int, outputs: int, steps: int, samples: int,
        shared: bool, activation: str, scale: float, seed: int) -> None:
    """A run's statistics are measured in batches when its history is read (issue 34):
    bit for bit what measuring each step alone gives, on shared points or on each step's
    own (a mini-batch's)."""
    from gradbox.autograd.nn import layer_slices, numpy_layer_outputs, parameter_count
    from gradbox.training.history import LayerInputs, measure_layers
    rng = np.random.default_rng(seed)
    sizes = (inputs, *hidden, outputs)
    count = parameter_count(sizes)
    points = rng.normal(size=(samples, inputs))
    taken = []
    for _ in range(steps):
        params, grads = rng.normal(size=count) * scale, rng.normal(size=count)
        own = points if shared else rng.normal(size=(samples, inputs))
        taken.append((LayerInputs(params, grads, sizes, activation, own),
                      measure_layers(params, grads, sizes, activation, own)))
    later = [LayerStats.later(i) for i, _ in taken]
    assert not any(s.measured for s in later)
    LayerStats.measure_all(later)
    for stats, (inputs, alone) in zip(later, taken):
        assert stats.measured and stats == alone
        assert stats.table.tobytes() == alone.table.tobytes()
        # ... and what measuring one step took before batches: a network's outputs from
        # its own (P,) weights, one reduction per layer, one percentile call per layer.
        outs = numpy_layer_outputs(inputs.params, sizes, activation, inputs.points)
        for i, (where, out) in enumerate(zip(layer_slices(sizes), outs)):
            assert stats.grad[i] == np.mean(np.abs(inputs.grads[where]))
            expected = np.percentile(out.ravel(), QUANTILES)
            assert stats.quantiles[i].tobytes() == expected.tobytes()
            flat = {"relu": out <= 0, "tanh": np.abs(out) > 0.99,
                    "sigmoid": np.abs(2 * out - 1) > 0.99}.get(activation)
            if i < len(outs) - 1 and flat is not None:
                assert stats.saturated[i] == float(np.mean(flat))


def test_a_run_measures_its_statistics_when_its_history_is_read() -> None:
    """Trainer.step takes the statistics and measures none; reading the history measures
    the new steps' together, with the numbers of measuring each step at once (issue 34:
    0.2 ms of a 1.7 ms W1 step)."""
    from gradbox.training.history import measure_layers
    config = TrainingConfig(n_samples=60, hidden=(6, 4), activation="tanh", seed=3)
    trainer = Trainer(config)
    records = [trainer.step() for _ in range(5)]
    assert all(r is not None and not r.layers.measured for r in records)
    kept = trainer._record.checkpoints.kept()
    assert len(kept) == 5  # every step's start: the weights its forward pass used
    points = config.inputs(trainer.dataset.points[trainer.last_batch])
    history = trainer.history
    assert all(r.layers.measured for r in records)
    for record, cp, row in zip(records, kept, history):
        # The weights at the step's start, and the gradients backward left: the next
        # checkpoint holds them (or, for the last step, the parameters now).
        grads = (trainer._record.checkpoints.at(cp.step + 1).run.grads
                 if cp.step + 1 < 5 else trainer.run.grads())
        expected = measure_layers(cp.run.params, grads, config.layer_sizes, "tanh", points)
        assert record.layers == expected == row.layers
    # Read through a record first, then the history: the same numbers.
    record = trainer.step()
    table = record.layers.table
    assert trainer.history[-1].layers.table.tobytes() == table.tobytes()


def test_a_run_nobody_reads_measures_its_statistics_in_bounded_batches() -> None:
    from gradbox.training import history as history_module
    trainer = Trainer(TrainingConfig(n_samples=40, hidden=(4,), seed=2))
    for _ in range(history_module.PENDING_STEPS + 3):
        trainer.step()
    buffer = trainer._record.history
    assert len(buffer._pending) == 3  # the first PENDING_STEPS were measured together
    assert trainer.history.layers() is not None and not buffer._pending


@settings(max_examples=150, deadline=None)
@given(rows=st.integers(1, 6), size=st.integers(1, 300), seed=st.integers(0, 2**31),
       special=st.sampled_from([None, np.nan, np.inf, -np.inf, 0.0]),
       ties=st.booleans())
def test_percentiles_from_sorted_rows_equal_numpys_bit_for_bit(
        rows: int, size: int, seed: int, special: float | None, ties: bool) -> None:
    """history.percentiles sorts each row and interpolates as numpy does (issue 34)."""
    from gradbox.training.history import percentiles
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, size))
    if ties:  # relu's zeros, tanh's saturated ones
        values = np.where(values < 0.3, 0.0, np.round(values, 1))
    if special is not None:
        values[rng.integers(rows), rng.integers(size)] = special
        values[0, seed % size] = special
    expected = np.percentile(values, QUANTILES, axis=1).T
    assert percentiles(values).tobytes() == expected.tobytes()


def test_percentiles_with_both_zeros_equal_numpys_as_numbers() -> None:
    from gradbox.training.history import percentiles
    values = np.array([[-0.0, 0.0, 0.0, -0.0, 1.0, -1.0, 0.0]])
    assert np.array_equal(percentiles(values), np.percentile(values, QUANTILES, axis=1).T)
