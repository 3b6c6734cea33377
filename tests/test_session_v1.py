"""Version-1 (JSON) sessions still open, exactly, and the reader trusts nothing in them."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradbox.files import session_json
from gradbox.files import sessions as persistence
from gradbox.files.session_v1 import state_from_v1
from gradbox.files.sessions import SessionError, load_session
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from test_persistence import drive  # the same run as the current format's tests
from v1_writer import dense_trainer, v1_session

FIXTURES = Path(__file__).parent / "fixtures"


def same_bits(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_session_written_by_version_1_opens_and_continues_exactly() -> None:
    """The fixture was written by the version-1 code itself, with what continuing gave."""
    path = FIXTURES / "session_v1.gradbox.json"
    expected = json.loads((FIXTURES / "session_v1.expected.json").read_text())
    a = load_session(path)
    assert a.step_count == 12 and a.ghost_enabled and len(a.dataset) == 31
    assert a.edits[0].step == 9 and a.edits[0].new == 0.75 and a.lr == 0.25
    a.run_steps(5)
    assert [r.loss.hex() for r in a.history] == expected["continue_5"]
    assert [float(v).hex() for v in a.run.values()] == expected["params_after_continue"]
    b = load_session(path)
    b.rewind(6)
    b.run_steps(4)
    assert [r.loss.hex() for r in b.history] == expected["rewind_6_then_4"]
    assert [float(v).hex() for v in b.run.values()] == expected["params_after_rewind"]


def test_an_opened_version_1_session_saves_in_the_new_format(tmp_path: Path) -> None:
    old = load_session(FIXTURES / "session_v1.gradbox.json")
    persistence.save_session(old, tmp_path / "new.gradbox")
    assert (tmp_path / "new.gradbox").read_bytes()[:2] == b"PK"
    new = load_session(tmp_path / "new.gradbox")
    for trainer in (old, new):
        trainer.rewind(3)
        trainer.run_steps(10)
    assert new.history == old.history and same_bits(new.run.values(), old.run.values())


# --- hostile and broken files ------------------------------------------------------------------
SMALL = TrainingConfig(n_samples=12, hidden=(3,), test_ratio=0.25, momentum=0.5)


@cache
def valid_text() -> str:
    trainer = dense_trainer(SMALL)
    trainer.set_ghost(True)
    drive(trainer, 0, 4)
    return json.dumps(v1_session(trainer))


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
    ("newer version", mutated(set_at("version", 3)), "version 3 (made by a newer gradbox)"),
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
     "config.hidden[0] must be between 1 and 4096, got 1000000000"),
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
    monkeypatch.setattr(persistence, "MAX_V1_BYTES", 1000)
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
    assert list(session_json.CONFIG_FIELDS) == names


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
        data = session_json.parse_session_text(text)
        trainer = Trainer.from_state(state_from_v1(data))
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
        session_json.parse_session_text(valid_text()[:cut])


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


@pytest.mark.parametrize("init", ["uniform", "normal", "xavier", "he", "constant", "zeros"])
def test_an_init_scale_of_minus_zero_loads_and_trains(init: str) -> None:
    """What the mutation fuzz below once found (ValueError: high - low < 0): -0.0 is in
    the range 0..100, and numpy's uniform and normal refused it as negative; a noise of
    -0.0 the same ('scale < 0')."""
    data = valid()
    data["config"].update(init=init, init_scale=-0.0, noise=-0.0)
    must_load_or_refuse(json.dumps(data))
    assert Trainer(SMALL.with_changes(init=init, init_scale=-0.0)).step() is not None
    for kind in ("moons", "sine"):  # noise -0.0 was refused by numpy's normal the same way
        assert Trainer(SMALL.with_changes(dataset=kind, noise=-0.0)).step() is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations())
def test_fuzz_mutated_sessions_load_or_are_refused(data: dict[str, Any]) -> None:
    must_load_or_refuse(json.dumps(data))


