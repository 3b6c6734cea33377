"""The training thread and the UI thread: what runs where."""

from __future__ import annotations

import gc


def test_the_cyclic_collector_runs_only_from_the_ui_thread(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views import session

    # Automatic collection is off for the whole process (it could start in the training
    # thread); pyqtgraph's timer collects from the UI thread instead.
    assert not gc.isenabled()
    assert session._collector is not None and session._collector.timer.isActive()
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.step()
    assert not gc.isenabled()  # a training step pauses and restores, never re-enables


def test_query_sends_no_snapshot_but_call_does(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    answers: list[int] = []
    with qtbot.assertNotEmitted(controller.snapshot_changed, wait=300):
        controller.query(lambda t: t.step_count, answers.append)
        qtbot.waitUntil(lambda: answers == [0], timeout=5000)
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.call(lambda t: t.step())
    assert controller.snapshot.step == 1
