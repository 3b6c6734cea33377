"""Sessions on disk: a zip of a JSON manifest and numpy arrays, saved atomically, loaded
with full validation. Version-1 files (one JSON document) still open.

A session is a `TrainingState` (see gradbox.training.state) written out. The zip (stored, not
compressed: writing must be quick, and float noise barely compresses) holds

    manifest.json   {"format": "gradbox-session", "version": 2, "config": {...},
                     "init_seed", "dataset_version", "forget_zero_grad", "stop_reason",
                     "parameters": P, "steps": n, "optimizer": [state fields],
                     "checkpoints": K, "ghosts": G, "datasets": [{"classes": k,
                     "one_dimensional": false}, ...],
                     "dataset": index of the current points in "datasets",
                     "events": [{"kind": "edit", "step", "name", "old", "new"}
                                | {"kind": "rate", "step", "lr"}
                                | {"kind": "ghost", "step", "on"}
                                | {"kind": "data", "step", "dataset": index, "version"}],
                     "controls": {...} (optional; gradbox.files.session_controls)}
    initial_params.npy                      (P,) float64
    history/<StepRecord field>.npy          (n,) float64 (step int64, zero_grad_skipped bool)
    history/layers.npy                      (n, layers, 9) float64 per-layer statistics
                                            (gradbox.training.history; absent in older files)
    pinned/<StepRecord field>.npy, pinned/layers.npy   a run pinned for comparison, whose
                                            config is the manifest's "pinned" (absent: none)
    checkpoints/step.npy, lr.npy            (K,) int64, float64; the last is the current one
    checkpoints/params.npy, grads.npy       (K, P) float64
    checkpoints/optimizer.<field>.npy       (K, P) float64 or (K,) int64
    checkpoints/has_ghost.npy               (K,) bool
    ghosts/params.npy, grads.npy, optimizer.<field>.npy   the G checkpoints with a ghost
    datasets/<i>/points.npy, labels.npy, is_test.npy
    datasets/<i>/targets.npy                (n,) float64, regression data only

Decisions worth knowing:

- Sessions are stored at a step boundary: a state between phases is stored as it was at
  the start of that step (exactly what `rewind(step_count)` gives), so saving never has
  to touch the trainer, and the file's phase is always "forward".
- Arrays are read with `allow_pickle=False`, their dtype and shape checked against the
  manifest before use, every size bounded before anything is read.
- Saving writes a temporary file next to the target (`.<name>.<pid>-<random>.gradbox-tmp`)
  and renames it over the target, so the old file survives any failure, even `kill -9`.
  A temp file left by a dead process is removed by the next save to that file and by
  `remove_stale_temp_files` (the app calls it at start). Saving to a symlink writes
  the file it points to; a read-only file is refused, not replaced.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import secrets
import stat
import threading
import time
import zipfile
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from gradbox.autograd.nn import parameter_count
from gradbox.autograd.optim import make_optimizer
from gradbox.autograd.phases import Phase
from gradbox.files.session_controls import SessionControls, parse_controls
from gradbox.files.session_json import (
    FORMAT,
    MAX_POINTS,
    NONFINITE_RECORD_FIELDS,
    NotAFileError,
    SessionError,
    at,
    check_bool,
    check_float,
    check_int,
    check_list,
    check_object,
    check_str,
    has_parameter,
    kind_of,
    open_plain_file,
    parse_config,
    parse_edit,
    parse_session_text,
    short,
)
from gradbox.files.session_v1 import state_from_v1
from gradbox.files.session_zip import SessionZip
from gradbox.training import datasets
from gradbox.training.config import MAX_INIT_SEED, MAX_PARAMETERS, ConfigError, check_task
from gradbox.training.datasets import Dataset, DatasetError
from gradbox.training.history import BOOL_FIELDS, INT_FIELDS, RECORD_FIELDS, History
from gradbox.training.history import COLUMNS as LAYER_COLUMNS
from gradbox.training.state import (
    Checkpoint,
    DataChange,
    Event,
    GhostChange,
    ModelState,
    ParameterEdit,
    PinnedRun,
    RateChange,
    TrainingState,
    frozen_dataset,
    frozen_optimizer,
)
from gradbox.training.trainer import Trainer

__all__ = ["FORMAT", "MAX_FILE_BYTES", "VERSION", "SessionControls", "SessionError",
           "load_session", "load_session_with_controls", "load_state", "load_state_with_controls",
           "remove_stale_temp_files", "save_session", "temp_files"]

VERSION = 2
# What a session may take once unpacked; far above any run that fits a desktop's memory
# with sparse checkpoints, and it keeps a hostile file from exhausting memory.
MAX_FILE_BYTES = 2 * 2**30
MAX_V1_BYTES = 200 * 2**20  # version-1 files were refused above this when saved
MAX_STEPS = 100_000_000
# Edits, rate changes, ghost switches and new points: each is a person's action.
MAX_EVENTS = 100_000
MAX_MANIFEST_BYTES = 16 * 2**20
# Memory the parsed JSON may take, estimated before parsing (session_json.json_memory): a
# manifest of MAX_EVENTS edits takes about 40 MB; an old version-1 file of 200 MB, ~1 GB.
MANIFEST_BUDGET = 64 * 2**20
V1_BUDGET = 2**30
TEMP_SUFFIX = ".gradbox-tmp"
_TEMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)-[0-9a-f]{12}" + re.escape(TEMP_SUFFIX) + "$")
# Version 1 wrote `.<name>.<12 hex>.tmp` without a process id: removed once clearly old.
_V1_TEMP = re.compile(r"^\.(?P<name>.+)\.[0-9a-f]{12}\.tmp$")
V1_TEMP_AGE = 3600.0

_MANIFEST_FIELDS = ("format", "version", "config", "init_seed", "dataset_version",
                    "forget_zero_grad", "stop_reason", "parameters", "steps", "optimizer",
                    "checkpoints", "ghosts", "datasets", "dataset", "events")


# --- saving ------------------------------------------------------------------------------
def _number(v: float) -> float | str:
    v = float(v)
    if math.isfinite(v):
        return v
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _stack_runs(runs: list[ModelState], template: ModelState, n_params: int,
                prefix: str) -> dict[str, np.ndarray]:
    out = {f"{prefix}/params.npy": _rows([r.params for r in runs], n_params),
           f"{prefix}/grads.npy": _rows([r.grads for r in runs], n_params)}
    for key, kind in template.optimizer.items():
        values = [r.optimizer[key] for r in runs]
        if isinstance(kind, np.ndarray):
            out[f"{prefix}/optimizer.{key}.npy"] = _rows(values, n_params)  # type: ignore[arg-type]
        else:
            out[f"{prefix}/optimizer.{key}.npy"] = np.array(values, np.int64)
    return out


def _rows(arrays: list[np.ndarray], width: int) -> np.ndarray:
    return np.stack(arrays) if arrays else np.zeros((0, width))


def session_members(state: TrainingState) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The manifest and the arrays a session file holds (see the module docstring)."""
    checkpoints = [*state.checkpoints, state.current]
    n_params = len(state.initial_params)
    keys = list(state.current.run.optimizer)
    data_list: list[Dataset] = []

    def data_index(dataset: Dataset) -> int:
        for i, d in enumerate(data_list):
            if d is dataset:
                return i
        data_list.append(dataset)
        return len(data_list) - 1

    events: list[dict[str, Any]] = []
    for e in state.events:
        if isinstance(e, ParameterEdit):
            events.append({"kind": "edit", "step": e.step, "name": e.name, "old": e.old,
                           "new": e.new})
        elif isinstance(e, RateChange):
            events.append({"kind": "rate", "step": e.step, "lr": e.lr})
        elif isinstance(e, GhostChange):
            events.append({"kind": "ghost", "step": e.step, "on": e.on})
        else:
            events.append({"kind": "data", "step": e.step, "dataset": data_index(e.dataset),
                           "version": e.version})
    current_data = data_index(state.dataset)
    config = state.config.to_dict()
    config["lr"] = float(state.current.lr)
    manifest = {
        "format": FORMAT, "version": VERSION, "config": config,
        "init_seed": int(state.init_seed), "dataset_version": int(state.dataset_version),
        "forget_zero_grad": bool(state.forget_zero_grad), "stop_reason": state.stop_reason,
        "parameters": n_params, "steps": state.step, "optimizer": keys,
        "checkpoints": len(checkpoints),
        "ghosts": sum(cp.ghost is not None for cp in checkpoints),
        "datasets": [{"classes": int(d.classes), "one_dimensional": bool(d.one_dimensional)}
                     for d in data_list],
        "dataset": current_data, "events": events,
    }
    arrays: dict[str, np.ndarray] = {"initial_params.npy": np.asarray(state.initial_params)}
    for prefix, history in (("history", state.history),
                            ("pinned", state.pinned.history if state.pinned else None)):
        if history is None:
            continue
        for name in RECORD_FIELDS:
            arrays[f"{prefix}/{name}.npy"] = history.column(name)
        if history.layers() is not None:
            arrays[f"{prefix}/layers.npy"] = history.layers()
    if state.pinned is not None:
        manifest["pinned"] = {"config": state.pinned.config.to_dict(),
                              "steps": len(state.pinned.history)}
    arrays["checkpoints/step.npy"] = np.array([cp.step for cp in checkpoints], np.int64)
    arrays["checkpoints/lr.npy"] = np.array([cp.lr for cp in checkpoints], np.float64)
    arrays["checkpoints/has_ghost.npy"] = np.array([cp.ghost is not None for cp in checkpoints])
    template = state.current.run
    arrays.update(_stack_runs([cp.run for cp in checkpoints], template, n_params,
                              "checkpoints"))
    arrays.update(_stack_runs([cp.ghost for cp in checkpoints if cp.ghost is not None],
                              template, n_params, "ghosts"))
    for i, d in enumerate(data_list):
        arrays[f"datasets/{i}/points.npy"] = d.points
        arrays[f"datasets/{i}/labels.npy"] = d.labels
        arrays[f"datasets/{i}/is_test.npy"] = d.is_test
        if d.targets is not None:
            arrays[f"datasets/{i}/targets.npy"] = d.targets
    return manifest, arrays


