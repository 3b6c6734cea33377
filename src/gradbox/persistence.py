"""Sessions on disk: a versioned JSON file, saved atomically, loaded with full validation.

A session file holds everything needed to continue a run bit for bit, and to rewind it:

    {"format": "gradbox-session", "version": 1,
     "config":   TrainingConfig fields (hidden as a list; lr is the base rate in effect),
     "dataset":  {"points": [[x, y], ...], "labels": [...], "is_test": [...],
                  "classes": k, "version": edits so far},
     "init_seed", "forget_zero_grad", "phase": "forward", "stop_reason", "selected_sample",
     "model":    {"initial": [...], "params": [...], "grads": [...], "optimizer": {...}},
     "ghost":    null, or {"params", "grads", "optimizer"} of the ghost run,
     "history":  [{StepRecord fields}, ...],
     "checkpoints": [{"params", "grads", "optimizer", "ghost": null | {"params",
                      "optimizer"}, "lr"}, ...]}   # one per history entry: what rewind needs

Decisions worth knowing:

- Sessions are stored at a step boundary. A trainer saved between phases is stored as
  it was at the start of that step -- exactly what `rewind(step_count)` would leave --
  because that state is complete, already kept in the last checkpoint, and saving must
  not advance (or otherwise touch) the caller's trainer. The file's phase is therefore
  always "forward".
- Floats are JSON numbers written with Python's repr, which round-trips every float64
  exactly. JSON has no NaN or infinity, so where a non-finite value is legitimate it is
  written as the string "nan", "inf" or "-inf": the history's test_loss, test_accuracy
  (NaN without a test set), grad_norm (overflows before the weights do) and ghost_loss
  (NaN without a ghost); optimizer state (Adam's squared-gradient average can overflow
  while the weights stay finite); and the ghost run, which is never stopped. Everywhere
  else a non-finite number is an error, and a number literal too large for a float
  (1e400) is rejected rather than read as infinity.
- Checkpoints are kept in full: about 4 arrays of P parameters per step, roughly
  4 × P × 20 bytes (micrograd's demo network, P = 337: ~27 kB per step, 2.7 MB for 100
  steps). A file may not exceed MAX_FILE_BYTES; saving a larger session fails with a
  SessionError and leaves any old file alone, so every file saved can also be opened.
- Loading validates everything before building anything, names the field at fault
  (`config.lr`, `checkpoints[3].optimizer.velocity[7]`) and raises only SessionError.
  It builds a new Trainer, so the caller's current one is never touched.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import reprlib
import secrets
import stat
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from gradbox import datasets
from gradbox.datasets import Dataset, DatasetError
from gradbox.nn import parameter_count
from gradbox.optim import make_optimizer
from gradbox.training import (
    PHASES,
    ConfigError,
    ParameterEdit,
    StepRecord,
    Trainer,
    TrainingConfig,
    _Checkpoint,
)

FORMAT = "gradbox-session"
VERSION = 1
MAX_FILE_BYTES = 200 * 1024 * 1024
# A scalar-autograd network this large already takes seconds per step; the cap keeps a
# hostile file from making the loader build millions of graph nodes.
MAX_PARAMETERS = 1_000_000
MAX_POINTS = 1_000_000
MAX_SEED = 2**128

NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

# The JSON type of each TrainingConfig field; a test checks it covers every field.
CONFIG_FIELDS: dict[str, str] = {
    "dataset": "str", "n_samples": "int", "noise": "float", "test_ratio": "float",
    "classes": "int", "hidden": "int list", "activation": "str", "loss": "str",
    "optimizer": "str", "lr": "float", "momentum": "float", "schedule": "str",
    "batch_size": "int or null", "l1": "float", "l2": "float", "seed": "int", "steps": "int",
}
# History fields that may legitimately be NaN or infinite (see the module docstring).
NONFINITE_RECORD_FIELDS = frozenset({"test_loss", "test_accuracy", "grad_norm", "ghost_loss"})

_TOP_FIELDS = ("format", "version", "config", "dataset", "init_seed", "forget_zero_grad",
               "phase", "stop_reason", "selected_sample", "model", "ghost", "history",
               "checkpoints", "edits")


class SessionError(ValueError):
    """A session that cannot be saved or loaded; the message names what is wrong."""


# --- saving ------------------------------------------------------------------------------
def _encode(values: np.ndarray) -> list[Any]:
    """A float array as a JSON list, non-finite entries spelled out as strings."""
    return [v if math.isfinite(v) else _spell(v) for v in np.asarray(values, np.float64).tolist()]


def _spell(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _encode_number(v: float) -> float | str:
    v = float(v)
    return v if math.isfinite(v) else _spell(v)


def _encode_optimizer(state: dict[str, Any]) -> dict[str, Any]:
    return {k: _encode(v) if isinstance(v, np.ndarray) else int(v) for k, v in state.items()}


def _encode_record(record: StepRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(StepRecord):
        v = getattr(record, f.name)
        if isinstance(v, (bool, np.bool_)):
            out[f.name] = bool(v)
        elif isinstance(v, (int, np.integer)):
            out[f.name] = int(v)
        else:
            out[f.name] = _encode_number(v)
    return out


def trainer_to_session(trainer: Trainer) -> dict[str, Any]:
    """The trainer's whole state as a JSON-ready dict (the trainer is not changed).

    Between phases, the state at the start of the current step is stored (see the
    module docstring).
    """
    steps = trainer.step_count
    if trainer.phase_index != 0:
        start = trainer.checkpoints[steps]  # pushed by this step's forward phase
        params, grads, optimizer, lr = start.params, start.grads, start.optimizer, start.lr
        # A rewind rebuilds the ghost with fresh (zero) gradients; store the same.
        ghost = None if start.ghost is None else (
            start.ghost[0], np.zeros_like(start.ghost[0]), start.ghost[1])
    else:
        run = trainer.run
        params, grads = run.values(), run.grads()
        optimizer, lr = run.optimizer.state_dict(), trainer.lr
        g = trainer.ghost
        ghost = None if g is None else (g.values(), g.grads(), g.optimizer.state_dict())
    config = trainer.config.to_dict()
    config["lr"] = float(lr)
    ds = trainer.dataset
    return {
        "format": FORMAT,
        "version": VERSION,
        "config": config,
        "dataset": {
            "points": ds.points.tolist(), "labels": ds.labels.tolist(),
            "is_test": ds.is_test.tolist(), "classes": int(ds.classes),
            "version": int(trainer.dataset_version),
        },
        "init_seed": int(trainer.init_seed),
        "forget_zero_grad": bool(trainer.forget_zero_grad),
        "phase": PHASES[0],
        "stop_reason": str(trainer.stop_reason),
        # A view's choice, not training state: clamped so that removing points never
        # makes a session unsavable.
        "selected_sample": min(max(int(getattr(trainer, "selected_sample", 0)), 0),
                               max(len(ds) - 1, 0)),
        "model": {
            "initial": np.asarray(trainer.initial_params, np.float64).tolist(),
            "params": params.tolist(), "grads": grads.tolist(),
            "optimizer": _encode_optimizer(optimizer),
        },
        "ghost": None if ghost is None else {
            "params": _encode(ghost[0]), "grads": _encode(ghost[1]),
            "optimizer": _encode_optimizer(ghost[2]),
        },
        "history": [_encode_record(r) for r in trainer.history[:steps]],
        "checkpoints": [{
            "params": cp.params.tolist(), "grads": cp.grads.tolist(),
            "optimizer": _encode_optimizer(cp.optimizer),
            "ghost": None if cp.ghost is None else {
                "params": _encode(cp.ghost[0]), "optimizer": _encode_optimizer(cp.ghost[1])},
            "lr": float(cp.lr),
        } for cp in trainer.checkpoints[:steps]],
        "edits": [{"step": e.step, "name": e.name, "old": e.old, "new": e.new}
                  for e in trainer.edits if e.step <= steps],
    }


def save_session(trainer: Trainer, path: str | os.PathLike[str]) -> None:
    """Write the session to `path` atomically: the old file survives any failure.

    Raises SessionError if the session could not be loaded back (a non-finite weight,
    or a file over MAX_FILE_BYTES), OSError if the disk refuses.
    """
    path = Path(path)
    data = trainer_to_session(trainer)
    try:
        _parse_session(data)
    except SessionError as error:
        raise SessionError(f"this session cannot be saved: {error}") from None
    # Same directory, so os.replace is a rename within one file system (atomic).
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        # "x" creates the file with the usual permissions (umask), unlike mkstemp's 0600.
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            json.dump(data, f, allow_nan=False, separators=(",", ":"))
            f.write("\n")
            size = f.tell()
            if size > MAX_FILE_BYTES:
                raise SessionError(
                    f"the session would take {size / 2**20:.0f} MB, over the "
                    f"{MAX_FILE_BYTES // 2**20} MB limit; rewind to an earlier step to keep "
                    "fewer checkpoints, or reset")
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))  # keep an old file's mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); not possible, nor needed, everywhere."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    with contextlib.suppress(OSError):
        fd = os.open(directory, flags)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- loading -------------------------------------------------------------------------------
def load_session(path: str | os.PathLike[str]) -> Trainer:
    """Read, validate and rebuild a session as a new Trainer; SessionError if anything is off."""
    return trainer_from_session(read_session(path))


def read_session(path: str | os.PathLike[str]) -> Any:
    """The parsed JSON of a session file (not yet validated), or SessionError."""
    path = Path(path)
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE_BYTES:
            raise SessionError(f"the file is {size / 2**20:.0f} MB; sessions are at most "
                               f"{MAX_FILE_BYTES // 2**20} MB")
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)  # the file may have grown since stat
    except OSError as error:
        raise SessionError(f"cannot read the file: {error.strerror or error}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise SessionError(f"the file is over {MAX_FILE_BYTES // 2**20} MB")
    return parse_session_text(raw)


class _RejectedError(Exception):
    """Raised inside json's hooks (only an exception can stop the parser there)."""


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _RejectedError(f"the number {_short(text)} is too large for a float")
    return value


