"""Sessions on disk: exact round trips, atomic saves, and a loader that trusts nothing."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import stat
import sys
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradbox import persistence
from gradbox.persistence import SessionError, load_session, save_session
from gradbox.training import StepRecord, Trainer, TrainingConfig


def record_bits(record: StepRecord) -> tuple:
    return tuple(v.hex() if isinstance(v, float) else v for v in dataclasses.astuple(record))


def same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_same_state(a: Trainer, b: Trainer) -> None:
    """Everything a snapshot shows, plus what only continuing would reveal."""
    sa, sb = a.snapshot(), b.snapshot()
    assert sa.config == sb.config and sa.step == sb.step and sa.phase == sb.phase
    assert [record_bits(r) for r in sa.history] == [record_bits(r) for r in sb.history]
    for name in ("params", "grads", "points", "labels", "is_test"):
        assert same_bits(getattr(sa, name), getattr(sb, name)), name
    assert sa.ghost == sb.ghost and sa.forget_zero_grad == sb.forget_zero_grad
    if sa.ghost_grads is not None:
        assert same_bits(sa.ghost_grads, sb.ghost_grads)
        assert a.ghost is not None and b.ghost is not None
        assert same_bits(a.ghost.values(), b.ghost.values())
    assert (sa.classes, sa.lr, sa.dataset_version, sa.stop_reason) == (
        sb.classes, sb.lr, sb.dataset_version, sb.stop_reason)
    assert same_bits(a.initial_params, b.initial_params) and a.init_seed == b.init_seed
    state_a, state_b = a.run.optimizer.state_dict(), b.run.optimizer.state_dict()
    assert state_a.keys() == state_b.keys()
    for key in state_a:
        assert same_bits(state_a[key], state_b[key]), key
    assert len(a.checkpoints) == len(b.checkpoints)
    for ca, cb in zip(a.checkpoints, b.checkpoints):
        assert same_bits(ca.params, cb.params) and same_bits(ca.grads, cb.grads)
        assert ca.lr == cb.lr and (ca.ghost is None) == (cb.ghost is None)


def drive(trainer: Trainer, start: int, end: int) -> None:
    """Steps start..end-1, flipping switches the way a curious user might."""
    for step in range(start, end):
        trainer.set_forget_zero_grad(step % 7 in (3, 4))
        if step % 11 == 5:
            trainer.set_ghost(not trainer.ghost_enabled)
        if step == 9:
            trainer.set_lr(trainer.lr * 0.5)
        assert trainer.step() is not None


CONFIGS = [
    TrainingConfig(n_samples=40, hidden=(5, 4), test_ratio=0.25, momentum=0.9, batch_size=10),
    TrainingConfig(n_samples=30, hidden=(4,), optimizer="adam", lr=0.03, test_ratio=0.0,
                   schedule="linear", steps=30),
    TrainingConfig(dataset="blobs", classes=3, n_samples=30, hidden=(6,), l1=1e-3,
                   activation="tanh", batch_size=7),
]


@pytest.mark.parametrize("config", CONFIGS)
def test_save_load_continue_reproduces_the_run_bit_for_bit(config: TrainingConfig,
                                                           tmp_path: Path) -> None:
    original = Trainer(config)
    original.set_ghost(True)
    drive(original, 0, 15)
    path = tmp_path / "run.gradbox.json"
    save_session(original, path)
    loaded = load_session(path)
    assert loaded is not original
    assert_same_state(original, loaded)
    drive(original, 15, 35)
    drive(loaded, 15, 35)
    assert_same_state(original, loaded)
    # The checkpoints came through too: rewinding the loaded run replays exactly.
    for trainer in (original, loaded):
        trainer.rewind(8)
    assert_same_state(original, loaded)
    drive(original, 8, 28)
    drive(loaded, 8, 28)
    assert_same_state(original, loaded)


def test_nan_test_loss_is_written_explicitly_and_the_file_is_strict_json(tmp_path: Path) -> None:
    trainer = Trainer(CONFIGS[1])  # no test set: test loss and accuracy are NaN
    drive(trainer, 0, 3)
    path = tmp_path / "s.json"
    save_session(trainer, path)
    text = path.read_text(encoding="utf-8")

    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in the file")

    data = json.loads(text, parse_constant=no_constants)
    assert data["format"] == "gradbox-session" and data["version"] == 1
    assert data["history"][0]["test_loss"] == "nan" and data["history"][0]["ghost_loss"] == "nan"
    assert data["phase"] == "forward" and data["config"]["hidden"] == [4]
    assert len(data["checkpoints"]) == 3 and len(data["model"]["params"]) == 17
    loaded = load_session(path)
    assert all(math.isnan(r.test_loss) for r in loaded.history)


def test_a_session_saved_mid_step_is_the_start_of_that_step(tmp_path: Path) -> None:
    trainer = Trainer(CONFIGS[0])
    trainer.set_ghost(True)
    drive(trainer, 0, 6)
    trainer.set_forget_zero_grad(True)
    for _ in range(3):
        trainer.substep()
    params, phase = trainer.run.values(), trainer.phase
    save_session(trainer, tmp_path / "s.json")
    assert trainer.phase == phase == "update" and same_bits(trainer.run.values(), params)
    loaded = load_session(tmp_path / "s.json")
    assert loaded.phase == "forward" and loaded.step_count == 6
    trainer.rewind(6)
    assert_same_state(trainer, loaded)
    drive(trainer, 6, 12)
    drive(loaded, 6, 12)
    assert_same_state(trainer, loaded)


def test_an_edited_dataset_and_stop_reason_survive(tmp_path: Path) -> None:
    trainer = Trainer(TrainingConfig(lr=1e6, n_samples=20, hidden=(3,)))
    trainer.dataset.add_point(0.5, -0.25, 1, test=True)
    trainer.dataset_version += 1
    trainer.selected_sample = 20
    trainer.run_steps(100)
    assert trainer.stop_reason
    save_session(trainer, tmp_path / "s.json")
    loaded = load_session(tmp_path / "s.json")
    assert_same_state(trainer, loaded)
    assert len(loaded.dataset) == 21 and loaded.selected_sample == 20


def test_a_selected_sample_beyond_removed_points_is_clamped_on_save(tmp_path: Path) -> None:
    trainer = Trainer(CONFIGS[1])
    trainer.selected_sample = 29
    for _ in range(5):
        trainer.dataset.remove_nearest(0.0, 0.0)
    save_session(trainer, tmp_path / "s.json")
    assert load_session(tmp_path / "s.json").selected_sample == 24


def test_saving_again_replaces_the_file(tmp_path: Path) -> None:
    trainer = Trainer(CONFIGS[1])
    path = tmp_path / "s.json"
    save_session(trainer, path)
    drive(trainer, 0, 2)
    save_session(trainer, path)
    assert load_session(path).step_count == 2
    assert os.listdir(tmp_path) == ["s.json"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_saving_over_a_file_keeps_its_permissions(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    save_session(Trainer(CONFIGS[1]), path)
    path.chmod(0o640)
    save_session(Trainer(CONFIGS[1]), path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


# --- interrupted and refused saves ---------------------------------------------------------------
@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "keep.gradbox.json"
    save_session(Trainer(CONFIGS[1]), path)
    return path, path.read_bytes()


def assert_untouched(saved: tuple[Path, bytes]) -> None:
    path, old = saved
    assert path.read_bytes() == old
    assert os.listdir(path.parent) == [path.name]  # no temporary file left behind
    assert load_session(path).step_count == 0


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_save_interrupted_halfway_leaves_the_old_file(saved: tuple[Path, bytes],
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        error: BaseException) -> None:
    real_dump = json.dump
    written: list[int] = []

    def dump_half_then_fail(obj: Any, fp: Any, **kwargs: Any) -> None:
        text = json.dumps(obj, **kwargs)
        fp.write(text[: len(text) // 2])
        fp.flush()
        written.append(os.fstat(fp.fileno()).st_size)
        raise error

    monkeypatch.setattr(json, "dump", dump_half_then_fail)
    trainer = Trainer(CONFIGS[1])
    drive(trainer, 0, 4)
    with pytest.raises(type(error)):
        save_session(trainer, saved[0])
    monkeypatch.setattr(json, "dump", real_dump)
    assert written and written[0] > 0  # half a file really was on disk
    assert_untouched(saved)


def test_a_failing_fsync_leaves_the_old_file(saved: tuple[Path, bytes],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OSError, match="Input/output"):
        save_session(Trainer(CONFIGS[1]), saved[0])
    monkeypatch.undo()
    assert_untouched(saved)


def test_a_session_that_could_not_be_loaded_is_not_saved(saved: tuple[Path, bytes]) -> None:
    trainer = Trainer(CONFIGS[1])
    trainer.run.params[3].data = math.inf
    with pytest.raises(SessionError, match=r"cannot be saved: model\.params\[3\] must be finite"):
        save_session(trainer, saved[0])
    assert_untouched(saved)


def test_a_session_over_the_size_limit_is_not_saved(saved: tuple[Path, bytes],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(persistence, "MAX_FILE_BYTES", len(saved[1]) + 100)
    trainer = Trainer(CONFIGS[1])
    drive(trainer, 0, 5)
    with pytest.raises(SessionError, match="MB limit"):
        save_session(trainer, saved[0])
    assert_untouched(saved)


def test_saving_into_a_missing_directory_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        save_session(Trainer(CONFIGS[1]), tmp_path / "nowhere" / "s.json")


# --- hostile and broken files ------------------------------------------------------------------
SMALL = TrainingConfig(n_samples=12, hidden=(3,), test_ratio=0.25, momentum=0.5)


@cache
def valid_text() -> str:
    trainer = Trainer(SMALL)
    trainer.set_ghost(True)
    drive(trainer, 0, 4)
    return json.dumps(persistence.trainer_to_session(trainer))


def valid() -> dict[str, Any]:
    return json.loads(valid_text())


def load_text(text: str | bytes, tmp_path: Path) -> Trainer:
    path = tmp_path / "s.json"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return load_session(path)


def mutated(change: Any) -> str:
    data = valid()
    change(data)
    return json.dumps(data)


def set_at(path: str, value: Any) -> Any:
    """A change that sets data[a][b][c] = value for path 'a.b.c' (integers index lists)."""
    def change(data: Any) -> None:
        *parents, last = [int(k) if k.isdigit() else k for k in path.split(".")]
        for key in parents:
            data = data[key]
        data[last] = value
    return change


def delete_at(path: str) -> Any:
    def change(data: Any) -> None:
        *parents, last = path.split(".")
        for key in parents:
            data = data[key]
        del data[last]
    return change


def test_the_valid_session_loads(tmp_path: Path) -> None:
    assert load_text(valid_text(), tmp_path).step_count == 4


HOSTILE: list[tuple[str, str | bytes, str]] = [
    ("empty", "", "the file is empty"),
    ("blank", " \n\t", "the file is empty"),
    ("not json", "hello, world", "not valid JSON at line 1 column 1"),
    ("binary", b"\x89PNG\r\n\x1a\n\xff\xfe", "not UTF-8"),
    ("truncated", valid_text()[: len(valid_text()) // 2], "truncated"),
    ("truncated end", valid_text()[:-1], "truncated"),
    ("a list", "[1, 2, 3]", "top level is a list of 3"),
    ("another format", json.dumps({"format": "notebook", "version": 1}), "format must be"),
    ("newer version", mutated(set_at("version", 2)), "version 2 (made by a newer gradbox)"),
    ("version as text", mutated(set_at("version", "1")), "version must be a whole number"),
    ("missing lr", mutated(delete_at("config.lr")), "missing field config.lr"),
    ("missing history", mutated(delete_at("history")), "missing field history"),
    ("unknown field", mutated(set_at("config.speed", 3)), "unknown field config.speed"),
    ("lr as text", mutated(set_at("config.lr", "fast")),
     "config.lr must be a number, got the text 'fast'"),
    ("bool as int", mutated(set_at("config.n_samples", True)), "config.n_samples must be a whole"),
    ("float as int", mutated(set_at("config.steps", 10.0)), "config.steps must be a whole number"),
    ("bad lr", mutated(set_at("config.lr", -1.0)), "config: learning rate"),
    ("bad optimizer", mutated(set_at("config.optimizer", "sgdx")), "config: optimizer must be"),
    ("NaN literal", valid_text().replace('"lr": 0.5', '"lr": NaN', 1), "NaN is not a JSON number"),
    ("Infinity", valid_text().replace('"lr": 0.5', '"lr": -Infinity', 1), "-Infinity is not a"),
    ("1e400", valid_text().replace('"lr": 0.5', '"lr": 1e400', 1),
     "the number '1e400' is too large for a float"),
    ("huge int as float", mutated(set_at("config.l2", 10**400)), "config.l2 is too large"),
    ("5000 digits", valid_text().replace('"lr": 0.5', '"lr": ' + "9" * 5000, 1),
     "unreadable number"),
    ("deep list", "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("deep object", '{"a":' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
    ("duplicate key", valid_text().replace('{"format":', '{"version": 1, "format":', 1),
     "the field 'version' appears twice in one object"),
    ("104 parameters", mutated(lambda d: d["model"]["params"].pop()),
     "model.params: 13 parameters expected for layers [2, 3, 1] but 12 given"),
    ("hidden 10**9", mutated(set_at("config.hidden", [10**9])),
     "config.hidden: layers [2, 1000000000, 1] have 4,000,000,001 parameters"),
    ("zero neurons", mutated(set_at("config.hidden", [0])), "config.hidden[0] must be"),
    ("nan weight", mutated(set_at("model.params.2", "nan")), r"model.params[2] must be a number"),
    ("weight as list", mutated(set_at("model.grads.0", [1.0])), "model.grads[0] must be a number"),
    ("nan lr in history", mutated(set_at("history.1.lr", "nan")), "history[1].lr must be a number"),
    ("inf loss", mutated(set_at("history.1.loss", "inf")), "history[1].loss must be a number"),
    ("accuracy 2", mutated(set_at("history.0.accuracy", 2.0)), "history[0].accuracy must be at"),
    ("step numbers", mutated(set_at("history.2.step", 7)), "history[2].step must be 3"),
    ("missing checkpoint", mutated(lambda d: d["checkpoints"].pop()),
     "checkpoints must have 4 entries, one per history step, got 3"),
    ("checkpoint shape", mutated(lambda d: d["checkpoints"][1]["optimizer"]["velocity"].pop()),
     "checkpoints[1].optimizer.velocity: 13 parameters expected"),
    ("adam state for sgd", mutated(set_at("model.optimizer", {"m": [], "v": [], "steps": 0})),
     "missing field model.optimizer.velocity"),
    ("negative steps", mutated(set_at("model.optimizer.steps", -1)), "optimizer.steps must be"),
    ("label 2", mutated(set_at("dataset.labels.5", 2)), "dataset.labels[5] must be between 0"),
    ("short labels", mutated(lambda d: d["dataset"]["labels"].pop()),
     "dataset.labels must have 12 labels, got 11"),
    ("3-d point", mutated(set_at("dataset.points.0", [1.0, 2.0, 3.0])),
     "dataset.points[0] must have 2 coordinates"),
    ("text point", mutated(set_at("dataset.points.0", ["1", 2.0])),
     "dataset.points[0][0] must be a number"),
    ("too many classes", mutated(set_at("dataset.classes", 4)), "the data has 4 classes"),
    ("is_test as int", mutated(set_at("dataset.is_test.0", 0)), "dataset.is_test[0] must be true"),
    ("negative seed", mutated(set_at("init_seed", -1)), "init_seed must be between 0"),
    ("negative config seed", mutated(set_at("config.seed", -5)), "config.seed must be between 0"),
    ("mid-phase", mutated(set_at("phase", "backward")), "phase must be one of forward"),
    ("ghost as list", mutated(set_at("ghost", [])), "ghost must be an object, got a list"),
    ("selected too far", mutated(set_at("selected_sample", 12)), "selected_sample must be"),
    ("switch as text", mutated(set_at("forget_zero_grad", "yes")),
     "forget_zero_grad must be true or false"),
]


@pytest.mark.parametrize(("text", "message"), [h[1:] for h in HOSTILE],
                         ids=[h[0] for h in HOSTILE])
def test_broken_and_hostile_files_are_rejected_clearly(text: str | bytes, message: str,
                                                       tmp_path: Path) -> None:
    with pytest.raises(SessionError) as info:
        load_text(text, tmp_path)
    assert message in str(info.value)


def test_non_finite_values_are_allowed_only_where_they_mean_something(tmp_path: Path) -> None:
    data = valid()
    data["history"][0]["test_loss"] = "inf"
    data["history"][1]["grad_norm"] = "inf"
    data["history"][2]["ghost_loss"] = "-inf"
    data["history"][3]["test_accuracy"] = "nan"
    data["model"]["optimizer"]["velocity"][0] = "inf"
    data["ghost"]["params"][0] = "nan"
    trainer = load_text(json.dumps(data), tmp_path)
    assert trainer.history[0].test_loss == math.inf and trainer.history[2].ghost_loss == -math.inf
    assert trainer.run.optimizer.state_dict()["velocity"][0] == math.inf
    assert trainer.ghost is not None and math.isnan(trainer.ghost.values()[0])
    data["history"][3]["test_accuracy"] = 1.5
    with pytest.raises(SessionError, match=r"history\[3\]\.test_accuracy must be between"):
        load_text(json.dumps(data), tmp_path)


def test_an_oversized_file_is_refused_before_reading(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(persistence, "MAX_FILE_BYTES", 1000)
    with pytest.raises(SessionError, match="sessions are at most"):
        load_text(valid_text(), tmp_path)


def test_a_missing_file_is_a_session_error(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="cannot read the file"):
        load_session(tmp_path / "absent.json")


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    assert load_text(b"\xef\xbb\xbf" + valid_text().encode(), tmp_path).step_count == 4


def test_a_session_without_training_points_loads_and_stops_with_a_reason(tmp_path: Path
                                                                         ) -> None:
    # Editing can remove every point; such a session is valid, it just cannot train.
    data = valid()
    data["dataset"].update(points=[], labels=[], is_test=[])
    trainer = load_text(json.dumps(data), tmp_path)
    assert len(trainer.dataset) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy: mean of an empty batch
        assert trainer.step() is None
    assert trainer.stop_reason and trainer.step_count == 4


def test_config_fields_table_covers_training_config() -> None:
    names = [f.name for f in dataclasses.fields(TrainingConfig)]
    assert list(persistence.CONFIG_FIELDS) == names


def test_a_failed_load_leaves_the_current_trainer_alone(tmp_path: Path) -> None:
    current = Trainer(SMALL)
    drive(current, 0, 3)
    before = current.snapshot()
    with pytest.raises(SessionError):
        load_text(mutated(set_at("config.lr", None)), tmp_path)
    after = current.snapshot()
    assert same_bits(before.params, after.params) and before.history == after.history


# --- fuzzing ---------------------------------------------------------------------------------
def must_load_or_refuse(text: str | bytes) -> None:
    """The loader's contract: a usable Trainer, or SessionError -- nothing else."""
    try:
        data = persistence.parse_session_text(text)
        trainer = persistence.trainer_from_session(data)
    except SessionError as error:
        assert str(error)
        return
    trainer.step()  # a loaded trainer trains (or stops with a reason), it never raises
    trainer.snapshot()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12)

