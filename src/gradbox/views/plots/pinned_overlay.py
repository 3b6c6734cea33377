"""Compare runs on the loss curve: a pinned run's loss and accuracy, drawn faint and dotted
under the current run's, with a legend entry that says how the two runs differ.

The loss curve owns it: it hands over its loss and accuracy plots and the legend, and
asks for the readout's words at a hovered step and how far the pinned run goes (its
curves and its readout reach past the current run's last step).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPen
from PySide6.QtWidgets import QPushButton

from gradbox.port.protocol import SessionPort
from gradbox.training.config import describe, differences
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import PinnedRun
from gradbox.views.plots.plotting import TEST, TRAIN, curve_colour

_FIELDS = {"loss": TRAIN, "test_loss": TEST}
_ACCURACY = {"accuracy": TRAIN, "test_accuracy": TEST}


def _pen(colour: str) -> QPen:
    c = pg.mkColor(curve_colour(colour))  # (the train blue's light one on a dark plot)
    c.setAlpha(150)
    return pg.mkPen(c, width=2, style=Qt.PenStyle.DotLine)


class PinnedOverlay:
    def __init__(self, controller: SessionPort, loss_plot: pg.PlotItem,
                 accuracy_plot: pg.PlotItem, legend: pg.LegendItem) -> None:
        self.controller = controller
        self.legend = legend
        self.pinned: PinnedRun | None = None
        self.curves: dict[str, pg.PlotDataItem] = {}
        for name, colour in _FIELDS.items():
            self.curves[name] = loss_plot.plot(pen=_pen(colour), connect="finite")
        for name, colour in _ACCURACY.items():
            self.curves[name] = accuracy_plot.plot(pen=_pen(colour), connect="finite")
        for curve in self.curves.values():
            curve.setZValue(-1)  # under the current run
            curve.setVisible(False)
        self.pin_button = QPushButton("Pin run")
        self.pin_button.setAccessibleName("Pin this run for comparison")
        self.pin_button.setToolTip("Keep this run's curves (dotted) to compare the next run "
                                   "with: change a setting, train, and both show. Saved "
                                   "with the session; pinning again replaces it")
        self.pin_button.clicked.connect(controller.pin_run)
        self.unpin_button = QPushButton("Unpin")
        self.unpin_button.setAccessibleName("Remove the pinned run")
        self.unpin_button.setToolTip("Stop showing the pinned run's curves")
        self.unpin_button.clicked.connect(lambda: controller.send(Session.unpin))
        self.unpin_button.setEnabled(False)
        self._label = ""

    def update(self, snapshot: Snapshot) -> None:
        pinned = snapshot.pinned
        self.pin_button.setEnabled(bool(snapshot.history))
        self.unpin_button.setEnabled(pinned is not None)
        label = ""
        if pinned is not None:
            what = differences(pinned.config, snapshot.config)
            label = "pinned: " + (", ".join(what[:2]) if what else describe(pinned.config))
        if pinned is self.pinned and label == self._label:
            return
        self.pinned, self._label = pinned, label
        if self.legend.getLabel(self.curves["loss"]) is not None:
            self.legend.removeItem(self.curves["loss"])
        for name, curve in self.curves.items():
            if pinned is None:
                curve.setVisible(False)
                continue
            values = np.asarray(pinned.history.column(name), dtype=np.float64)
            steps = np.arange(1, len(values) + 1, dtype=np.float64)
            curve.setData(steps, values)
            curve.setVisible(bool(np.isfinite(values).any()))
        if pinned is not None:
            self.legend.addItem(self.curves["loss"], label)

    def last_step(self) -> int:
        """How many steps the pinned run has (0 without one): the plots range over them
        and the hover reaches them, even past the current run's last step."""
        return self.pinned.steps if self.pinned is not None else 0

    def readout(self, step: int) -> list[str]:
        """The pinned run's values at `step`, for the hover readout."""
        p = self.pinned
        if p is None or step < 1:
            return []
        if step > p.steps:
            return [f"<span style='color:#777'>pinned run: ended at step {p.steps}</span>"]
        r = p.history[step - 1]
        text = f"pinned: loss {r.loss:.4g}"
        if math.isfinite(r.test_loss):
            text += f", test {r.test_loss:.4g}"
        return [f"<span style='color:#777'>{text}</span>"]
