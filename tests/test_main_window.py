"""Drive the real main window offscreen, as a user would."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings, Qt

from gradbox.port.controller import SessionController
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.panels.designer import DesignerPanel
from gradbox.views.window.files.resume import START_FRESH_KEY
from gradbox.views.window.main_window import MainWindow
from gradbox.views.window.toolbar import TrainingToolbar


def step_once(qtbot, toolbar: TrainingToolbar) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(toolbar.controller.snapshot_changed, timeout=5000):
        toolbar.step_action.trigger()


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_step_advances_counter_and_loss_curve(qtbot, toolbar: TrainingToolbar) -> None:
    assert toolbar.counter.text().startswith("step 0")
    step_once(qtbot, toolbar)
    step_once(qtbot, toolbar)
    assert toolbar.counter.text().startswith("step 2")
    assert toolbar.controller.snapshot.step == 2
    assert toolbar.timeline.maximum() == 2


def test_space_key_steps(qtbot, window: MainWindow) -> None:
    window.activateWindow()
    window.tabs.setFocus()
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=5000):
        qtbot.keyClick(window.tabs, Qt.Key_Space)
    assert window.controller.snapshot.step == 1


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_substep_walks_the_four_phases(qtbot, toolbar: TrainingToolbar) -> None:
    seen = [toolbar.phase_label.text()]
    for _ in range(4):
        with qtbot.waitSignal(toolbar.controller.snapshot_changed, timeout=5000):
            toolbar.substep_action.trigger()
        seen.append(toolbar.phase_label.text())
    # The indicator names the phase just run and the next one.
    nexts = [re.search(r"next: \d/4 (\w+)", text).group(1) for text in seen]
    assert nexts == ["forward", "zero_grad", "backward", "update", "forward"]
    dones = [m.group(1) if (m := re.search(r"done: \d/4 (\w+)", text)) else "" for text in seen]
    assert dones == ["", "forward", "zero_grad", "backward", "update"]
    assert toolbar.controller.snapshot.step == 1


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_run_then_pause_stops(qtbot, toolbar: TrainingToolbar) -> None:
    toolbar.run_action.trigger()
    assert toolbar.run_action.text() == "Pause"
    qtbot.waitUntil(lambda: toolbar.controller.snapshot.step >= 5, timeout=10000)
    toolbar.run_action.trigger()
    qtbot.waitUntil(lambda: not toolbar.controller.running, timeout=5000)
    stopped_at = toolbar.controller.snapshot.step
    assert toolbar.run_action.text() == "Run"
    # Nothing more arrives once paused: one more step lands exactly one later.
    step_once(qtbot, toolbar)
    assert toolbar.controller.snapshot.step == stopped_at + 1


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_reset_restores_initial_weights(qtbot, toolbar: TrainingToolbar) -> None:
    initial = toolbar.controller.snapshot.params.copy()
    for _ in range(3):
        step_once(qtbot, toolbar)
    assert not np.array_equal(toolbar.controller.snapshot.params, initial)
    with qtbot.waitSignal(toolbar.controller.snapshot_changed, timeout=5000):
        toolbar.reset_action.trigger()
    assert toolbar.controller.snapshot.step == 0
    np.testing.assert_array_equal(toolbar.controller.snapshot.params, initial)


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_timeline_rewinds_and_replays_exactly(qtbot, toolbar: TrainingToolbar) -> None:
    for _ in range(4):
        step_once(qtbot, toolbar)
    after_4 = toolbar.controller.snapshot.params.copy()
    toolbar.timeline.setSliderPosition(2)
    with qtbot.waitSignal(toolbar.controller.snapshot_changed, timeout=5000):
        toolbar.timeline.setValue(2)
        toolbar._on_timeline_released()
    assert toolbar.controller.snapshot.step == 2
    assert toolbar.timeline.maximum() == 4, "the later steps stay on the timeline"
    step_once(qtbot, toolbar)  # a new step from step 2 replaces them (undoably)
    step_once(qtbot, toolbar)
    np.testing.assert_array_equal(toolbar.controller.snapshot.params, after_4)


def test_huge_learning_rate_pauses_with_a_message(qtbot, window: MainWindow) -> None:
    window.designer.lr.setCurrentText("1000000")
    window.designer.apply()
    qtbot.waitUntil(lambda: window.controller.snapshot.lr == 1e6, timeout=5000)
    window.toolbar.run_action.trigger()
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=10000)
    qtbot.waitUntil(lambda: not window.controller.running, timeout=5000)
    # Paused by the divergence guard (loss 1e8) before it became inf: the cause is named.
    assert "loss rose to" in window.banner.text()
    assert "is probably too large" in window.banner.text()
    snapshot = window.controller.snapshot
    assert np.all(np.isfinite(snapshot.params))
    assert snapshot.step >= 1  # rewind stays available
    assert window.toolbar.timeline.isEnabled()


def test_corrupt_session_shows_error_and_keeps_session(qtbot, window: MainWindow,
                                                       tmp_path: Path) -> None:
    step_once(qtbot, window.toolbar)
    before = window.controller.snapshot
    bad = tmp_path / "broken.gradbox.json"
    bad.write_text('{"format": "gradbox-session", "version": 1, "config": ', encoding="utf-8")
    window.files.open_session(bad)  # read off the UI thread: the message comes after
    qtbot.waitUntil(lambda: window.error_box is not None and window.error_box.isVisible())
    assert "unchanged" in window.error_box.text()
    assert window.controller.snapshot is before
    step_once(qtbot, window.toolbar)
    assert window.controller.snapshot.step == 2


def test_save_and_open_session(qtbot, window: MainWindow, tmp_path: Path) -> None:
    for _ in range(3):
        step_once(qtbot, window.toolbar)
    path = tmp_path / "run.gradbox.json"
    with qtbot.waitSignal(window.controller.message, timeout=5000):
        window.files._save_to(path)
    assert path.exists()
    saved = window.controller.snapshot
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=5000):
        window.toolbar.reset_action.trigger()
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=5000):
        window.files.open_session(path)
    np.testing.assert_array_equal(window.controller.snapshot.params, saved.params)
    assert window.controller.snapshot.step == 3
    assert "run.gradbox.json" in window.windowTitle()


@pytest.fixture
def designer(controller, show_widget):  # type: ignore[no-untyped-def]
    """The Designer alone on `controller` (the in-process port in an `in_process` test)."""
    return show_widget(DesignerPanel(controller), 420, 760)


@pytest.mark.in_process  # the Designer alone on the in-process port
def test_designer_change_rebuilds_and_says_so(qtbot, designer: DesignerPanel) -> None:
    with qtbot.waitSignal(designer.controller.message, timeout=5000) as message:
        designer._on_add_layer()
        designer.apply()
    assert "Network changed" in message.args[0]
    qtbot.waitUntil(lambda: designer.controller.snapshot.layer_sizes == (2, 8, 8, 8, 1),
                    timeout=5000)


@pytest.mark.in_process  # the Designer alone on the in-process port
def test_invalid_designer_value_is_not_applied(qtbot, designer: DesignerPanel) -> None:
    designer.lr.setCurrentText("fast")
    assert "learning rate must be a finite number" in designer.status.text()
    assert designer.controller.snapshot.config.lr == TrainingConfig().lr


def test_settings_remember_config(qtbot, window: MainWindow, settings: QSettings) -> None:
    from gradbox.views.window.main_window import load_saved_config

    window.designer.kind.setCurrentText("spiral")
    window.designer.apply()
    qtbot.waitUntil(lambda: window.controller.snapshot.config.dataset == "spiral", timeout=5000)
    window.save_settings()
    restored = load_saved_config(settings)
    assert restored is not None and restored.dataset == "spiral"


def test_every_control_has_tooltip_and_accessible_name(window: MainWindow) -> None:
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QSlider

    controls = [w for kind in (QAbstractButton, QAbstractSpinBox, QComboBox, QSlider)
                for w in window.findChildren(kind)
                if w.isVisibleTo(window) and w.parent() is not None
                and type(w).__name__ not in ("QToolButton",)
                and not w.objectName().startswith("qt_")]
    missing = [f"{type(w).__name__} {w.text() if hasattr(w, 'text') else ''}"
               for w in controls if not w.toolTip() or not w.accessibleName()]
    assert not missing, missing


def test_every_lesson_sets_up_the_real_window(qtbot, window: MainWindow) -> None:
    from gradbox.teaching import lessons

    for lesson in lessons.LESSONS:
        window.lessons.apply_key(lesson.key)
        if lesson.setup.view == "playground":
            assert window.tabs.currentWidget().objectName() == lessons.PLAYGROUND_TAB
            assert window.playground.expression.text() == lesson.setup.expression
        else:
            tab = lesson.setup.main_tab or lessons.BOUNDARY
            assert window.tabs.currentWidget().objectName() == tab
            expected = lesson.setup.config
            qtbot.waitUntil(lambda e=expected: window.controller.snapshot.config == e,
                            timeout=5000)
            qtbot.waitUntil(lambda s=lesson.setup: window.controller.snapshot.forget_zero_grad
                            == s.forget_zero_grad, timeout=5000)


def test_teacher_mode_hides_what_a_lesson_does_not_need(qtbot, window: MainWindow) -> None:
    window.lessons.apply_key("accumulate")
    font_before = window.font().pointSizeF()
    window.lessons.set_teacher_mode(True)
    assert not window.docks["Designer"].isVisible()
    assert window.font().pointSizeF() > font_before
    assert window.docks["Lessons"].isVisible()
    window.lessons.set_teacher_mode(False)
    assert window.font().pointSizeF() == font_before
    window.tabs.setCurrentWidget(window.boundary)  # training panels come back with training
    assert window.docks["Designer"].isVisible()


def test_playground_tab_puts_the_training_panels_away(qtbot, window: MainWindow) -> None:
    window.docks["Loss curve"].hide()  # the user's own choice must survive the round trip
    window.tabs.setCurrentWidget(window.playground_page())
    assert not window.docks["Designer"].isVisible()
    assert not window.docks["Parameters && gradients"].isVisible()
    window.tabs.setCurrentWidget(window.boundary)
    assert window.docks["Designer"].isVisible()
    assert window.docks["Parameters && gradients"].isVisible()
    assert not window.docks["Loss curve"].isVisible()


def test_a_training_lesson_starts_from_step_zero(qtbot, window: MainWindow) -> None:
    for _ in range(3):
        step_once(qtbot, window.toolbar)
    window.toolbar.forget_zero_grad.setChecked(True)
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=5000):
        window.lessons.apply_key("moons")
    qtbot.waitUntil(lambda: window.controller.snapshot.step == 0, timeout=5000)
    assert not window.controller.snapshot.forget_zero_grad


@pytest.fixture
def saving_window(qtbot, settings: QSettings, tmp_path: Path):  # type: ignore[no-untyped-def]
    controller = SessionController(Trainer(TrainingConfig()))
    try:
        # These tests are about quitting with "always start fresh" on: then Quit asks
        # about unsaved changes (tests/test_resume.py: quitting otherwise keeps them).
        settings.setValue(START_FRESH_KEY, True)
        win = MainWindow(controller, settings, autosave_path=tmp_path / "auto" / "a.json")
        assert win.autosaver is not None
        win.autosaver._timer.setInterval(50)
        # Closing at teardown must not wait on a question nobody will answer.
        win.ask_unsaved = lambda: "discard"  # type: ignore[method-assign]
        qtbot.addWidget(win)
        win.show()
        yield win
    finally:
        controller.shutdown()


def test_title_marks_unsaved_changes_and_save_clears_it(qtbot, saving_window: MainWindow,
                                                        tmp_path: Path) -> None:
    win = saving_window
    assert not win.isWindowModified()
    step_once(qtbot, win.toolbar)
    assert win.isWindowModified()
    with qtbot.waitSignal(win.controller.message, timeout=5000):
        win.files._save_to(tmp_path / "mine.gradbox.json")
    qtbot.waitUntil(lambda: not win.isWindowModified(), timeout=5000)
    assert win.windowTitle().startswith("mine.gradbox.json")
    assert str((tmp_path / "mine.gradbox.json").resolve()) in win.document.recent()


def test_autosave_restores_after_a_crash(qtbot, saving_window: MainWindow,
                                         settings: QSettings, tmp_path: Path) -> None:
    from gradbox.views.window.files.autosave import crash_copy, signature

    win = saving_window
    for _ in range(3):
        step_once(qtbot, win.toolbar)
    path = win.autosaver.path
    # An autosave may have fired between steps: wait for the one that holds step 3.
    qtbot.waitUntil(lambda: win.autosaver._autosaved_signature
                    == signature(win.controller.snapshot), timeout=10000)
    assert crash_copy(path) is not None
    saved_params = win.controller.snapshot.params.copy()
    # A crash: the window never closes cleanly, so the copy stays. A new launch offers it.
    controller = SessionController(Trainer(TrainingConfig()))
    try:
        fresh = MainWindow(controller, settings)
        qtbot.addWidget(fresh)
        asked: list[str] = []
        answers: list[bool] = []
        with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
            fresh.files.offer_restore(path, ask=lambda text: asked.append(text) or True,
                                      answered=answers.append)
            qtbot.waitUntil(lambda: answers == [True], timeout=5000)
        assert "did not close normally" in asked[0]
        assert "moons data (100 points), network 2-8-8-1 (tanh), 3 training steps" in asked[0]
        assert "Saved automatically at " in asked[0]
        assert controller.snapshot.step == 3
        np.testing.assert_array_equal(controller.snapshot.params, saved_params)
    finally:
        controller.shutdown()


def test_closing_with_unsaved_changes_asks(qtbot, saving_window: MainWindow) -> None:
    win = saving_window
    step_once(qtbot, win.toolbar)
    asked: list[bool] = []
    win.ask_unsaved = lambda: asked.append(True) or "cancel"  # type: ignore[method-assign]
    assert not win.close()
    assert asked and win.isVisible()
    win.ask_unsaved = lambda: "discard"  # type: ignore[method-assign]
    path = win.autosaver.path
    assert win.close()
    assert not path.exists()  # a clean exit leaves no crash copy


def test_editing_a_weight_changes_model_and_boundary(qtbot, window: MainWindow) -> None:
    step_once(qtbot, window.toolbar)
    name = window.controller.snapshot.param_names[1]
    image_before = window.boundary.image.image.copy()
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=5000):
        window.controller.send(Session.set_parameter, name, 4.0)
    snapshot = window.controller.snapshot
    assert snapshot.params[1] == 4.0
    assert snapshot.edits[-1].name == name
    assert not np.array_equal(window.boundary.image.image, image_before)


def test_text_exports_write_files_that_parse_back(qtbot, window: MainWindow,
                                                  tmp_path: Path) -> None:
    import ast
    import csv
    import io

    from gradbox.files import exports

    for _ in range(3):
        step_once(qtbot, window.toolbar)
    for kind, name in (("history", "h.csv"), ("parameters", "p.csv"), ("model", "m.json")):
        with qtbot.waitSignal(window.controller.message, timeout=5000):
            window.files.export_text(kind, tmp_path / name)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "h.csv").read_text())))
    assert [int(r["step"]) for r in rows] == [1, 2, 3]
    params = list(csv.DictReader(io.StringIO((tmp_path / "p.csv").read_text())))
    assert len(params) == len(window.controller.snapshot.param_names)
    model = exports.load_model_json((tmp_path / "m.json").read_text())
    np.testing.assert_array_equal(model.predict(np.zeros((1, 2))),
                                  window.controller.snapshot.predict(np.zeros((1, 2))))
    with qtbot.waitSignal(window.controller.message, timeout=10000):
        window.files.export_text("pytorch", tmp_path / "run.py")
    ast.parse((tmp_path / "run.py").read_text())


def test_export_pytorch_command_line(tmp_path: Path) -> None:
    import ast

    from gradbox.app import main
    from gradbox.files import sessions as persistence

    trainer = Trainer(TrainingConfig(n_samples=30, hidden=(4,)))
    trainer.run_steps(5)
    persistence.save_session(trainer, tmp_path / "s.gradbox.json")
    assert main(["--export-pytorch", str(tmp_path / "s.gradbox.json"),
                 str(tmp_path / "out.py")]) == 0
    ast.parse((tmp_path / "out.py").read_text())
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert main(["--export-pytorch", str(tmp_path / "bad.json"), str(tmp_path / "x.py")]) == 2
    assert not (tmp_path / "x.py").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_an_autosave_that_cannot_be_written_is_said_once_in_the_window(
        qtbot, saving_window: MainWindow) -> None:
    win = saving_window
    assert win.autosaver is not None
    path = win.autosaver.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    path.chmod(0o444)  # refused by name, even for root
    try:
        for attempt in range(1, 4):
            step_once(qtbot, win.toolbar)
            qtbot.waitUntil(lambda n=attempt: win.autosaver.failures >= n, timeout=10000)
        boxes = [b for b in win.errors.boxes if b.windowTitle() == "Autosave failed"]
        assert len(boxes) == 1 and str(path) in boxes[0].text()
        assert "read-only" in boxes[0].text()
    finally:
        path.chmod(0o644)


def test_regression_points_go_out_and_come_back_in_as_csv(qtbot, window: MainWindow,
                                                         tmp_path: Path) -> None:
    """Exported from a sine session, imported into moons: the data's task comes along."""
    controller = window.controller
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.apply_config(TrainingConfig(dataset="sine", hidden=(4,)))
    qtbot.waitUntil(lambda: controller.snapshot.targets is not None, timeout=5000)
    targets = controller.snapshot.targets
    window.files.export_csv(tmp_path / "sine.csv")
    assert (tmp_path / "sine.csv").read_text().startswith("x,y,target")
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.apply_config(TrainingConfig())
    qtbot.waitUntil(lambda: controller.snapshot.targets is None, timeout=5000)
    window.files.import_csv(tmp_path / "sine.csv")
    qtbot.waitUntil(lambda: controller.snapshot.config.dataset == "sine", timeout=5000)
    np.testing.assert_array_equal(controller.snapshot.targets, targets)


def test_closing_with_save_writes_from_the_writer_thread_once_the_window_is_gone(  # type: ignore[no-untyped-def]
        qtbot, saving_window: MainWindow, tmp_path: Path, monkeypatch) -> None:
    import threading

    from gradbox.files import sessions as persistence

    win = saving_window
    step_once(qtbot, win.toolbar)
    win.document.path = tmp_path / "run.gradbox"
    win.ask_unsaved = lambda: "save"  # type: ignore[method-assign]
    writes: list[tuple[str, bool]] = []  # (thread, window visible) of each write
    original = persistence.save_session

    def spy(state, path, controls=None):  # type: ignore[no-untyped-def]
        writes.append((threading.current_thread().name, win.isVisible()))
        return original(state, path, controls)
    monkeypatch.setattr(persistence, "save_session", spy)
    assert win.close()
    assert writes and all(thread != threading.main_thread().name and not visible
                          for thread, visible in writes)
    assert persistence.load_session(win.document.path).step_count == 1
