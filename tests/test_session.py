"""The training process and the UI thread: what runs where, and in what order."""

from __future__ import annotations

import gc
import os
import signal

from gradbox.training.session import Session


def test_the_cyclic_collector_runs_only_from_the_ui_thread(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    from gradbox import app

    # Automatic collection is off in the window's process (it could start in another
    # thread); a timer collects from the UI thread instead.
    assert not gc.isenabled()
    assert app._collector is not None and app._collector.isActive()
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.step()
    assert not gc.isenabled()  # a training step pauses and restores, never re-enables


def test_a_question_sends_no_snapshot_but_a_command_does(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    answers: list[object] = []
    with qtbot.assertNotEmitted(controller.snapshot_changed, wait=300):
        controller.ask(Session.state, callback=answers.append)
        qtbot.waitUntil(lambda: len(answers) == 1, timeout=5000)
    assert answers[0].step == 0
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.send(Session.step)
    assert controller.snapshot.step == 1


def test_a_command_the_session_does_not_have_is_refused_in_words(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    # Only named commands reach the training process (the controller takes no closure);
    # a name the session does not have is said in words, and the run goes on.
    with qtbot.waitSignal(controller.error, timeout=5000) as blocker:
        controller.send(Session.replace_run, "x")
    assert "no session command" in blocker.args[0]
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        controller.step()
    assert controller.snapshot.step == 1


class _Held:
    """The training process stopped (SIGSTOP) until `set()`: what is sent meanwhile
    waits in the pipe, as behind a long command."""

    def __init__(self, controller) -> None:  # type: ignore[no-untyped-def]
        self.pid = controller.training_pid
        os.kill(self.pid, signal.SIGSTOP)

    def set(self) -> None:
        os.kill(self.pid, signal.SIGCONT)


def _busy(controller) -> _Held:  # type: ignore[no-untyped-def]
    return _Held(controller)


def test_the_last_pause_wins_over_a_run_still_queued(qtbot, controller, drained) -> None:  # type: ignore[no-untyped-def]
    release = _busy(controller)
    controller.run()  # queued behind the busy command
    assert controller.running  # the button flipped at once
    controller.pause()
    release.set()
    qtbot.waitUntil(lambda: not controller.running, timeout=5000)
    drained(controller)  # the queued run has been handled, and did not start
    assert not controller.running
    assert controller.snapshot.step == 0, "the run never started"


def test_run_pause_run_while_busy_runs(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    release = _busy(controller)
    controller.run()
    controller.pause()
    controller.run()  # the last click was Run
    release.set()
    qtbot.waitUntil(lambda: controller.snapshot.step >= 5, timeout=5000)
    assert controller.running
    controller.pause()
    qtbot.waitUntil(lambda: not controller.running, timeout=5000)


def test_a_rewind_queued_behind_a_reset_is_checked_against_the_reset_run(
        qtbot, controller, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 10)
    messages: list[str] = []
    errors: list[str] = []
    controller.message.connect(messages.append)
    controller.error.connect(lambda text, _detail: errors.append(text))
    release = _busy(controller)
    controller.send(Session.reset)
    controller.rewind(6)  # the timeline still shows 10 steps
    release.set()
    qtbot.waitUntil(lambda: any("Not moved to step 6" in m for m in messages), timeout=5000)
    # The reset's snapshot is drawn at the next display frame (the message is not paced).
    qtbot.waitUntil(lambda: controller.snapshot.step == 0, timeout=5000)
    assert not errors, errors


def test_a_rewind_to_a_step_the_run_still_has_goes_through(
        qtbot, controller, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 10)
    at_4 = controller.snapshot.history[3]
    release = _busy(controller)
    controller.step()  # queued before the rewind: step 11 keeps steps 1..10 as they were
    controller.rewind(4)
    release.set()
    qtbot.waitUntil(lambda: controller.snapshot.step == 4, timeout=5000)
    assert controller.snapshot.history[-1] == at_4