def _at_step_boundary(state: TrainingState) -> TrainingState:
    """A state between phases, as it was at the start of its step."""
    if state.phase == Phase.FORWARD:
        return state
    return replace(state, phase=Phase.FORWARD, zero_grad_skipped=False)


def write_session(state: TrainingState, file: io.BufferedIOBase | Any,
                  controls: SessionControls | None = None) -> None:
    """Write the session to an open binary file (see the module docstring)."""
    manifest, arrays = session_members(_at_step_boundary(state))
    if controls is not None:
        manifest["controls"] = controls.to_json()
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        z.writestr("manifest.json", json.dumps(manifest, allow_nan=False,
                                               separators=(",", ":")))
        for name, array in arrays.items():
            with z.open(name, "w", force_zip64=True) as member:
                write_member(member, array)


def write_member(member: Any, array: np.ndarray) -> None:
    """An .npy member, byte for byte as `np.lib.format.write_array` writes it (a version
    1.0 header, the data in C order), but the data handed to the file as it lies in
    memory: write_array copies a zip member's data into bytes, 16 MB at a time, holding
    the interpreter lock (the window's writer thread held it 10-40 ms at a time for a
    1000x1000 run, and the UI thread waited); a file's write and the zip's CRC let go
    of it."""
    array = np.ascontiguousarray(array)
    np.lib.format.write_array_header_1_0(
        member, np.lib.format.header_data_from_array_1_0(array))
    if array.nbytes:
        member.write(array.reshape(-1).view(np.uint8).data)


