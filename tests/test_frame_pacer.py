"""FramePacer: rate tiers over the controller's frame, and the end-of-run flush."""

from __future__ import annotations

import dataclasses
import gc
import weakref

from PySide6.QtCore import QObject, Signal

from gradbox.port.frame_pacer import FramePacer, Rate
from gradbox.training.config import TrainingConfig
from gradbox.training.snapshots import Snapshot
from gradbox.training.trainer import Trainer


class FakeController(QObject):
    snapshot_changed = Signal(object)
    running_changed = Signal(bool)

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot, self.running, self.speed = snapshot, False, None

    def present(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.snapshot_changed.emit(snapshot)

    def frame_drawn(self) -> None:
        pass

    def frame(self, snapshot: Snapshot) -> None:
        """A snapshot arrives, and its frame is drawn now."""
        self.pacer.offer(snapshot)  # type: ignore[attr-defined]
        self.pacer.flush_then(lambda: None)  # type: ignore[attr-defined]

    def set_running(self, running: bool) -> None:
        self.running = running
        self.running_changed.emit(running)


class View(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[int] = []

    def show(self, snapshot: Snapshot) -> None:
        self.seen.append(snapshot.step)


def snapshots(n: int) -> list[Snapshot]:
    trainer = Trainer(TrainingConfig(n_samples=20, hidden=(2,)))
    out = [trainer.snapshot()]
    for _ in range(n - 1):
        trainer.step()
        out.append(trainer.snapshot())
    return out


def setup(rate: Rate) -> tuple[FakeController, View, list[Snapshot]]:
    shots = snapshots(6)
    controller = FakeController(shots[0])
    controller.pacer = FramePacer(controller)  # type: ignore[attr-defined]
    view = View()
    controller.pacer.subscribe(view.show, rate)  # type: ignore[attr-defined]
    return controller, view, shots


def test_every_frame_and_outside_a_run_every_tier_gets_every_snapshot(qtbot) -> None:  # type: ignore[no-untyped-def]
    for rate in Rate:
        controller, view, shots = setup(rate)
        for s in shots[1:]:
            controller.frame(s)
        assert view.seen == [1, 2, 3, 4, 5], rate


def test_ten_hz_takes_its_own_turn_while_a_fast_run_goes_and_ends_on_the_last_step(qtbot) -> None:  # type: ignore[no-untyped-def]
    controller, view, shots = setup(Rate.TEN_HZ)
    controller.set_running(True)
    for s in shots[1:5]:
        controller.frame(s)  # four frames within far less than 100 ms
    assert view.seen == []  # not inside the frame: in a turn of its own
    qtbot.waitUntil(lambda: view.seen == [4], timeout=2000)
    controller.frame(shots[5])
    assert view.seen == [4]  # under 100 ms since the last: skipped for now
    controller.set_running(False)
    assert view.seen == [4, 5]  # the end-of-run flush


def test_a_run_slow_enough_to_watch_shows_every_step_at_ten_hz(qtbot) -> None:  # type: ignore[no-untyped-def]
    controller, view, shots = setup(Rate.TEN_HZ)
    controller.speed = 5.0
    controller.set_running(True)
    for s in shots[1:]:
        controller.frame(s)
    assert view.seen == [1, 2, 3, 4, 5]


def test_on_demand_gets_nothing_during_a_run_and_the_last_step_after(qtbot) -> None:  # type: ignore[no-untyped-def]
    controller, view, shots = setup(Rate.ON_DEMAND)
    controller.set_running(True)
    for s in shots[1:]:
        controller.frame(s)
    assert view.seen == []
    controller.set_running(False)
    assert view.seen == [5]


def test_another_run_is_shown_at_once_whatever_the_tier(qtbot) -> None:  # type: ignore[no-untyped-def]
    controller, view, shots = setup(Rate.ON_DEMAND)
    controller.frame(shots[1])
    controller.set_running(True)
    controller.frame(shots[2])
    assert view.seen == [1]
    controller.frame(dataclasses.replace(shots[3], run_id=shots[3].run_id + 10**6))
    assert view.seen == [1, 3]


def test_a_closed_view_is_not_kept_alive_nor_handed_anything(qtbot) -> None:  # type: ignore[no-untyped-def]
    controller, view, shots = setup(Rate.EVERY_FRAME)
    gone = weakref.ref(view)
    del view
    gc.collect()
    assert gone() is None
    controller.frame(shots[1])  # no error, nothing to hand it to
    assert controller.pacer._subscribers == []  # type: ignore[attr-defined]


def _frame_starts(qtbot, speed: float | None) -> list[float]:  # type: ignore[no-untyped-def]
    """When three frames of a running Run began, each frame's handler working 8 ms of
    the UI thread's CPU, snapshots offered as soon as the last frame is drawn."""
    import time

    controller, _view, shots = setup(Rate.EVERY_FRAME)
    controller.speed = speed
    starts: list[float] = []

    def busy(_snapshot: Snapshot) -> None:
        starts.append(time.perf_counter())
        until = time.thread_time() + 0.008
        while time.thread_time() < until:
            pass
    controller.snapshot_changed.connect(busy)
    controller.set_running(True)
    for shot in shots[1:4]:
        count = len(starts)
        controller.pacer.offer(shot)  # type: ignore[attr-defined]
        qtbot.waitUntil(lambda count=count: len(starts) > count, timeout=5000)
    return starts


def test_at_the_fastest_speed_the_frames_leave_training_four_fifths_of_a_core(
        qtbot) -> None:  # type: ignore[no-untyped-def]
    # A frame that worked 8 ms is followed by the next 40 ms after it began at the
    # earliest (a fifth of the time), not 24 ms (half of it, after a frame's idle).
    starts = _frame_starts(qtbot, None)
    assert starts[2] - starts[1] >= 0.036
    # At a speed slow enough to watch, every step's frame comes as before: not later
    # than needed (here, within the 0.1 s every running frame gets at worst).
    watched = _frame_starts(qtbot, 30.0)
    assert watched[2] - watched[1] < 0.1
