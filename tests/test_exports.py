"""CSV and JSON exports parse back with the standard library, exactly."""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gradbox.autograd.nn import MLP, numpy_forward
from gradbox.files.exports import (
    HISTORY_COLUMNS,
    PARAMETER_COLUMNS,
    ModelFileError,
    history_csv,
    load_model_json,
    model_dict,
    model_json,
    parameter_names,
    parameters_csv,
)
from gradbox.training.config import TrainingConfig
from gradbox.training.history import StepRecord
from gradbox.training.trainer import Trainer


def _rows(text: str) -> tuple[list[str], list[dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    rows = list(reader)
    return list(reader.fieldnames or []), rows


def _number(cell: str) -> float:
    return math.nan if cell == "" else float(cell)


@pytest.fixture(scope="module")
def trained() -> Trainer:
    trainer = Trainer(TrainingConfig(n_samples=40))
    trainer.run_steps(2)
    trainer.set_ghost(True)  # ghost_loss is measured from step 3 on
    trainer.set_forget_zero_grad(True)
    trainer.run_steps(2)
    return trainer


# --- history CSV -----------------------------------------------------------------------------
def test_history_csv_columns_and_values_read_back(trained: Trainer) -> None:
    columns, rows = _rows(history_csv(trained.history))
    assert tuple(columns) == HISTORY_COLUMNS == (
        "step", "loss", "test_loss", "accuracy", "test_accuracy", "grad_norm", "lr",
        "zero_grad_skipped", "ghost_loss")
    assert len(rows) == trained.step_count == 4
    for row, record in zip(rows, trained.history):
        assert int(row["step"]) == record.step
        assert int(row["zero_grad_skipped"]) == int(record.zero_grad_skipped)
        for name in ("loss", "test_loss", "accuracy", "test_accuracy", "grad_norm", "lr",
                     "ghost_loss"):
            expected = getattr(record, name)
            got = _number(row[name])
            # Exact: repr reads back as the same float64; NaN (not measured) as empty.
            assert got == expected or (math.isnan(got) and math.isnan(expected)), name
    assert [r["zero_grad_skipped"] for r in rows] == ["0", "0", "1", "1"]
    assert [r["ghost_loss"] == "" for r in rows] == [True, True, False, False]


def test_history_csv_without_test_points_leaves_test_cells_empty() -> None:
    trainer = Trainer(TrainingConfig(test_ratio=0.0, n_samples=20))
    trainer.run_steps(1)
    _, rows = _rows(history_csv(trainer.history))
    assert rows[0]["test_loss"] == rows[0]["test_accuracy"] == ""
    assert rows[0]["loss"] != ""


def test_history_csv_writes_infinity_as_inf() -> None:
    record = StepRecord(step=1, loss=1.5, test_loss=math.nan, accuracy=0.5,
                        test_accuracy=math.nan, grad_norm=math.inf, lr=0.1,
                        zero_grad_skipped=False)
    _, rows = _rows(history_csv([record]))
    assert rows[0]["grad_norm"] == "inf" and float(rows[0]["grad_norm"]) == math.inf


def test_empty_history_is_a_header_only() -> None:
    assert history_csv([]) == ",".join(HISTORY_COLUMNS) + "\n"


# --- parameters CSV ---------------------------------------------------------------------------
def test_parameters_csv_reads_back_with_positions(trained: Trainer) -> None:
    snap = trained.snapshot()
    columns, rows = _rows(parameters_csv(snap.param_names, snap.params, snap.grads))
    assert tuple(columns) == PARAMETER_COLUMNS
    assert [r["name"] for r in rows] == list(snap.param_names)
    assert np.array_equal([float(r["value"]) for r in rows], snap.params)
    assert np.array_equal([float(r["grad"]) for r in rows], snap.grads)
    # The position columns say where each number sits in the (nout, nin + 1) blocks
    # numpy_forward reads: rebuilding the array from them gives the same network.
    sizes = snap.layer_sizes
    rebuilt = [np.zeros((nout, nin + 1)) for nin, nout in itertools.pairwise(sizes)]
    for r in rows:
        column = sizes[int(r["layer"])] if r["kind"] == "bias" else int(r["input"])
        assert (r["input"] == "") == (r["kind"] == "bias")
        rebuilt[int(r["layer"])][int(r["neuron"]), column] = float(r["value"])
    flat = np.concatenate([block.reshape(-1) for block in rebuilt])
    assert np.array_equal(flat, snap.params)


def test_parameters_csv_accepts_other_names_and_checks_lengths() -> None:
    _, rows = _rows(parameters_csv(["a", "b"], [1.0, math.nan], [0.5, -math.inf]))
    assert rows[0] == {"name": "a", "layer": "", "neuron": "", "kind": "", "input": "",
                       "value": "1.0", "grad": "0.5"}
    assert rows[1]["value"] == "" and rows[1]["grad"] == "-inf"
    with pytest.raises(ValueError, match="one of each per parameter"):
        parameters_csv(["a", "b"], [1.0], [0.5, 0.5])


# --- model JSON --------------------------------------------------------------------------------
@pytest.mark.parametrize("sizes", [[2, 1], [2, 8, 8, 1], [2, 3, 4]])
def test_parameter_names_are_the_networks(sizes: list[int]) -> None:
    model = MLP(sizes[0], sizes[1:])
    assert parameter_names(sizes) == [name for name, _ in model.named_parameters()]


def test_model_json_round_trips_from_trainer_and_snapshot(trained: Trainer) -> None:
    snap = trained.snapshot()
    for source in (trained, snap):
        text = model_json(source)
        data = json.loads(text)
        assert data["format"] == "gradbox-model" and data["version"] == 1
        assert data == model_dict(source)
        model = load_model_json(text)
        assert model.layer_sizes == (2, 8, 8, 1)
        assert (model.activation, model.output_activation, model.loss) == (
            "tanh", "linear", "hinge")
        assert model.step == 4 and model.classes == 2
        assert model.names == snap.param_names
        assert np.array_equal(model.params, snap.params)
        assert list(data["parameters"].values()) == data["flat"]
        points = np.array([[0.0, 0.0], [1.5, -0.25], [-1.0, 2.0]])
        assert np.array_equal(model.predict(points), snap.predict(points))


def test_softmax_model_round_trips() -> None:
    trainer = Trainer(TrainingConfig(dataset="blobs", classes=4, hidden=(5,), n_samples=40))
    trainer.run_steps(1)
    model = load_model_json(model_json(trainer).encode("utf-8-sig"))  # a BOM is fine too
    assert model.layer_sizes == (2, 5, 4) and model.loss == "softmax" and model.classes == 4
    assert np.array_equal(model.params, trainer.run.values())
    assert np.array_equal(
        model.predict(trainer.dataset.points),
        numpy_forward(trainer.run.values(), [2, 5, 4], "tanh", trainer.dataset.points))


def test_non_finite_weights_cannot_be_exported(trained: Trainer) -> None:
    snap = trained.snapshot()
    params = snap.params.copy()
    params[3] = math.inf
    with pytest.raises(ValueError, match=snap.param_names[3]):
        model_json(dataclasses.replace(snap, params=params))


def _base() -> dict[str, Any]:
    trainer = Trainer(TrainingConfig(hidden=(2,), n_samples=10))
    return json.loads(model_json(trainer))


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        d[key] = value
    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda d: d.pop(key)


def _first_weight(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(d: dict[str, Any]) -> None:
        d["parameters"]["layers.0.neurons.0.w.0"] = value
    return change


BAD_MODELS: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "another format": (_set("format", "gradbox-session"), "format must be"),
    "a newer version": (_set("version", 2), "unsupported model version 2"),
    "a missing field": (_drop("loss"), "missing field loss"),
    "an unknown field": (_set("extra", 1), "unknown field 'extra'"),
    "an unknown activation": (_set("activation", "gelu"), "activation must be one of"),
    "a layer of 0": (_set("layer_sizes", [2, 0, 1]), r"layer_sizes\[1\]"),
    "sizes as text": (_set("layer_sizes", "2,2,1"), "layer_sizes must be a list"),
    "softmax on one output": (_set("loss", "softmax"), "does not fit 1 output"),
    "a short flat list": (lambda d: d["flat"].pop(), "flat must list 9 numbers"),
    "a weight as text": (lambda d: d["flat"].__setitem__(0, "1.0"), r"flat\[0\] must be"),
    "a weight as true": (lambda d: d["flat"].__setitem__(0, True), r"flat\[0\] must be"),
    "copies that disagree": (_first_weight(123.0), "but flat"),
    "a missing name": (lambda d: d["parameters"].pop("layers.1.neurons.0.b"),
                       "layers.1.neurons.0.b is missing"),
    "a foreign name": (lambda d: d["parameters"].__setitem__("layers.9.neurons.0.b", 0.0),
                       "is not a parameter"),
    "a negative step": (_set("step", -1), "step must be"),
}


@pytest.mark.parametrize("case", BAD_MODELS)
def test_load_model_json_names_what_is_wrong(case: str) -> None:
    data = _base()
    load_model_json(json.dumps(data))  # the unchanged file is fine
    change, message = BAD_MODELS[case]
    change(data)
    with pytest.raises(ModelFileError, match=message):
        load_model_json(json.dumps(data))


@pytest.mark.parametrize(("text", "message"), [
    # The session files' strict reader reads model files too (one reader, its messages).
    ("", "the file is empty"),
    ('{"format": "gradbox-model", "version": 1', "truncated"),
    ('{"format": "gradbox-model", "version": 1,, }', "not valid JSON"),
    ("[1, 2]", "a JSON object"),
    ('{"format": "gradbox-model", "format": "x"}', "appears twice"),
    ('{"format": "gradbox-model", "version": 1, "x": NaN}', "NaN is not a JSON number"),
    ('{"format": "gradbox-model", "version": 1, "x": 1e400}', "too large"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_load_model_json_rejects_broken_text(text: str | bytes, message: str) -> None:
    with pytest.raises(ModelFileError, match=message):
        load_model_json(text)
