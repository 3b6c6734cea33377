"""Train on your engine: the moons trained on the learner's own MLP, gradbox's run beside it.

The last stage's payoff. The training runs in the sandbox's child (`gradbox.build.train`),
per sample as micrograd does, so it is slow, and the view says how slow before it starts
(the rough estimate; the first steps replace it with a measured figure). The learner's
loss is drawn over gradbox's own engine's on the same data and weights (the dashed
ghost); where the two part by more than 1e-6, a line marks the step -- an engine that
passes every unit case and trains differently shows where.
"""

from __future__ import annotations

from collections.abc import Callable

import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gradbox.build.train import TrainProgress, TrainSetup, rough_estimate, start_training
from gradbox.formatting import fmt
from gradbox.views.build.stage_text import plain_label
from gradbox.views.palette import ALARM, GHOST, TRAIN
from gradbox.views.plots.plotting import add_curve, curve_colour, follow_palette, style_plot
from gradbox.views.status_colour import set_tone

POLL_MS = 200
# (what the box says, the setup): micrograd's demo, and a quicker one to try first
SETUPS = (("30 moons × 40 steps", TrainSetup(n_samples=30, steps=40)),
          ("100 moons × 100 steps (micrograd's demo)", TrainSetup()))


def duration(seconds: float) -> str:
    """'0.4 s', '12 s', '3 min 20 s'."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


class TrainOnYours(QWidget):
    """Start, watch and stop the learner's engine training on the moons."""

    error_line = Signal(int)  # the line of the learner's file a failed run points at

    def __init__(self, source: Callable[[], str], parent: QWidget | None = None,
                 start: Callable[[str, TrainSetup], object] | None = None) -> None:
        super().__init__(parent)
        self._source = source
        self._start = start or (lambda text, setup: start_training(text, setup))
        self._run: object | None = None
        self.progress: TrainProgress | None = None
        self.setup_box = QComboBox()
        self.setup_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setup_box.setMinimumContentsLength(12)
        for text, setup in SETUPS:
            self.setup_box.addItem(text, setup)
        self.setup_box.currentIndexChanged.connect(self._say_estimate)
        self.start_button = QPushButton("Train on your engine")
        self.start_button.setToolTip("Train an MLP(2, [16, 16, 1]) built with your Value, "
                                     "Neuron, Layer and MLP, beside gradbox's own engine")
        self.start_button.clicked.connect(self.start)
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(self.stop)
        self.stop_button.setEnabled(False)
        self.estimate = plain_label()
        self.status = plain_label()
        self.plot_widget = pg.PlotWidget()
        self.plot_widget.setMinimumHeight(120)
        follow_palette(self.plot_widget)  # (axes light on a dark theme: so is its ground)
        plot = self.plot_widget.getPlotItem()
        style_plot(plot, "loss", "step")
        plot.addLegend(offset=(-10, 10))
        self.ghost_curve = add_curve(plot, GHOST, "gradbox's engine", dashed=True)
        self.yours_curve = add_curve(plot, TRAIN, "your engine")
        self.parting = pg.InfiniteLine(angle=90, movable=False,
                                       pen=pg.mkPen(ALARM, width=2),
                                       label="the runs part", labelOpts={"color": ALARM,
                                                                         "position": 0.9})
        self.parting.hide()
        plot.addItem(self.parting)
        row = QHBoxLayout()
        row.addWidget(self.setup_box, 1)
        row.addWidget(self.start_button)
        row.addWidget(self.stop_button)
        column = QVBoxLayout(self)
        column.setContentsMargins(4, 4, 4, 4)
        column.addLayout(row)
        column.addWidget(self.estimate)
        column.addWidget(self.status)
        column.addWidget(self.plot_widget, 1)
        self._timer = QTimer(self, interval=POLL_MS)
        self._timer.timeout.connect(self._poll)
        self._say_estimate()

    def setup(self) -> TrainSetup:
        return self.setup_box.currentData()

    def _say_estimate(self) -> None:
        setup = self.setup()
        per_step = rough_estimate(setup)
        self.estimate.setText(
            f"Per sample, as micrograd does: every step builds a graph of every point's "
            f"loss with your Value. Expect about {duration(per_step)} a step, "
            f"{duration(per_step * setup.steps)} for {setup.steps} steps. gradbox's own "
            "engine trains the same network from the same weights: the dashed curve.")

    def is_running(self) -> bool:
        return self._run is not None

    def start(self) -> None:
        self.stop()
        setup = self.setup()
        self._run = self._start(self._source(), setup)
        self.progress = None
        self.yours_curve.setData([], [])
        self.ghost_curve.setData([], [])
        self.parting.hide()
        set_tone(self.status)
        self.status.setText("Starting: gradbox's own run first, then yours…")
        self.start_button.setEnabled(False)
        self.stop_button.setEnabled(True)
        self.setup_box.setEnabled(False)
        self._timer.start()

    def stop(self) -> None:
        run, self._run = self._run, None
        if run is not None:
            run.cancel()  # type: ignore[attr-defined]
            self.status.setText(self.status.text() + " Stopped.")
        self._idle()

    def _idle(self) -> None:
        self._timer.stop()
        self.start_button.setEnabled(True)
        self.stop_button.setEnabled(False)
        self.setup_box.setEnabled(True)

    def _poll(self) -> None:
        run = self._run
        if run is None:
            return
        progress: TrainProgress = run.poll()  # type: ignore[attr-defined]
        self.show_progress(progress)
        if progress.done:
            self._run = None
            self._idle()

    def show_progress(self, progress: TrainProgress) -> None:
        self.progress = progress
        self.ghost_curve.setData([p.step for p in progress.ghost],
                                 [p.loss for p in progress.ghost])
        self.yours_curve.setData([p.step for p in progress.yours],
                                 [p.loss for p in progress.yours])
        if progress.parted_at is not None:
            self.parting.setValue(progress.parted_at)
            self.parting.label.setFormat(f"the runs part at step {progress.parted_at}")
            colour = curve_colour(ALARM)  # the light red on a dark plot
            self.parting.setPen(pg.mkPen(colour, width=2))
            self.parting.label.setColor(colour)
            self.parting.show()
        total = self.setup().steps
        parts = []
        if progress.yours:
            last = progress.yours[-1]
            ghost = next((p for p in progress.ghost if p.step == last.step), None)
            beside = f" (gradbox: {fmt(ghost.loss)})" if ghost is not None else ""
            parts.append(f"step {last.step + 1} of {total}: loss {fmt(last.loss)}{beside}")
        if progress.seconds_per_step is not None:
            parts.append(f"{duration(progress.seconds_per_step)} a step, measured")
        if progress.parted_at is not None:
            parts.append(f"your run parts from gradbox's at step {progress.parted_at}: "
                         "look at what that step does (zero_grad, the update, the loss)")
        elif progress.done and progress.error is None and progress.yours:
            parts.append("your engine trained exactly as gradbox's does")
        text = " · ".join(parts) if parts else "gradbox's own run…"
        if progress.error:
            text = f"{progress.error}" + (f"\n{text}" if parts else "")
            set_tone(self.status, "alarm")
            if progress.line:
                self.error_line.emit(progress.line)
        self.status.setText(text)