def check_state(state: TrainingState) -> None:
    """Refuse to save what could not be loaded again (a non-finite weight)."""
    if not np.all(np.isfinite(state.current.run.params)):
        raise SessionError("this session cannot be saved: a weight is not a finite number")


def save_session(source: Trainer | TrainingState, path: str | os.PathLike[str],
                 controls: SessionControls | None = None) -> None:
    """Write a session to `path` atomically: the old file survives any failure.

    `source` may be a Trainer (its state is taken) or a state (safe to write from any
    thread). A symlink's target is written if it is a plain file; a read-only file, and
    anything that is not a plain file (a device, a pipe, a folder), is refused. Raises
    SessionError naming the file, or OSError if the disk refuses.
    """
    state = source.state() if isinstance(source, Trainer) else source
    check_state(state)
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        # A device, a pipe, a folder (perhaps behind a link): never replaced by a session.
        raise SessionError(f"{Path(path).name} is not a session file (it is a folder, a "
                           "device or a pipe): save under another name")
    if mode is not None and not mode & stat.S_IWUSR:
        raise SessionError(f"{Path(path).name} is read-only: save under another name, or "
                           "make the file writable first")
    remove_stale_temp_files(target)
    # Same directory, so os.replace is a rename within one file system (atomic).
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(6)}{TEMP_SUFFIX}")
    try:
        # "x" creates the file with the usual permissions (umask), unlike mkstemp's 0600.
        with open(tmp, "xb") as f:
            write_session(state, f, controls)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            with contextlib.suppress(OSError):
                os.chmod(tmp, stat.S_IMODE(mode))  # keep an old file's mode
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(target.parent)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); not possible, nor needed, everywhere."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    with contextlib.suppress(OSError):
        fd = os.open(directory, flags)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def temp_files(target: str | os.PathLike[str]) -> list[Path]:
    """Temp files that saves of `target` (this app's, by name) left in its directory."""
    target = Path(os.path.realpath(target))
    out = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(target.parent):
            m = _TEMP.match(entry.name) or _V1_TEMP.match(entry.name)
            if m and m.group("name") == target.name:
                out.append(Path(entry.path))
    return out


