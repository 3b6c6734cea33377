"""Saves that never block and never fail silently: the writer thread, kill -9 during a
save, no litter, symlinks, read-only files, and an autosave failure shown once."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from gradbox.files import sessions as persistence
from gradbox.files.session_writer import SessionWriter
from gradbox.files.sessions import SessionError, load_session, save_session
from gradbox.training.config import TrainingConfig
from gradbox.training.record import CheckpointPolicy
from gradbox.training.trainer import Trainer

SMALL = TrainingConfig(n_samples=20, hidden=(3,))


def trained(steps: int = 3) -> Trainer:
    trainer = Trainer(SMALL)
    trainer.run_steps(steps)
    return trainer


# --- kill -9 --------------------------------------------------------------------------------
CHILD = textwrap.dedent("""
    import sys
    from gradbox.files.sessions import load_state, save_session
    state = load_state(sys.argv[2])
    print("ready", flush=True)
    while True:
        save_session(state, sys.argv[1])
""")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_kill_9_during_a_save_keeps_the_old_file_and_the_next_start_removes_the_temp(
        tmp_path: Path) -> None:
    path = tmp_path / "run.gradbox"
    save_session(trained(4), path)
    # Every step kept whole: a few megabytes per save, so a kill lands mid-write.
    big = Trainer(TrainingConfig(hidden=(16, 16), n_samples=20),
                  policy=CheckpointPolicy(every=1, max_recent=1))
    big.run_steps(300)
    source = tmp_path / "source" / "big.gradbox"
    source.parent.mkdir()
    save_session(big, source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    caught = 0
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(source)], env=env,
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
            deadline = time.monotonic() + 60
            while not persistence.temp_files(path) and time.monotonic() < deadline:
                time.sleep(0.002)  # a subprocess, not Qt: polling the directory
            caught += bool(persistence.temp_files(path))
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        assert load_session(path).step_count in (4, 300)  # the old file or a whole new one
    assert caught  # at least one kill landed while a temp file existed
    # What the app does at start (and every save does first): dead processes' temps go.
    persistence.remove_stale_temp_files(path)
    assert persistence.temp_files(path) == []
    assert sorted(os.listdir(tmp_path)) == ["run.gradbox", "source"]


def test_a_live_processs_temp_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.gradbox"
    mine = tmp_path / f".s.gradbox.{os.getpid()}-0123456789ab.gradbox-tmp"
    dead = tmp_path / ".s.gradbox.999999999-0123456789ab.gradbox-tmp"
    other = tmp_path / ".other.gradbox.999999999-0123456789ab.gradbox-tmp"
    unrelated = tmp_path / "notes.txt"
    for p in (mine, dead, other, unrelated):
        p.write_bytes(b"x")
    save_session(trained(), path)
    assert mine.exists() and not dead.exists()  # only the dead process's, only this file's
    assert other.exists() and unrelated.exists()


# --- symlinks and read-only files -------------------------------------------------------------
@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_saving_over_a_symlink_writes_the_file_it_points_to(tmp_path: Path) -> None:
    real = tmp_path / "real.gradbox"
    save_session(trained(1), real)
    link = tmp_path / "link.gradbox"
    link.symlink_to(real)
    save_session(trained(5), link)
    assert link.is_symlink() and load_session(real).step_count == 5


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_a_read_only_file_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "precious.gradbox"
    save_session(trained(2), path)
    before = path.read_bytes()
    path.chmod(stat.S_IRUSR | stat.S_IRGRP)
    try:
        with pytest.raises(SessionError, match=r"precious\.gradbox is read-only"):
            save_session(trained(6), path)
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["precious.gradbox"]


@pytest.mark.skipif(sys.platform == "win32", reason="pipes and symlinks")
def test_a_save_never_replaces_a_device_a_pipe_or_a_folder_even_through_a_link(
        tmp_path: Path) -> None:
    """Issue 31 item 11: Quit (and Save As) wrote the kept session through a symlink and
    replaced what was there -- a device node became a regular file. /dev/null stands for
    the device where it is writable; a pipe and a folder in the test's own folder."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    folder = tmp_path / "folder"
    folder.mkdir()
    targets = [pipe, folder] + ([Path("/dev/null")] if os.access("/dev", os.W_OK) else [])
    for target in targets:
        for path in (target, tmp_path / f"link-to-{target.name}.gradbox"):
            if path != target:
                path.symlink_to(target)
            with pytest.raises(SessionError, match="is not a session file"):
                save_session(trained(1), path)
    assert pipe.is_fifo() and folder.is_dir() and not any(folder.iterdir())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left


