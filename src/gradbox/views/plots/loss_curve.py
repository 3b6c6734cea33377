"""The loss curve: train/test loss (and the ghost run's), accuracy and gradient norm per step."""

from __future__ import annotations

import html
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Slot
from PySide6.QtGui import QFont, QFontMetricsF, QPen, QResizeEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from gradbox.formatting import counted, number, percent
from gradbox.port.frame_pacer import Rate
from gradbox.port.protocol import SessionPort
from gradbox.training.history import History
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import ParameterEdit
from gradbox.views.label_holder import LabelHolder
from gradbox.views.plots.pinned_overlay import PinnedOverlay
from gradbox.views.plots.plotting import (
    EDIT,
    GHOST,
    GRAD,
    TEST,
    TRAIN,
    StepAxis,
    add_curve,
    edit_text,
    export_plot,
    fit_left_axes,
    follow_palette,
    hint_text,
    penalty_text,
    plot_colours,
    steady_range,
    style_plot,
)
from gradbox.views.plots.skipped_marker import LABEL as SKIPPED_LABEL
from gradbox.views.plots.skipped_marker import SkippedZeroGradMarker

# Columns kept per step, in StepRecord field names.
FIELDS = ("step", "loss", "test_loss", "ghost_loss", "accuracy", "test_accuracy", "grad_norm")
THIN_LIMIT = 1000  # steps up to which the curves are drawn 2 px wide
EMPTY_TEXT = "Press Step (Space) to train:\neach step's loss appears here"
LEGEND_ROW, LEGEND_SPACING, LEGEND_MARGIN = 24, 10, 4  # px: a row, between entries, edges
LEFT_AXIS = 56  # px: the left axes' least width (titles and labels like "100%")
READOUT_LINES = 2  # the readout's height, reserved: the plots above it never move
READOUT_TIP = ("The values of the step under the mouse, or of the step the run is at (the "
               "latest, unless the timeline is moved back)")
SEPARATOR, MORE = " · ", "…"


def _plain_text(rich: str) -> str:
    """The words of a readout part, as measured on screen ("<b>Step 3</b>" -> "Step 3")."""
    return html.unescape(re.sub(r"<[^>]+>", "", rich))


def _edit_pen() -> QPen:
    return pg.mkPen(EDIT, width=1.5, style=Qt.PenStyle.DashLine)