def remove_stale_temp_files(target: str | os.PathLike[str]) -> int:
    """Remove what interrupted saves of `target` left: temp files of processes that no
    longer run (version-1 temp files once an hour old). Returns how many went."""
    removed = 0
    for path in temp_files(target):
        m = _TEMP.match(path.name)
        try:
            if m is not None:
                stale = not _alive(int(m.group("pid")))
            else:
                stale = time.time() - path.stat().st_mtime > V1_TEMP_AGE
            if stale:
                path.unlink()
                removed += 1
        except OSError:
            continue
    return removed


def remove_stale_temp_files_near(paths: Iterable[str | os.PathLike[str]]) -> int:
    """`remove_stale_temp_files` for each of `paths` (the recent files, the last
    session): what saves killed mid-way left beside them, up to a whole session each."""
    return sum(remove_stale_temp_files(path) for path in paths)


def clean_in_background(paths: Iterable[str | os.PathLike[str]]) -> threading.Thread:
    """Remove stale temp files beside `paths` on a thread of its own (a folder on a
    slow disk or a network share must not hold up the window)."""
    paths = list(paths)
    thread = threading.Thread(target=remove_stale_temp_files_near, args=(paths,),
                              name="gradbox-clean", daemon=True)
    thread.start()
    return thread


# --- loading -------------------------------------------------------------------------------
def load_session(path: str | os.PathLike[str]) -> Trainer:
    """Read, validate and rebuild a session as a new Trainer; SessionError if anything is off."""
    return load_session_with_controls(path)[0]


def load_session_with_controls(path: str | os.PathLike[str],
                               ) -> tuple[Trainer, SessionControls | None]:
    """The session as a new Trainer, and the run controls the file keeps (None: it keeps
    none). The trainer stands at the run's end; `controls.position` says where the
    timeline stood."""
    state, controls = load_state_with_controls(path)
    try:
        return Trainer.from_state(state), controls
    except ConfigError as error:  # e.g. a network too big for this machine's memory
        raise SessionError(str(error)) from None
    except MemoryError:
        raise SessionError("there is not enough memory to rebuild this session's "
                           "network") from None


def load_state(path: str | os.PathLike[str]) -> TrainingState:
    """Read and validate a session file (either version) as a state."""
    return load_state_with_controls(path)[0]


def load_state_with_controls(path: str | os.PathLike[str],
                             ) -> tuple[TrainingState, SessionControls | None]:
    """Read and validate a session file (either version): its state and run controls."""
    try:
        return _load_state_with_controls(path)
    except MemoryError:
        raise SessionError("there is not enough memory to read this session") from None