def _reject_constant(name: str) -> Any:
    raise _RejectedError(f"{name} is not a JSON number; write non-finite values as "
                    '"nan", "inf" or "-inf" where they are allowed')


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RejectedError(f"the field {_short(key)} appears twice in one object")
        out[key] = value
    return out


def parse_session_text(raw: bytes | str) -> Any:
    """JSON text -> Python values, with every way of failing turned into SessionError."""
    if isinstance(raw, bytes):
        try:
            # utf-8-sig: editors on Windows like to start the file with a byte-order mark.
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise SessionError(f"not a session file: byte {error.start} is not UTF-8 text"
                               ) from None
    if not raw.strip():
        raise SessionError("the file is empty")
    try:
        return json.loads(raw, parse_float=_parse_float, parse_constant=_reject_constant,
                          object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        if error.pos >= len(raw.rstrip()):
            raise SessionError(f"the file ends too early ({where}): it is truncated") from None
        raise SessionError(f"not valid JSON at {where}: {error.msg}") from None
    except _RejectedError as error:
        raise SessionError(str(error)) from None
    except RecursionError:
        raise SessionError("the file is nested too deeply to be a session") from None
    except ValueError as error:  # e.g. an integer literal of more than 4300 digits
        raise SessionError(f"unreadable number: {error}") from None


def trainer_from_session(data: Any) -> Trainer:
    """A new Trainer from a parsed session (see `trainer_to_session`); SessionError if invalid."""
    s = _parse_session(data)
    trainer = Trainer(s.config, s.dataset, init_seed=s.init_seed)
    trainer.dataset_version = s.dataset_version
    trainer.initial_params = _frozen(s.initial)
    trainer.set_forget_zero_grad(s.forget_zero_grad)
    run = trainer.run
    run.set_values(s.params)
    run.set_grads(s.grads)
    run.optimizer.load_state_dict(s.optimizer)
    if s.ghost is not None:
        trainer.set_ghost(True)
        assert trainer.ghost is not None
        trainer.ghost.set_values(s.ghost[0])
        trainer.ghost.set_grads(s.ghost[1])
        trainer.ghost.optimizer.load_state_dict(s.ghost[2])
    trainer.history = list(s.history)
    trainer.checkpoints = list(s.checkpoints)
    trainer.stop_reason = s.stop_reason
    trainer.selected_sample = s.selected_sample
    for i, edit in enumerate(s.edits):
        if edit.name not in trainer.param_names:
            raise SessionError(f"edits[{i}].name: this network has no parameter {edit.name!r}")
    trainer.edits = list(s.edits)
    return trainer


def _frozen(values: np.ndarray) -> np.ndarray:
    out = np.array(values, dtype=np.float64, copy=True)
    out.flags.writeable = False
    return out


# --- validation ----------------------------------------------------------------------------
_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def _short(value: Any) -> str:
    return _repr.repr(value)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, (int, float)):
        return f"the number {_short(value)}"
    if isinstance(value, str):
        return f"the text {_short(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _object(value: Any, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if type(value) is not dict:
        raise SessionError(f"{path or 'the file'} must be an object, got {_kind(value)}")
    for key in keys:
        if key not in value:
            raise SessionError(f"missing field {_at(path, key)}")
    for key in value:
        if key not in keys:
            raise SessionError(f"unknown field {_at(path, str(key))}")
    return value


