"""Two races of issue 23, driven in one event pass: Run pressed while the last run is
"Pausing…", and Undo pressed while a Designer edit is waiting to apply."""

from __future__ import annotations

from gradbox.training.goals import RunGoal


def _settled(qtbot, controller) -> int:  # type: ignore[no-untyped-def]
    """Wait until nothing runs; the step it stopped at."""
    qtbot.waitUntil(lambda: not controller.running, timeout=10_000)
    return controller.snapshot.step


def test_run_pressed_while_pausing_goes_on_and_then_pauses_cleanly(  # type: ignore[no-untyped-def]
        qtbot, controller, after_snapshot) -> None:
    controller.set_speed(None)
    controller.run(RunGoal())
    qtbot.waitUntil(lambda: controller.snapshot.step >= 3, timeout=10_000)
    controller.pause()
    assert controller.pausing and controller.running  # the button says "Pausing…"
    controller.run(RunGoal())  # ... and is pressed: in the same event pass
    start = controller.snapshot.step
    qtbot.waitUntil(lambda: controller.snapshot.step >= start + 5, timeout=10_000)
    assert controller.running and not controller.pausing
    controller.pause()
    step = _settled(qtbot, controller)
    # Consistent: a Step is one step, and a Run runs again.
    assert after_snapshot(controller, controller.step).step == step + 1
    controller.run(RunGoal(steps=3))
    qtbot.waitUntil(lambda: controller.snapshot.step == step + 4 and not controller.running,
                    timeout=10_000)


def test_pause_run_pause_in_one_event_pass_ends_paused(  # type: ignore[no-untyped-def]
        qtbot, controller, after_snapshot) -> None:
    controller.set_speed(None)
    controller.run(RunGoal())
    qtbot.waitUntil(lambda: controller.snapshot.step >= 3, timeout=10_000)
    controller.pause()
    controller.run(RunGoal())
    controller.pause()
    step = _settled(qtbot, controller)
    assert after_snapshot(controller, controller.step).step == step + 1


