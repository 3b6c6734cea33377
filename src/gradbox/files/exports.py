"""Exports as text: loss history and parameters as CSV, the model as JSON. Pure (no Qt).

Every function returns a string; the caller writes it (UTF-8, as is: lines end in "\\n").

CSV conventions, shared by both tables:

- Floats are written with Python's repr, which reads back as the same float64.
- An empty cell means "not measured": NaN in gradbox's history only ever means that (the
  test loss and accuracy without held-out points, ghost_loss without a ghost run), and
  spreadsheets and pandas both read an empty cell as missing. Infinity, which can be
  measured (a gradient norm that overflowed), is written "inf" or "-inf", which Python's
  float() and pandas read back.
- zero_grad_skipped is 1 where the step kept the previous gradients, 0 elsewhere, so a
  spreadsheet can sum it.

Model JSON (`model_json` / `load_model_json`):

    {"format": "gradbox-model", "version": 1,
     "layer_sizes": [2, 8, 8, 1], "activation": "tanh", "output_activation": "linear",
     "loss": "hinge", "classes": 2, "step": 20, "features": ["x1", "x2"],
     "parameter_order": "...", "parameters": {"layers.0.neurons.0.w.0": 0.27, ...},
     "flat": [0.27, ...]}

`parameters` and `flat` hold the same numbers: by name for people, as one list (in the
network's order: layer by layer, neuron by neuron, its weights then its bias) for
programs. `features` names the network's inputs (gradbox.autograd.features; a file without it
means x1, x2); the loss may be a regression one (mse, mae, huber) for a fitted function.
Weights are always finite in gradbox (an update that would make one infinite
is refused), so the file holds plain JSON numbers only.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.nn import (
    ACTIVATIONS,
    numpy_forward,
    parameter_count,
    parameter_names,
    parse_parameter_name,
)
from gradbox.files.session_json import SessionError, parse_session_text
from gradbox.training.config import MAX_PARAMETERS, network_problems
from gradbox.training.history import StepRecord
from gradbox.training.snapshots import Snapshot
from gradbox.training.trainer import Trainer

# The per-layer statistics are a table per step, not a number: they stay out of the CSV.
HISTORY_COLUMNS = tuple(f.name for f in fields(StepRecord) if f.name != "layers")
PARAMETER_COLUMNS = ("name", "layer", "neuron", "kind", "input", "value", "grad")
MODEL_FORMAT = "gradbox-model"
MODEL_VERSION = 1
PARAMETER_ORDER = "layer by layer, neuron by neuron: each neuron's weights (w.0, w.1, ...) " \
    "then its bias (b)"
_MODEL_FIELDS = ("format", "version", "layer_sizes", "activation", "output_activation",
                 "loss", "classes", "step", "parameter_order", "parameters", "flat",
                 "features")
# gradbox's parameter names: layers.<layer>.neurons.<neuron>.w.<input> or ...b
MAX_CLASSES_IN_FILE = 1_000


class ModelFileError(ValueError):
    """A model JSON that cannot be read; the message names the field at fault."""


# --- CSV ------------------------------------------------------------------------------------
def _cell(value: Any) -> str | int:
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    v = float(value)
    if math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return repr(v)


def _table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    # "\n" rather than csv's default "\r\n": the text is written to a file as is.
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


def history_csv(history: Sequence[StepRecord]) -> str:
    """One row per step: HISTORY_COLUMNS (step, loss, test_loss, accuracy, test_accuracy,
    grad_norm, lr, zero_grad_skipped, ghost_loss). See the module docstring for cells."""
    return _table(HISTORY_COLUMNS,
                  [[_cell(getattr(r, name)) for name in HISTORY_COLUMNS] for r in history])


def parameters_csv(names: Sequence[str], values: Sequence[float] | np.ndarray,
                   grads: Sequence[float] | np.ndarray) -> str:
    """One row per parameter: its name, where it sits (layer, neuron, kind "weight" or
    "bias", input for a weight; empty for a name of another shape), value and gradient."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    grads = np.asarray(grads, dtype=np.float64).reshape(-1)
    if not len(names) == len(values) == len(grads):
        raise ValueError(f"{len(names)} names, {len(values)} values and {len(grads)} "
                         "gradients: one of each per parameter is needed")
    rows = []
    for name, value, grad in zip(names, values.tolist(), grads.tolist()):
        parsed = parse_parameter_name(name)
        if parsed is None:
            where: list[str | int] = ["", "", "", ""]
        else:
            layer, neuron, inp = parsed
            where = [layer, neuron, "bias" if inp is None else "weight",
                     "" if inp is None else inp]
        rows.append([name, *where, _cell(value), _cell(grad)])
    return _table(PARAMETER_COLUMNS, rows)