def _list(value: Any, path: str, length: int | None = None, limit: int | None = None,
          what: str = "entries") -> list[Any]:
    if type(value) is not list:
        raise SessionError(f"{path} must be a list, got {_kind(value)}")
    if length is not None and len(value) != length:
        raise SessionError(f"{path} must have {length} {what}, got {len(value)}")
    if limit is not None and len(value) > limit:
        raise SessionError(f"{path} has {len(value):,} {what}; at most {limit:,} are allowed")
    return value


def _int(value: Any, path: str, lo: int, hi: int) -> int:
    if type(value) is not int:
        raise SessionError(f"{path} must be a whole number, got {_kind(value)}")
    if not lo <= value <= hi:
        raise SessionError(f"{path} must be between {lo} and {hi}, got {_short(value)}")
    return value


def _bool(value: Any, path: str) -> bool:
    if type(value) is not bool:
        raise SessionError(f"{path} must be true or false, got {_kind(value)}")
    return value


def _str(value: Any, path: str, choices: tuple[str, ...] | None = None) -> str:
    if type(value) is not str:
        raise SessionError(f"{path} must be text, got {_kind(value)}")
    if choices is not None and value not in choices:
        raise SessionError(f"{path} must be one of {', '.join(choices)}, got {_short(value)}")
    return value


