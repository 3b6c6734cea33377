"""The crash copy is offered only after a crash: signals end the app as Quit does."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from gradbox.files import sessions as persistence
from gradbox.port.controller import SessionController
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from gradbox.views.window.files.quitting import ENDED_BY_KEY
from gradbox.views.window.main_window import MainWindow

SRC = Path(__file__).resolve().parents[1] / "src"


def launch(home: Path, wait_for: str = "", args: tuple[str, ...] = ()
           ) -> tuple[subprocess.Popen[str], Path]:
    """`gradbox ARGS` in a subprocess with its own home; returns it once its window is up
    (and it has logged `wait_for`), with the autosave path it uses."""
    env = dict(os.environ, HOME=str(home), XDG_DATA_HOME=str(home / "data"),
               XDG_CONFIG_HOME=str(home / "config"), QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
               GRADBOX_NO_DIALOGS="1")
    process = subprocess.Popen([sys.executable, "-m", "gradbox", *args], env=env, text=True,
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert process.stderr is not None
    lines, autosave = [], None
    for line in process.stderr:
        lines.append(line)
        found = re.search(r"window shown; autosave at (.+)$", line.strip())
        if found:
            autosave = Path(found.group(1))
        if autosave is not None and wait_for in line:
            return process, autosave
    raise AssertionError("gradbox did not start:\n" + "".join(lines))


def finish(process: subprocess.Popen[str]) -> str:
    _, rest = process.communicate(timeout=60)
    return rest


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_app_cleanly_and_removes_the_autosave(tmp_path: Path,
                                                                number: int) -> None:
    process, autosave = launch(tmp_path)
    # What the app's own autosave leaves while it runs.
    persistence.save_session(Trainer(TrainingConfig()), autosave)
    process.send_signal(number)
    rest = finish(process)
    assert process.returncode == 0, rest
    assert not autosave.exists(), "a clean end leaves no crash copy to offer"


def test_an_unreadable_crash_copy_is_a_message_and_the_app_starts(tmp_path: Path) -> None:
    process, autosave = launch(tmp_path)
    process.send_signal(signal.SIGTERM)
    finish(process)
    autosave.parent.mkdir(parents=True, exist_ok=True)
    autosave.write_text("{ not a session")
    # It starts, and says why nothing was restored.
    process, _ = launch(tmp_path, "Could not restore: The autosaved session could not be read")
    process.send_signal(signal.SIGTERM)
    rest = finish(process)
    assert process.returncode == 0, rest
    assert not autosave.exists()
    assert any("unreadable" in p.name for p in autosave.parent.iterdir())


def test_a_named_file_that_cannot_be_read_is_said_and_the_app_runs_on(tmp_path: Path) -> None:
    """`gradbox FILE`: the window is up first, the file is read after it (off the UI
    thread); one that cannot be read is said in the window, and the app goes on."""
    bad = tmp_path / "bad.gradbox"
    bad.write_text("{ not a session")
    process, _ = launch(tmp_path, "Could not open the session: bad.gradbox could not be "
                        "opened", args=(str(bad),))
    process.send_signal(signal.SIGTERM)
    rest = finish(process)
    assert process.returncode == 0, rest
    assert "Traceback" not in rest


@pytest.fixture
def saving(qtbot, tmp_path: Path):  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    controller = SessionController(Trainer(TrainingConfig()))
    try:
        win = MainWindow(controller, settings, autosave_path=tmp_path / "auto.gradbox.json")
        qtbot.addWidget(win)
        win.show()
        yield win
    finally:
        controller.shutdown()


def test_a_signal_with_unsaved_work_keeps_it_and_says_which_signal(qtbot, saving: MainWindow,
                                                                    tmp_path: Path) -> None:
    with qtbot.waitSignal(saving.controller.snapshot_changed, timeout=5000):
        saving.controller.step()
    assert saving.autosaver is not None and saving.autosaver.dirty
    path = saving.autosaver.path
    saving.end_by_signal("SIGTERM")
    assert not saving.isVisible()
    assert persistence.load_session(path).step_count == 1, "the unsaved step is kept"
    assert saving.settings is not None and saving.settings.value(ENDED_BY_KEY) == "SIGTERM"
    controller = SessionController(Trainer(TrainingConfig()))
    try:
        fresh = MainWindow(controller)
        qtbot.addWidget(fresh)
        asked: list[str] = []
        answers: list[bool] = []
        fresh.files.offer_restore(path, ask=lambda text: asked.append(text) and False,
                                  ended_by="SIGTERM", answered=answers.append)
        qtbot.waitUntil(lambda: answers == [False], timeout=5000)
        assert asked[0].startswith("gradbox was ended by SIGTERM before this session was saved")
        assert "1 training step." in asked[0]
    finally:
        controller.shutdown()


def test_a_signal_with_nothing_unsaved_removes_the_autosave(qtbot, saving: MainWindow) -> None:
    assert saving.autosaver is not None
    persistence.save_session(Trainer(TrainingConfig()), saving.autosaver.path)
    saving.end_by_signal("SIGINT")
    assert not saving.autosaver.path.exists()
