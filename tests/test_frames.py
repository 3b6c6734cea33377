"""Display-paced frames: every snapshot that matters reaches every view, at most one
redraw per frame, Pause acts at once (a big network's step under way is abandoned). No
timings are
asserted: a frame's length is made long where a test needs to see two things in one."""

from __future__ import annotations

import dataclasses
import itertools
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from gradbox.port import frame_pacer as pacer_module
from gradbox.port.controller import SessionController
from gradbox.training.config import SLOW_WORK, TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.panels.parameters import TABLE_INTERVAL_S
from gradbox.views.plots.heatmap import output_colours


@pytest.fixture
def window_size() -> tuple[int, int]:
    return (1024, 700)


def test_after_a_run_every_view_shows_its_last_step(qtbot, controller, window) -> None:  # type: ignore[no-untyped-def]
    drawn: list[int] = []
    controller.snapshot_changed.connect(lambda s: drawn.append(s.step))
    controller.run(30)
    qtbot.waitUntil(lambda: not controller.running and controller.snapshot.step == 30,
                    timeout=60000)
    last = controller.snapshot
    assert drawn[-1] == 30 and drawn == sorted(drawn)  # shown in order, the last one too
    boundary = window.boundary
    expected = output_colours(last.predict(boundary.grid_points(), dtype=np.float32),
                              last.config.effective_loss)
    np.testing.assert_array_equal(boundary.image.image,
                                  expected.reshape(boundary.grid_size, boundary.grid_size, 3))
    assert len(window.loss_curve.data("loss")) == 30
    assert window.loss_curve.data("loss")[-1] == last.history[-1].loss
    np.testing.assert_array_equal(window.parameters.model.values, last.params)
    np.testing.assert_array_equal(window.parameters.model.grads, last.grads)
    index = window.parameters.proxy.index(0, 1)
    assert index.data() == f"{last.params[window.parameters.model.parameter_at(0)]:+.4g}"


def test_snapshots_coming_faster_than_frames_are_drawn_once(  # type: ignore[no-untyped-def]
        qtbot, controller, monkeypatch, drained) -> None:
    monkeypatch.setattr(pacer_module, "FRAME_MS", 60_000)  # one very long frame
    drawn: list[int] = []
    controller.snapshot_changed.connect(lambda s: drawn.append(s.step))
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        controller.step()  # after a pause, the first snapshot is drawn at once
    frames = controller.frames
    assert drawn == [1]
    for _ in range(3):
        controller.send(Session.step)
    qtbot.waitUntil(lambda: controller.newest.step == 4, timeout=10000)
    drained(controller)  # every step's snapshot has reached the UI thread: no frame yet
    assert controller.frames == frames and drawn == [1]  # within the frame: not yet
    controller.pacer._timer.stop()
    controller.pacer._next_frame = 0.0  # the frame is over
    controller.pacer._schedule()
    assert drawn == [1, 4] and controller.frames == frames + 1  # three steps, one redraw


def test_each_frame_redraws_each_view_at_most_once(qtbot, controller, window) -> None:  # type: ignore[no-untyped-def]
    emitted: list[int] = []
    controller.snapshot_changed.connect(lambda s: emitted.append(s.step))
    frames, heatmaps = controller.frames, window.boundary.heatmaps_computed
    controller.run(40)
    qtbot.waitUntil(lambda: not controller.running and controller.snapshot.step == 40,
                    timeout=60000)
    assert len(emitted) == controller.frames - frames
    assert len(set(emitted)) == len(emitted)  # no snapshot handed out twice
    assert window.boundary.heatmaps_computed - heatmaps <= controller.frames - frames


def test_pause_stops_a_run(qtbot, controller, drained) -> None:  # type: ignore[no-untyped-def]
    controller.run()
    qtbot.waitUntil(lambda: controller.snapshot.step >= 3, timeout=60000)
    controller.pause()
    qtbot.waitUntil(lambda: not controller.running, timeout=10000)
    stopped_at = controller.newest.step
    drained(controller)  # whatever was queued behind the pause has run
    assert controller.newest.step == stopped_at
    assert controller.snapshot.step == stopped_at  # the last step is shown


def big_config() -> TrainingConfig:
    config = TrainingConfig(hidden=(64, 64), n_samples=800, test_ratio=0.0)
    assert config.work_per_step() >= SLOW_WORK  # big enough to be split into phases
    return config


def test_pause_abandons_a_big_networks_step_and_shows_its_start(qtbot) -> None:  # type: ignore[no-untyped-def]
    controller = SessionController(Trainer(big_config()))
    try:
        with qtbot.waitSignal(controller.snapshot_changed, timeout=60000):
            controller.step()
        start = controller.snapshot
        controller.run()
        qtbot.waitUntil(lambda: controller.stepping, timeout=60000)
        controller.pause()
        qtbot.waitUntil(lambda: not controller.running, timeout=60000)
        # The step under way was left, its start put back: what shows is step 1 again,
        # with step 1's numbers, and the next Step is a whole step from there.
        qtbot.waitUntil(lambda: controller.snapshot is not start
                        and controller.snapshot.step == 1, timeout=60000)
        shown = controller.snapshot
        assert shown.phase == "forward"
        assert shown.params.tobytes() == start.params.tobytes()
        with qtbot.waitSignal(controller.snapshot_changed, timeout=60000):
            controller.step()
        assert controller.snapshot.phase == "forward" and controller.snapshot.step == 2
    finally:
        controller.shutdown()