# --- the writer thread ---------------------------------------------------------------------------
def test_the_writer_writes_on_its_own_thread_and_keeps_only_the_newest_state(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = persistence.save_session
    release, started = threading.Event(), threading.Event()
    threads: list[str] = []
    steps: list[int] = []

    def slow_save(state: object, path: object, controls: object = None) -> None:
        threads.append(threading.current_thread().name)
        started.set()
        release.wait(10)
        real(state, path, controls)  # type: ignore[arg-type]
        steps.append(load_session(path).step_count)  # type: ignore[arg-type]

    monkeypatch.setattr(persistence, "save_session", slow_save)
    writer = SessionWriter()
    trainer = Trainer(SMALL)
    results: list[BaseException | None] = []
    path = tmp_path / "a.gradbox"
    writer.submit(trainer.state(), path, results.append)  # starts, then waits
    assert started.wait(10)
    for _ in range(3):
        trainer.step()
        writer.submit(trainer.state(), path, results.append)  # queued: replaced
    release.set()
    assert writer.wait(30)
    writer.close()
    assert threads == ["gradbox-writer"] * 2 and steps == [0, 3]
    assert results == [None] * 4


def test_a_failed_write_is_reported_to_the_caller(tmp_path: Path) -> None:
    writer = SessionWriter()
    results: list[BaseException | None] = []
    writer.submit(Trainer(SMALL).state(), tmp_path / "missing" / "a.gradbox", results.append)
    assert writer.wait(30)
    writer.close()
    assert len(results) == 1 and isinstance(results[0], OSError)


def test_the_unsaved_signature_of_a_big_network_sees_one_changed_weight() -> None:
    import dataclasses

    import numpy as np

    from gradbox.views.window.files.autosave import DIGEST_WHOLE, signature

    snapshot = Trainer(TrainingConfig()).snapshot()
    params = np.linspace(-1, 1, 3 * DIGEST_WHOLE + 7)  # digested by sum and sample
    big = dataclasses.replace(snapshot, params=params, grads=np.zeros_like(params))
    same = dataclasses.replace(big, params=params.copy(), grads=np.zeros_like(params))
    assert signature(big) == signature(same)
    for i in (0, 1, 12345, len(params) - 1):  # sampled or not, one weight moved
        moved = params.copy()
        moved[i] += 0.25
        assert signature(dataclasses.replace(big, params=moved)) != signature(big)


def test_temp_files_left_beside_recent_files_are_removed_at_start(tmp_path: Path) -> None:
    """What a kill -9 mid-save left beside a recent file goes at the next start (issue
    23 item 8); a save under way in a live process is left alone."""
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    files = [tmp_path / "a" / "one.gradbox", tmp_path / "b" / "two.gradbox"]
    for path in files:
        path.parent.mkdir()
        path.write_bytes(b"")
    left = [f.with_name(f".{f.name}.{dead}-0123456789ab.gradbox-tmp") for f in files]
    alive = files[0].with_name(f".one.gradbox.{os.getpid()}-0123456789ab.gradbox-tmp")
    for path in [*left, alive]:
        path.write_bytes(b"x" * 1000)
    persistence.clean_in_background(files).join()
    assert not any(p.exists() for p in left)
    assert alive.exists()


def test_closing_the_window_ends_its_writer_thread_after_its_writes(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path: Path) -> None:
    # A writer thread that outlived its window once called back into the deleted window
    # and aborted a test run in pytest-qt's teardown.
    written: list[object] = []
    window.saver.save(tmp_path / "a.gradbox", lambda _snapshot, error: written.append(error))
    qtbot.waitUntil(lambda: window.saver.writer.running)
    window.close()
    assert not window.saver.writer.running
    assert (tmp_path / "a.gradbox").is_file()
    qtbot.waitUntil(lambda: written == [None])  # the answer still reached the UI thread