# --- model JSON -------------------------------------------------------------------------------
def model_dict(source: Trainer | Snapshot) -> dict[str, Any]:
    """The model as a JSON-ready dict (see the module docstring)."""
    if isinstance(source, Trainer):
        config, names = source.config, source.param_names
        values, step = source.run.values(), source.step_count
    else:
        config, names, values, step = source.config, source.param_names, source.params, \
            source.step
    flat = np.asarray(values, dtype=np.float64).tolist()
    bad = [name for name, v in zip(names, flat) if not math.isfinite(v)]
    if bad:
        raise ValueError(f"the parameter {bad[0]} is {flat[names.index(bad[0])]}: "
                         "a model with non-finite weights cannot be exported")
    return {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "layer_sizes": [int(s) for s in config.layer_sizes],
        "activation": config.activation,
        # MLP's last layer is always linear in gradbox: the loss reads raw scores.
        "output_activation": "linear",
        "loss": config.effective_loss,
        "classes": int(config.effective_classes),
        "step": int(step),
        "features": list(config.effective_features),
        "parameter_order": PARAMETER_ORDER,
        "parameters": dict(zip(names, flat)),
        "flat": flat,
    }


def model_json(source: Trainer | Snapshot) -> str:
    """The model (architecture and current weights) as JSON text, floats exact."""
    data = model_dict(source)
    # One field a line, and one parameter a line: readable and diffable, while the long
    # flat list stays on a single line instead of one number a line.
    lines = []
    for key, value in data.items():
        if key == "parameters":
            inner = [f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False)}"
                     for k, v in value.items()]
            text = "{\n" + ",\n".join(inner) + "\n }" if inner else "{}"
        else:
            text = json.dumps(value, allow_nan=False)
        lines.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


