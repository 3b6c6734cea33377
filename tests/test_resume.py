"""Pick up where you left off: a normal quit keeps the session and the next start reopens
it -- the run, the timeline's place, the speed, the stop condition, the tab and teacher
mode -- saying so in one line; File → Open brings the run controls back too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from gradbox.files import sessions as persistence
from gradbox.files.session_controls import SessionControls, parse_controls
from gradbox.files.session_json import SessionError
from gradbox.port.controller import SessionController
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from gradbox.views.window.files.autosave import set_aside
from gradbox.views.window.files.resume import (
    START_FRESH_KEY,
    last_session_path,
    starts_fresh,
)
from gradbox.views.window.main_window import MainWindow


def settings_at(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


def open_window(qtbot, tmp_path: Path, trainer: Trainer, controllers: list):  # type: ignore[no-untyped-def]
    """A window as the launcher makes one: with settings and a data directory."""
    controller = SessionController(trainer)
    controllers.append(controller)
    win = MainWindow(controller, settings_at(tmp_path), autosave_path=tmp_path / "data" /
                     "autosave.gradbox")
    qtbot.addWidget(win)
    win.resize(1024, 700)
    win.show()
    return win


def start(qtbot, tmp_path: Path, controllers: list):  # type: ignore[no-untyped-def]
    """What gradbox.app.main does at a start with no file named: the window opens on a
    fresh run, then the kept session is read off the UI thread and arrives. Returns the
    window and what the error box says ('' if nothing)."""
    win = open_window(qtbot, tmp_path, Trainer(TrainingConfig()), controllers)
    kept = not starts_fresh(settings_at(tmp_path)) and last_session_path(
        tmp_path / "data" / "autosave.gradbox").is_file()
    win.files.open_at_start(None, None)
    qtbot.waitUntil(lambda: not win.files.reading, timeout=10_000)
    if kept:
        qtbot.waitUntil(lambda: win.messages.text().startswith("Picked up")
                        or win.error_box is not None, timeout=10_000)
    return win, win.error_box.text() if win.error_box is not None else ""


@pytest.fixture
def controllers():  # type: ignore[no-untyped-def]
    made: list[SessionController] = []
    yield made
    for controller in made:
        controller.shutdown()


def train(qtbot, win: MainWindow, steps: int) -> None:  # type: ignore[no-untyped-def]
    for _ in range(steps):
        with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
            win.controller.step()


def test_quit_and_start_again_restores_every_item(qtbot, tmp_path: Path, controllers: list,
                                                  settle) -> None:  # type: ignore[no-untyped-def]
    win, _ = start(qtbot, tmp_path, controllers)
    train(qtbot, win, 12)
    end_params = win.controller.snapshot.params.copy()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.rewind(7)
    at_7 = win.controller.snapshot
    run = win.toolbar.run_controls
    run.speed.setCurrentIndex(run.speed.findText("30 steps/s"))
    run.stop_kind.setCurrentIndex(run.stop_kind.findData("loss"))
    run.stop_value.setValue(0.125)
    win.workspaces.switch("graph")
    win.lessons.set_teacher_mode(True)
    # Presenting brings the main view it needs to the front, in a queued call: the tab
    # kept is the one on show at the quit (tests below keep one without teacher mode).
    settle()
    shown = win.tabs.tabText(win.tabs.currentIndex())
    loop_figure = win.training_loop.figure("update")
    assert "|Δw| = –" not in loop_figure
    assert win.close()
    assert last_session_path(tmp_path / "data" / "autosave.gradbox").is_file()
    assert not (tmp_path / "data" / "autosave.gradbox").exists(), "a clean quit"

    again, _ = start(qtbot, tmp_path, controllers)
    qtbot.waitUntil(lambda: again.controller.snapshot.step == 7, timeout=5000)
    s = again.controller.snapshot
    np.testing.assert_array_equal(s.params, at_7.params)
    np.testing.assert_array_equal(s.grads, at_7.grads)
    assert s.history == at_7.history
    assert again.toolbar.timeline.maximum() == 12, "the later steps are still ahead"
    run = again.toolbar.run_controls
    assert run.speed.currentText() == "30 steps/s" and again.controller.speed == 30
    assert run.kind() == "loss" and run.stop_value.value() == 0.125
    assert again.controller.goal.loss == 0.125
    assert again.workspaces.current is not None and again.workspaces.current.key == "graph"
    settle()
    assert again.tabs.tabText(again.tabs.currentIndex()) == shown
    assert again.lessons.teacher.isChecked()
    assert again.training_loop.figure("update") == loop_figure
    message = again.messages.text()
    assert message.startswith("Picked up where you left off: untitled, step 7 of 12")
    assert "30 steps/s" in message and "teacher mode" in message and "\n" not in message
    # and forward again is the same run, bit for bit
    with qtbot.waitSignal(again.controller.snapshot_changed, timeout=5000):
        again.controller.rewind(12)
    np.testing.assert_array_equal(again.controller.snapshot.params, end_params)


def test_file_new_starts_fresh_and_the_setting_starts_fresh_always(
        qtbot, tmp_path: Path, controllers: list) -> None:
    win, _ = start(qtbot, tmp_path, controllers)
    train(qtbot, win, 3)
    assert win.close()
    again, _ = start(qtbot, tmp_path, controllers)
    qtbot.waitUntil(lambda: again.controller.snapshot.step == 3, timeout=5000)
    with qtbot.waitSignal(again.controller.snapshot_changed, timeout=5000):
        again.files.new_session()
    assert again.controller.snapshot.step == 0
    reopen = next(a for a in again.menus["&File"].actions()
                  if a.text() == "Reopen the last session at start")
    assert reopen.isChecked()
    reopen.setChecked(False)
    assert settings_at(tmp_path).value(START_FRESH_KEY) in (True, "true")
    train(qtbot, again, 2)
    again.ask_unsaved = lambda: "discard"  # type: ignore[method-assign]
    assert again.close()
    third, _ = start(qtbot, tmp_path, controllers)
    assert third.controller.snapshot.step == 0
    assert not third.messages.text().startswith("Picked up")


def test_a_kept_session_that_cannot_be_read_is_set_aside(qtbot, tmp_path: Path,
                                                        controllers: list) -> None:
    path = last_session_path(tmp_path / "data" / "autosave.gradbox")
    path.parent.mkdir(parents=True)
    path.write_text("{ not a session")
    win, why = start(qtbot, tmp_path, controllers)
    assert "could not be read" in why and win.controller.snapshot.step == 0
    assert not path.exists() and any("unreadable" in p.name for p in path.parent.iterdir())


def test_each_unreadable_copy_set_aside_keeps_a_name_of_its_own(tmp_path: Path) -> None:
    """Issue 31 item 12: a second unreadable kept session set aside overwrote the first
    copy (one fixed name)."""
    path = tmp_path / "last-session.gradbox"
    kept = []
    for n in range(3):
        path.write_text(f"damaged copy {n}")
        kept.append(set_aside(path))
    assert not path.exists()
    assert [p.name for p in kept] == ["last-session.unreadable.gradbox",  # type: ignore[union-attr]
                                      "last-session.unreadable-2.gradbox",
                                      "last-session.unreadable-3.gradbox"]
    assert [p.read_text() for p in kept] == [f"damaged copy {n}" for n in range(3)]  # type: ignore[union-attr]


def test_file_open_brings_back_the_run_controls_and_the_step_size(
        qtbot, tmp_path: Path, controllers: list) -> None:
    win, _ = start(qtbot, tmp_path, controllers)
    train(qtbot, win, 5)
    run = win.toolbar.run_controls
    run.speed.setCurrentIndex(run.speed.findText("max speed"))
    run.stop_kind.setCurrentIndex(run.stop_kind.findData("steps"))
    run.stop_value.setValue(250)
    win.tabs.setCurrentIndex(win.tabs.indexOf(win.layer_stats))
    figure = win.training_loop.figure("update")
    with qtbot.waitSignal(win.controller.message, timeout=5000):
        win.files._save_to(tmp_path / "mine.gradbox")
    run.speed.setCurrentIndex(0)
    run.stop_kind.setCurrentIndex(0)
    win.tabs.setCurrentIndex(0)
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.files.new_session()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.files.open_session(tmp_path / "mine.gradbox")
    assert win.controller.snapshot.step == 5
    assert run.speed.currentText() == "max speed" and win.controller.speed is None
    assert run.kind() == "steps" and run.stop_value.value() == 250
    assert win.tabs.currentWidget() is win.layer_stats
    assert win.training_loop.figure("update") == figure
    assert figure.startswith("step size |Δw| = ") and "–" not in figure
    qtbot.waitUntil(lambda: not win.isWindowModified(), timeout=5000)


def test_controls_are_read_strictly() -> None:
    good = SessionControls(speed=5.0, stop="accuracy", stop_value=90.0, position=3,
                           tab="Layers", teacher=True, workspace="graph")
    assert parse_controls(good.to_json(), steps=10) == good
    # written before workspaces existed: opens, as the window's own arrangement
    older = {k: v for k, v in good.to_json().items() if k != "workspace"}
    assert parse_controls(older, steps=10).workspace == ""
    for bad, field in (({**good.to_json(), "position": 11}, "controls.position"),
                       ({**good.to_json(), "stop": "soon"}, "controls.stop"),
                       ({**good.to_json(), "speed": "fast"}, "controls.speed"),
                       ({**good.to_json(), "extra": 1}, "controls.extra")):
        with pytest.raises(SessionError, match=field.replace(".", r"\.")):
            parse_controls(bad, steps=10)


def test_a_file_keeps_the_whole_run_and_where_the_timeline_stood(tmp_path: Path) -> None:
    trainer = Trainer(TrainingConfig())
    for _ in range(4):
        trainer.step()
    controls = SessionControls(speed=None, stop="steps", stop_value=9.0, position=2)
    persistence.save_session(trainer, tmp_path / "a.gradbox", controls)
    loaded, back = persistence.load_session_with_controls(tmp_path / "a.gradbox")
    assert back == controls and loaded.step_count == 4
    persistence.save_session(trainer, tmp_path / "b.gradbox")
    assert persistence.load_session_with_controls(tmp_path / "b.gradbox")[1] is None


def test_reopening_a_kept_session_says_so_in_one_message(qtbot, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                          controllers: list, settle) -> None:
    """The reopening is one line: 'Reopened the session kept at the last quit: the previous
    setup … comes back with Edit → Undo' came too, before or after 'Picked up where you
    left off' (issue 32, 'Also')."""
    win, _ = start(qtbot, tmp_path, controllers)
    train(qtbot, win, 3)
    assert win.close()
    again = open_window(qtbot, tmp_path, Trainer(TrainingConfig()), controllers)
    said: list[str] = []
    again.messages.shown.connect(said.append)
    again.files.open_at_start(None, None)
    qtbot.waitUntil(lambda: again.controller.snapshot.step == 3, timeout=10_000)
    qtbot.waitUntil(lambda: not again.files.reading, timeout=10_000)
    settle()
    assert len(said) == 1, said
    assert said[0].startswith("Picked up where you left off: untitled, 3 steps")
    assert again.messages.text() == said[0]