def _float(value: Any, path: str, nonfinite: bool = False, lo: float | None = None,
           hi: float | None = None) -> float:
    t = type(value)
    if t is float:
        out = value
    elif t is int:
        try:
            out = float(value)
        except OverflowError:
            raise SessionError(f"{path} is too large: {_short(value)}") from None
    elif t is str and nonfinite and value in NONFINITE:
        return NONFINITE[value]
    else:
        raise SessionError(f"{path} must be a number, got {_kind(value)}")
    if not math.isfinite(out):
        # Only reachable from a dict built in memory: parsing rejects non-finite literals.
        raise SessionError(f"{path} must be finite, got {out}")
    if lo is not None and out < lo:
        raise SessionError(f"{path} must be at least {lo}, got {out!r}")
    if hi is not None and out > hi:
        raise SessionError(f"{path} must be at most {hi}, got {out!r}")
    return out


def _floats(value: Any, path: str, length: int, what: str = "numbers",
            nonfinite: bool = False) -> np.ndarray:
    items = _list(value, path, length, what=what)
    if all(type(v) is float for v in items):  # the common case, checked at C speed
        out = np.array(items, dtype=np.float64)
        if np.all(np.isfinite(out)):
            return out
    return np.array([_float(v, _at(path, i), nonfinite) for i, v in enumerate(items)],
                    dtype=np.float64).reshape(length)


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
    checkpoints: list[_Checkpoint]
    edits: list[ParameterEdit]


