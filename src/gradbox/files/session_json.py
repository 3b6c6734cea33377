"""Reading the JSON parts of session files, trusting nothing.

Every check names the field at fault (`config.lr`, `events[3].step`) and raises only
SessionError. JSON floats are read exactly (Python's repr round-trips every float64);
JSON has no NaN or infinity, so where a non-finite number is legitimate it is written as
the string "nan", "inf" or "-inf", and a literal too large for a float (1e400) is an error.
"""

from __future__ import annotations

import json
import math
import os
import reprlib
import stat
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from gradbox.autograd.nn import parse_parameter_name
from gradbox.training import datasets
from gradbox.training.config import (
    MAX_HIDDEN_LAYERS,
    MAX_SEED,
    MAX_WIDTH,
    ConfigError,
    TrainingConfig,
)
from gradbox.training.state import ParameterEdit

FORMAT = "gradbox-session"
# Every dimension a file can set has a limit, each with a message; the network's are
# training.config's (every way to build a network checks them).
MAX_POINTS = datasets.MAX_POINTS
# JSON is bounded before it is parsed: nesting, and the memory its values would take
# (estimated from the brackets and commas, which overcounts only inside strings).
MAX_JSON_DEPTH = 32
JSON_OBJECT_BYTES = 250  # a small dict, its keys and values, as json.loads builds it
JSON_LIST_BYTES = 64
JSON_VALUE_BYTES = 32  # a float object and its slot in a list

NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}

# The JSON type of each TrainingConfig field; a test checks it covers every field.
CONFIG_FIELDS: dict[str, str] = {
    "dataset": "str", "n_samples": "int", "noise": "float", "test_ratio": "float",
    "classes": "int", "hidden": "int list", "activation": "str", "loss": "str",
    "optimizer": "str", "lr": "float", "momentum": "float", "schedule": "str",
    "batch_size": "int or null", "l1": "float", "l2": "float", "seed": "int", "steps": "int",
    "features": "str list", "init": "str", "init_scale": "float",
}
# Fields added after a format first shipped: a file without them gets these defaults, so
# every session saved before them still opens as it was.
OPTIONAL_CONFIG = {"features": list(TrainingConfig.features), "init": TrainingConfig.init,
                   "init_scale": TrainingConfig.init_scale}
# History fields that may legitimately be NaN or infinite (see the module docstring).
# accuracy is NaN for regression, where no point has a class to get right.
NONFINITE_RECORD_FIELDS = frozenset({"accuracy", "test_loss", "test_accuracy", "grad_norm",
                                     "ghost_loss"})


class SessionError(ValueError):
    """A session that cannot be saved or loaded; the message names what is wrong."""


class _RejectedError(Exception):
    """Raised inside json's hooks (only an exception can stop the parser there)."""


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _RejectedError(f"the number {short(text)} is too large for a float")
    return value


def _reject_constant(name: str) -> Any:
    raise _RejectedError(f"{name} is not a JSON number; write non-finite values as "
                    '"nan", "inf" or "-inf" where they are allowed')


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RejectedError(f"the field {short(key)} appears twice in one object")
        out[key] = value
    return out


def json_memory(raw: bytes) -> int:
    """Bytes the parsed values would take, from the text alone: a bracket or comma inside
    a string counts too, so it is at most overestimated."""
    return (raw.count(b"{") * JSON_OBJECT_BYTES + raw.count(b"[") * JSON_LIST_BYTES
            + raw.count(b",") * JSON_VALUE_BYTES)


def json_depth(raw: bytes) -> int:
    """The deepest nesting of the text's brackets (those inside strings count too)."""
    depth = deepest = 0
    chunk = 1 << 20  # a few MB of temporaries at a time
    view = memoryview(raw)
    for start in range(0, len(raw), chunk):
        part = np.frombuffer(view[start:start + chunk], np.uint8)
        step = ((part == 91) | (part == 123)).view(np.int8)
        step = step - ((part == 93) | (part == 125)).view(np.int8)
        running = np.cumsum(step, dtype=np.int32)
        if len(running):
            deepest = max(deepest, depth + int(running.max()))
            depth += int(running[-1])
    return deepest


def parse_session_text(raw: bytes | str, budget: int | None = None, what: str = "the file"
                       ) -> Any:
    """JSON text -> Python values, with every way of failing turned into SessionError.
    `budget` bounds the memory the parsed values may take (estimated before parsing)."""
    if budget is not None:
        data = raw.encode() if isinstance(raw, str) else raw
        memory = json_memory(data)  # the cheaper check first: a bomb goes at once
        if memory > budget:
            raise SessionError(f"{what} would take about {memory / 2**20:,.0f} MB of memory "
                               f"to read; at most {budget / 2**20:,.0f} MB are allowed")
        depth = json_depth(data)
        if depth > MAX_JSON_DEPTH:
            raise SessionError(f"{what} is nested too deeply to be a session ({depth} "
                               f"levels; a session has at most {MAX_JSON_DEPTH})")
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


# --- validation ----------------------------------------------------------------------------
_repr = reprlib.Repr()
_repr.maxstring = 40
_repr.maxother = 40
_repr.maxlist = _repr.maxdict = 4
_repr.maxlevel = 2


def short(value: Any) -> str:
    return _repr.repr(value)


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, (int, float)):
        return f"the number {short(value)}"
    if isinstance(value, str):
        return f"the text {short(value)}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def check_object(value: Any, path: str, keys: tuple[str, ...]) -> dict[str, Any]:
    if type(value) is not dict:
        raise SessionError(f"{path or 'the file'} must be an object, got {kind_of(value)}")
    for key in keys:
        if key not in value:
            raise SessionError(f"missing field {at(path, key)}")
    for key in value:
        if key not in keys:
            raise SessionError(f"unknown field {at(path, str(key))}")
    return value