@dataclass(frozen=True)
class ModelFile:
    """What `load_model_json` read: an architecture and its weights."""

    layer_sizes: tuple[int, ...]
    activation: str
    output_activation: str
    loss: str
    classes: int
    step: int
    names: tuple[str, ...]
    params: np.ndarray
    features: tuple[str, ...] = features.DEFAULT

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Network output (n, outputs) for the points, as gradbox computes it."""
        return numpy_forward(self.params, self.layer_sizes, self.activation,
                             features.transform(points, self.features), self.output_activation)


def _number(value: Any, path: str) -> float:
    # bool is an int in Python, but true is not a weight.
    if type(value) not in (int, float):
        raise ModelFileError(f"{path} must be a number, got {type(value).__name__}")
    try:
        out = float(value)
    except OverflowError:
        raise ModelFileError(f"{path} is too large for a float") from None
    if not math.isfinite(out):
        raise ModelFileError(f"{path} must be finite, got {out}")
    return out


def _whole(value: Any, path: str, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise ModelFileError(f"{path} must be a whole number from {lo} to {hi}, "
                             f"got {value!r:.40}")
    return value


def _choice(value: Any, path: str, choices: Sequence[str]) -> str:
    if type(value) is not str or value not in choices:
        raise ModelFileError(f"{path} must be one of {', '.join(choices)}, got {value!r:.40}")
    return value


def load_model_json(text: str | bytes) -> ModelFile:
    """Parse and validate a model JSON; ModelFileError names what is wrong."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ModelFileError(f"byte {error.start} is not UTF-8 text") from None
    try:
        data = parse_session_text(text)  # the one strict JSON reader
    except SessionError as error:
        raise ModelFileError(str(error)) from None
    if type(data) is not dict:
        raise ModelFileError("a model file is a JSON object")
    if data.get("format") != MODEL_FORMAT:
        raise ModelFileError(f"format must be {MODEL_FORMAT!r}, got {data.get('format')!r:.40}")
    version = data.get("version")
    if version != MODEL_VERSION or type(version) is not int:
        raise ModelFileError(f"unsupported model version {version!r:.20}; "
                             f"this gradbox reads version {MODEL_VERSION}")
    data = {"features": list(features.DEFAULT), **data}  # files from before features
    missing = [k for k in _MODEL_FIELDS if k not in data]
    if missing:
        raise ModelFileError(f"missing field {missing[0]}")
    unknown = [k for k in data if k not in _MODEL_FIELDS]
    if unknown:
        raise ModelFileError(f"unknown field {unknown[0]!r:.40}")

    sizes_in = data["layer_sizes"]
    if type(sizes_in) is not list or len(sizes_in) < 2:
        raise ModelFileError("layer_sizes must be a list of at least 2 layer sizes")
    sizes = tuple(_whole(s, f"layer_sizes[{i}]", 1, MAX_PARAMETERS)
                  for i, s in enumerate(sizes_in))
    count = parameter_count(sizes)
    too_big = network_problems(sizes[1:-1], sizes)  # as for every network
    if too_big:
        raise ModelFileError(f"layer_sizes: {too_big[0]}")
    activation = _choice(data["activation"], "activation", ACTIVATIONS)
    output_activation = _choice(data["output_activation"], "output_activation", ACTIVATIONS)
    loss = _choice(data["loss"], "loss", losses.ALL_LOSSES)
    classes = _whole(data["classes"], "classes", 2, MAX_CLASSES_IN_FILE)
    names_in = data["features"]
    if type(names_in) is not list or not all(type(n) is str for n in names_in) \
            or features.problems(names_in) or list(features.canonical(names_in)) != names_in:
        raise ModelFileError(f"features must list input features in the order "
                             f"{', '.join(features.NAMES)}, got {names_in!r:.80}")
    if len(names_in) != sizes[0]:
        raise ModelFileError(f"{len(names_in)} features do not fit {sizes[0]} inputs")
    outputs = sizes[-1]
    fits = outputs == classes if loss == "softmax" else outputs == 1 and classes == 2
    if not fits:
        raise ModelFileError(f"a {loss} loss with {classes} classes does not fit "
                             f"{outputs} output(s)")
    step = _whole(data["step"], "step", 0, 2**63 - 1)
    if type(data["parameter_order"]) is not str:
        raise ModelFileError("parameter_order must be text")

    names = parameter_names(sizes)
    flat_in = data["flat"]
    if type(flat_in) is not list or len(flat_in) != count:
        got = len(flat_in) if type(flat_in) is list else type(flat_in).__name__
        raise ModelFileError(f"flat must list {count} numbers for layers {list(sizes)}, "
                             f"got {got}")
    flat = np.array([_number(v, f"flat[{i}]") for i, v in enumerate(flat_in)],
                    dtype=np.float64)
    by_name = data["parameters"]
    if type(by_name) is not dict:
        raise ModelFileError("parameters must be an object of name: value")
    for name in by_name:
        if name not in names:
            raise ModelFileError(f"parameters: {name!r:.60} is not a parameter of layers "
                                 f"{list(sizes)}")
    for i, name in enumerate(names):
        if name not in by_name:
            raise ModelFileError(f"parameters: {name} is missing")
        value = _number(by_name[name], f"parameters.{name}")
        # The two copies must agree, or a reader could not know which one is the model.
        if value != flat[i]:
            raise ModelFileError(f"parameters.{name} is {value!r} but flat[{i}] is "
                                 f"{flat[i]!r}")
    flat.flags.writeable = False
    return ModelFile(sizes, activation, output_activation, loss, classes, step,
                     tuple(names), flat, tuple(names_in))
