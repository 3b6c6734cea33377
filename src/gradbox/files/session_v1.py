"""Version 1 sessions: one JSON file with a full checkpoint for every step (gradbox
before the compact format). Read only, to open old files; see gradbox.files.sessions.

    {"format": "gradbox-session", "version": 1,
     "config":   TrainingConfig fields (hidden as a list; lr is the base rate in effect),
     "dataset":  {"points": [[x, y], ...], "labels": [...], "is_test": [...],
                  "classes": k, "version": edits so far},
     "init_seed", "forget_zero_grad", "phase": "forward", "stop_reason", "selected_sample",
     "model":    {"initial": [...], "params": [...], "grads": [...], "optimizer": {...}},
     "ghost":    null, or {"params", "grads", "optimizer"} of the ghost run,
     "history":  [{StepRecord fields}, ...],
     "checkpoints": [{"params", "grads", "optimizer", "ghost": null | {"params",
                      "optimizer"}, "lr"}, ...],   # one per history entry
     "edits": [{"step", "name", "old", "new"}, ...]}

Checkpoint k is the start of step k + 1, after the edits at step k: exactly what a
`Checkpoint` of the current format holds, so every one is kept and no step of an old run
ever needs replaying (an old file does not say when the ghost or the rate changed, which
a replay across those steps would need). The points are the current ones throughout, as
rewinding a version-1 run did. `selected_sample` (a view's choice) is checked and dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradbox.autograd.nn import parameter_count
from gradbox.autograd.optim import make_optimizer
from gradbox.autograd.phases import Phase
from gradbox.files.session_json import (
    FORMAT,
    MAX_POINTS,
    NONFINITE_RECORD_FIELDS,
    SessionError,
    at,
    check_bool,
    check_float,
    check_floats,
    check_int,
    check_list,
    check_object,
    check_str,
    has_parameter,
    kind_of,
    parse_config,
    parse_edit,
    short,
)
from gradbox.training import datasets
from gradbox.training.config import MAX_INIT_SEED, MAX_PARAMETERS, TrainingConfig
from gradbox.training.datasets import Dataset, DatasetError
from gradbox.training.history import RECORD_FIELDS, History, StepRecord
from gradbox.training.state import (
    Checkpoint,
    DataChange,
    Event,
    ModelState,
    ParameterEdit,
    TrainingState,
    frozen,
    frozen_dataset,
    frozen_optimizer,
)

VERSION = 1


def state_from_v1(data: Any) -> TrainingState:
    """The run a parsed version-1 session holds; SessionError if anything is off."""
    s = _parse_session(data)
    for i, edit in enumerate(s.edits):
        if not has_parameter(s.config.layer_sizes, edit.name):
            raise SessionError(f"edits[{i}].name: this network has no parameter {edit.name!r}")
    dataset = frozen_dataset(s.dataset)
    ghost = None if s.ghost is None else ModelState(
        frozen(s.ghost[0]), frozen(s.ghost[1]), frozen_optimizer(s.ghost[2]))
    current = Checkpoint(len(s.history), s.config.lr, ModelState(
        frozen(s.params), frozen(s.grads), frozen_optimizer(s.optimizer)), ghost)
    events: list[Event] = [DataChange(0, dataset, s.dataset_version), *s.edits]
    return TrainingState(
        config=s.config, init_seed=s.init_seed, initial_params=frozen(s.initial),
        dataset=dataset, dataset_version=s.dataset_version,
        forget_zero_grad=s.forget_zero_grad, history=History.from_records(s.history),
        events=tuple(events), checkpoints=tuple(s.checkpoints), current=current,
        stop_reason=s.stop_reason)


_TOP_FIELDS = ("format", "version", "config", "dataset", "init_seed", "forget_zero_grad",
               "phase", "stop_reason", "selected_sample", "model", "ghost", "history",
               "checkpoints", "edits")


@dataclass
class _Session:
    config: TrainingConfig
    dataset: Dataset
    dataset_version: int
    init_seed: int
    forget_zero_grad: bool
    stop_reason: str
    selected_sample: int
    initial: np.ndarray
    params: np.ndarray
    grads: np.ndarray
    optimizer: dict[str, Any]
    ghost: tuple[np.ndarray, np.ndarray, dict[str, Any]] | None
    history: list[StepRecord]
    checkpoints: list[Checkpoint]
    edits: list[ParameterEdit]


def _parse_session(data: Any) -> _Session:
    if type(data) is not dict:
        raise SessionError(f"not a session file: the top level is {kind_of(data)}, not an object")
    if data.get("format") != FORMAT:
        raise SessionError(f"not a session file: format must be {FORMAT!r}, "
                           f"got {short(data.get('format'))}")
    version = data.get("version")
    if type(version) is not int:
        raise SessionError(f"version must be a whole number, got {kind_of(version)}")
    if version != VERSION:
        newer = " (made by a newer gradbox)" if version > VERSION else ""
        raise SessionError(f"unsupported session version {version}{newer}; "
                           f"this gradbox reads version {VERSION}")
    check_object(data, "", _TOP_FIELDS)
    config = parse_config(data["config"])
    sizes = config.layer_sizes
    n_params = parameter_count(sizes)
    if n_params > MAX_PARAMETERS:
        raise SessionError(f"config.hidden: layers {sizes} have {n_params:,} parameters; "
                           f"at most {MAX_PARAMETERS:,} can be loaded")
    dataset, dataset_version = _parse_dataset(data["dataset"], config)
    check_str(data["phase"], "phase", (Phase.FORWARD,))

    def params(value: Any, path: str, nonfinite: bool = False) -> np.ndarray:
        if type(value) is list and len(value) != n_params:
            raise SessionError(f"{path}: {n_params} parameters expected for layers {sizes} "
                               f"but {len(value)} given")
        return check_floats(value, path, n_params, "parameters", nonfinite)

    def optimizer(value: Any, path: str) -> dict[str, Any]:
        # The fields a fresh optimizer of this kind has: arrays, one entry per parameter.
        template = make_optimizer(config.optimizer, [], 0.1).state_dict()
        obj = check_object(value, path, tuple(template))
        return {key: params(obj[key], at(path, key), nonfinite=True)
                if isinstance(kind, np.ndarray)
                else check_int(obj[key], at(path, key), 0, 2**63 - 1)
                for key, kind in template.items()}

    model = check_object(data["model"], "model", ("initial", "params", "grads", "optimizer"))
    ghost = None
    if data["ghost"] is not None:
        g = check_object(data["ghost"], "ghost", ("params", "grads", "optimizer"))
        ghost = (params(g["params"], "ghost.params", True),
                 params(g["grads"], "ghost.grads", True),
                 optimizer(g["optimizer"], "ghost.optimizer"))
    history = [_parse_record(r, at("history", i), i + 1)
               for i, r in enumerate(check_list(data["history"], "history"))]
    checkpoints = []
    for i, item in enumerate(check_list(data["checkpoints"], "checkpoints", len(history),
                                   what="entries, one per history step")):
        path = at("checkpoints", i)
        cp = check_object(item, path, ("params", "grads", "optimizer", "ghost", "lr"))
        cp_ghost = None
        if cp["ghost"] is not None:
            gp = check_object(cp["ghost"], f"{path}.ghost", ("params", "optimizer"))
            cp_ghost = (params(gp["params"], f"{path}.ghost.params", True),
                        optimizer(gp["optimizer"], f"{path}.ghost.optimizer"))
        # A rewind rebuilt the ghost with fresh (zero) gradients: the same here.
        checkpoints.append(Checkpoint(
            i, check_float(cp["lr"], f"{path}.lr", lo=0.0),
            _run(params(cp["params"], f"{path}.params"), params(cp["grads"], f"{path}.grads"),
                 optimizer(cp["optimizer"], f"{path}.optimizer")),
            None if cp_ghost is None else _run(cp_ghost[0], np.zeros(n_params), cp_ghost[1])))
    selected = check_int(data["selected_sample"], "selected_sample", 0, max(len(dataset) - 1, 0))
    return _Session(
        config=config, dataset=dataset, dataset_version=dataset_version,
        init_seed=check_int(data["init_seed"], "init_seed", 0, MAX_INIT_SEED),
        forget_zero_grad=check_bool(data["forget_zero_grad"], "forget_zero_grad"),
        stop_reason=check_str(data["stop_reason"], "stop_reason"), selected_sample=selected,
        initial=params(model["initial"], "model.initial"),
        params=params(model["params"], "model.params"),
        grads=params(model["grads"], "model.grads"),
        optimizer=optimizer(model["optimizer"], "model.optimizer"),
        ghost=ghost, history=history, checkpoints=checkpoints,
        edits=[parse_edit(e, at("edits", i), len(history))
               for i, e in enumerate(check_list(data["edits"], "edits", limit=MAX_POINTS))])


def _run(params: np.ndarray, grads: np.ndarray, optimizer: dict[str, Any]) -> ModelState:
    return ModelState(frozen(params), frozen(grads), frozen_optimizer(optimizer))


def _parse_dataset(value: Any, config: TrainingConfig) -> tuple[Dataset, int]:
    obj = check_object(value, "dataset", ("points", "labels", "is_test", "classes", "version"))
    classes = check_int(obj["classes"], "dataset.classes", 2, datasets.MAX_CLASSES)
    if classes > max(config.outputs, 2):
        raise SessionError(f"dataset.classes: the data has {classes} classes but the network "
                           f"has {config.outputs} output(s)")
    points = check_list(obj["points"], "dataset.points", limit=MAX_POINTS, what="points")
    n = len(points)
    xy = np.empty((n, 2), dtype=np.float64)
    for i, p in enumerate(points):
        pair = check_list(p, at("dataset.points", i), 2, what="coordinates")
        xy[i, 0] = check_float(pair[0], f"dataset.points[{i}][0]")
        xy[i, 1] = check_float(pair[1], f"dataset.points[{i}][1]")
    labels = [check_int(v, at("dataset.labels", i), 0, classes - 1)
              for i, v in enumerate(check_list(obj["labels"], "dataset.labels", n,
                                               what="labels"))]
    is_test = [check_bool(v, at("dataset.is_test", i))
               for i, v in enumerate(check_list(obj["is_test"], "dataset.is_test", n,
                                                what="flags"))]
    version = check_int(obj["version"], "dataset.version", 0, 2**63 - 1)
    try:
        dataset = Dataset(xy, np.array(labels, dtype=np.int64),
                          np.array(is_test, dtype=bool), classes)
    except DatasetError as error:
        raise SessionError(f"dataset: {error}") from None
    # Dataset treats an empty mask as "all training", which is the same thing for n = 0.
    return dataset, version


def _parse_record(value: Any, path: str, step: int) -> StepRecord:
    names = RECORD_FIELDS  # version 1 had no per-layer statistics
    obj = check_object(value, path, names)
    out: dict[str, Any] = {}
    for name in names:
        v, at = obj[name], f"{path}.{name}"
        if name == "step":
            if v != step or type(v) is not int:
                raise SessionError(f"{at} must be {step} (steps are numbered from 1), "
                                   f"got {kind_of(v)}")
            out[name] = step
        elif name == "zero_grad_skipped":
            out[name] = check_bool(v, at)
        elif name == "accuracy":
            out[name] = check_float(v, at, lo=0.0, hi=1.0)
        elif name == "lr":
            out[name] = check_float(v, at, lo=0.0)
        else:
            out[name] = check_float(v, at, nonfinite=name in NONFINITE_RECORD_FIELDS)
    if not (math.isnan(out["test_accuracy"]) or 0 <= out["test_accuracy"] <= 1):
        raise SessionError(f"{path}.test_accuracy must be between 0 and 1 or \"nan\", "
                           f"got {out['test_accuracy']!r}")
    return StepRecord(**out)

