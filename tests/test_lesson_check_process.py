"""A lesson's claims are checked where the training process's caps apply, with progress
and Cancel (issue 31, item 6): a claim with at_step = 1e9 trained in the window's own
process forever (+32 MB a minute, stalls to 0.5 s, no cap, no Cancel), and 40,000
points on a 48x48 network grew the window's process by 1.66 GB."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradbox.runner import lesson_check
from gradbox.runner.worker import WorkerCancelledError
from gradbox.teaching.claim_checks import ChecksCancelledError, false_claims
from gradbox.teaching.lesson_files import LessonFileError, dump_lesson, load_lesson
from gradbox.teaching.lessons import lesson
from gradbox.views.window.main_window import MainWindow

GOOD = dump_lesson(lesson("moons"))
FAR = GOOD.replace("at_step = 100\n", "at_step = 1000000\n", 1)  # a million steps: hours


def test_a_claim_past_the_longest_run_is_refused_at_its_line() -> None:
    text = GOOD.replace("at_step = 100\n", "at_step = 1000000000\n", 1)
    with pytest.raises(LessonFileError, match="from 1 to 1,000,000") as caught:
        load_lesson(text, "far.toml")
    assert text.splitlines()[caught.value.line - 1] == "at_step = 1000000000"  # type: ignore[operator]


def test_a_setup_that_would_not_fit_is_refused_as_the_designer_refuses_it() -> None:
    heavy = load_lesson(GOOD.replace("n_samples = 100", "n_samples = 100000", 1)
                        .replace("hidden = [8, 8]", "hidden = [1000, 1000]", 1))
    field, why = lesson_check.too_big(heavy)  # type: ignore[misc]
    assert field == "setup.config" and "would need about" in why
    assert lesson_check.too_big(lesson("moons")) is None


def test_the_check_runs_in_a_capped_child_that_reports_and_cancels() -> None:
    assert lesson_check.check_in_child(lesson("moons")) == false_claims(lesson("moons")) == []
    told: list[tuple[int, int]] = []
    with pytest.raises((WorkerCancelledError, ChecksCancelledError)):
        lesson_check.check_in_child(load_lesson(FAR), lambda *a: told.append(a),
                                    lambda: len(told) >= 2)
    assert told[0][1] >= 1_000_000 and told[-1][0] > 0


def check_far(qtbot, window: MainWindow, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Open the FAR lesson (a million steps to check) until its check's progress is on
    screen, showing a report: (the progress dialog, the `checked` calls)."""
    path = tmp_path / "far.toml"
    path.write_text(FAR, encoding="utf-8")
    checked: list[list[str]] = []
    exports = window.class_exports
    exports.open_lesson(path, checked=checked.append)
    qtbot.waitUntil(lambda: exports.claims_progress is not None
                    and exports.claims_progress.value() > 0, timeout=60000)
    progress = exports.claims_progress
    assert progress is not None
    qtbot.waitUntil(progress.isVisible, timeout=10000)
    return progress, checked


def test_the_window_shows_progress_and_cancel_and_never_trains_the_claims_itself(
        qtbot, window: MainWindow, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QPushButton

    from gradbox.teaching import claim_checks

    def not_here(*_: object, **__: object) -> None:
        raise AssertionError("the claims were trained in the window's process")
    # The check's own process imports its own copy: only this process's is replaced.
    monkeypatch.setattr(claim_checks, "run_claims", not_here)
    progress, checked = check_far(qtbot, window, tmp_path)
    assert "far.toml" in progress.labelText()
    assert progress.maximum() >= 1_000_000 and "of 1,000,0" in progress.labelText()
    cancel = next(b for b in progress.findChildren(QPushButton) if b.text() == "Cancel")
    cancel.click()
    qtbot.waitUntil(lambda: bool(checked), timeout=20000)
    assert checked == [["cancelled"]]
    assert "checking its claims was cancelled" in window.messages.text()
    assert not progress.isVisible()


def test_a_report_after_escape_does_not_bring_the_closed_progress_back(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Escape on the claims' progress is its Cancel; a report the check sent before it
    (queued, arriving after) showed the dialog the person had just closed again, until
    the check's process had ended."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    progress, checked = check_far(qtbot, window, tmp_path)
    (job,) = window.class_exports.jobs
    QTest.keyClick(progress, Qt.Key_Escape)
    assert not progress.isVisible()
    job.progress.emit(5, 1_000_000)  # as one sent just before the Escape arrives
    assert not progress.isVisible()
    qtbot.waitUntil(lambda: bool(checked), timeout=20000)
    assert checked == [["cancelled"]] and not progress.isVisible()
    assert "checking its claims was cancelled" in window.messages.text()