SPECIAL = [None, True, False, 0, -1, 1, 2, 3, 10**30, -(10**30), 2**63, 0.0, -0.0, 0.5, 1e308,
           -1e308, 5e-324, "nan", "inf", "-inf", "", "sgd", "adam", [], {}, [0.0], {"a": 1}]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_fuzz_random_json_is_refused(value: Any) -> None:
    must_load_or_refuse(json.dumps(value))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_fuzz_random_bytes_are_refused(raw: bytes) -> None:
    must_load_or_refuse(raw)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, len(valid_text()) - 1))
def test_fuzz_truncated_files_are_refused(cut: int) -> None:
    with pytest.raises(SessionError):
        persistence.parse_session_text(valid_text()[:cut])


@st.composite
def mutations(draw: st.DrawFn) -> dict[str, Any]:
    """A valid session with one thing changed somewhere: deleted, replaced, resized."""
    data = valid()
    node: Any = data
    while True:
        keys = sorted(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        child = node[key]
        # Mostly deeper: the numbers inside the arrays are where subtle damage hides.
        descend = isinstance(child, (dict, list)) and child and draw(st.integers(0, 3)) > 0
        if not descend:
            break
        node = child
    if not keys:  # an empty list or object: give it something unexpected
        if isinstance(node, list):
            node.append(draw(json_values))
        else:
            node["unexpected"] = 1
        return data
    how = draw(st.sampled_from(["delete", "special", "random", "grow", "nudge"]))
    if how == "delete":
        del node[key]
    elif how == "special":
        node[key] = copy.deepcopy(draw(st.sampled_from(SPECIAL)))
    elif how == "random":
        node[key] = draw(json_values)
    elif how == "grow" and isinstance(node, list):
        node.insert(key, copy.deepcopy(node[key]))
    elif isinstance(node[key], (int, float)) and not isinstance(node[key], bool):
        node[key] = node[key] * draw(st.sampled_from([-1, 2, 1e300, 0])) + draw(
            st.sampled_from([0, 1, -1]))
    else:
        node[key] = draw(json_values)
    return data


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_fuzz_mutated_sessions_load_or_are_refused(data: dict[str, Any]) -> None:
    must_load_or_refuse(json.dumps(data))


def test_hand_edited_weights_survive_save_and_load(tmp_path: Path) -> None:
    trainer = Trainer(SMALL)
    trainer.run_steps(3)
    trainer.set_parameter(trainer.param_names[2], 1.25)
    trainer.run_steps(2)
    path = tmp_path / "edited.gradbox.json"
    save_session(trainer, path)
    loaded = load_session(path)
    assert loaded.edits == trainer.edits
    assert loaded.edits[0].new == 1.25 and loaded.edits[0].step == 3
    loaded.rewind(3)  # the state after 3 steps includes the edit made then
    assert loaded.edits == trainer.edits
    assert loaded.run.values()[2] == 1.25
    loaded.rewind(2)  # before it: undone
    assert loaded.edits == []
    np.testing.assert_array_equal(loaded.run.values(), trainer.checkpoints[2].params)
