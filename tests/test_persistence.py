"""Sessions on disk (the zip format): exact round trips, atomic saves that leave no litter,
and a loader that trusts nothing."""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import stat
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gradbox.files import sessions as persistence
from gradbox.files.sessions import SessionError, load_session, save_session
from gradbox.training.config import TrainingConfig
from gradbox.training.history import StepRecord
from gradbox.training.trainer import Trainer


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
    kept_a, kept_b = a.state().checkpoints, b.state().checkpoints
    assert [c.step for c in kept_a] == [c.step for c in kept_b]
    for ca, cb in zip(kept_a, kept_b):
        assert same_bits(ca.run.params, cb.run.params) and same_bits(ca.run.grads, cb.run.grads)
        assert ca.lr == cb.lr and (ca.ghost is None) == (cb.ghost is None)
    assert a.state().events == b.state().events


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


def test_the_file_is_a_zip_of_a_strict_json_manifest_and_npy_arrays(tmp_path: Path) -> None:
    trainer = Trainer(CONFIGS[1])  # no test set: test loss and accuracy are NaN
    drive(trainer, 0, 3)
    path = tmp_path / "s.gradbox"
    save_session(trainer, path)

    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in the manifest")

    with zipfile.ZipFile(path) as z:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        data = json.loads(z.read("manifest.json"), parse_constant=no_constants)
        loss = np.load(io.BytesIO(z.read("history/test_loss.npy")), allow_pickle=False)
        params = np.load(io.BytesIO(z.read("checkpoints/params.npy")), allow_pickle=False)
    assert data["format"] == "gradbox-session" and data["version"] == 2
    assert data["config"]["hidden"] == [4] and data["parameters"] == 17 and data["steps"] == 3
    assert np.isnan(loss).all() and params.shape == (data["checkpoints"], 17)
    loaded = load_session(path)
    assert all(math.isnan(r.test_loss) for r in loaded.history)


def test_every_member_is_what_numpy_writes_byte_for_byte(tmp_path: Path) -> None:
    """The arrays go to the file as they lie in memory (no copy under the interpreter
    lock), yet each member is exactly `np.lib.format.write_array`'s .npy: files saved
    before and after read the same."""
    trainer = Trainer(CONFIGS[0])
    trainer.set_ghost(True)
    drive(trainer, 0, 12)
    path = tmp_path / "s.gradbox"
    save_session(trainer, path)
    _manifest, arrays = persistence.session_members(trainer.state())
    kinds = {np.asarray(a).dtype.kind for a in arrays.values()}
    assert {"f", "i", "b"} <= kinds
    with zipfile.ZipFile(path) as z:
        assert set(z.namelist()) == {"manifest.json", *arrays}
        for name, array in arrays.items():
            expected = io.BytesIO()
            np.lib.format.write_array(expected, np.ascontiguousarray(array),
                                      allow_pickle=False)
            assert z.read(name) == expected.getvalue(), name


@pytest.mark.parametrize("array", [
    np.arange(12.0).reshape(3, 4).T, np.arange(5, dtype=">f8"), np.array([True, False]),
    np.zeros((0, 7)), np.arange(6, dtype=np.int64)[::2], np.float64(1.5),
])
def test_a_member_of_any_layout_is_what_numpy_writes(array: np.ndarray) -> None:
    ours, numpys = io.BytesIO(), io.BytesIO()
    persistence.write_member(ours, array)
    np.lib.format.write_array(numpys, np.ascontiguousarray(array), allow_pickle=False)
    assert ours.getvalue() == numpys.getvalue()


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
    trainer.run_steps(1)
    points = trainer.dataset.copy()
    points.add_point(0.5, -0.25, 1, test=True)
    trainer.replace_dataset(points)
    trainer.run_steps(100, stop_diverging=False)  # on into non-finite numbers, on purpose
    assert trainer.stop_reason
    save_session(trainer, tmp_path / "s.json")
    loaded = load_session(tmp_path / "s.json")
    assert_same_state(trainer, loaded)
    assert len(loaded.dataset) == 21 and loaded.dataset_version == 1
    loaded.rewind(0)  # step 1 trained on the old points: a replay would need them
    trainer.rewind(0)
    assert_same_state(trainer, loaded)


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


@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt(),
                                   MemoryError()])
def test_a_save_interrupted_halfway_leaves_the_old_file(saved: tuple[Path, bytes],
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        error: BaseException) -> None:
    real_write = persistence.write_member
    calls: list[int] = []

    def write_some_then_fail(member: Any, array: np.ndarray) -> None:
        calls.append(1)
        if len(calls) == 5:
            raise error
        real_write(member, array)

    monkeypatch.setattr(persistence, "write_member", write_some_then_fail)
    trainer = Trainer(CONFIGS[1])
    drive(trainer, 0, 4)
    with pytest.raises(type(error)):
        save_session(trainer, saved[0])
    monkeypatch.undo()
    assert len(calls) == 5  # four arrays really were written first
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
    with pytest.raises(SessionError, match="cannot be saved: a weight is not a finite number"):
        save_session(trainer, saved[0])
    assert_untouched(saved)


def test_saving_into_a_missing_directory_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        save_session(Trainer(CONFIGS[1]), tmp_path / "nowhere" / "s.json")


def test_hand_edited_weights_survive_save_and_load(tmp_path: Path) -> None:
    trainer = Trainer(CONFIGS[1])
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
    assert loaded.edits == ()
    trainer.rewind(2)
    np.testing.assert_array_equal(loaded.run.values(), trainer.run.values())
