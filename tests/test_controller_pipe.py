"""The training process seen from the UI thread: the port reads its pipe as messages
arrive (a socket notifier, gradbox.port.controller), each to its handler, in order."""

from __future__ import annotations

import os
import signal

from gradbox.port.controller import SessionController
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer

CONFIG = TrainingConfig(hidden=(4,), n_samples=40)


def test_a_step_arrives_with_its_answer_and_a_kill_is_said_in_words(qtbot) -> None:
    controller = SessionController(CONFIG)
    try:
        seen: list[tuple[str, int]] = []
        controller.snapshot_changed.connect(lambda s: seen.append(("snapshot", s.step)))
        answers: list[object] = []

        def answered(record: object) -> None:
            # The snapshot came before the answer: the port has it when the answer is in.
            seen.append(("answer", controller.newest.step))
            answers.append(record)
        controller.ask(Session.step, callback=answered)
        qtbot.waitUntil(lambda: bool(answers), timeout=60_000)
        assert ("answer", 1) in seen
        trainer = Trainer(CONFIG)
        assert answers == [trainer.step()]
        qtbot.waitUntil(lambda: controller.snapshot.step == 1, timeout=60_000)
        assert controller.snapshot.params.tobytes() == trainer.snapshot().params.tobytes()
        with qtbot.waitSignal(controller.training_died, timeout=60_000) as death:
            os.kill(controller.training_pid, signal.SIGKILL)
        assert "killed" in death.args[0]
        assert controller.snapshot.step == 1  # what was shown stays readable
    finally:
        controller.shutdown()


def test_a_fast_run_sends_a_snapshot_per_frame_and_the_boundary_is_computed_per_frame(
        qtbot, show_widget, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # Counted, not timed: the training process publishes only when the window has drawn
    # the last one, and the boundary view computes its grid once per frame it is handed,
    # not once per step trained.
    from gradbox.views.plots import boundary

    computed = [0]
    colours = boundary.heatmap_colours

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        computed[0] += 1
        return colours(*args, **kwargs)
    monkeypatch.setattr(boundary, "heatmap_colours", counted)
    controller = SessionController(TrainingConfig(hidden=(8, 8), n_samples=60))
    try:
        show_widget(boundary.DecisionBoundaryView(controller))
        received = [0]
        offer = controller.pacer.offer

        def arrived(snapshot):  # type: ignore[no-untyped-def]
            received[0] += 1
            offer(snapshot)
        monkeypatch.setattr(controller.pacer, "offer", arrived)
        frames, computed[0] = controller.frames, 0
        controller.set_speed(None)
        controller.run(300)
        qtbot.waitUntil(lambda: not controller.running, timeout=120_000)
        frames = controller.frames - frames
        assert controller.snapshot.step == 300
        assert 0 < received[0] <= frames + 1  # (the run's last snapshot may share one)
        assert received[0] < 300 // 2  # far fewer snapshots than steps
        assert computed[0] <= frames
    finally:
        controller.shutdown()