def test_a_fast_run_refreshes_the_table_at_most_every_tenth_of_a_second_and_ends_on_its_last_step(  # type: ignore[no-untyped-def]
        qtbot, controller, window, monkeypatch) -> None:
    model = window.parameters.model
    taken: list[float] = []  # when the table took a snapshot while running
    original = model.set_snapshot

    def spy(snapshot):  # type: ignore[no-untyped-def]
        if controller.running:
            taken.append(time.monotonic())
        original(snapshot)
    monkeypatch.setattr(model, "set_snapshot", spy)
    controller.set_speed(None)
    controller.run(60)
    qtbot.waitUntil(lambda: not controller.running and controller.snapshot.step == 60,
                    timeout=60000)
    assert all(b - a >= TABLE_INTERVAL_S for a, b in itertools.pairwise(taken))
    np.testing.assert_array_equal(model.values, controller.snapshot.params)
    np.testing.assert_array_equal(model.grads, controller.snapshot.grads)


def test_a_run_slow_enough_to_watch_shows_every_step_in_the_table(  # type: ignore[no-untyped-def]
        qtbot, controller, window, monkeypatch) -> None:
    model = window.parameters.model
    shown: list[int] = []
    original = model.set_snapshot

    def spy(snapshot):  # type: ignore[no-untyped-def]
        shown.append(snapshot.step)
        original(snapshot)
    monkeypatch.setattr(model, "set_snapshot", spy)
    drawn: list[int] = []
    controller.snapshot_changed.connect(lambda s: drawn.append(s.step))
    controller.set_speed(10)
    controller.run(6)
    qtbot.waitUntil(lambda: not controller.running and controller.snapshot.step == 6,
                    timeout=60000)
    # Every step drawn reaches the table (whether a busy machine drew them all is the
    # frames' business, not the table's).
    assert drawn[-1] == 6 and [s for s in shown if s > 0] == [s for s in drawn if s > 0]


def test_pause_answers_at_once_while_a_big_networks_step_is_computed(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    controller = SessionController(Trainer(big_config()))
    window = open_window(controller=controller)
    run = window.toolbar.run_action
    tip = run.toolTip()
    try:
        run.trigger()
        assert run.text() == "Pause" and controller.running
        qtbot.waitUntil(lambda: controller.stepping, timeout=60000)
        run.trigger()  # while the first step is still being computed
        assert run.text() == "Pausing…" and not run.isChecked()
        qtbot.waitUntil(lambda: not controller.running, timeout=60000)
        assert run.text() == "Run" and run.toolTip() == tip
    finally:
        controller.shutdown()


def test_a_run_ending_while_a_frame_draws_is_heard_after_its_last_snapshot(  # type: ignore[no-untyped-def]
        qtbot, controller) -> None:
    """A frame's event pass may deliver the training process's 'stopped' while it shows
    an older snapshot: running must stay True until the run's last snapshot is drawn."""
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        controller.step()
    controller._set_running(True)  # as in a run whose worker has just stopped
    last = dataclasses.replace(controller.snapshot)  # the run's last snapshot, not drawn
    heard: list[bool] = []

    def inside_a_frame(snapshot):  # type: ignore[no-untyped-def]
        if snapshot is not last and not heard:
            controller.pacer._pending = last
            controller._on_running_changed(False, controller._runs_asked)
            heard.append(controller.running)
    controller.snapshot_changed.connect(inside_a_frame)
    controller.pacer._pending = dataclasses.replace(controller.snapshot)
    controller.pacer._next_frame = 0.0
    controller.pacer._schedule()
    assert heard == [True]  # not stopped yet: the snapshot on screen is not the last
    qtbot.waitUntil(lambda: not controller.running, timeout=5000)
    assert controller.snapshot is last


PAINT_THREADS_SCRIPT = """
import glob, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
os.environ.pop("QT_NO_GUI_THREADPOOL", None)
if sys.argv[1] == "window":
    from gradbox.app import leave_cores_for_the_threads
    leave_cores_for_the_threads()  # (what the app does before its window)
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication([])

class HeatMap(QWidget):  # a small image scaled smoothly over a big widget, as the boundary's
    def paintEvent(self, event):
        image = QImage(100, 100, QImage.Format.Format_RGB32)
        image.fill(QColor("steelblue"))
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        painter.drawImage(QRectF(self.rect()), image)
        painter.fillRect(self.rect(), QColor(255, 255, 255, 100))  # and a veil over it
        painter.end()

widget = HeatMap()
widget.resize(1000, 800)
widget.show()
app.processEvents()  # (exposed: painted)
for _ in range(3):
    widget.repaint()
names = [open(path).read().strip() for path in glob.glob(f"/proc/{os.getpid()}/task/*/comm")]
print(sum(name == "Thread (pooled)" for name in names))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="reads /proc (Linux)")
def test_the_window_paints_on_its_own_thread_alone() -> None:
    """Qt's raster engine hands parts of a big fill to a pool of threads and waits for
    them; on two cores shared with training that cost more than it saved. The window's
    process paints on the UI thread alone (Qt without the setting started threads)."""
    def pool_threads(kind: str) -> int:
        done = subprocess.run([sys.executable, "-c", PAINT_THREADS_SCRIPT, kind],
                              capture_output=True, text=True, timeout=120, check=True)
        return int(done.stdout.strip().splitlines()[-1])

    assert pool_threads("plain Qt") > 0  # (the test can see the pool)
    assert pool_threads("window") == 0