def _parse_session(data: Any) -> _Session:
    if type(data) is not dict:
        raise SessionError(f"not a session file: the top level is {_kind(data)}, not an object")
    if data.get("format") != FORMAT:
        raise SessionError(f"not a session file: format must be {FORMAT!r}, "
                           f"got {_short(data.get('format'))}")
    version = data.get("version")
    if type(version) is not int:
        raise SessionError(f"version must be a whole number, got {_kind(version)}")
    if version != VERSION:
        newer = " (made by a newer gradbox)" if version > VERSION else ""
        raise SessionError(f"unsupported session version {version}{newer}; "
                           f"this gradbox reads version {VERSION}")
    _object(data, "", _TOP_FIELDS)
    config = _parse_config(data["config"])
    sizes = config.layer_sizes
    n_params = parameter_count(sizes)
    if n_params > MAX_PARAMETERS:
        raise SessionError(f"config.hidden: layers {sizes} have {n_params:,} parameters; "
                           f"at most {MAX_PARAMETERS:,} can be loaded")
    dataset, dataset_version = _parse_dataset(data["dataset"], config)
    _str(data["phase"], "phase", (PHASES[0],))

    def params(value: Any, path: str, nonfinite: bool = False) -> np.ndarray:
        if type(value) is list and len(value) != n_params:
            raise SessionError(f"{path}: {n_params} parameters expected for layers {sizes} "
                               f"but {len(value)} given")
        return _floats(value, path, n_params, "parameters", nonfinite)

    def optimizer(value: Any, path: str) -> dict[str, Any]:
        # The fields a fresh optimizer of this kind has: arrays, one entry per parameter.
        template = make_optimizer(config.optimizer, [], 0.1).state_dict()
        obj = _object(value, path, tuple(template))
        return {key: params(obj[key], _at(path, key), nonfinite=True)
                if isinstance(kind, np.ndarray) else _int(obj[key], _at(path, key), 0, 2**63 - 1)
                for key, kind in template.items()}

    model = _object(data["model"], "model", ("initial", "params", "grads", "optimizer"))
    ghost = None
    if data["ghost"] is not None:
        g = _object(data["ghost"], "ghost", ("params", "grads", "optimizer"))
        ghost = (params(g["params"], "ghost.params", True),
                 params(g["grads"], "ghost.grads", True),
                 optimizer(g["optimizer"], "ghost.optimizer"))
    history = [_parse_record(r, _at("history", i), i + 1)
               for i, r in enumerate(_list(data["history"], "history"))]
    checkpoints = []
    for i, item in enumerate(_list(data["checkpoints"], "checkpoints", len(history),
                                   what="entries, one per history step")):
        path = _at("checkpoints", i)
        cp = _object(item, path, ("params", "grads", "optimizer", "ghost", "lr"))
        cp_ghost = None
        if cp["ghost"] is not None:
            gp = _object(cp["ghost"], f"{path}.ghost", ("params", "optimizer"))
            cp_ghost = (params(gp["params"], f"{path}.ghost.params", True),
                        optimizer(gp["optimizer"], f"{path}.ghost.optimizer"))
        checkpoints.append(_Checkpoint(
            params(cp["params"], f"{path}.params"), params(cp["grads"], f"{path}.grads"),
            optimizer(cp["optimizer"], f"{path}.optimizer"), cp_ghost,
            _float(cp["lr"], f"{path}.lr", lo=0.0)))
    selected = _int(data["selected_sample"], "selected_sample", 0, max(len(dataset) - 1, 0))
    return _Session(
        config=config, dataset=dataset, dataset_version=dataset_version,
        init_seed=_int(data["init_seed"], "init_seed", 0, MAX_SEED),
        forget_zero_grad=_bool(data["forget_zero_grad"], "forget_zero_grad"),
        stop_reason=_str(data["stop_reason"], "stop_reason"), selected_sample=selected,
        initial=params(model["initial"], "model.initial"),
        params=params(model["params"], "model.params"),
        grads=params(model["grads"], "model.grads"),
        optimizer=optimizer(model["optimizer"], "model.optimizer"),
        ghost=ghost, history=history, checkpoints=checkpoints,
        edits=[_parse_edit(e, _at("edits", i), len(history))
               for i, e in enumerate(_list(data["edits"], "edits", limit=MAX_POINTS))])