def test_run_pressed_while_pausing_20_times(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    """The issue saw the window stuck 20 times in 20; every time must end consistent."""
    controller.set_speed(None)
    for _ in range(20):
        controller.run(RunGoal())
        qtbot.waitUntil(lambda: controller.running, timeout=10_000)
        controller.pause()
        controller.run(RunGoal())
        before = controller.snapshot.step
        qtbot.waitUntil(lambda b=before: controller.snapshot.step > b, timeout=10_000)
        controller.pause()
        qtbot.waitUntil(lambda: not controller.running, timeout=10_000)


def test_undo_in_the_same_event_pass_as_a_designer_edit_drops_the_edit(  # type: ignore[no-untyped-def]
        qtbot, window, settle) -> None:
    """Undo within 400 ms of a Designer edit was undone by that edit (the pending apply
    replaced the run Undo had just brought back). Now the pending edit is what Undo
    drops; the session's own history is left as it was."""
    designer, controller = window.designer, window.controller
    first = controller.snapshot.config.n_samples
    designer.n_samples.setValue(first + 20)  # an edit that replaces the run...
    designer.apply()
    qtbot.waitUntil(lambda: controller.snapshot.config.n_samples == first + 20, timeout=5000)
    qtbot.waitUntil(lambda: window.undo_action.isEnabled(), timeout=5000)
    designer.n_samples.setValue(first + 40)  # ...and one still waiting to apply
    assert designer.has_pending_edit()
    window.undo_action.trigger()  # in the same event pass
    assert not designer.has_pending_edit()  # so it can never apply now
    assert designer.n_samples.value() == first + 20  # the fields show the session again
    settle()
    assert controller.snapshot.config.n_samples == first + 20  # the earlier edit stays
    # With nothing pending, Undo is the session's: back to the first run.
    window.undo_action.trigger()
    qtbot.waitUntil(lambda: controller.snapshot.config.n_samples == first, timeout=5000)
    assert designer.n_samples.value() == first


def test_opening_a_slow_session_shows_progress_with_cancel_and_keeps_the_window_live(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, monkeypatch) -> None:
    """Loading runs off the UI thread: past half a second a progress dialog offers
    Cancel, the window keeps answering meanwhile, and Cancel keeps the current session."""
    import threading

    from gradbox.files import sessions as persistence
    from gradbox.views import background

    path = tmp_path / "slow.gradbox"
    persistence.save_session(persistence.Trainer(window.controller.snapshot.config), path)
    release = threading.Event()
    original = persistence.load_state_with_controls

    def slow(p):  # type: ignore[no-untyped-def]
        release.wait(10)  # as long as the test wants: a 990x990 file took 5-21 s
        return original(p)
    monkeypatch.setattr(persistence, "load_state_with_controls", slow)
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 0)
    before = window.controller.snapshot
    window.files.open_session(path)
    task = window.files.reading[0]
    qtbot.waitUntil(lambda: task.dialog.isVisible(), timeout=5000)
    assert task.dialog.labelText() == "Opening slow.gradbox…"
    # The UI thread is free: a step taken now is shown.
    with qtbot.waitSignal(window.controller.snapshot_changed, timeout=5000):
        window.controller.step()
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    cancel = next(b for b in task.dialog.findChildren(QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(cancel, Qt.LeftButton)
    assert task.cancelled and not task.dialog.isVisible()
    release.set()
    qtbot.waitUntil(lambda: not window.files.reading, timeout=10_000)
    assert window.controller.snapshot.step == before.step + 1  # not replaced by the file
    assert window.document.path != path


def test_a_csv_import_can_be_cancelled_part_way(qtbot, window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from gradbox.files import points_csv

    path = tmp_path / "many.csv"
    # A blank line sends it row by row, with progress (plain rows go at C speed).
    path.write_text("x,y,label\n\n" + "1,2,0\n3,4,1\n" * 200_000)
    before = window.controller.snapshot.points
    seen: list[float] = []
    window.files.import_csv(path)
    task = window.files.reading[0]
    task._progressed.connect(seen.append)
    qtbot.waitUntil(lambda: bool(seen), timeout=10_000)
    task.cancel()  # what the dialog's Cancel does
    qtbot.waitUntil(lambda: not window.files.reading, timeout=10_000)
    assert seen[-1] < 1 and len(seen) < 400_000 // points_csv.PROGRESS_ROWS
    assert window.controller.snapshot.points is before


def test_a_plain_csv_import_stops_at_cancel_and_imports_nothing(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, monkeypatch) -> None:
    """Plain rows go at C speed, a piece at a time: Cancel there stops the reading too."""
    import threading

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton

    from gradbox.views import background

    path = tmp_path / "plain.csv"
    path.write_text("x,y,label\n" + "1,2,0\n3,4,1\n" * 200_000)
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 0)
    reports: list[float] = []
    reached, release = threading.Event(), threading.Event()
    report = background.BackgroundTask._report

    def held(self, fraction: float) -> bool:  # type: ignore[no-untyped-def]
        reports.append(fraction)  # the reading thread waits here until the test clicks
        reached.set()
        release.wait(10)
        return report(self, fraction)
    monkeypatch.setattr(background.BackgroundTask, "_report", held)
    before = window.controller.snapshot.points
    window.files.import_csv(path)
    task = window.files.reading[0]
    qtbot.waitUntil(reached.is_set, timeout=10_000)
    qtbot.waitUntil(lambda: task.dialog.isVisible(), timeout=5000)
    cancel = next(b for b in task.dialog.findChildren(QPushButton) if b.text() == "Cancel")
    qtbot.mouseClick(cancel, Qt.LeftButton)
    release.set()
    qtbot.waitUntil(lambda: not window.files.reading, timeout=10_000)
    assert len(reports) == 1  # the fast path's first report, and not one more
    assert window.controller.snapshot.points is before


def test_the_restore_question_is_not_under_the_reading_progress(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path, monkeypatch) -> None:
    """At start after a crash, with a big autosave (100,000 points): 'Restore it?' came
    up under the finished 'Reading the autosaved session…' progress, which is modal to
    the window and took the question's clicks (seen in the real window: No did nothing
    until Cancel was pressed on a finished read). The progress steps aside while the
    answer asks, and comes back while the run is built."""
    import threading

    from gradbox.files import sessions as persistence
    from gradbox.views import background

    path = tmp_path / "autosave.gradbox"
    persistence.save_session(persistence.Trainer(window.controller.snapshot.config), path)
    release = threading.Event()
    original = persistence.load_state_with_controls

    def slow(p):  # type: ignore[no-untyped-def]
        release.wait(10)
        return original(p)
    monkeypatch.setattr(persistence, "load_state_with_controls", slow)
    monkeypatch.setattr(background, "PROGRESS_AFTER_MS", 0)
    over_the_question: list[bool] = []

    def ask(_text: str) -> bool:
        over_the_question.append(task.dialog.isVisible())
        return True
    answers: list[bool] = []
    window.files.offer_restore(path, ask=ask, answered=answers.append)
    task = window.files.reading[0]
    qtbot.waitUntil(lambda: task.dialog.isVisible(), timeout=5000)
    release.set()
    qtbot.waitUntil(lambda: bool(over_the_question), timeout=10_000)
    assert over_the_question == [False]
    qtbot.waitUntil(lambda: answers == [True], timeout=10_000)
