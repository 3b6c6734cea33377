"""A session file is opened by the training process (issue 22): the window checks the
file and keeps its length and run controls, but never builds the run nor sends it
across. Before, opening a 1000x1000 session froze the window for 1.9 s (five seconds of
building on a reading thread, then the whole state pickled on the UI thread) and held a
second copy of the run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradbox.files import sessions as persistence
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

SAVED = TrainingConfig(hidden=(4,), n_samples=20)


def saved_run(path: Path, steps: int = 3) -> Trainer:
    trainer = Trainer(SAVED)
    for _ in range(steps):
        trainer.step()
    persistence.save_session(trainer, path)
    return trainer


@pytest.fixture
def no_run_built_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a run in the window's process fails the test (the training process,
    which imported its own modules, is not affected)."""
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the window built a run")
    monkeypatch.setattr(Trainer, "from_state", refuse)


def test_opening_a_file_builds_the_run_in_the_training_process_only(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, no_run_built_here) -> None:
    path = tmp_path / "run.gradbox"
    saved = saved_run(path)
    window.files.open_session(path)
    qtbot.waitUntil(lambda: window.controller.snapshot.config.hidden == (4,)
                    and window.document.path == path, timeout=10_000)
    shown = window.controller.snapshot
    assert shown.step == 3
    np.testing.assert_array_equal(shown.params, saved.snapshot().params)
    assert window.error_box is None or not window.error_box.isVisible()
    assert "run.gradbox" in window.windowTitle()


def test_a_file_the_training_process_cannot_read_leaves_the_run_and_says_why(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, monkeypatch) -> None:
    """The file passed the window's check, then changed before the training process read
    it: said in words; the run, the file name and the title stay as they were."""
    path = tmp_path / "changing.gradbox"
    saved_run(path)
    check = persistence.load_state_with_controls

    def check_then_change(p):  # type: ignore[no-untyped-def]
        answer = check(p)
        Path(p).write_bytes(b"PK\x03\x04 not a session any more")
        return answer
    monkeypatch.setattr(persistence, "load_state_with_controls", check_then_change)
    before = window.controller.snapshot
    window.files.open_session(path)
    qtbot.waitUntil(lambda: window.error_box is not None and window.error_box.isVisible(),
                    timeout=10_000)
    text = window.error_box.text()
    assert text.startswith("changing.gradbox could not be opened: ")
    assert "Your current session is unchanged." in text and "Traceback" not in text
    assert window.controller.snapshot.config == before.config
    assert window.controller.snapshot.step == before.step
    assert window.document.path is None


def test_a_crash_copy_restored_is_built_by_the_training_process(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, no_run_built_here) -> None:
    path = tmp_path / "autosave.gradbox"
    saved_run(path, steps=2)
    asked: list[str] = []
    answers: list[bool] = []
    window.files.offer_restore(path, ask=lambda text: asked.append(text) or True,
                               answered=answers.append)
    qtbot.waitUntil(lambda: answers == [True], timeout=10_000)
    assert window.controller.snapshot.config.hidden == (4,)
    assert "moons data (20 points), network 2-4-1 (tanh), 2 training steps." in asked[0]
    assert window.controller.snapshot.step == 2


def test_a_crash_copy_that_fails_in_the_training_process_is_set_aside(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, monkeypatch) -> None:
    """Checked, offered, accepted -- then unreadable to the training process: the copy is
    kept under another name (no autosave may write over it) and the window says where."""
    path = tmp_path / "autosave.gradbox"
    saved_run(path)
    check = persistence.load_state_with_controls
    broken = b"PK\x03\x04 not a session any more"

    def check_then_change(p):  # type: ignore[no-untyped-def]
        answer = check(p)
        Path(p).write_bytes(broken)
        return answer
    monkeypatch.setattr(persistence, "load_state_with_controls", check_then_change)
    window.files.offer_restore(path, ask=lambda _text: True)
    qtbot.waitUntil(lambda: window.error_box is not None and window.error_box.isVisible(),
                    timeout=10_000)
    aside = next(tmp_path.glob("autosave.*.gradbox"))
    assert not path.exists() and aside.read_bytes() == broken
    assert f"The file was kept as {aside}." in window.error_box.text()
    assert window.controller.snapshot.config.hidden == (8, 8)


def test_the_progress_stays_while_the_run_is_built_and_cancel_brings_the_last_back(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, monkeypatch) -> None:
    """Checked here, the file goes to the training process, which builds it (seconds, for
    a 1000x1000 network): the dialog says so and stays. Cancel then puts the run before
    back once the file's has landed, as Undo does."""
    from PySide6.QtWidgets import QPushButton

    from gradbox.views import background

    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 0)
    path = tmp_path / "run.gradbox"
    saved_run(path)
    before = window.controller.snapshot
    send = window.controller.open_file
    seen: list[tuple[bool, str]] = []

    def send_then_cancel(*args, **kwargs):  # type: ignore[no-untyped-def]
        send(*args, **kwargs)
        task = window.files.reading[0]  # the person presses Cancel while it builds
        seen.append((task.kept_open and not task.cancelled, task.dialog.labelText()))
        next(b for b in task.dialog.findChildren(QPushButton) if b.text() == "Cancel").click()
    monkeypatch.setattr(window.controller, "open_file", send_then_cancel)
    window.files.open_session(path)
    qtbot.waitUntil(lambda: not window.files.reading, timeout=10_000)
    assert seen == [(True, "Opening run.gradbox… building its network")]
    qtbot.waitUntil(lambda: window.controller.snapshot.config == before.config
                    and "Opened run.gradbox" in window.controller.redo_text, timeout=10_000)
    assert window.controller.snapshot.step == before.step
    assert window.document.path is None and "untitled" in window.windowTitle()