def _parse_edit(value: Any, path: str, steps: int) -> ParameterEdit:
    obj = _object(value, path, ("step", "name", "old", "new"))
    return ParameterEdit(_int(obj["step"], f"{path}.step", 0, steps),
                         _str(obj["name"], f"{path}.name"),
                         _float(obj["old"], f"{path}.old"), _float(obj["new"], f"{path}.new"))


def _parse_config(value: Any) -> TrainingConfig:
    obj = _object(value, "config", tuple(CONFIG_FIELDS))
    out: dict[str, Any] = {}
    for name, kind in CONFIG_FIELDS.items():
        v, path = obj[name], f"config.{name}"
        if kind == "str":
            out[name] = _str(v, path)
        elif kind == "int":
            out[name] = _int(v, path, 0 if name == "seed" else -(2**63),
                             MAX_SEED if name == "seed" else 2**63 - 1)
        elif kind == "int or null":
            out[name] = None if v is None else _int(v, path, -(2**63), 2**63 - 1)
        elif kind == "float":
            out[name] = _float(v, path)
        else:
            # The parameter count is checked from these sizes before any network exists.
            out[name] = tuple(_int(h, _at(path, i), 1, 2**63 - 1)
                              for i, h in enumerate(_list(v, path, limit=MAX_PARAMETERS,
                                                          what="layers")))
    try:
        return TrainingConfig(**out)
    except ConfigError as error:
        raise SessionError(f"config: {error}") from None


def _parse_dataset(value: Any, config: TrainingConfig) -> tuple[Dataset, int]:
    obj = _object(value, "dataset", ("points", "labels", "is_test", "classes", "version"))
    classes = _int(obj["classes"], "dataset.classes", 2, datasets.MAX_CLASSES)
    if classes > max(config.outputs, 2):
        raise SessionError(f"dataset.classes: the data has {classes} classes but the network "
                           f"has {config.outputs} output(s)")
    points = _list(obj["points"], "dataset.points", limit=MAX_POINTS, what="points")
    n = len(points)
    xy = np.empty((n, 2), dtype=np.float64)
    for i, p in enumerate(points):
        pair = _list(p, _at("dataset.points", i), 2, what="coordinates")
        xy[i, 0] = _float(pair[0], f"dataset.points[{i}][0]")
        xy[i, 1] = _float(pair[1], f"dataset.points[{i}][1]")
    labels = [_int(v, _at("dataset.labels", i), 0, classes - 1)
              for i, v in enumerate(_list(obj["labels"], "dataset.labels", n, what="labels"))]
    is_test = [_bool(v, _at("dataset.is_test", i))
               for i, v in enumerate(_list(obj["is_test"], "dataset.is_test", n, what="flags"))]
    version = _int(obj["version"], "dataset.version", 0, 2**63 - 1)
    try:
        dataset = Dataset(xy, np.array(labels, dtype=np.int64),
                          np.array(is_test, dtype=bool), classes)
    except DatasetError as error:
        raise SessionError(f"dataset: {error}") from None
    # Dataset treats an empty mask as "all training", which is the same thing for n = 0.
    return dataset, version


def _parse_record(value: Any, path: str, step: int) -> StepRecord:
    names = tuple(f.name for f in fields(StepRecord))
    obj = _object(value, path, names)
    out: dict[str, Any] = {}
    for name in names:
        v, at = obj[name], f"{path}.{name}"
        if name == "step":
            if v != step or type(v) is not int:
                raise SessionError(f"{at} must be {step} (steps are numbered from 1), "
                                   f"got {_kind(v)}")
            out[name] = step
        elif name == "zero_grad_skipped":
            out[name] = _bool(v, at)
        elif name == "accuracy":
            out[name] = _float(v, at, lo=0.0, hi=1.0)
        elif name == "lr":
            out[name] = _float(v, at, lo=0.0)
        else:
            out[name] = _float(v, at, nonfinite=name in NONFINITE_RECORD_FIELDS)
    if not (math.isnan(out["test_accuracy"]) or 0 <= out["test_accuracy"] <= 1):
        raise SessionError(f"{path}.test_accuracy must be between 0 and 1 or \"nan\", "
                           f"got {out['test_accuracy']!r}")
    return StepRecord(**out)

