"""Quit never loses work (issue 23, item 1): a save on quit that fails -- a full disk, a
read-only file -- keeps the window open and asks (Save As…, Discard, Cancel); the crash
copy holds the latest state by then, or the question says it could not be written."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from gradbox.files import sessions as persistence
from gradbox.port.controller import SessionController
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from gradbox.views.window.files.resume import START_FRESH_KEY
from gradbox.views.window.main_window import MainWindow


def _window(qtbot, tmp_path: Path, start_fresh: bool):  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    settings.setValue(START_FRESH_KEY, start_fresh)
    controller = SessionController(Trainer(TrainingConfig()))
    win = MainWindow(controller, settings, autosave_path=tmp_path / "auto" / "a.gradbox")
    win.ask_unsaved = lambda: "discard"  # type: ignore[method-assign]
    qtbot.addWidget(win)
    win.show()
    return win, controller


@pytest.fixture
def windows(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    made: list[SessionController] = []
    wins: list[MainWindow] = []

    def make(start_fresh: bool = True) -> MainWindow:
        win, controller = _window(qtbot, tmp_path, start_fresh)
        made.append(controller)
        wins.append(win)
        return win
    yield make
    for controller in made:
        controller.shutdown()
    for win in wins:
        win.ask_unsaved = lambda: "discard"  # type: ignore[method-assign]
        win.close()


def _steps(qtbot, win: MainWindow, n: int) -> None:  # type: ignore[no-untyped-def]
    for _ in range(n):
        with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
            win.toolbar.step_action.trigger()


def _full_disk(monkeypatch, *failing: Path) -> None:  # type: ignore[no-untyped-def]
    """Writes to `failing` raise ENOSPC, as on a full disk; others go through."""
    original = persistence.save_session

    def save(state, path, controls=None):  # type: ignore[no-untyped-def]
        if Path(path) in failing:
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(state, path, controls)
    monkeypatch.setattr(persistence, "save_session", save)


def test_quit_whose_save_fails_keeps_the_window_and_the_crash_copy_has_every_step(
        qtbot, windows, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    win = windows()
    target = tmp_path / "run.gradbox"
    persistence.save_session(Trainer(TrainingConfig()), target)  # an older copy: step 0
    win.document.path = target
    _steps(qtbot, win, 5)
    _full_disk(monkeypatch, target)
    win.ask_unsaved = lambda: "save"  # type: ignore[method-assign]
    asked: list[str] = []
    win.ask_save_failed = lambda text: asked.append(text) or "cancel"  # type: ignore[method-assign]
    assert not win.close()
    assert win.isVisible()
    assert len(asked) == 1
    assert "run.gradbox could not be saved: No space left on device" in asked[0]
    assert "The crash copy holds the session as it is now" in asked[0]
    assert persistence.load_session(win.autosaver.path).step_count == 5
    assert persistence.load_session(target).step_count == 0  # the old file, whole
    # The window still works: it steps on.
    _steps(qtbot, win, 1)
    assert win.controller.snapshot.step == 6


def test_when_the_crash_copy_fails_too_the_question_says_so_and_discard_closes(
        qtbot, windows, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    win = windows()
    target = tmp_path / "run.gradbox"
    win.document.path = target
    _steps(qtbot, win, 3)
    _full_disk(monkeypatch, target, win.autosaver.path)
    win.ask_unsaved = lambda: "save"  # type: ignore[method-assign]
    asked: list[str] = []
    win.ask_save_failed = lambda text: asked.append(text) or "discard"  # type: ignore[method-assign]
    assert win.close()
    assert "The crash copy could not be written either: No space left on device" in asked[0]
    assert not target.exists()


def test_save_as_after_a_failed_save_opens_the_dialog_and_the_window_stays(
        qtbot, windows, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    win = windows()
    target = tmp_path / "run.gradbox"
    win.document.path = target
    _steps(qtbot, win, 2)
    _full_disk(monkeypatch, target)
    win.ask_unsaved = lambda: "save"  # type: ignore[method-assign]
    win.ask_save_failed = lambda text: "save_as"  # type: ignore[method-assign]
    opened: list[bool] = []
    monkeypatch.setattr(win.files, "save_session_as", lambda: opened.append(True))
    assert not win.close()
    qtbot.waitUntil(lambda: bool(opened), timeout=5000)
    assert win.isVisible()


def test_reopen_at_start_that_cannot_be_written_asks_instead_of_closing(
        qtbot, windows, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    win = windows(start_fresh=False)
    assert win.resume is not None and win.resume.enabled
    _steps(qtbot, win, 4)
    qtbot.waitUntil(lambda: win.autosaver.dirty, timeout=5000)
    _full_disk(monkeypatch, win.resume.path)
    asked: list[str] = []
    win.ask_save_failed = lambda text: asked.append(text) or "cancel"  # type: ignore[method-assign]
    assert not win.close()
    assert "could not be kept for the next start" in asked[0]
    assert persistence.load_session(win.autosaver.path).step_count == 4
    monkeypatch.undo()
    assert win.close()  # the disk has room again: quit keeps it as usual
    assert persistence.load_session(win.resume.path).step_count == 4
