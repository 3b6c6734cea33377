"""The loss landscape: the training loss over a plane through the current weights, with
the optimizer's path drawn on it (see `gradbox.training.landscape` for the maths).

The grid is computed on the window's FramePacer worker thread (its off-thread tier) --
never the UI thread, never the training process -- from the path the training process
sends. Only one computation runs at a time; a snapshot that arrives meanwhile asks for
one more when it ends, and while training runs the pacer hands this view a snapshot at
most once a second (its ONCE_A_SECOND tier). Nothing is computed while the tab is
hidden.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Slot
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from gradbox.formatting import fmt
from gradbox.port.frame_pacer import Rate
from gradbox.port.protocol import SessionPort
from gradbox.training import landscape
from gradbox.training.landscape import Landscape, LandscapeError, Request
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.views.fitting_combo import FittingComboBox
from gradbox.views.plots.plotting import export_plot, follow_palette, style_plot

CONTOURS = 10  # contour lines, evenly spaced in log(loss)
MODE_TEXT = {
    "pca": "Path's main directions",
    "random": "Random, filter-normalised",
    "parameters": "Two weights",
}
AXIS_TEXT = {
    "pca": ("α: 1st direction of the path", "β: 2nd direction of the path"),
    "random": ("α: random direction 1", "β: random direction 2"),
}
PATH_COLOUR, NOW_COLOUR = "#ffffff", "#d62728"


class LandscapeView(QWidget):
    """Heat map of log(loss) over the plane, contours, and the path from step 0 to now."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setAccessibleName("Loss landscape")
        self.result: Landscape | None = None
        self._busy = False  # a landscape is being gathered or computed (UI-thread state)
        self._wanted = False  # a newer landscape is wanted once the current one is done
        self._seed = 0
        self._names: tuple[str, ...] = ()

        self.mode = FittingComboBox(12)
        self.mode.setAccessibleName("Directions of the plane")
        for key, text in MODE_TEXT.items():
            self.mode.addItem(text, key)
        self.mode.setToolTip(
            "Which plane through the current weights to draw.\n"
            "Path's main directions (PCA): the two directions the weights moved most in "
            "(Li et al. 2018) — the path lies nearly in the plane.\n"
            "Random, filter-normalised: two random directions, each neuron's part scaled "
            "to its weights' size (Li et al. 2018); the path barely shows in them.\n"
            "Two weights: the axes are two weights' own values.")
        self.axis_x, self.axis_y = FittingComboBox(14), FittingComboBox(14)
        for box, which in ((self.axis_x, "horizontal"), (self.axis_y, "vertical")):
            box.setAccessibleName(f"Weight on the {which} axis")
            box.setToolTip(f"The weight whose value is the {which} axis")
        self.new_directions = QPushButton("New directions")
        self.new_directions.setToolTip("Draw two other random directions")
        self.follow = QCheckBox("Follow")
        self.follow.setChecked(True)
        self.follow.setToolTip("Recompute after every step (about once a second while "
                               "running); off: only when you press Recompute")
        self.recompute = QPushButton("Recompute")
        self.recompute.setToolTip("Compute the landscape for the current weights now")
        # The plane's name may elide (FittingComboBox: with "…" and the whole name in
        # its tooltip): the tab must not force the window wider than 1024 px. No
        # "Plane:" before it (the box's tooltip and name say it): at 1024 x 700 its room
        # went to the label and the name read "Path's main directi…".
        top = QHBoxLayout()
        # The name takes what the row has left, up to its whole length (the spacer after
        # it took a share of a short row while the name elided).
        self.mode.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        top.addWidget(self.mode, 1)
        top.addWidget(self.axis_x)
        top.addWidget(self.axis_y)
        top.addWidget(self.new_directions)
        top.addStretch(0)
        top.addWidget(self.follow)
        top.addWidget(self.recompute)

        self.plot = pg.PlotWidget(background="w")
        follow_palette(self.plot)
        self.plot.setAccessibleName("Loss landscape plot")
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        style_plot(item, "β", "α", y_grid=False)
        # Room above for half a label: the colour bar writes its top value at its very
        # top, and its upper half was cut off.
        left, _top, right, bottom = item.layout.getContentsMargins()
        item.layout.setContentsMargins(left, 8, right, bottom)
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        cmap = pg.colormap.get("viridis")
        self.colour_bar = pg.ColorBarItem(colorMap=cmap, interactive=False, width=14,
                                          label="log₁₀ loss")
        self.colour_bar.setImageItem(self.image, insert_in=item)
        self.contours = [pg.IsocurveItem(pen=pg.mkPen(255, 255, 255, 90, width=1))
                         for _ in range(CONTOURS)]
        for contour in self.contours:
            contour.setParentItem(self.image)
        self.path = pg.PlotDataItem(pen=pg.mkPen(PATH_COLOUR, width=2), symbol="o",
                                    symbolSize=4, symbolBrush=PATH_COLOUR, symbolPen=None,
                                    antialias=True)
        self.start = pg.ScatterPlotItem(size=11, symbol="o", brush=None,
                                        pen=pg.mkPen(PATH_COLOUR, width=2))
        self.now = pg.ScatterPlotItem(size=16, symbol="star", brush=pg.mkBrush(NOW_COLOUR),
                                      pen=pg.mkPen("w", width=1))
        for thing in (self.path, self.start, self.now):
            item.addItem(thing)
        self.empty_text = pg.TextItem("", color="#333", anchor=(0.5, 0.5))
        item.addItem(self.empty_text, ignoreBounds=True)

        self.status = QLabel()
        self.status.setAccessibleName("About this landscape")
        self.status.setWordWrap(True)
        self.hover = QLabel()
        self.hover.setAccessibleName("Loss under the mouse")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hover)
        layout.addWidget(self.status)

        self.mode.currentIndexChanged.connect(self._on_mode_changed)
        self.axis_x.currentIndexChanged.connect(self._on_settings_changed)
        self.axis_y.currentIndexChanged.connect(self._on_settings_changed)
        self.new_directions.clicked.connect(self._on_new_directions)
        self.recompute.clicked.connect(self.request)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        controller.pacer.subscribe(self._on_snapshot, Rate.ONCE_A_SECOND)
        self._on_mode_changed()
        self._update_names(controller.snapshot)

    # --- when to compute ------------------------------------------------------------------------
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        self._update_names(snapshot)
        if self.follow.isChecked() and self.isVisible():
            self.request()  # (paced by the FramePacer)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self.request()

    @Slot()
    def request(self) -> None:
        """Compute a landscape for the current weights (after the one running, if any)."""
        if self._busy:
            self._wanted = True
            return
        self._busy, self._wanted = True, False
        mode = self.mode.currentData()
        axes = (max(self.axis_x.currentIndex(), 0), max(self.axis_y.currentIndex(), 0))
        seed = self._seed
        # The path is read by the training process, which owns the trainer; the grid is
        # computed in the landscape thread, from copies (see `_submit`).

        # The last landscape's facts stay readable while the next one is computed.
        shown = self._describe(self.result) if self.result is not None else ""
        self.status.setText(f"{shown} · <i>updating…</i>" if shown
                            else "Computing the landscape…")
        self.controller.ask(Session.landscape_request, mode, axes, seed, callback=self._submit)

    def _submit(self, request: Request | str) -> None:
        def work() -> object:
            return landscape.compute(request) if isinstance(request, Request) else request
        self.controller.pacer.off_thread(self, work, self._on_computed)

    def _on_computed(self, result: object) -> None:
        self._busy = False
        if isinstance(result, LandscapeError):
            result = str(result)
        elif isinstance(result, Exception):  # the view must learn it is done, whatever happened
            result = f"The landscape could not be computed: {result}"
        if isinstance(result, Landscape):
            self.show_landscape(result)
        elif isinstance(result, str):
            self.result = None
            self.status.setText(result)
        if self._wanted:
            self.request()

    # --- settings -------------------------------------------------------------------------------
    def _update_names(self, snapshot: Snapshot) -> None:
        if snapshot.param_names == self._names:
            return
        self._names = snapshot.param_names
        for box, default in ((self.axis_x, 0), (self.axis_y, 1)):
            box.set_texts(self._names, default)

    @Slot()
    def _on_mode_changed(self) -> None:
        mode = self.mode.currentData()
        self.axis_x.setVisible(mode == "parameters")
        self.axis_y.setVisible(mode == "parameters")
        self.new_directions.setVisible(mode == "random")
        self._on_settings_changed()

    @Slot()
    def _on_settings_changed(self) -> None:
        if self.isVisible():
            self.request()

    @Slot()
    def _on_new_directions(self) -> None:
        self._seed += 1
        self.request()

    def set_mode(self, mode: str) -> None:
        self.mode.setCurrentIndex(self.mode.findData(mode))

    # --- drawing --------------------------------------------------------------------------------
    def show_landscape(self, result: Landscape) -> None:
        self.result = result
        with np.errstate(all="ignore"):
            logs = np.log10(np.maximum(result.loss, 1e-12))
        finite = logs[np.isfinite(logs)]
        lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        if hi - lo < 1e-9:
            hi = lo + 1e-9
        shown = np.where(np.isfinite(logs), logs, hi)
        self.image.setImage(shown, autoLevels=False, levels=(lo, hi))
        self.colour_bar.setLevels((lo, hi))
        a, b = result.alphas, result.betas
        da = (a[-1] - a[0]) / max(len(a) - 1, 1)
        db = (b[-1] - b[0]) / max(len(b) - 1, 1)
        # Cell centres on the grid's values.
        self.image.setRect(QRectF(a[0] - da / 2, b[0] - db / 2, (a[-1] - a[0]) + da,
                                  (b[-1] - b[0]) + db))
        for k, contour in enumerate(self.contours):
            contour.setData(shown)
            contour.setLevel(lo + (k + 0.5) * (hi - lo) / len(self.contours))
        xy = result.path_xy
        self.path.setData(xy[:, 0], xy[:, 1])
        self.start.setData(pos=xy[:1])
        self.now.setData(pos=np.zeros((1, 2)))
        self.empty_text.setVisible(len(xy) <= 1)
        # Two short lines: on one, beside the loss curve at 1024 x 700, it ran past
        # both edges of the plot.
        self.empty_text.setText("Step 0: no path yet —\npress Step (Space) and watch it grow")
        self.empty_text.setPos((a[0] + a[-1]) / 2, b[0] + 0.9 * (b[-1] - b[0]))
        item = self.plot.getPlotItem()
        if result.mode == "parameters":
            names = (self.axis_x.currentText(), self.axis_y.currentText())
            item.setLabel("bottom", f"{names[0]} − its current value")
            item.setLabel("left", f"{names[1]} − its current value")
        else:
            item.setLabel("bottom", AXIS_TEXT[result.mode][0])
            item.setLabel("left", AXIS_TEXT[result.mode][1])
        item.setRange(xRange=(a[0], a[-1]), yRange=(b[0], b[-1]), padding=0)
        self.status.setText(self._describe(result))

    def _describe(self, result: Landscape) -> str:
        """One short line (a small window has room for little more); the rest in the
        status's tooltip."""
        steps = int(result.path_steps[-1]) if len(result.path_steps) else 0
        # ★ is the weights now: after the last step's update. The header's train loss is
        # that step's forward pass, before it; saying which keeps the two from disagreeing.
        when = f"after step {steps}'s update" if steps else "the starting weights"
        parts = [f"Loss at ★ ({when}): <b>{fmt(result.center_loss)}</b>",
                 f"path: step 0 (○) → {steps} (★)"]
        if result.mode == "pca" and len(result.path_xy) > 2 and math.isfinite(result.captured):
            parts.append(f"the plane holds {100 * result.captured:.0f}% of its movement")
        elif result.mode == "random" and len(result.path_xy) > 1:
            parts.append("random directions barely see the path")
        n = result.resolution
        self.status.setToolTip(
            f"{n}×{n} grid, computed in {result.seconds:.2f} s off the UI thread.\n"
            "The path's points are each step's weights projected onto the plane; the loss "
            "drawn under them is the plane's, which differs from the step's own loss by "
            "what the plane misses.\n"
            f"★ is the weights after step {steps}'s update. The header's train loss is step "
            f"{steps}'s forward pass, measured before that update: the two differ by what "
            "the update gained.")
        return " · ".join(parts)

    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        result = self.result
        box = self.plot.getPlotItem().getViewBox()
        if result is None or not box.sceneBoundingRect().contains(scene_pos):
            self.hover.setText("")
            return
        p = box.mapSceneToView(scene_pos)
        inside = (result.alphas[0] <= p.x() <= result.alphas[-1]
                  and result.betas[0] <= p.y() <= result.betas[-1])
        if not inside:
            self.hover.setText("")
            return
        self.hover.setText(f"α {p.x():.3g}, β {p.y():.3g}: loss "
                           f"{result.loss_at(p.x(), p.y()):.4g}")

    def export_image(self, path: str | Path) -> None:
        export_plot(self.plot.getPlotItem(), path)

    def shutdown(self) -> None:
        """No landscape is computed after this (the window is closing)."""
        self.controller.pacer.shutdown()
