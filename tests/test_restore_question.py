"""The crash copy's question at start (issue 32, nothing on screen hides the wrong thing):
after a SIGTERM, the "Reading the autosaved session…" progress appeared half a second
after the "Restore the last session?" question, over it, window-modal, and took its
clicks; Escape closed (and deleted) the progress, and Yes then raised "Internal C++
object (QProgressDialog) already deleted". (The progress steps aside while the answer is
handled since ffd0b77; checked here again at the keyboard.) Here the question is the
active window and answers its keys; a progress closed by the person is a cancel and no
deleted dialog is reached; the copy stays on disk until the person chose (Escape on the
question keeps it aside, as Cancel does)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QPushButton

from gradbox.files import sessions as persistence
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer
from gradbox.views import background

KEPT = TrainingConfig(hidden=(4,), n_samples=20)
SHOW_AFTER_MS = 150  # the progress's half second, shortened


@pytest.fixture
def start(open_window, tmp_path: Path, monkeypatch):  # type: ignore[no-untyped-def]
    """A window as the launcher makes one, and a crash copy beside it: (window, copy)."""
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", SHOW_AFTER_MS)
    copy = tmp_path / "data" / "autosave.gradbox"
    trainer = Trainer(KEPT)
    for _ in range(3):
        trainer.step()
    copy.parent.mkdir(parents=True)
    persistence.save_session(trainer, copy)
    win = open_window((1024, 700), settings=QSettings(
        str(tmp_path / "settings.ini"), QSettings.IniFormat), autosave_path=copy)
    return win, copy


def while_asked(win, act: Callable[[QMessageBox], None]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """Once the question is up (its own event loop runs), wait past the moment the
    progress dialog used to show over it, note what is on top, then `act(question)`."""
    seen: dict[str, object] = {}
    timer = QTimer()
    timer.setInterval(20)

    def poll() -> None:
        box = next((w for w in QApplication.topLevelWidgets()
                    if isinstance(w, QMessageBox) and w.isVisible()
                    and w.windowTitle() == "Restore the last session?"), None)
        if box is None:
            return
        if "up" not in seen:
            seen["up"] = True
            return QTimer.singleShot(SHOW_AFTER_MS * 3, poll)  # the progress's moment
        timer.stop()
        seen["modal"] = QApplication.activeModalWidget()
        seen["active"] = QApplication.activeWindow()
        seen["question"] = box
        seen["progress shown"] = [t.dialog.isVisible() for t in win.files.reading]
        act(box)
    timer.timeout.connect(poll)
    timer.start()
    seen["timer"] = timer  # kept until the test ends
    return seen


def focused_key(key: Qt.Key) -> Callable[[QMessageBox], None]:
    """The key pressed as a person presses it: to whatever has the keyboard focus."""
    def act(_box: QMessageBox) -> None:
        QTest.keyClick(QApplication.focusWidget() or QApplication.activeModalWidget(), key)
    return act


def offer(qtbot, win, act: Callable[[QMessageBox], None]):  # type: ignore[no-untyped-def]
    """Start as after a SIGTERM with the copy found; `act` on the question. (answers, seen)"""
    answers: list[bool] = []
    seen = while_asked(win, act)
    win.files.offer_restore(win.autosaver.path, ended_by="SIGTERM", answered=answers.append)
    qtbot.waitUntil(lambda: answers != [], timeout=15_000)
    qtbot.waitUntil(lambda: not win.files.reading, timeout=10_000)
    return answers, seen


def assert_question_on_top(seen: dict[str, object]) -> None:
    question = seen["question"]
    assert seen["progress shown"] == [False]  # nothing over the question
    assert seen["modal"] is question and seen["active"] is question


def test_no_by_key_answers_the_question_and_leaves_the_fresh_run(  # type: ignore[no-untyped-def]
        qtbot, start) -> None:
    win, copy = start
    before = copy.read_bytes()
    answers, seen = offer(qtbot, win, focused_key(Qt.Key_N))
    assert_question_on_top(seen)
    assert answers == [False]
    assert win.controller.snapshot.config.hidden == (8, 8)  # the fresh run stays
    assert copy.read_bytes() == before  # (until an autosave of the new run replaces it)
    assert win.autosaver.enabled and win.error_box is None


def test_yes_by_key_restores_the_copy(qtbot, start) -> None:  # type: ignore[no-untyped-def]
    win, _copy = start
    answers, seen = offer(qtbot, win, focused_key(Qt.Key_Y))
    assert_question_on_top(seen)
    assert answers == [True]
    qtbot.waitUntil(lambda: win.controller.snapshot.config.hidden == (4,)
                    and win.controller.snapshot.step == 3, timeout=10_000)
    assert win.error_box is None


def test_escape_on_the_question_keeps_the_copy_aside_and_says_where(  # type: ignore[no-untyped-def]
        qtbot, start) -> None:
    """Escape is not a No: a reflex must not let the next autosave write over the copy."""
    win, copy = start
    before = copy.read_bytes()
    answers, seen = offer(qtbot, win, focused_key(Qt.Key_Escape))
    assert_question_on_top(seen)
    assert answers == [False]
    aside = copy.with_name("autosave.not-restored.gradbox")
    assert not copy.exists() and aside.read_bytes() == before
    assert win.messages.text().startswith(
        f"The autosaved session was not restored; it is kept as {aside}")
    assert win.controller.snapshot.config.hidden == (8, 8) and win.error_box is None


def test_the_reading_cancelled_while_the_question_is_up_then_yes_is_not_an_error(  # type: ignore[no-untyped-def]
        qtbot, start) -> None:
    """The task ended under the question (the window closing cancels what is being
    read), then Yes: no exception, nothing restored, and the copy stays where it is, to be
    offered again next time. (Before, Yes handed the cancelled task on and asked its
    deleted dialog for its text.)"""
    win, copy = start
    before = copy.read_bytes()

    def cancel_then_yes(box: QMessageBox) -> None:
        win.files.cancel_reading()
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QTest.keyClick(box, Qt.Key_Y)
    answers, _seen = offer(qtbot, win, cancel_then_yes)
    assert answers == [False] and win.error_box is None
    assert copy.read_bytes() == before
    assert win.controller.snapshot.config.hidden == (8, 8)


def test_escape_on_the_progress_while_the_copy_is_built_brings_the_fresh_run_back(  # type: ignore[no-untyped-def]
        qtbot, start, monkeypatch) -> None:
    """After Yes the progress is back ("building its network") and Escape there is its
    Cancel: the run before comes back, the copy is kept aside and the window says where,
    nothing raises."""
    win, copy = start
    send = win.controller.open_file
    said: list[str] = []

    def escape_then_send(*args, **kwargs):  # type: ignore[no-untyped-def]
        task = win.files.reading[0]
        # as a person sees it: up, and the window with the keyboard
        qtbot.waitUntil(lambda: QApplication.activeWindow() is task.dialog, timeout=5000)
        said.append(task.dialog.labelText())
        QTest.keyClick(QApplication.focusWidget() or task.dialog, Qt.Key_Escape)
        QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        send(*args, **kwargs)  # the file is opened all the same, and then undone
    monkeypatch.setattr(win.controller, "open_file", escape_then_send)
    answers, _seen = offer(qtbot, win, focused_key(Qt.Key_Y))
    assert said == ["Reading the autosaved session… building its network"]
    assert answers == [False] and win.error_box is None
    qtbot.waitUntil(lambda: win.controller.snapshot.config.hidden == (8, 8), timeout=10_000)
    aside = copy.with_name("autosave.not-restored.gradbox")
    assert aside.exists() and not copy.exists()
    assert win.messages.text().startswith(
        f"The autosaved session was not restored; it is kept as {aside}")


def test_a_progress_closed_by_the_person_is_not_deleted_under_its_task(  # type: ignore[no-untyped-def]
        qtbot, open_window, monkeypatch) -> None:
    """Any task: its dialog closed with Escape is a cancel, and stays a live object until
    the task ends (whoever holds the task may still ask it its text)."""
    import threading

    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 0)
    win = open_window((1024, 700))
    go = threading.Event()
    done: list[object] = []
    task = background.run_in_background(win, "Reading a file…", lambda _p: go.wait(10),
                                        lambda result, _error: done.append(result))
    qtbot.waitUntil(task.dialog.isVisible, timeout=5000)
    cancel = next(b for b in task.dialog.findChildren(QPushButton) if b.text() == "Cancel")
    assert cancel.isVisible()
    QTest.keyClick(task.dialog, Qt.Key_Escape)
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert task.cancel_pressed and task.cancelled and not task.dialog.isVisible()
    assert task.dialog.labelText() == "Reading a file…"  # (before: already deleted)
    with qtbot.waitSignal(task.finished, timeout=5000):
        go.set()
    assert done == []  # a cancelled task's result is dropped