def _load_state_with_controls(path: str | os.PathLike[str],
                              ) -> tuple[TrainingState, SessionControls | None]:
    path = Path(path)
    try:
        with open_plain_file(path) as f:
            head = f.read(4)
            f.seek(0)
            size = os.fstat(f.fileno()).st_size
            if head == b"PK\x03\x04":
                return _read_zip(f, size)
            if size > MAX_V1_BYTES:
                raise SessionError(f"the file is {size / 2**20:.0f} MB; version-1 sessions are "
                                   f"at most {MAX_V1_BYTES // 2**20} MB")
            raw = f.read(size + 1)  # the file may have grown since stat
    except NotAFileError as error:
        raise SessionError(str(error)) from None
    except OSError as error:
        raise SessionError(f"cannot read the file: {error.strerror or error}") from None
    if len(raw) > size:
        raise SessionError("the file changed while it was read; try again")
    data = parse_session_text(raw, V1_BUDGET)
    if type(data) is dict and data.get("format") == FORMAT and data.get("version") == VERSION:
        raise SessionError("version 2 sessions are zip files; this one is JSON text")
    return state_from_v1(data), None


def _read_zip(f: Any, size: int) -> tuple[TrainingState, SessionControls | None]:
    with SessionZip(f, size, MAX_FILE_BYTES) as r:
        data = parse_session_text(r.bytes("manifest.json", MAX_MANIFEST_BYTES),
                                  MANIFEST_BUDGET, "manifest.json")
        state = _parse_v2(data, r)
        extra = sorted(r.names - r.used)
        if extra:
            raise SessionError(f"unknown member {extra[0]} in the file")
        controls = data.get("controls")  # a dict: _parse_v2 checked
        return state, (None if controls is None else parse_controls(controls, state.step))


