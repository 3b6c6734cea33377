"""Per-layer statistics over time: each layer's mean |gradient|, and how its activations
are spread -- the picture of vanishing gradients and saturated units.

Top: mean |∂L/∂θ| of every layer per step, on a log axis (a factor of 10 between the
layers is one grid step). Below: one small plot per layer, its outputs' percentiles over
the steps as bands (10-90 % light, 25-75 % darker, the median as a line), as
TensorBoard's distributions show them. Everything comes from the step records
(`gradbox.training.history.LayerStats`), appended as new steps arrive.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, QRectF, QSize, Qt, Slot
from PySide6.QtGui import QResizeEvent, QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gradbox.formatting import number
from gradbox.port.protocol import SessionPort
from gradbox.training.history import QUANTILES, History, layer_names
from gradbox.training.snapshots import Snapshot
from gradbox.views.plots.log_axis import LogAxis
from gradbox.views.plots.plotting import (
    StepAxis,
    follow_palette,
    hint_text,
    plot_colours,
    steady_range,
    style_plot,
)
from gradbox.views.too_small import TooSmall

MAX_LAYER_PLOTS = 6  # activation plots shown; deeper networks show the last ones
# Legend entries named one by one; a deeper network's legend says what the shades mean
# (a 64-layer legend ran to 65 entries, 4,400 characters of label).
MAX_LEGEND_LAYERS = 10
# The readable sizes, in pixels: the gradient plot (the picture the tab is about), and
# each small activation plot -- its title, three ticks and a band. A view too short for
# every small plot at that size shows the gradients alone and says so (`too_small`).
GRAD_MIN_HEIGHT = 150
ACT_MIN_HEIGHT = 80
PLOT_WIDTH = 170  # pixels an activation plot needs; as many per row as fit (1 to 3)
LAYOUT_MARGINS = 24  # the plots' layout's margins (9 + 9) and spacing (6), top to bottom
_BANDS = ((1, 5, 60), (2, 4, 110))  # (low, high) QUANTILES columns and the band's alpha
_MEDIAN = QUANTILES.index(50)
WIDEST_LABEL = "8.88·10⁻⁸⁸"  # three digits and a two-digit power: the longest gradient label
# In short lines: on one, beside the Designer in teacher mode, it ran past both edges.
EMPTY_TEXT = "Press Step (Space):\neach layer's gradient size\nappears here, step by step"


def layer_colours(count: int) -> list[tuple[int, int, int]]:
    """Input side light, output side dark, along one hue ramp: depth reads as shade."""
    cmap = pg.colormap.get("viridis")
    return [tuple(int(c) for c in cmap.map(0.85 - 0.75 * k / max(count - 1, 1), mode="byte"
                                           )[:3]) for k in range(count)]


def _legend(names: list[str], colours: list[tuple[int, int, int]]) -> str:
    """The gradient plot's key: each layer by name, or past MAX_LEGEND_LAYERS, the ends
    of the shade ramp and how many lie between."""
    def entry(name: str, colour: tuple[int, int, int]) -> str:
        # Lines break between entries, never inside one ('■ hidden' over '4').
        return f"<span style='color:rgb{colour}'>■</span>&nbsp;{name.replace(' ', '&nbsp;')}"
    if len(names) <= MAX_LEGEND_LAYERS:
        # Names alone (the plot's axis says mean |gradient|, the tooltip the sizes): in
        # teacher mode's type, beside the Designer, three lines left the small plots
        # short of their room (lesson 10 step 4 at 1024x700).
        return " &nbsp; ".join(entry(n, c) for n, c in zip(names, colours))
    return (f"Mean |gradient| of each of {len(names)} layers: {entry(names[0], colours[0])}"
            f" … {len(names) - 2} layers, shading darker … "
            f"{entry(names[-1], colours[-1])}")


def _short(value: float) -> str:
    return number(value, digits=2)


class LayerStatsView(QWidget):
    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setAccessibleName("Per-layer statistics")
        self._history: History = History.empty()
        self._sizes: tuple[int, ...] = ()
        self._activation = ""
        self._names: list[str] = []
        self._short_names: list[str] = []
        self._act_layers: list[int] = []
        self._dirty = True

        self.graphics = pg.GraphicsLayoutWidget()
        follow_palette(self.graphics)
        self.graphics.setAccessibleName("Gradient size and activation plots per layer")
        self.graphics.setToolTip(
            "Top: each layer's mean |gradient| per step (log scale; light = input side, "
            "dark = output).\nBelow: each hidden layer's outputs over the steps — the "
            "line is the median, the dark band the middle half, the light band 10–90 %.")
        # Its own log axis: pyqtgraph's piles its labels up when the gradients span
        # less than a decade or two (see `log_axis`).
        self.grad_axis = LogAxis("left")
        self.grad_plot = self.graphics.addPlot(
            row=0, col=0, axisItems={"bottom": StepAxis("bottom"), "left": self.grad_axis})
        style_plot(self.grad_plot, "mean |gradient|", "step")
        self.grad_plot.setLogMode(y=True)
        # Wide enough for the longest label it writes, so the plot never jumps sideways.
        self.grad_axis.setWidth(self.grad_axis.width_for(WIDEST_LABEL))
        self.grad_plot.setMinimumHeight(GRAD_MIN_HEIGHT)
        # Above the plot, as text that wraps: in the plot seven layers' names would cover
        # the lines, and beside it they would be cut off in a narrow window.
        self.legend = QLabel()
        self.legend.setAccessibleName("Layer colours")
        self.legend.setWordWrap(True)
        self._columns = 3
        self.empty_text = hint_text(EMPTY_TEXT)
        self.act_row = self.graphics.addLayout(row=1, col=0)
        self.act_row.setContentsMargins(0, 0, 0, 0)  # the row's height is its plots'
        self.graphics.ci.layout.setRowStretchFactor(0, 3)
        self.graphics.ci.layout.setRowStretchFactor(1, 2)
        self.grad_curves: list[pg.PlotDataItem] = []
        self.act_plots: list[pg.PlotItem] = []
        self._act_items: list[dict[str, pg.GraphicsObject]] = []

        self.readout = QLabel()
        self.readout.setAccessibleName("Layer statistics at the latest step")
        self.readout.setWordWrap(True)
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.legend)
        layout.addWidget(self.graphics, 1)
        layout.addWidget(self.readout)
        # Said under the readout while the small plots do not fit (see _fit_rows); over
        # the view's bottom it hid the readout line.
        self.too_small = TooSmall(self, QSize(0, 0), "The layers' small plots", bottom=True,
                                  row=layout)
        # The plots' height changes with the legend's lines too, not only the view's.
        self.graphics.installEventFilter(self)
        controller.snapshot_changed.connect(self._on_snapshot)
        self._on_snapshot(controller.snapshot)

    # --- data -------------------------------------------------------------------------------
    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        sizes = snapshot.layer_sizes
        history = snapshot.history
        if sizes != self._sizes or snapshot.config.activation != self._activation:
            self._sizes, self._activation = sizes, snapshot.config.activation
            self._build_plots()
            self._dirty = True
        # The history's columns are arrays already: nothing to collect step by step.
        if history is not self._history:
            self._dirty = self._dirty or len(history) != len(self._history) or not (
                history.extends(self._history))
            self._history = history
        if self._dirty and self.isVisible():
            self._redraw()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if self._dirty:
            self._redraw()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        columns = int(np.clip(self.width() // PLOT_WIDTH, 1, 3))
        if columns != self._columns and self._sizes:
            self._columns = columns
            self._build_plots()
            self._redraw()
            # The plots' view took its new size before they were laid out in fewer
            # columns, and pyqtgraph held the layout at the old columns' minimum width
            # (560 px in 500 in teacher mode at 1366 x 768: the right column and the
            # gradient plot's end cut off). Laid out again at the size it has.
            self.graphics.ci.setGeometry(QRectF(0, 0, self.graphics.width(),
                                                self.graphics.height()))
        self._fit_rows()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.graphics and event.type() == QEvent.Type.Resize:
            self._fit_rows()
        return False

    def activations_size(self) -> QSize:
        """The smallest view that shows every small plot at its readable size beside
        the gradient plot (nothing, without hidden layers)."""
        count = len(self.act_plots)
        if not count:
            return QSize(0, 0)
        rows = math.ceil(count / self._columns)
        around = self.height() - self.graphics.height()  # the legend, readout, margins
        return QSize(PLOT_WIDTH * min(count, 2),
                     around + LAYOUT_MARGINS + GRAD_MIN_HEIGHT + rows * ACT_MIN_HEIGHT)

    def activations_shown(self) -> bool:
        return self.act_row.isVisible()

    def _fit_rows(self) -> None:
        """The gradient plot and the small plots share the height, each row of small
        plots at least ACT_MIN_HEIGHT; when they cannot all have it, the gradients get
        the room and the overlay says the small plots need more (they were cut off, or
        squashed into 20 px lines, without a word)."""
        needed = self.activations_size()
        self.too_small.set_minimum(needed)
        shown = bool(self.act_plots) and not self.too_small.is_too_small()
        self.act_row.setVisible(shown)
        grid = self.graphics.ci.layout
        room = max(self.graphics.height() - LAYOUT_MARGINS, GRAD_MIN_HEIGHT)
        if shown:
            rows = math.ceil(len(self.act_plots) / self._columns)
            act = min(max(rows * ACT_MIN_HEIGHT, int(0.4 * room)), room - GRAD_MIN_HEIGHT)
            grid.setRowFixedHeight(0, room - act)
            grid.setRowFixedHeight(1, act)
        else:
            grid.setRowMinimumHeight(0, GRAD_MIN_HEIGHT)
            grid.setRowMaximumHeight(0, 100_000)
            grid.setRowFixedHeight(1, 0)

    def stack(self) -> np.ndarray:
        """(steps, layers, columns): every recorded step's table (none if not measured)."""
        table = self._history.layers()
        if table is None:
            return np.zeros((0, max(len(self._sizes) - 1, 0), 2 + len(QUANTILES)))
        return table

    def steps(self) -> np.ndarray:
        if self._history.layers() is None:
            return np.zeros(0)
        return np.asarray(self._history.column("step"), dtype=np.float64)

    # --- drawing ------------------------------------------------------------------------------
    def _build_plots(self) -> None:
        for curve in self.grad_curves:
            self.grad_plot.removeItem(curve)
        self.act_row.clear()
        names = layer_names(self._sizes)
        colours = layer_colours(len(names))
        short = layer_names(self._sizes, sized=False)
        self.legend.setToolTip("Mean |gradient| per layer, by colour: " + ", ".join(names))
        self.grad_curves = [self.grad_plot.plot(pen=pg.mkPen(c, width=2), antialias=True,
                                                symbolBrush=c, symbolPen=None, symbolSize=7)
                            for c in colours]
        self.legend.setText(_legend(short, colours))
        self.act_plots, self._act_items = [], []
        hidden = list(range(len(names) - 1))[-MAX_LAYER_PLOTS:]
        for i, k in enumerate(hidden):
            plot = self.act_row.addPlot(row=i // self._columns, col=i % self._columns,
                                        axisItems={"bottom": StepAxis("bottom")})
            # No grid: with one, pyqtgraph drops the labels at the plot's edges (0 and 1).
            style_plot(plot, "", None, y_grid=False)
            plot.getAxis("left").setWidth(34)
            plot.setMouseEnabled(x=False, y=False)
            colour = colours[k]
            items: dict[str, pg.GraphicsObject] = {}
            for low, high, alpha in _BANDS:
                # An invisible pen, not None: without a pen the edges keep no path
                # and the band between them stays empty.
                lo = pg.PlotDataItem(pen=pg.mkPen(0, 0, 0, 0))
                hi = pg.PlotDataItem(pen=pg.mkPen(0, 0, 0, 0))
                fill = pg.FillBetweenItem(lo, hi, brush=pg.mkBrush(*colour, alpha))
                plot.addItem(lo)
                plot.addItem(hi)
                plot.addItem(fill)
                items[f"{low}"], items[f"{high}"] = lo, hi
            items["median"] = plot.plot(pen=pg.mkPen(colour, width=2))
            if self._activation in ("tanh", "sigmoid"):
                low = -1 if self._activation == "tanh" else 0
                plot.setYRange(low, 1, padding=0.05)
                plot.enableAutoRange(axis="y", enable=False)
                # Three ticks: the range's ends and middle are what matter, and a short
                # plot cannot hold more without overlap.
                ticks = [(v, f"{v:g}") for v in (low, (low + 1) / 2, 1)]
                plot.getAxis("left").setTicks([ticks, []])
            self.act_plots.append(plot)
            self._act_items.append(items)
        self._act_layers = hidden
        self._names, self._short_names = names, short
        if len(names) - 1 > MAX_LAYER_PLOTS:
            self.act_row.addLabel(f"(the last {MAX_LAYER_PLOTS} of {len(names) - 1} hidden "
                                  "layers)", color="#555", row=3, col=0, colspan=self._columns)
        if not hidden:
            self.act_row.addLabel("No hidden layer: nothing is activated", color="#555")
        self._fit_rows()

    def _redraw(self) -> None:
        self._dirty = False
        data = self.stack()
        steps = self.steps()
        empty = len(steps) == 0
        if empty and self.empty_text.scene() is None:
            self.grad_plot.addItem(self.empty_text, ignoreBounds=True)
        self.empty_text.setVisible(empty)
        if empty:
            self.grad_plot.setXRange(0, 10, padding=0)
            self.grad_plot.setYRange(-4, 0, padding=0)
            self.empty_text.setPos(5, -2)
        # A line needs two points: until the second step, the first is drawn as dots.
        symbol = "o" if len(steps) == 1 else None
        for k, curve in enumerate(self.grad_curves):
            # A gradient of exactly 0 has no logarithm: it is left out rather than drawn.
            values = data[:, k, 0] if len(data) else np.zeros(0)
            values = np.where(values > 0, values, np.nan)
            curve.setData(steps, values, connect="finite", symbol=symbol)
        if not empty:
            # Ranges that hold still while the data fits them (as the loss curve's): a
            # moved log axis chooses its labels afresh, 1-4 ms each time.
            steady_range(self.grad_plot, float(steps[-1]))
        for items, k in zip(self._act_items, self._act_layers):
            q = data[:, k, 2:] if len(data) else np.zeros((0, len(QUANTILES)))
            for low, high, _ in _BANDS:
                items[f"{low}"].setData(steps, q[:, low])
                items[f"{high}"].setData(steps, q[:, high])
            items["median"].setData(steps, q[:, _MEDIAN], symbol=symbol, symbolSize=5,
                                    symbolPen=None, symbolBrush=items["median"].opts["pen"].color())
        self._update_titles(data)
        self._update_readout(data)

    def _update_titles(self, data: np.ndarray) -> None:
        """Each activation plot's title: the layer, and its share of flat outputs now."""
        flat = "at 0" if self._activation == "relu" else "saturated"
        for plot, k in zip(self.act_plots, self._act_layers):
            title = self._short_names[k]  # the size is in the legend's tooltip
            if len(data) and math.isfinite(data[-1, k, 1]):
                title += f" · {100 * data[-1, k, 1]:.0f}% {flat}"
            # the axes' text colour: dark on white, light on a dark theme's plot (its
            # #222 could not be read there, seen in the real window)
            colour = plot_colours()[2].name()
            plot.setTitle(f"<span style='color:{colour}'>{title}</span>", size="8pt")

    def _update_readout(self, data: np.ndarray) -> None:
        """One short line (a small window has room for little more); every layer's
        number in the tooltip."""
        if len(data) == 0:
            self.readout.setText("No steps yet.")
            self.readout.setToolTip("")
            return
        names = self._names
        last = data[-1]
        parts = [f"<b>Step {int(self.steps()[-1])}</b>"]
        first, out = last[0, 0], last[-1, 0]
        if len(names) > 1 and first > 0 and math.isfinite(out / first):
            # The factor alone (each layer's mean in the tooltip): on one line in teacher
            # mode's type beside the Designer, where three lines took the small plots' room.
            parts.append(f"output layer / first layer: <b>{out / first:.3g}×</b>")
        else:
            parts.append(f"mean |grad| {_short(out)}")
        self.readout.setText(" · ".join(parts))
        self.readout.setToolTip("Mean |gradient| of each layer's weights and biases now:\n"
                                + "\n".join(f"{name}: {_short(last[k, 0])}"
                                            for k, name in enumerate(names)))
