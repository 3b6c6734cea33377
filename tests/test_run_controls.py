"""A Run you can watch and steer: speed, stop conditions, and the divergence guard."""

from __future__ import annotations

import time

import pytest

from gradbox.training.goals import RunGoal, divergence
from gradbox.training.history import StepRecord
from gradbox.training.session import Session
from gradbox.views.window.main_window import MainWindow
from gradbox.views.window.run_controls import SPEEDS, WATCHABLE_SPEED
from gradbox.views.window.toolbar import TrainingToolbar


def run_until_it_stops(qtbot, toolbar: TrainingToolbar) -> None:  # type: ignore[no-untyped-def]
    toolbar.run_action.trigger()
    qtbot.waitUntil(lambda: toolbar.controller.snapshot.step > 0, timeout=10000)
    qtbot.waitUntil(lambda: not toolbar.controller.running, timeout=20000)


def choose_stop(toolbar: TrainingToolbar, kind: str, value: float) -> None:
    controls = toolbar.run_controls
    controls.stop_kind.setCurrentIndex(controls.stop_kind.findData(kind))
    controls.stop_value.setValue(value)


def record(step: int, loss: float, lr: float = 0.5) -> StepRecord:
    return StepRecord(step, loss, loss, 0.5, 0.5, 1.0, lr, False)


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_runs_at_a_watchable_speed_by_default(toolbar: TrainingToolbar) -> None:
    speed = toolbar.run_controls.speed
    assert speed.currentData() == WATCHABLE_SPEED
    assert [speed.itemData(i) for i in range(speed.count())] == list(SPEEDS)
    assert speed.itemText(speed.count() - 1) == "max speed"


@pytest.mark.parametrize("speed", [2, 5])
@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_speed_setting_is_respected(qtbot, toolbar: TrainingToolbar, speed: int) -> None:
    controls = toolbar.run_controls
    controls.speed.setCurrentIndex(controls.speed.findData(speed))
    toolbar.run_action.trigger()
    qtbot.waitUntil(lambda: toolbar.controller.snapshot.step >= 1, timeout=5000)
    start, started = toolbar.controller.snapshot.step, time.perf_counter()
    # About a second at this speed (longer on a loaded machine, which the bound allows).
    qtbot.waitUntil(lambda: toolbar.controller.snapshot.step - start >= speed, timeout=20000)
    toolbar.run_action.trigger()
    qtbot.waitUntil(lambda: not toolbar.controller.running, timeout=5000)
    counted = toolbar.controller.snapshot.step - start  # every step done, up to the pause
    seconds = time.perf_counter() - started  # about 1 s; more on a loaded machine
    # One step per 1000/speed ms at most (+1 for the step the interval may start on, +1
    # for a step done but not yet shown at the start). At least one, however loaded.
    assert 1 <= counted <= speed * seconds + 2, (counted, seconds)


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_the_speed_menu_sets_the_pace_between_steps(qtbot, toolbar: TrainingToolbar) -> None:
    controls = toolbar.run_controls
    controls.speed.setCurrentIndex(controls.speed.findData(None))
    assert toolbar.controller.interval_ms == 0
    controls.speed.setCurrentIndex(controls.speed.findData(30))
    assert toolbar.controller.interval_ms == 33


def test_run_for_n_steps_stops_there(qtbot, window: MainWindow) -> None:
    choose_stop(window.toolbar, "steps", 7)
    messages: list[str] = []
    window.controller.message.connect(messages.append)
    run_until_it_stops(qtbot, window.toolbar)
    assert window.controller.snapshot.step == 7
    qtbot.waitUntil(lambda: "Run stopped: ran 7 steps" in messages, timeout=2000)
    assert not window.banner.isVisible(), "a goal reached is not an alarm"
    run_until_it_stops(qtbot, window.toolbar)  # the next Run goes 7 steps further
    assert window.controller.snapshot.step == 14


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_run_until_loss_stops_at_the_first_step_at_or_below(qtbot,
                                                            toolbar: TrainingToolbar) -> None:
    toolbar.run_controls.speed.setCurrentIndex(len(SPEEDS) - 1)
    choose_stop(toolbar, "loss", 0.5)
    run_until_it_stops(qtbot, toolbar)
    losses = [r.loss for r in toolbar.controller.snapshot.history]
    assert losses[-1] <= 0.5
    assert all(loss > 0.5 for loss in losses[:-1])


@pytest.mark.in_process  # the toolbar alone on the in-process port
def test_run_until_accuracy_stops_at_the_first_step_at_or_above(qtbot,
                                                                toolbar: TrainingToolbar) -> None:
    toolbar.run_controls.speed.setCurrentIndex(len(SPEEDS) - 1)
    choose_stop(toolbar, "accuracy", 90)
    run_until_it_stops(qtbot, toolbar)
    accuracies = [r.accuracy for r in toolbar.controller.snapshot.history]
    assert accuracies[-1] >= 0.9
    assert all(a < 0.9 for a in accuracies[:-1])


def test_a_diverging_run_pauses_and_the_banner_goes_with_the_state(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(loss="mse", lr=1.0)
    win.toolbar.run_controls.speed.setCurrentIndex(len(SPEEDS) - 1)
    run_until_it_stops(qtbot, win.toolbar)
    snapshot = win.controller.snapshot
    assert snapshot.step < 10, "paused at once, not at a loss of 1e13"
    assert win.banner.isVisible()
    text = win.banner.text()
    assert "Training paused: the loss rose to" in text and "its best" in text
    assert "the learning rate (1) is probably too large" in text
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.step()  # still diverging: the banner stays
    assert win.banner.isVisible()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.rewind(1)  # back before it went wrong
    assert not win.banner.isVisible()


def test_the_banner_goes_when_the_learning_rate_is_fixed(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(loss="mse", lr=1.0)
    run_until_it_stops(qtbot, win.toolbar)
    assert win.banner.isVisible()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.send(Session.set_lr, 0.05)
    assert not win.banner.isVisible()


def test_divergence_names_the_cause() -> None:
    calm = [record(1, 1.0), record(2, 0.01), record(3, 0.5)]
    assert divergence(calm) == "", "below where it started: not diverging"
    rising = [record(1, 1.0), record(2, 0.01), record(3, 2.0)]
    assert "200 × its best (0.01 at step 2)" in divergence(rising)
    assert "learning rate (0.5)" in divergence(rising)
    assert "zero_grad is skipped" in divergence(rising, forget_zero_grad=True)
    assert "rose to 2e+06" in divergence([record(1, 1e6), record(2, 2e6)])


def test_goal_reached_texts() -> None:
    assert RunGoal(steps=3).reached(record(10, 1.0), 3) == "ran 3 steps"
    assert RunGoal(steps=3).reached(record(10, 1.0), 2) == ""
    assert RunGoal(loss=0.5).reached(record(4, 0.5), 1).startswith("reached loss 0.5 ≤ 0.5")
    assert RunGoal().reached(record(4, 0.0), 100) == ""