def check_list(value: Any, path: str, length: int | None = None, limit: int | None = None,
          what: str = "entries") -> list[Any]:
    if type(value) is not list:
        raise SessionError(f"{path} must be a list, got {kind_of(value)}")
    if length is not None and len(value) != length:
        raise SessionError(f"{path} must have {length} {what}, got {len(value)}")
    if limit is not None and len(value) > limit:
        raise SessionError(f"{path} has {len(value):,} {what}; at most {limit:,} are allowed")
    return value


def check_int(value: Any, path: str, lo: int, hi: int) -> int:
    if type(value) is not int:
        raise SessionError(f"{path} must be a whole number, got {kind_of(value)}")
    if not lo <= value <= hi:
        raise SessionError(f"{path} must be between {lo} and {hi}, got {short(value)}")
    return value


def check_bool(value: Any, path: str) -> bool:
    if type(value) is not bool:
        raise SessionError(f"{path} must be true or false, got {kind_of(value)}")
    return value


def check_str(value: Any, path: str, choices: tuple[str, ...] | None = None) -> str:
    if type(value) is not str:
        raise SessionError(f"{path} must be text, got {kind_of(value)}")
    if choices is not None and value not in choices:
        raise SessionError(f"{path} must be one of {', '.join(choices)}, got {short(value)}")
    return value


def check_float(value: Any, path: str, nonfinite: bool = False, lo: float | None = None,
           hi: float | None = None) -> float:
    t = type(value)
    if t is float:
        out = value
    elif t is int:
        try:
            out = float(value)
        except OverflowError:
            raise SessionError(f"{path} is too large: {short(value)}") from None
    elif t is str and nonfinite and value in NONFINITE:
        return NONFINITE[value]
    else:
        raise SessionError(f"{path} must be a number, got {kind_of(value)}")
    if not math.isfinite(out):
        # Only reachable from a dict built in memory: parsing rejects non-finite literals.
        raise SessionError(f"{path} must be finite, got {out}")
    if lo is not None and out < lo:
        raise SessionError(f"{path} must be at least {lo}, got {out!r}")
    if hi is not None and out > hi:
        raise SessionError(f"{path} must be at most {hi}, got {out!r}")
    return out


def check_floats(value: Any, path: str, length: int, what: str = "numbers",
            nonfinite: bool = False) -> np.ndarray:
    items = check_list(value, path, length, what=what)
    if all(type(v) is float for v in items):  # the common case, checked at C speed
        out = np.array(items, dtype=np.float64)
        if np.all(np.isfinite(out)):
            return out
    return np.array([check_float(v, at(path, i), nonfinite) for i, v in enumerate(items)],
                    dtype=np.float64).reshape(length)


def has_parameter(layer_sizes: list[int], name: str) -> bool:
    """Whether a network of these sizes has a parameter of this name, without building it
    (building a 990x990 network to list its names took seconds)."""
    parsed = parse_parameter_name(name)
    if parsed is None:
        return False
    layer, unit, source = parsed
    return (layer < len(layer_sizes) - 1 and unit < layer_sizes[layer + 1]
            and (source is None or source < layer_sizes[layer]))


def parse_edit(value: Any, path: str, steps: int) -> ParameterEdit:
    obj = check_object(value, path, ("step", "name", "old", "new"))
    return ParameterEdit(check_int(obj["step"], f"{path}.step", 0, steps),
                         check_str(obj["name"], f"{path}.name"),
                         check_float(obj["old"], f"{path}.old"),
                         check_float(obj["new"], f"{path}.new"))


def parse_config(value: Any, where: str = "config") -> TrainingConfig:
    if type(value) is dict:
        value = {**OPTIONAL_CONFIG, **value}
    obj = check_object(value, where, tuple(CONFIG_FIELDS))
    out: dict[str, Any] = {}
    for name, kind in CONFIG_FIELDS.items():
        v, path = obj[name], f"{where}.{name}"
        if kind == "str":
            out[name] = check_str(v, path)
        elif kind == "int":
            out[name] = check_int(v, path, 0 if name == "seed" else -(2**63),
                             MAX_SEED if name == "seed" else 2**63 - 1)
        elif kind == "int or null":
            out[name] = None if v is None else check_int(v, path, -(2**63), 2**63 - 1)
        elif kind == "float":
            out[name] = check_float(v, path)
        elif kind == "str list":
            out[name] = tuple(check_str(f, at(path, i))
                              for i, f in enumerate(check_list(v, path, limit=100, what="names")))
        else:
            # The parameter count is checked from these sizes before any network exists.
            out[name] = tuple(check_int(h, at(path, i), 1, MAX_WIDTH)
                              for i, h in enumerate(check_list(
                                  v, path, limit=MAX_HIDDEN_LAYERS, what="hidden layers")))
    try:
        return TrainingConfig(**out)
    except ConfigError as error:
        raise SessionError(f"{where}: {error}") from None


class NotAFileError(OSError):
    """A path that is not a plain file: a pipe, a device, a folder."""


def open_plain_file(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading if it is a plain file, else NotAFileError at once: a pipe
    (FIFO) would block the open, or the first read, for good ("Open" never answered). It
    is opened without blocking and checked before any read. (Lesson files have their
    own, teaching.lesson_text: that layer does not import this one.)"""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotAFileError(f"{Path(path).name} is not a file (it is a pipe, a device or "
                                "a folder)")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
