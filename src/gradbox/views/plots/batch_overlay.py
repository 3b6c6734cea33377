"""The mini-batch on the decision boundary: the points the last step trained on are
framed, and hovering any point tells its loss -- so batch size has a visible effect.

Drawn into the boundary view's plot; the boundary view owns it and hands it each
snapshot. The loss of a point is the per-sample term of the training loss
(`losses.sample_losses`) at the current weights, penalties aside.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QCheckBox, QToolTip

from gradbox.autograd import losses
from gradbox.training.snapshots import Snapshot
from gradbox.views.plots.plotting import CLASS_NAMES

HOVER_PIXELS = 8.0  # how close (in screen pixels) the mouse must be to a point
BATCH_COLOUR = "#111111"


class BatchOverlay(QObject):
    def __init__(self, plot: pg.PlotItem) -> None:
        super().__init__()
        self.plot = plot
        self.view_box = plot.getViewBox()
        self.frames = pg.ScatterPlotItem(size=15, symbol="s", brush=None, antialias=True,
                                         pen=pg.mkPen(BATCH_COLOUR, width=1.6))
        # Above the heat map (an image at z 0, which would hide it) and the points: the
        # frame is hollow, so the point inside stays visible.
        self.frames.setZValue(1)
        plot.addItem(self.frames, ignoreBounds=True)
        self.toggle = QCheckBox("Batch")
        self.toggle.setAccessibleName("Show the mini-batch")
        self.toggle.setToolTip("Frame the points the last step trained on (its mini-batch)")
        self.toggle.setChecked(True)
        self.toggle.toggled.connect(self.frames.setVisible)
        self.batch = np.arange(0)
        self.full = True
        self._framed = True  # (the first update sets the frames, whatever they are)
        self._snapshot: Snapshot | None = None
        self._losses: np.ndarray | None = None
        # A point's loss is the plot's tooltip while the mouse rests on the point (the
        # plot's own tooltip, about the colours, everywhere else).
        self.widget = self.view_box.scene().views()[0]
        self.widget.viewport().installEventFilter(self)

    def update(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self._losses = None  # computed when first hovered
        train = int(np.count_nonzero(~snapshot.is_test))
        batch = np.asarray(snapshot.batch)
        batch = batch[batch < len(snapshot.points)]  # (the trainer follows edited points)
        self.batch = batch
        # The full batch frames every training point: nothing to tell apart, so no frames.
        # Read from the batch size, not the batch's length: a point added since the step
        # (not trained on yet) does not make the full batch a mini-batch.
        size = snapshot.config.batch_size
        self.full = len(batch) == 0 or size is None or size >= train
        shown = np.zeros((0, 2)) if self.full else snapshot.points[batch]
        if len(shown) or self._framed:  # (no frames then, none now: nothing to redraw)
            self.frames.setData(pos=shown)
        self._framed = len(shown) > 0
        # The text stays "Batch": a longer one would widen the row and the window.
        size = snapshot.config.batch_size
        tip = ("Frame the points the last step trained on: its mini-batch of "
               f"{size} points" if not self.full and size is not None else
               "Frame the points the last step trained on (its mini-batch). With the full "
               "batch every training point is in it, so none is framed")
        if tip != self.toggle.toolTip():
            self.toggle.setToolTip(tip)

    def point_losses(self) -> np.ndarray:
        """Every point's loss at the current weights (test points too), cached per snapshot."""
        s = self._snapshot
        if s is None:
            return np.zeros(0)
        if self._losses is None:
            with np.errstate(all="ignore"):
                scores = s.predict(s.points)
            regression = s.targets is not None
            self._losses = losses.sample_losses(s.config.effective_loss, scores,
                                                s.targets if regression else s.labels,
                                                regression)
        return self._losses

    def describe(self, index: int) -> str:
        """What hovering point `index` says."""
        s = self._snapshot
        assert s is not None
        label = int(s.labels[index])
        kind = "test" if s.is_test[index] else "training"
        lines = [f"Point {index}: {kind}, class {label} ({CLASS_NAMES[label % 6]})",
                 f"loss {self.point_losses()[index]:.4g} ({s.config.effective_loss}, at the "
                 "current weights)"]
        if not s.is_test[index] and not self.full:
            inside = bool(np.isin(index, self.batch))
            lines.append(f"{'in' if inside else 'not in'} the batch of step {s.step}")
        return "\n".join(lines)

    def point_at(self, scene_pos: QPointF) -> int:
        """The point within HOVER_PIXELS of a scene position, or -1."""
        s = self._snapshot
        if s is None or len(s.points) == 0 or not self.view_box.sceneBoundingRect().contains(
                scene_pos):
            return -1
        p = self.view_box.mapSceneToView(scene_pos)
        sx, sy = self.view_box.viewPixelSize()
        d = np.hypot((s.points[:, 0] - p.x()) / sx, (s.points[:, 1] - p.y()) / sy)
        index = int(np.argmin(d))
        return index if d[index] <= HOVER_PIXELS else -1

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            index = self.point_at(self.widget.mapToScene(event.pos()))
            if index >= 0:
                QToolTip.showText(event.globalPos(), self.describe(index), self.widget)
                return True
        return super().eventFilter(watched, event)
