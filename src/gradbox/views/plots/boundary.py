"""The decision boundary: the model's output over the plane, with the data on top.

Left-click a point to select it (the graph view then shows that sample), left-click
empty space to add a point of the picked class (Shift: the next class), right-click a
point to remove it - the ConvNetJS demo's interaction.

For regression the same view shows what the network predicts: over the plane a heat map
of the predicted number (orange below zero, blue above, as Playground draws it) with each
point in its target's colour; for a 1-D function y = f(x) the fitted curve over the
points, and a click adds a point where it lands (its height is its target).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from pyqtgraph.GraphicsScene.mouseEvents import MouseClickEvent
from PySide6.QtCore import QPointF, QRectF, Qt, Slot
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap, QShowEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from gradbox.formatting import fmt
from gradbox.port.protocol import SessionPort
from gradbox.training.datasets import ONE_D_KINDS
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.views.fitting_combo import FittingComboBox
from gradbox.views.plots.batch_overlay import BatchOverlay
from gradbox.views.plots.heatmap import (
    HEATMAP_WORK,
    MAX_GRID,
    PADDING,
    heatmap_colours,
    heatmap_resolution,
    value_colours,
    value_scale,
)
from gradbox.views.plots.plotting import (
    CLASS_COLOURS,
    CLASS_NAMES,
    export_plot,
    follow_palette,
    style_plot,
)

PICK_PIXELS = 8.0  # how close (in screen pixels) a click must be to hit a point
REMOVE_PIXELS = 20.0  # a right-click far from every point removes nothing (no surprises)
CURVE_SAMPLES = 400  # points along the fitted curve of a 1-D function
CURVE_POINTS = (90, 90, 90)  # the data under a fitted curve: neutral, the curve is blue


def _swatch(colour: str) -> QIcon:
    pixmap = QPixmap(14, 14)
    pixmap.fill(QColor(colour))
    return QIcon(pixmap)


class DecisionBoundaryView(QWidget):
    """Heatmap of the model's output over the plane; points, selection and editing on top."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setAccessibleName("Decision boundary")
        self._version: int | None = None  # dataset_version the points were drawn for
        self._points = np.zeros((0, 2))
        self._labels = np.zeros(0, dtype=np.int64)
        self._is_test = np.zeros(0, dtype=bool)
        self._targets: np.ndarray | None = None
        self.mode = "classes"  # or "heat map" (regression over the plane) or "curve" (1-D)
        self._grid = np.zeros((0, 2))
        self._grid_rect = QRectF()
        self.grid_size = MAX_GRID  # heatmap cells per side, chosen per network size
        # What the heatmap shows: (params, config) it was computed from, and on which grid.
        self._heatmap_key: tuple[object, ...] | None = None
        self.heatmaps_computed = 0
        self._behind = False  # snapshots came while hidden
        self._shown_once = False  # (the first snapshot is drawn, shown or not)

        self.class_picker = FittingComboBox(6)
        self.class_picker.setAccessibleName("Class of new points")
        self.class_picker.setToolTip("The class a left-click on empty space adds; "
                                     "Shift+click adds the next class instead")
        # "0 (orange)" where there is room; narrower, "0 (ora…" and the swatch.
        self.hint = QLabel("Click: add a point · Shift+click: the next class · "
                           "Right-click: remove · Click a point: select it")
        self.hint.setAccessibleName("Mouse help")
        self.hint.setToolTip("How to edit the data with the mouse, as in the ConvNetJS demo")
        self.hint.setWordWrap(True)

        self.plot = pg.PlotWidget(background="w")
        follow_palette(self.plot)
        self.plot.setAccessibleName("Decision boundary plot")
        # Bilinear scaling of the heatmap: a smooth boundary instead of 100x100 stairs.
        self.plot.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
        self.plot.setToolTip("The model's prediction over the plane: the hue is the "
                             "predicted class, the strength its confidence. Filled dots "
                             "are training points, hollow ones test points.")
        item = self.plot.getPlotItem()
        # Right-click removes points here, so pyqtgraph's context menu must not open.
        item.setMenuEnabled(False)
        self.view_box = item.getViewBox()
        self.view_box.setAspectLocked(True)  # a circle in the data must look round
        self.view_box.disableAutoRange()
        # No grid: its lines would cross the heatmap's colours and the points.
        style_plot(item, "y", "x", y_grid=False)

        self.image = pg.ImageItem(axisOrder="row-major")
        # ignoreBounds: the heatmap follows the visible range, it must not drive it.
        item.addItem(self.image, ignoreBounds=True)
        # A regression's colour scale beside the plot (shown for a heat map only): the
        # plot's aspect is locked, so there is width to spare and none to take from above.
        self.value_bar = pg.ColorBarItem(values=(-1.0, 1.0), width=12, interactive=False)
        self.value_bar.axis.setPen(pg.mkPen("#555"))
        self.value_bar.axis.setTextPen(pg.mkPen("#222"))
        # Half a label's height inside the plot's top and bottom: the end labels stay whole.
        self.value_bar.layout.setContentsMargins(0, 8, 0, 8)
        self.value_bar.setVisible(False)  # placed beside the plot by _show_value_bar
        self._plot_item = item
        # The fitted function of a 1-D dataset, drawn under the points.
        self.curve = pg.PlotDataItem(pen=pg.mkPen(CLASS_COLOURS[1], width=2.5),
                                     antialias=True)
        item.addItem(self.curve, ignoreBounds=True)
        self.scatter = pg.ScatterPlotItem(size=9, antialias=True)
        item.addItem(self.scatter)
        self.ring = pg.ScatterPlotItem(size=20, symbol="o", brush=None, antialias=True,
                                       pen=pg.mkPen("#111", width=2.5))
        item.addItem(self.ring, ignoreBounds=True)
        self.batch = BatchOverlay(item)  # the last step's mini-batch, and hover losses
        self._train_brushes = [pg.mkBrush(c) for c in CLASS_COLOURS]
        self._train_pen = pg.mkPen("w", width=1.2)
        self._test_pens = [pg.mkPen(c, width=2.2) for c in CLASS_COLOURS]
        self._test_brush = pg.mkBrush(255, 255, 255, 170)

        # A key for the marks, which the class colours alone do not explain; above the
        # plot rather than in it, where it would hide points in a small dock.
        # Each mark bound to its word (a fold between them left "○" at the end of one
        # line and "test" on the next, beside the Designer at 1024 x 700).
        self.key = QLabel("<span style='color:#777'>●</span>&nbsp;train &nbsp; "
                          "<span style='color:#777'>○</span>&nbsp;test &nbsp; "
                          "<b>◯</b>&nbsp;selected")
        self.key.setAccessibleName("Key to the point marks")
        self.key.setWordWrap(True)  # folds onto two lines rather than widen the window
        self.key.setToolTip("Filled points are training data, hollow ones test data; the "
                            "ringed point is the sample selected for the graph view; framed "
                            "points were in the last step's mini-batch. Hover a point for "
                            "its loss")
        top = QHBoxLayout()
        self.picker_label = picker_label = QLabel("New points:")
        picker_label.setBuddy(self.class_picker)
        top.addWidget(picker_label)
        top.addWidget(self.class_picker)
        top.addStretch(1)
        top.addWidget(self.batch.toggle)
        top.addWidget(self.key)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(top)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.hint)  # below the plot: a full-width line is room enough

        controller.snapshot_changed.connect(self._on_snapshot)
        controller.sample_selected.connect(self._on_sample_selected)
        self.plot.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        # A zoom, pan or resize shows new ground: the heatmap is recomputed for it.
        self.view_box.sigRangeChanged.connect(self._on_range_changed)
        self._on_snapshot(controller.snapshot)

    # --- rendering ------------------------------------------------------------------------
    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        if self._shown_once and not self.isVisible():
            self._behind = True  # another tab shows: drawn when this one is shown
            return
        self._draw(snapshot)

    def _draw(self, snapshot: Snapshot) -> None:
        self._behind = False
        self._shown_once = True
        mode = _mode(snapshot)
        if mode != self.mode:
            self._set_mode(mode)
        if self._data_changed(snapshot):
            self._show_points(snapshot)
        self._update_heatmap(snapshot)
        self.batch.update(snapshot)

    def _set_mode(self, mode: str) -> None:
        """Classes, a heat map of a regression over the plane, or a fitted 1-D curve."""
        self.mode = mode
        self._version = None  # redraw the points in the new mode's colours
        self._grid_rect = QRectF()  # and frame them afresh
        # A curve y = f(x) spans ±5 across and ±1 up: equal scales would flatten it.
        self.view_box.setAspectLocked(mode != "curve")
        self.image.setVisible(mode != "curve")
        self.curve.setVisible(mode == "curve")
        self._show_value_bar(mode == "heat map")
        if mode == "curve":
            self.curve.setData([], [])
        # On a curve a click's height is the new point's target: nothing to pick.
        self.class_picker.setVisible(mode != "curve")
        self.picker_label.setVisible(mode != "curve")
        tips = {
            "classes": ("Click: add a point · Shift+click: the next class · Right-click: remove"
                        " · Click a point: select it",
                        "The model's prediction over the plane: the hue is the predicted "
                        "class, the strength its confidence. Filled dots are training points, "
                        "hollow ones test points."),
            "heat map": ("Click: add a point with the picked target · Right-click: remove · "
                         "Click a point: select it",
                         "The number the model predicts over the plane: orange below 0, blue "
                         "above, stronger further from 0, full at the largest target's size "
                         "(the bar on the right). Each point has its target's colour; hollow ones "
                         "are test points."),
            "curve": ("Click: add a point there (its height is its target) · Right-click: "
                      "remove · Click a point: select it",
                      "The function the model has fitted (the line) over the points it is "
                      "fitted to: x is the input, y the target. Hollow points are test "
                      "points."),
        }
        self.hint.setText(tips[mode][0])
        self.plot.setToolTip(tips[mode][1])
        self._update_class_picker(2, force=True)

    def _show_value_bar(self, shown: bool) -> None:
        layout = self._plot_item.layout
        placed = self.value_bar.parentItem() is not None
        if shown and not placed:
            layout.addItem(self.value_bar, 2, 5)  # after the right axis, as pyqtgraph does
            layout.setColumnFixedWidth(4, 5)
        elif not shown and placed:
            layout.removeItem(self.value_bar)
            self.value_bar.setParentItem(None)
            self._plot_item.scene().removeItem(self.value_bar)
            layout.setColumnFixedWidth(4, 0)
        self.value_bar.setVisible(shown)

    def _set_value_scale(self, scale: float) -> None:
        """The bar runs from -scale (full orange) through white to +scale (full blue),
        in the heat map's own colours, with both ends written out."""
        values = np.linspace(-scale, scale, 65)
        self.value_bar.setColorMap(pg.ColorMap(np.linspace(0.0, 1.0, len(values)),
                                               value_colours(values, scale=scale)))
        self.value_bar.setLevels((-scale, scale))
        text = fmt(scale, digits=2)
        self.value_bar.axis.setTicks([[(-scale, f"−{text}"), (0.0, "0"), (scale, f"+{text}")]])
        self.value_bar.setToolTip(
            f"The predicted number's colour: white at 0, orange below, blue above; full "
            f"from −{text} and +{text} on -- the largest target in the data, in size, so the "
            "whole scale is used. Each point has its target's colour on this scale")

    def _data_changed(self, snapshot: Snapshot) -> bool:
        """Whether the points differ from those drawn.

        dataset_version alone is not enough: a new Trainer (new data or network from the
        designer) starts counting at 0 again. Comparing 2 x n floats costs microseconds.
        """
        return (snapshot.dataset_version != self._version
                or not np.array_equal(snapshot.points, self._points)
                or not np.array_equal(snapshot.labels, self._labels)
                or not np.array_equal(snapshot.is_test, self._is_test)
                or not _same(snapshot.targets, self._targets))

    def _show_points(self, snapshot: Snapshot) -> None:
        """Points only change with the data, not every step: redrawn on a new version."""
        self._version = snapshot.dataset_version
        self._points = np.asarray(snapshot.points)
        self._labels = np.asarray(snapshot.labels)
        self._is_test = np.asarray(snapshot.is_test)
        self._targets = snapshot.targets
        self._fit_range(self._points)
        # The data's classes, not the network's outputs: the dataset refuses other labels.
        self._update_class_picker(snapshot.classes)
        test = snapshot.is_test
        if self.mode == "classes" or snapshot.targets is None:
            labels = snapshot.labels % len(CLASS_COLOURS)
            brushes = [self._test_brush if t else self._train_brushes[c]
                       for c, t in zip(labels.tolist(), test.tolist())]
            pens = [self._test_pens[c] if t else self._train_pen
                    for c, t in zip(labels.tolist(), test.tolist())]
        else:
            # A point's colour is its target, on the heat map's scale at full strength;
            # a dark rim keeps a near-zero (white) target visible on a white background.
            scale = value_scale(snapshot.targets)
            full = value_colours(snapshot.targets, tint=1.0, scale=scale)
            self._set_value_scale(scale)
            if self.mode == "curve":
                full[:] = CURVE_POINTS  # the height says it all; colour would repeat it
            brushes = [self._test_brush if t else pg.mkBrush(*rgb)
                       for rgb, t in zip(full.tolist(), test.tolist())]
            # A hollow (test) point's ring: its target's colour, darkened so that a target
            # near 0 (white) still shows on the white ground.
            rings = np.rint(0.55 * full + 0.45 * 60).astype(int)
            pens = [pg.mkPen(*ring, width=2.2) if t else pg.mkPen("#333", width=1.0)
                    for ring, t in zip(rings.tolist(), test.tolist())]
        self.scatter.setData(x=self._points[:, 0], y=self._points[:, 1],
                             brush=brushes, pen=pens)
        self._on_sample_selected(self.controller.selected_sample)

    def _fit_range(self, points: np.ndarray) -> None:
        """Frame the data, but keep the current frame while the data still fits it well.

        Adding a point inside the view or removing one must not make the plot jump.
        """
        if len(points) == 0:
            return
        lo, hi = points.min(axis=0), points.max(axis=0)
        if self._grid_rect.isValid():
            # Every point still visible (a click always lands inside the view) and the
            # data still filling a good part of it (not a new, much smaller dataset).
            (x0, x1), (y0, y1) = self.view_box.viewRange()
            inside = lo[0] >= x0 and hi[0] <= x1 and lo[1] >= y0 and hi[1] <= y1
            snug = (hi[0] - lo[0]) > 0.5 * (x1 - x0) or (hi[1] - lo[1]) > 0.5 * (y1 - y0)
            if inside and snug:
                return
        span = np.maximum(hi - lo, 1.0)
        lo, hi = lo - PADDING * span, hi + PADDING * span
        self.view_box.setRange(QRectF(QPointF(lo[0], lo[1]), QPointF(hi[0], hi[1])),
                               padding=0)

    def _update_class_picker(self, classes: int, force: bool = False) -> None:
        if self.class_picker.count() == classes and not force:
            return
        current = max(self.class_picker.currentIndex(), 0)
        self.class_picker.clear()
        for k in range(classes):
            colour = CLASS_COLOURS[k % len(CLASS_COLOURS)]
            if self.mode == "classes":
                text = f"{k} ({CLASS_NAMES[k % len(CLASS_NAMES)]})"
            else:  # regression over the plane: class k adds a point of target -1 or +1
                text = f"target {2 * k - 1:+d} ({CLASS_NAMES[k % len(CLASS_NAMES)]})"
            self.class_picker.addItem(_swatch(colour), text)
        self.class_picker.setCurrentIndex(min(current, classes - 1))

    def grid_points(self) -> np.ndarray:
        """The (n*n, 2) points the heatmap was last computed at, row by row from y0."""
        return self._grid

    def _make_grid(self) -> None:
        (x0, x1), (y0, y1) = self.view_box.viewRange()
        n = self.grid_size
        self._grid_rect = QRectF(x0, y0, x1 - x0, y1 - y0)
        # Cell centres, so the image rect (cell edges) lines up with the data exactly.
        xs = x0 + (np.arange(n) + 0.5) * (x1 - x0) / n
        ys = y0 + (np.arange(n) + 0.5) * (y1 - y0) / n
        gx, gy = np.meshgrid(xs, ys)
        self._grid = np.column_stack([gx.ravel(), gy.ravel()])

    def curve_points(self) -> tuple[np.ndarray, np.ndarray]:
        """The fitted curve as drawn (1-D functions): x across the view, the prediction."""
        x, y = self.curve.getData()
        return (np.zeros(0), np.zeros(0)) if x is None else (np.asarray(x), np.asarray(y))

    def _update_curve(self, snapshot: Snapshot) -> None:
        (x0, x1), _ = self.view_box.viewRange()
        xs = np.linspace(x0, x1, CURVE_SAMPLES)
        with np.errstate(all="ignore"):
            # The network sees x alone (the features of x₁); the y column is unused.
            ys = snapshot.predict(np.column_stack([xs, np.zeros_like(xs)]))[:, 0]
        finite = np.isfinite(ys)
        self.curve.setData(xs[finite], ys[finite])

    def _update_heatmap(self, snapshot: Snapshot) -> None:
        """Recompute the heatmap if the model or the grid changed, and only if it shows."""
        if not self.isVisible():
            return  # done in showEvent: a hidden tab costs nothing while training runs
        if self.mode == "curve":
            self._update_curve(snapshot)
            return
        n = heatmap_resolution(len(snapshot.params))
        if len(self._grid) == 0 or n != self.grid_size:
            self.grid_size = n
            self._make_grid()
        # The weights' revision says whether the model changed (a selection, a history
        # fetch, a phase that moved no weight: the same picture); the rest is the grid
        # and how outputs become colours. (Regression targets scale the colours: the
        # dataset's version covers them.)
        key = (snapshot.run_id, snapshot.params_rev, snapshot.dataset_version,
               self._grid_rect, n, self.mode, snapshot.config.effective_loss)
        if key == self._heatmap_key:
            return
        self._heatmap_key = key
        grid = self._grid
        if n * n * len(snapshot.params) <= HEATMAP_WORK:
            self._show_heatmap(grid, heatmap_colours(snapshot, grid))
        else:
            # A big network's grid (a 1000x1000 network: a billion multiply-adds, half a
            # second) on the pacer's worker thread: numpy's products let go of the
            # interpreter lock, and an image late by a step beats a frozen window.
            self.controller.pacer.off_thread(
                self, lambda: heatmap_colours(snapshot, grid),
                lambda colours: self._show_heatmap(grid, colours))

    def _show_heatmap(self, grid: np.ndarray, colours: np.ndarray | BaseException) -> None:
        if isinstance(colours, BaseException):
            return  # (a network that cannot be evaluated: the last picture stays)
        if grid is not self._grid:
            return  # computed for a view range that is gone; a newer one is on its way
        n = self.grid_size
        self.heatmaps_computed += 1
        self.image.setImage(colours.reshape(n, n, 3), autoLevels=False)
        self.image.setRect(self._grid_rect)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if self._behind:
            self._draw(self.controller.snapshot)
        else:
            self._update_heatmap(self.controller.snapshot)

    @Slot(object, object)
    def _on_range_changed(self, *_args: object) -> None:
        self._make_grid()
        self._update_heatmap(self.controller.snapshot)

    @Slot(int)
    def _on_sample_selected(self, index: int) -> None:
        if 0 <= index < len(self._points):
            self.ring.setData(pos=self._points[index: index + 1])
        else:
            self.ring.setData(pos=np.zeros((0, 2)))

    # --- interaction ------------------------------------------------------------------------
    def _nearest(self, x: float, y: float) -> tuple[int, float]:
        """Index of the point nearest to (x, y) and its distance in screen pixels."""
        if len(self._points) == 0:
            return -1, float("inf")
        sx, sy = self.view_box.viewPixelSize()
        d = np.hypot((self._points[:, 0] - x) / sx, (self._points[:, 1] - y) / sy)
        i = int(np.argmin(d))
        return i, float(d[i])

    def _on_mouse_clicked(self, event: MouseClickEvent) -> None:
        pos = event.scenePos()
        if event.double() or not self.view_box.sceneBoundingRect().contains(pos):
            return
        point = self.view_box.mapSceneToView(pos)
        x, y = point.x(), point.y()
        index, pixels = self._nearest(x, y)
        button = event.button()
        if button == Qt.MouseButton.LeftButton:
            if pixels <= PICK_PIXELS:
                self.controller.select_sample(index)
            else:
                label = max(self.class_picker.currentIndex(), 0)
                if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    label = (label + 1) % max(self.class_picker.count(), 1)
                target = None
                if self.mode == "heat map":
                    target = 2.0 * label - 1.0
                elif self.mode == "curve":
                    target, label = y, int(y > 0)
                self.controller.send(Session.add_point, x, y, label, target=target)
            event.accept()
        elif button == Qt.MouseButton.RightButton and pixels <= REMOVE_PIXELS:
            px, py = self._points[index]
            self.controller.send(Session.remove_point, float(px), float(py))
            event.accept()

    # --- export ---------------------------------------------------------------------------

    def export_image(self, path: str | Path) -> None:
        """Save the plot as PNG (or any raster format Qt knows) or, for .svg, as SVG."""
        if self._behind:
            self._draw(self.controller.snapshot)
        export_plot(self.plot.getPlotItem(), path)


def _mode(snapshot: Snapshot) -> str:
    if snapshot.targets is None:
        return "classes"
    return "curve" if snapshot.config.dataset in ONE_D_KINDS else "heat map"


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return np.array_equal(a, b)