class LossCurveView(QWidget):
    """Three stacked plots sharing the step axis: loss, accuracy, gradient norm."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setAccessibleName("Loss curve")
        self._records: History = History.empty()
        self._hover_step: int | None = None
        self._drawn = False
        self._behind = False  # snapshots came while hidden: drawn when shown (or read)
        self._edits: tuple[ParameterEdit, ...] = ()
        # One marker per step that weights were typed in after (several edits share it).
        self.edit_markers: dict[int, pg.InfiniteLine] = {}

        self.graphics = pg.GraphicsLayoutWidget()
        follow_palette(self.graphics)
        self.graphics.setAccessibleName("Loss, accuracy and gradient norm plots")
        self.graphics.setToolTip("Move the mouse over the plots to read the values of a step")
        # The legend has a row of its own above the plots, so it never covers a curve (the
        # newest steps, on the right, least of all). Below it the loss, which is what
        # people watch, over the full width; under that accuracy and gradient norm side
        # by side, each tall enough for its axis label.
        self.loss_legend = pg.LegendItem(labelTextColor=plot_colours()[2], colCount=4,
                                         horSpacing=LEGEND_SPACING)
        # Its width must not set the plots': a pinned run's entry ('pinned: optimizer sgd
        # → adam, lr 0.5 → 0.1') made the plots' layout ~500 px in a ~250-350 px panel, the
        # loss plot's right part and the gradient-norm plot cut off. Too long, it is cut.
        self.loss_legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.loss_legend.setMinimumWidth(0)
        self.loss_legend.setMaximumHeight(LEGEND_ROW)
        self._legend_key: tuple[int, int] | None = None
        self.graphics.addItem(self.loss_legend, row=0, col=0, colspan=2)
        layout = self.graphics.ci.layout
        layout.setAlignment(self.loss_legend, Qt.AlignmentFlag.AlignLeft
                            | Qt.AlignmentFlag.AlignVCenter)
        self.loss_plot = self.graphics.addPlot(row=1, col=0, colspan=2,
                                               axisItems={"bottom": StepAxis("bottom")})
        self.accuracy_plot, self.grad_plot = (
            self.graphics.addPlot(row=2, col=col, axisItems={"bottom": StepAxis("bottom")})
            for col in range(2))
        layout.setRowStretchFactor(0, 0)
        layout.setRowFixedHeight(0, LEGEND_ROW)
        layout.setRowStretchFactor(1, 3)
        layout.setRowStretchFactor(2, 2)
        # Horizontal grid lines only: they help read a value off the curve, while vertical
        # ones add little (the hover readout gives the step) and are redrawn on every step
        # as the step axis grows.
        style_plot(self.loss_plot, "loss")
        # No "step" under the axes: the numbers say it, and the height goes to the curves.
        style_plot(self.accuracy_plot, "accuracy")
        style_plot(self.grad_plot, "grad norm")
        self.graphics.setMinimumHeight(170)
        # The plots under the loss number their own steps (side by side, they cannot share
        # its axis: pyqtgraph links views by screen position).
        self.loss_plot.getAxis("bottom").setStyle(showValues=False)
        # Line the loss and accuracy plots up: same room for the left axis, as wide as
        # the widest of their tick labels and title need (see _fit_axes).
        for plot in (self.loss_plot, self.accuracy_plot, self.grad_plot):
            plot.getAxis("left").setWidth(LEFT_AXIS)
            plot.getViewBox().sigYRangeChanged.connect(self._fit_axes)
            # A curve is drawn from at most about two points per pixel column (the
            # highest and lowest of the steps under it: 'peak' keeps every spike): a long
            # run's curves cost a frame about what a short one's do. (Not clipped to the
            # view: the range shows every step anyway.)
            plot.setDownsampling(auto=True, mode="peak")
        # Accuracy is a fraction: a fixed 0..100% axis, so a jump of 1% looks like one.
        self.accuracy_plot.setYRange(0, 1, padding=0.04)
        self.accuracy_plot.setMouseEnabled(x=True, y=False)
        self.accuracy_plot.enableAutoRange(axis="y", enable=False)
        accuracy_axis = self.accuracy_plot.getAxis("left")
        accuracy_axis.setTicks([[(0.0, "0%"), (0.5, "50%"), (1.0, "100%")],
                                [(0.25, ""), (0.75, "")]])
        # 0% and 100% sit on the plot's edges. pyqtgraph lets edge labels overflow a little,
        # except on an axis that draws grid lines, where it drops them: no y grid here.
        self.accuracy_plot.showGrid(x=False, y=False)

        self.curves: dict[str, pg.PlotDataItem] = {
            "loss": add_curve(self.loss_plot, TRAIN, "train"),
            "test_loss": add_curve(self.loss_plot, TEST, "test"),
            "ghost_loss": add_curve(self.loss_plot, GHOST, "correct run (ghost)", dashed=True),
            "accuracy": add_curve(self.accuracy_plot, TRAIN),
            "test_accuracy": add_curve(self.accuracy_plot, TEST),
            "grad_norm": add_curve(self.grad_plot, GRAD),
        }
        # One legend: train is blue and test orange in the loss and accuracy plots alike
        # (test and ghost are listed once they have something to show).
        self.loss_legend.addItem(self.curves["loss"], "train")
        self._legend_labels = {"test_loss": "test", "ghost_loss": "correct run (ghost)"}
        # Compare runs: a pinned run's curves, dotted under these.
        self.pinned = PinnedOverlay(controller, self.loss_plot, self.accuracy_plot,
                                    self.loss_legend)
        # The steps after the one shown while the timeline is moved back: faded, kept.
        self.ahead_curves: dict[str, pg.PlotDataItem] = {}
        for name, curve in self.curves.items():
            faded = pg.mkColor(curve.opts["pen"].color())
            faded.setAlpha(70)
            plot = {"accuracy": self.accuracy_plot, "test_accuracy": self.accuracy_plot,
                    "grad_norm": self.grad_plot}.get(name, self.loss_plot)
            self.ahead_curves[name] = plot.plot(pen=pg.mkPen(faded, width=2),
                                                connect="finite")
        self._ahead_key: tuple[int, int] | None = None
        # The markers' entry in the legend (a stand-in: the legend draws curves' pens).
        # Clicking it hides the markers, as clicking a curve's entry hides the curve.
        self._edit_sample = pg.PlotDataItem(pen=_edit_pen())
        self._edit_sample.visibleChanged.connect(self._on_edit_sample_toggled)
        # Forget zero_grad: a band over the steps that skipped it (lesson "Forget zero_grad").
        self.skipped = SkippedZeroGradMarker(self.loss_plot)

        self.empty_text = hint_text(EMPTY_TEXT)
        self.loss_plot.addItem(self.empty_text, ignoreBounds=True)
        self.crosshairs = [pg.InfiniteLine(angle=90, movable=False,
                                           pen=pg.mkPen("#999", style=Qt.PenStyle.DotLine))
                           for _ in range(3)]
        for plot, line in zip((self.loss_plot, self.accuracy_plot, self.grad_plot),
                              self.crosshairs):
            plot.addItem(line, ignoreBounds=True)
            line.hide()

        self.log_scale = QCheckBox("Log scale")
        self.log_scale.setAccessibleName("Logarithmic loss axis")
        self.log_scale.setToolTip("Show the loss and gradient norm on a logarithmic axis, "
                                  "where slow late progress is easier to see (a value of "
                                  "exactly 0 is drawn at the bottom)")
        self.readout = QLabel()
        self.readout.setAccessibleName("Values at the hovered step")
        self.readout.setToolTip(READOUT_TIP)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        # The readout's words change at every step: they must never set the panel's (and
        # so the window's) width, nor its height, or the plots would be laid out again
        # mid-run, or squeezed under it in a small window. It keeps READOUT_LINES lines,
        # filled with whole values; what does not fit is in its tooltip.
        self.readout.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.readout.installEventFilter(self)
        self._readout_parts: list[str] = []
        self._reserve_readout_lines()
        bottom = QHBoxLayout()
        bottom.addWidget(self.pinned.pin_button)
        bottom.addWidget(self.pinned.unpin_button)
        bottom.addStretch(1)
        bottom.addWidget(self.log_scale)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.graphics, 1)
        # Held: its words change at every step, and must not lay out the window again.
        self._readout_holder = LabelHolder(self.readout)
        layout.addWidget(self._readout_holder)
        layout.addLayout(bottom)

        self.log_scale.toggled.connect(self._on_log_toggled)
        self.graphics.scene().sigMouseMoved.connect(self._on_mouse_moved)
        # Leaving the plots sends no move event; the readout must return to the latest step.
        self.graphics.installEventFilter(self)
        self._penalty = ""
        controller.snapshot_changed.connect(self._on_snapshot)
        controller.pacer.subscribe(self._on_readout_turn, Rate.TEN_HZ)
        self._on_snapshot(controller.snapshot)

    # --- data ---------------------------------------------------------------------------------
    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        if self._drawn and not self.isVisible():
            # Another tab or workspace shows (the graph tab hides this dock): the curves,
            # their ranges and axes (W1: ~1 ms of UI-thread CPU a frame while running,
            # 2.5 ms for a single Step) are brought up to date when shown, or read.
            self._behind = True
            return
        self._draw(snapshot)

    def _catch_up(self) -> None:
        if self._behind:
            self._draw(self.controller.snapshot)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._catch_up()

    def _draw(self, snapshot: Snapshot) -> None:
        self._behind = False
        # The training loss is what backward differentiates: data loss plus any L1/L2
        # penalty. Test loss is the data loss alone, so say which is which.
        config = snapshot.config
        self.pinned.update(snapshot)
        self._penalty = penalty_text(config)
        history = snapshot.history
        old = self._records
        # The same steps as last time (a snapshot of a phase, of an edit) draw nothing.
        same = len(history) == len(old) and (history is old or history.extends(old))
        self._records = history
        edits_changed = snapshot.edits != self._edits
        if edits_changed:
            self._show_edits(snapshot.edits)
        if not same or not self._drawn:
            self._drawn = True
            self._redraw()
        elif edits_changed:
            self._update_readout()
        self._show_ahead(len(history))
        self.skipped.update(history)
        self._set_legend(self.loss_legend, self.skipped.sample, SKIPPED_LABEL,
                         bool(self.skipped.shown))
        self._fit_legend()
        self._fit_ranges()
        if self._hover_step is not None and self._hover_step > max(
                len(history), self.pinned.last_step()):
            self.show_step(self._hover_step)  # unpinned under the mouse: back onto the run

    def _fit_legend(self) -> None:
        """As many legend entries to a row as the width holds, in one or more rows.

        One row of train, test, ghost, pinned, edited and zero_grad entries is wider than
        the panel at 1024 x 700, and a legend wider than the plots widens them past the
        panel's edge. Laid out again only when the entries or the width change."""
        items = self.loss_legend.items
        key = (len(items), self.graphics.width())
        if key == self._legend_key or not items:
            return
        self._legend_key = key
        room = self.graphics.width() - 2 * LEGEND_MARGIN
        legend = self.loss_legend
        for columns in range(len(items), 0, -1):  # a handful of entries: measure each way
            legend.setColumnCount(columns)
            if legend.layout.effectiveSizeHint(Qt.SizeHint.PreferredSize).width() <= room:
                break
        rows = math.ceil(len(items) / columns)
        height = LEGEND_ROW + (rows - 1) * (LEGEND_ROW - 4)  # rows closer than one's margin
        self.loss_legend.setMaximumHeight(height)
        self.graphics.ci.layout.setRowFixedHeight(0, height)

    def _fit_ranges(self) -> None:
        """Range the plots to what they hold, moving an axis only when the data needs it
        (see `steady_range`: a range that follows every step costs a third of a frame)."""
        pinned = self.pinned.last_step()
        if not len(self._records) and not pinned:
            return  # the hint's fixed range stays
        last = float(self._records.column("step")[-1]) if len(self._records) else 0.0
        last = max(last, float(pinned))  # a longer pinned run shows whole
        ahead = self.controller.ahead
        if ahead is not None and len(ahead):  # the faded steps kept ahead count too
            last = max(last, float(ahead.column("step")[-1]))
        if self.edit_markers:  # an edit after the latest step shows at once
            last = max(last, max(self.edit_markers) + 0.5)
        for plot in (self.loss_plot, self.accuracy_plot, self.grad_plot):
            steady_range(plot, last, y=plot is not self.accuracy_plot)
        if self.empty_text.isVisible():  # over a pinned run: the hint in the middle
            (x0, x1), (y0, y1) = self.loss_plot.getViewBox().viewRange()
            self.empty_text.setPos((x0 + x1) / 2, (y0 + y1) / 2)

    def _fit_axes(self) -> None:
        """The three left axes as wide as the widest needs (at least LEFT_AXIS): with a
        fixed 56 px, labels like 0.0125 or 0.00013 ran over the "grad norm" title."""
        fit_left_axes((self.loss_plot, self.accuracy_plot, self.grad_plot), LEFT_AXIS)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_axes()  # a taller axis writes more (and other) labels

    def _show_ahead(self, shown: int) -> None:
        """While the timeline is moved back, the later steps it keeps are drawn faded
        from the step shown on."""
        ahead = self.controller.ahead
        key = (id(ahead), shown) if ahead is not None and len(ahead) > shown else None
        if key == self._ahead_key:
            return
        self._ahead_key = key
        for name, curve in self.ahead_curves.items():
            if key is None or ahead is None:
                curve.setData([], [])
                continue
            start = max(shown - 1, 0)  # from the step shown, so the faded line joins it
            curve.setData(ahead.column("step")[start:].astype(np.float64),
                          ahead.column(name)[start:])

    def _show_edits(self, edits: tuple[ParameterEdit, ...]) -> None:
        """A dashed line between the step an edit followed and the first step to use it."""
        self._edits = edits
        by_step: dict[int, list[ParameterEdit]] = defaultdict(list)
        for edit in edits:
            by_step[edit.step].append(edit)
        for step in set(self.edit_markers) - set(by_step):  # rewound or reset past them
            self.loss_plot.removeItem(self.edit_markers.pop(step))
        for step, group in by_step.items():
            marker = self.edit_markers.get(step)
            if marker is None:
                marker = pg.InfiniteLine(pos=step + 0.5, angle=90, movable=False,
                                         pen=_edit_pen(), hoverPen=pg.mkPen(EDIT, width=3))
                marker.setVisible(self._edit_sample.isVisible())
                # A flag at the top tells it from the grey hover crosshair at a glance;
                # just below the top, since the plot clips a flag right at the edge in half.
                marker.addMarker("v", position=0.96, size=10)
                # Counted in the range: an edit made after the latest step shows at once.
                self.loss_plot.addItem(marker)
                self.edit_markers[step] = marker
            marker.setToolTip(self._edit_tip(step, group))
        self._set_legend(self.loss_legend, self._edit_sample, "edited by hand", bool(edits))

    @Slot()
    def _on_edit_sample_toggled(self) -> None:
        for marker in self.edit_markers.values():
            marker.setVisible(self._edit_sample.isVisible())

    @staticmethod
    def _edit_tip(step: int, group: list[ParameterEdit]) -> str:
        undo = (f"Rewind to step {step - 1} or earlier, or Reset, to undo"
                if step else "Reset to undo")
        lines = [f"Typed in by hand after step {step} (step {step + 1} is the first to "
                 "train with it):", *(edit_text(e) for e in group), undo]
        return "\n".join(lines)

    def edits_after(self, step: int) -> list[ParameterEdit]:
        """The edits made after `step` steps, i.e. just before step `step + 1`."""
        self._catch_up()
        return [e for e in self._edits if e.step == step]

    def data(self, name: str) -> np.ndarray:
        """One column of the plotted history ("step", "loss", "test_loss", ...)."""
        self._catch_up()
        return self._records.column(name).astype(np.float64)

    def _redraw(self) -> None:
        steps = self.data("step")
        columns = {name: self.data(name) for name in self.curves}
        if self.log_scale.isChecked():
            self._floor_zeros(columns, ("loss", "test_loss", "ghost_loss"))
            self._floor_zeros(columns, ("grad_norm",))
        # Qt strokes 2-px lines through its slow general path (several ms per curve for a
        # few thousand points); past THIN_LIMIT steps the curves are drawn 1 px wide,
        # which takes Qt's fast path and is dense enough to read just as well.
        width = 1.0 if len(steps) > THIN_LIMIT else 2.0
        for name, curve in self.curves.items():
            pen = curve.opts["pen"]
            if pen.widthF() != width:
                pen = pg.mkPen(pen)
                pen.setWidthF(width)
                curve.setPen(pen)
            finite = bool(np.isfinite(columns[name]).any())
            if not finite and curve.xData is not None and len(curve.xData) == 0:
                continue  # nothing to draw, as last time (no test set, no ghost run)
            # A line needs two points: until the second step, draw the first as a dot.
            dot = len(steps) == 1 and finite
            if not finite:
                curve.setData([], [])
                continue
            curve.setData(steps, columns[name], symbol="o" if dot else None,
                          symbolSize=7, symbolPen=None, symbolBrush=pen.color())
        # Test and ghost curves exist only when there is something to show.
        self._show_optional("test_loss", self.loss_legend)
        self._show_optional("ghost_loss", self.loss_legend)
        self.curves["test_accuracy"].setVisible(
            bool(np.isfinite(self.data("test_accuracy")).any()))
        # Regression has no classes to get right: its accuracy is NaN at every step, and
        # the accuracy plot gives its room to the loss.
        self._show_accuracy(len(steps) == 0 or bool(np.isfinite(self.data("accuracy")).any()))
        empty = len(steps) == 0
        self.empty_text.setVisible(empty)
        if empty and not self.pinned.last_step():
            # Put the hint in the middle of a range that a first step will replace; the
            # plots under it empty alike (after a Reset they kept the old run's steps
            # and grad norms on their axes, with no curve).
            for plot in (self.loss_plot, self.accuracy_plot, self.grad_plot):
                plot.setXRange(0, 10, padding=0)
            for plot in (self.loss_plot, self.grad_plot):
                plot.setYRange(0, 1, padding=0)
            self.empty_text.setPos(5, 0.5)
        # A rewind may have cut off the hovered step: clamp it (hides it when empty). The
        # readout's words, while a fast Run goes on, ten times a second (its own tier):
        # read at sixty a second they were a blur, and cost a rich-text layout and a
        # repaint pass a frame.
        self.show_step(self._hover_step,
                       readout=not self.controller.pacer.paces(Rate.TEN_HZ))

    @staticmethod
    def _floor_zeros(columns: dict[str, np.ndarray], names: tuple[str, ...]) -> None:
        """On a log axis, draw values <= 0 (a hinge loss of exactly 0) at the bottom.

        Their logarithm does not exist, so pyqtgraph would leave a gap exactly where
        training succeeded. They go a little below the smallest positive value shown;
        the readout still gives the true value.
        """
        values = np.concatenate([columns[n] for n in names])
        positive = values[np.isfinite(values) & (values > 0)]
        floor = positive.min() / 2 if len(positive) else 1e-3
        for n in names:
            column = columns[n]
            columns[n] = np.where(np.isfinite(column) & (column <= 0), floor, column)

    def _show_accuracy(self, shown: bool) -> None:
        """A regression has no accuracy: its plot leaves the layout and the grad norm
        takes its row's whole width. (Hidden in place, it left a blank beside the grad
        norm, and the loss plot's row lost its share: a 60 px strip, sine with MAE.)"""
        if shown == self.accuracy_plot.isVisible():
            return
        ci = self.graphics.ci
        ci.removeItem(self.grad_plot)
        if shown:
            ci.addItem(self.accuracy_plot, row=2, col=0)
            ci.addItem(self.grad_plot, row=2, col=1)
        else:
            ci.removeItem(self.accuracy_plot)
            ci.addItem(self.grad_plot, row=2, col=0, colspan=2)
        self.accuracy_plot.setVisible(shown)

    def _show_optional(self, name: str, legend: pg.LegendItem) -> None:
        present = bool(np.isfinite(self.data(name)).any())
        self.curves[name].setVisible(present)
        self._set_legend(legend, self.curves[name], self._legend_labels[name], present)

    @staticmethod
    def _set_legend(legend: pg.LegendItem, curve: pg.PlotDataItem, label: str,
                    present: bool) -> None:
        listed = legend.getLabel(curve) is not None
        if present and not listed:
            legend.addItem(curve, label)
        elif not present and listed:
            legend.removeItem(curve)

    # --- hover ----------------------------------------------------------------------------------
    def _on_mouse_moved(self, scene_pos: QPointF) -> None:
        for plot in (self.loss_plot, self.accuracy_plot, self.grad_plot):
            box = plot.getViewBox()
            if box.sceneBoundingRect().contains(scene_pos):
                # Halves round up, so an edit marker (at k + 0.5) reads as step k + 1,
                # the first step to train with the edit (round() would alternate).
                self.show_step(math.floor(box.mapSceneToView(scene_pos).x() + 0.5))
                return
        self.show_step(None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.graphics and event.type() == QEvent.Type.Leave:
            self.show_step(None)
        elif watched is self.graphics and event.type() == QEvent.Type.Resize:
            self._fit_legend()
        elif watched is self.readout and event.type() == QEvent.Type.Resize:
            self._fill_readout()
        elif watched is self.readout and event.type() == QEvent.Type.FontChange:
            self._reserve_readout_lines()  # teacher mode: lines of the new size
        return super().eventFilter(watched, event)

    def show_step(self, step: int | None, readout: bool = True) -> None:
        """Put the crosshair and the readout on `step`, or None: latest. The step is clamped
        to the run, or to the pinned run where that goes further (its values still show)."""
        self._catch_up()
        reach = max(len(self._records), self.pinned.last_step())
        if step is None or reach == 0:
            self._hover_step = None
        else:
            self._hover_step = min(max(int(step), 1), reach)
        for line in self.crosshairs:
            line.setVisible(self._hover_step is not None)
            if self._hover_step is not None:
                line.setValue(self._hover_step)
        if readout:
            self._update_readout()

    def _on_readout_turn(self, _snapshot: Snapshot) -> None:
        if not self._behind:  # (hidden: read again when shown)
            self._update_readout()  # (the frame has taken in the snapshot's steps)

    def _update_readout(self) -> None:
        n = len(self._records)
        kept = self.kept_ahead()
        if self._hover_step is not None and self._hover_step > n:
            # Past this run's last step, over the pinned run's longer curves.
            where = f"this run is at step {n}" if n else "this run has no steps yet"
            self._set_readout([f"<b>Step {self._hover_step}</b>", where,
                               *self.pinned.readout(self._hover_step)])
            return
        if n == 0:
            first = f"<b>Step 0 {kept}</b>" if kept else "No steps yet"
            self._set_readout([first, *self._edit_parts(0, "")])
            return
        i = (self._hover_step or n) - 1
        c = {f: float(self._records.column(f)[i]) for f in FIELDS}
        # The step the run is at is the latest only when the timeline is at the end.
        where = f"Step {int(c['step'])}" + ("" if self._hover_step else
                                             f" {kept or '(latest)'}")
        penalty = f" (+{self._penalty})" if self._penalty else ""  # as the headline says
        parts = [f"<b>{where}</b>", f"train loss {number(c['loss'])}{penalty}"]
        if math.isfinite(c["test_loss"]):
            parts.append(f"test loss {number(c['test_loss'])}")
        if math.isfinite(c["ghost_loss"]):
            parts.append(f"ghost loss {number(c['ghost_loss'])}")
        if self.accuracy_plot.isVisible():
            accuracy = f"accuracy {percent(c['accuracy'])}"
            if math.isfinite(c["test_accuracy"]):
                accuracy += f" train / {percent(c['test_accuracy'])} test"
            parts.append(accuracy)
        parts.append(f"grad norm {number(c['grad_norm'])}")  # as its axis says
        parts += self.pinned.readout(int(c["step"]))
        step = int(c["step"])
        parts += self._edit_parts(step - 1, "before this step")
        if step == n:
            parts += self._edit_parts(step, "after this step")
        self._set_readout(parts)

    def _reserve_readout_lines(self) -> None:
        margins = self.readout.contentsMargins()
        height = (READOUT_LINES * self.readout.fontMetrics().lineSpacing()
                  + margins.top() + margins.bottom() + 2)
        self.readout.setFixedHeight(height)
        holder = getattr(self, "_readout_holder", None)
        if holder is not None:
            holder.setFixedHeight(height)

    def _set_readout(self, parts: list[str]) -> None:
        """Show `parts` (rich text, most important first) in the readout's lines."""
        self._readout_parts = parts
        self._fill_readout()

    def _fill_readout(self) -> None:
        """Whole parts, line by line, in the order given; a part that does not fit on
        the last line ends it with "…", and the tooltip lists every part."""
        width = self.readout.contentsRect().width() - 4
        plain = QFontMetricsF(self.readout.font())
        bold_font = QFont(self.readout.font())
        bold_font.setBold(True)
        bold = QFontMetricsF(bold_font)
        sep = plain.horizontalAdvance(SEPARATOR)
        more = plain.horizontalAdvance(" " + MORE)
        lines: list[list[str]] = [[]]
        used = 0.0
        left_out = False
        for part in self._readout_parts:
            metrics = bold if part.startswith("<b>") else plain
            w = metrics.horizontalAdvance(_plain_text(part))
            if lines[-1] and used + sep + w > width:
                if len(lines) == READOUT_LINES:
                    left_out = True
                    break
                lines.append([])
                used = 0.0
            used += (sep if lines[-1] else 0.0) + w
            lines[-1].append(part)
        if left_out:
            while len(lines[-1]) > 1 and used + more > width:  # room for the "…"
                dropped = lines[-1].pop()
                used -= sep + plain.horizontalAdvance(_plain_text(dropped))
        text = "<br>".join(SEPARATOR.join(line) for line in lines)
        self.readout.setText(text + (f" {MORE}" if left_out else ""))
        tip = READOUT_TIP
        if left_out:
            tip += ":\n" + "\n".join(_plain_text(part) for part in self._readout_parts)
        if self.readout.toolTip() != tip:
            self.readout.setToolTip(tip)

    def kept_ahead(self) -> str:
        """'(timeline; 40 steps kept ahead)' while the timeline is moved back, else ''."""
        self._catch_up()
        ahead = self.controller.ahead
        later = len(ahead) - len(self._records) if ahead is not None else 0
        return f"(timeline; {counted(later, 'step')} kept ahead)" if later > 0 else ""

    def _edit_parts(self, step: int, when: str) -> list[str]:
        edits = self.edits_after(step)
        if not edits:
            return []
        what = ", ".join(edit_text(e) for e in edits)
        label = f"edited by hand {when}".rstrip()
        return [f"<span style='color:{EDIT}'>✎ {label}: {what}</span>"]

    # --- controls ------------------------------------------------------------------------------
    @Slot(bool)
    def _on_log_toggled(self, on: bool) -> None:
        for plot in (self.loss_plot, self.grad_plot):
            plot.setLogMode(y=on)
        self._redraw()
        self._fit_ranges()

    def export_image(self, path: str | Path) -> None:
        """Save all three plots as one PNG (or other raster format) or, for .svg, SVG."""
        self._catch_up()
        export_plot(self.graphics.ci, path)