def _parse_v2(data: Any, r: SessionZip) -> TrainingState:
    if type(data) is not dict:
        raise SessionError(f"not a session file: the manifest is {kind_of(data)}")
    if data.get("format") != FORMAT:
        raise SessionError(f"not a session file: format must be {FORMAT!r}, "
                           f"got {short(data.get('format'))}")
    version = data.get("version")
    if type(version) is not int or version != VERSION:
        newer = " (made by a newer gradbox)" if type(version) is int and version > VERSION else ""
        raise SessionError(f"unsupported session version {short(version)}{newer}; "
                           f"this gradbox reads versions 1 and {VERSION}")
    m = check_object({k: v for k, v in data.items() if k not in ("pinned", "controls")}, "",
                     _MANIFEST_FIELDS)
    config = parse_config(m["config"])
    sizes = config.layer_sizes
    p = parameter_count(sizes)
    if p > MAX_PARAMETERS:
        raise SessionError(f"config.hidden: layers {sizes} have {p:,} parameters; "
                           f"at most {MAX_PARAMETERS:,} can be loaded")
    if check_int(m["parameters"], "parameters", 0, MAX_PARAMETERS) != p:
        raise SessionError(f"parameters: layers {sizes} have {p} parameters, "
                           f"the file says {m['parameters']}")
    n = check_int(m["steps"], "steps", 0, MAX_STEPS)
    template = make_optimizer(config.optimizer, [], 0.1).state_dict()
    keys = check_list(m["optimizer"], "optimizer", len(template), what="fields")
    if keys != list(template):
        raise SessionError(f"optimizer must list {list(template)} for {config.optimizer}, "
                           f"got {short(keys)}")
    k = check_int(m["checkpoints"], "checkpoints", 1, n + 1)
    g = check_int(m["ghosts"], "ghosts", 0, k)

    # --- history, and a pinned run's
    history = _read_history(r, "history", n, len(sizes) - 1)
    pinned = None
    if data.get("pinned") is not None:
        obj = check_object(data["pinned"], "pinned", ("config", "steps"))
        pinned_config = parse_config(obj["config"], "pinned.config")
        pinned_steps = check_int(obj["steps"], "pinned.steps", 0, MAX_STEPS)
        pinned = PinnedRun(pinned_config, _read_history(
            r, "pinned", pinned_steps, len(pinned_config.layer_sizes) - 1))

    # --- datasets
    data_list = []
    for i, d in enumerate(check_list(m["datasets"], "datasets", limit=MAX_EVENTS + 1)):
        if type(d) is dict:
            d = {"one_dimensional": False, **d}  # written before regression data existed
        obj = check_object(d, at("datasets", i), ("classes", "one_dimensional"))
        classes = check_int(obj["classes"], f"datasets[{i}].classes", 2, datasets.MAX_CLASSES)
        if classes > max(config.outputs, 2):
            raise SessionError(f"datasets[{i}].classes: the data has {classes} classes but "
                               f"the network has {config.outputs} output(s)")
        one_d = check_bool(obj["one_dimensional"], f"datasets[{i}].one_dimensional")
        data_list.append(_read_dataset(r, i, classes, one_d))
        try:
            check_task(config, data_list[-1])
        except ConfigError as error:
            raise SessionError(f"datasets[{i}]: {error}") from None
    current_data = check_int(m["dataset"], "dataset", 0, max(len(data_list) - 1, 0))
    if not data_list:
        raise SessionError("datasets: the file holds no points at all")

    # --- checkpoints
    steps = r.array("checkpoints/step.npy", np.int64, (k,))
    if steps[0] != 0 or steps[-1] != n or np.any(np.diff(steps) <= 0):
        raise SessionError(f"checkpoints/step.npy must rise from 0 to the last step ({n})")
    lrs = r.array("checkpoints/lr.npy", np.float64, (k,))
    if not np.all(np.isfinite(lrs) & (lrs >= 0)):
        raise SessionError("checkpoints/lr.npy: every learning rate must be finite and >= 0")
    has_ghost = r.array("checkpoints/has_ghost.npy", np.bool_, (k,))
    if int(has_ghost.sum()) != g:
        raise SessionError(f"checkpoints/has_ghost.npy marks {int(has_ghost.sum())} ghosts, "
                           f"the manifest says {g}")
    runs = _read_runs(r, "checkpoints", k, p, template, finite=True)
    ghosts = iter(_read_runs(r, "ghosts", g, p, template, finite=False))
    checkpoints = [Checkpoint(int(steps[i]), float(lrs[i]), runs[i],
                              next(ghosts) if has_ghost[i] else None) for i in range(k)]

    # --- events
    events = _parse_events(m["events"], n, config.layer_sizes, data_list)
    initial = r.array("initial_params.npy", np.float64, (p,))
    if not np.all(np.isfinite(initial)):
        raise SessionError("initial_params.npy: every initial weight must be finite")
    dataset_version = check_int(m["dataset_version"], "dataset_version", 0, 2**63 - 1)
    return TrainingState(
        config=config.with_changes(lr=checkpoints[-1].lr), init_seed=check_int(
            m["init_seed"], "init_seed", 0, MAX_INIT_SEED),
        initial_params=initial, dataset=data_list[current_data],
        dataset_version=dataset_version,
        forget_zero_grad=check_bool(m["forget_zero_grad"], "forget_zero_grad"),
        history=history, events=tuple(events), checkpoints=tuple(checkpoints[:-1]),
        current=checkpoints[-1], stop_reason=check_str(m["stop_reason"], "stop_reason"),
        pinned=pinned)


def _read_history(r: SessionZip, prefix: str, n: int, layers: int) -> History:
    """`prefix`/<field>.npy for every record field, and `prefix`/layers.npy if present."""
    columns = {}
    for name in RECORD_FIELDS:
        dtype = np.int64 if name in INT_FIELDS else (np.bool_ if name in BOOL_FIELDS
                                                     else np.float64)
        columns[name] = r.array(f"{prefix}/{name}.npy", dtype, (n,))
    _check_history(columns, n, prefix)
    table = None
    if f"{prefix}/layers.npy" in r.names:
        table = r.array(f"{prefix}/layers.npy", np.float64, (n, layers, LAYER_COLUMNS))
    return History(columns, layers=table)


