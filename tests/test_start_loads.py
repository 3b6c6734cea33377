"""What a start opens is read off the UI thread (issue 23): the file named on the command
line, the crash copy offered, and the session kept at the last quit. The window is up and
answering at once on a fresh run; the file's run arrives when it is read; Cancel and a
failure keep the fresh run, and say so in words; a quit meanwhile loses nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QPushButton

import hostile_corpus
from gradbox.files import sessions as persistence
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from gradbox.views import background
from gradbox.views.window.files.resume import last_session_path

KEPT = TrainingConfig(hidden=(4,), n_samples=20)


class Held:
    """The session reader, held on an event until the test lets it go."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entered, self.release = threading.Event(), threading.Event()
        original = persistence.load_state_with_controls

        def slow(path):  # type: ignore[no-untyped-def]
            self.entered.set()
            self.release.wait(30)  # as long as the test wants: a 990x990 file took 5-21 s
            return original(path)
        monkeypatch.setattr(persistence, "load_state_with_controls", slow)


@pytest.fixture
def start(open_window, tmp_path: Path):  # type: ignore[no-untyped-def]
    """`start()`: a window as the launcher makes one (settings, a data directory, a
    fresh run), shown and active."""
    return lambda: open_window((1024, 700), settings=QSettings(
        str(tmp_path / "settings.ini"), QSettings.IniFormat),
        autosave_path=tmp_path / "data" / "autosave.gradbox")


def saved_run(path: Path, steps: int = 4) -> None:
    trainer = Trainer(KEPT)
    for _ in range(steps):
        trainer.step()
    path.parent.mkdir(parents=True, exist_ok=True)
    persistence.save_session(trainer, path)


def where(which: str, tmp_path: Path) -> tuple[Path, Path | None, Path | None]:
    """(the file, what open_at_start is given as named, as crashed) for each kind."""
    autosave = tmp_path / "data" / "autosave.gradbox"
    if which == "named":
        path = tmp_path / "mine.gradbox"
        return path, path, None
    if which == "crash":
        return autosave, None, autosave
    return last_session_path(autosave), None, None


@pytest.mark.parametrize("which", ["kept", "named", "crash"])
def test_a_slow_start_up_load_leaves_the_window_answering_and_lands_after(  # type: ignore[no-untyped-def]
        qtbot, start, tmp_path, monkeypatch, which: str) -> None:
    path, named, crashed = where(which, tmp_path)
    saved_run(path)
    held = Held(monkeypatch)
    # No progress dialog yet (it shows past half a second): the key goes to the window.
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 60_000)
    win = start()
    asked: list[str] = []
    win.files.ask_restore = lambda text: asked.append(text) or True  # type: ignore[method-assign]
    win.files.open_at_start(named, crashed)
    qtbot.waitUntil(held.entered.is_set, timeout=10_000)
    # The window answers while the file is read: Space steps the fresh run.
    win.tabs.setFocus()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        qtbot.keyClick(win.tabs, Qt.Key_Space)
    assert win.controller.snapshot.step == 1 and win.toolbar.counter.text().startswith("step 1")
    assert win.files.reading and win.controller.snapshot.config.hidden == (8, 8)
    held.release.set()
    qtbot.waitUntil(lambda: win.controller.snapshot.config.hidden == (4,)
                    and win.controller.snapshot.step == 4, timeout=10_000)
    qtbot.waitUntil(lambda: not win.files.reading, timeout=10_000)
    assert win.undo_action.isEnabled()  # the step taken meanwhile is one Undo away
    if which == "crash":
        assert asked and "did not close normally" in asked[0]
        assert win.autosaver is not None and win.autosaver.enabled
    elif which == "named":
        assert win.document.path == path
    else:
        qtbot.waitUntil(lambda: win.messages.text().startswith(
            "Picked up where you left off: untitled, 4 steps"), timeout=5000)


def cancel_at_start(qtbot, start, tmp_path, monkeypatch, which: str,  # type: ignore[no-untyped-def]
                    label: str):
    """Start with a `which` file to read, held; press Cancel in the progress dialog
    (checking it says `label`), then let the reader go. (window, file, its bytes)."""
    path, named, crashed = where(which, tmp_path)
    saved_run(path)
    before = path.read_bytes()
    held = Held(monkeypatch)
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 0)
    win = start()
    win.files.open_at_start(named, crashed)
    task = win.files.reading[0]
    qtbot.waitUntil(lambda: task.dialog.isVisible(), timeout=5000)
    assert task.dialog.labelText() == label
    cancel = next(b for b in task.dialog.findChildren(QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(cancel, Qt.LeftButton)
    held.release.set()
    qtbot.waitUntil(lambda: not win.files.reading, timeout=10_000)
    return win, path, before


def test_cancel_at_start_keeps_the_fresh_run_and_the_kept_file(  # type: ignore[no-untyped-def]
        qtbot, start, tmp_path, monkeypatch) -> None:
    win, path, before = cancel_at_start(qtbot, start, tmp_path, monkeypatch, "kept",
                                        "Reopening the last session…")
    assert win.controller.snapshot.config.hidden == (8, 8) and win.controller.snapshot.step == 0
    assert path.read_bytes() == before


def test_cancel_while_the_crash_copy_is_read_sets_it_aside_and_says_where(  # type: ignore[no-untyped-def]
        qtbot, start, tmp_path, monkeypatch) -> None:
    """Cancel is not a No to a question never seen: the copy is kept under another name
    (so no clean quit throws it away), and the window says where."""
    win, path, copy = cancel_at_start(qtbot, start, tmp_path, monkeypatch, "crash",
                                      "Reading the autosaved session…")
    aside = path.with_name("autosave.not-restored.gradbox")
    assert not path.exists() and aside.read_bytes() == copy
    assert win.messages.text().startswith(f"The autosaved session was not restored; it is "
                                          f"kept as {aside}")
    assert win.controller.snapshot.config.hidden == (8, 8)
    assert win.autosaver is not None and win.autosaver.enabled


@pytest.mark.parametrize("which", ["kept", "crash"])
def test_a_quit_while_a_start_up_file_is_read_leaves_it_for_the_next_start(  # type: ignore[no-untyped-def]
        qtbot, start, tmp_path, monkeypatch, which: str) -> None:
    """The kept session is not replaced by the fresh run, nor the crash copy discarded."""
    path, named, crashed = where(which, tmp_path)
    saved_run(path)
    before = path.read_bytes()
    held = Held(monkeypatch)
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 60_000)
    win = start()
    win.files.open_at_start(named, crashed)
    qtbot.waitUntil(held.entered.is_set, timeout=10_000)
    assert win.close()
    held.release.set()
    assert path.read_bytes() == before


def test_a_named_file_that_cannot_be_read_is_said_in_words_and_the_fresh_run_stays(  # type: ignore[no-untyped-def]
        qtbot, start, tmp_path) -> None:
    """`gradbox FILE` with a hostile file printed a traceback once, then exited with 2;
    now the window is up and says what is wrong with the file."""
    corpus = dict((case.name, path) for case, path in hostile_corpus.build(
        tmp_path / "hostile", big=False))
    win = start()
    win.files.open_at_start(corpus["encrypted_flag"], None)
    qtbot.waitUntil(lambda: win.error_box is not None and win.error_box.isVisible(),
                    timeout=10_000)
    text = win.error_box.text()
    assert "encrypted_flag.gradbox could not be opened: history/loss.npy is stored with " \
           "encrypted" in text
    assert "A fresh session is open instead." in text and "Traceback" not in text
    assert win.controller.snapshot.config.hidden == (8, 8) and win.document.path is None