def _check_history(columns: dict[str, np.ndarray], n: int, prefix: str = "history") -> None:
    if not np.array_equal(columns["step"], np.arange(1, n + 1)):
        raise SessionError(f"{prefix}/step.npy must number the steps 1, 2, 3, ...")
    for name in RECORD_FIELDS:
        column = columns[name]
        if name in INT_FIELDS or name in BOOL_FIELDS:
            continue
        bad = ~np.isfinite(column) if name not in NONFINITE_RECORD_FIELDS else np.zeros(n, bool)
        if name in ("accuracy", "test_accuracy"):  # NaN: regression, or no test points
            bad |= ~(np.isnan(column) | ((column >= 0) & (column <= 1)))
        elif name == "lr":
            bad |= ~(column >= 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise SessionError(f"{prefix}/{name}.npy: step {i + 1} has the impossible value "
                               f"{column[i]!r}")


def _read_runs(r: SessionZip, prefix: str, count: int, p: int, template: dict[str, Any],
               finite: bool) -> list[ModelState]:
    params = r.array(f"{prefix}/params.npy", np.float64, (count, p))
    grads = r.array(f"{prefix}/grads.npy", np.float64, (count, p))
    if finite and not (np.all(np.isfinite(params)) and np.all(np.isfinite(grads))):
        raise SessionError(f"{prefix}: every weight and gradient must be finite")
    fields: dict[str, np.ndarray] = {}
    for key, kind in template.items():
        name = f"{prefix}/optimizer.{key}.npy"
        if isinstance(kind, np.ndarray):
            fields[key] = r.array(name, np.float64, (count, p))
        else:
            fields[key] = r.array(name, np.int64, (count,))
            if np.any(fields[key] < 0):
                raise SessionError(f"{name}: a step count cannot be negative")
    return [ModelState(params[i], grads[i], frozen_optimizer(
        {key: (v[i] if v.ndim == 2 else int(v[i])) for key, v in fields.items()}))
        for i in range(count)]


def _read_dataset(r: SessionZip, i: int, classes: int, one_dimensional: bool) -> Dataset:
    prefix = f"datasets/{i}"
    # The number of points is the labels' length, bounded before anything is read.
    labels = r.array(f"{prefix}/labels.npy", np.int64, None, limit=MAX_POINTS * 8)
    points = r.array(f"{prefix}/points.npy", np.float64, (len(labels), 2))
    is_test = r.array(f"{prefix}/is_test.npy", np.bool_, (len(labels),))
    targets = None
    if r.has(f"{prefix}/targets.npy"):
        targets = r.array(f"{prefix}/targets.npy", np.float64, (len(labels),))
    try:
        return frozen_dataset(Dataset(points, labels, is_test, classes, targets,
                                      one_dimensional))
    except DatasetError as error:
        raise SessionError(f"{prefix}: {error}") from None


def _parse_events(value: Any, n: int, sizes: list[int], data_list: list[Dataset],
                  ) -> list[Event]:
    events: list[Event] = []
    last = 0
    for i, item in enumerate(check_list(value, "events", limit=MAX_EVENTS)):
        path = at("events", i)
        if type(item) is not dict or "kind" not in item:
            raise SessionError(f"{path} must be an object with a kind")
        kind = check_str(item["kind"], f"{path}.kind", ("edit", "rate", "ghost", "data"))
        fields = {"edit": ("kind", "step", "name", "old", "new"), "rate": ("kind", "step", "lr"),
                  "ghost": ("kind", "step", "on"),
                  "data": ("kind", "step", "dataset", "version")}[kind]
        obj = check_object(item, path, fields)
        step = check_int(obj["step"], f"{path}.step", last, n)
        last = step
        if kind == "edit":
            edit = parse_edit({k: obj[k] for k in fields if k != "kind"}, path, n)
            if not has_parameter(sizes, edit.name):
                raise SessionError(f"{path}.name: this network has no parameter {edit.name!r}")
            events.append(edit)
        elif kind == "rate":
            events.append(RateChange(step, check_float(obj["lr"], f"{path}.lr", lo=0.0)))
        elif kind == "ghost":
            events.append(GhostChange(step, check_bool(obj["on"], f"{path}.on")))
        else:
            index = check_int(obj["dataset"], f"{path}.dataset", 0, len(data_list) - 1)
            events.append(DataChange(step, data_list[index], check_int(
                obj["version"], f"{path}.version", 0, 2**63 - 1)))
    if not events or not isinstance(events[0], DataChange) or events[0].step != 0:
        raise SessionError("events must start with the points the run began with (kind data, "
                           "step 0)")
    return events

