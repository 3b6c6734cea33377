"""What the plots share: the colours, axes and background that follow the palette, and
image/SVG export.

One place for these, so the boundary, the loss curve and the parameter history look like
one application (the same blue means the same thing everywhere) and an export fix is made
once.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFontMetricsF, QGuiApplication, QPalette
from PySide6.QtWidgets import QGraphicsItem

from gradbox.training.config import TrainingConfig
from gradbox.training.state import ParameterEdit, edit_text, weight  # noqa: F401  (read here by the views)
from gradbox.views import palette
from gradbox.views.palette import (  # noqa: F401 (re-exported: the plots import them here)
    CLASS_COLOURS,
    CLASS_NAMES,
    EDIT,
    GHOST,
    GRAD,
    TEST,
    TRAIN,
)

# Signs use the classes' colours (gradbox.views.palette): blue positive, orange negative.
POSITIVE, NEGATIVE = QColor(palette.POSITIVE), QColor(palette.NEGATIVE)

AXIS_PEN, AXIS_TEXT = "#555", "#222"


def plot_colours(palette: QPalette | None = None) -> tuple[QColor, QColor, QColor]:
    """(background, axis, axis text) for the palette (the application's by default):
    white with dark axes in a light theme, the theme's base with its text colour for the
    axes in a dark one (the plots stayed white panels in a dark desktop theme)."""
    palette = palette or QGuiApplication.palette()
    base = palette.color(QPalette.ColorRole.Base)
    if base.lightness() >= 128:
        return QColor("white"), QColor(AXIS_PEN), QColor(AXIS_TEXT)
    text = palette.color(QPalette.ColorRole.Text)
    return base, text.darker(130), text


def _dark_plots() -> bool:
    return plot_colours()[0] != QColor("white")


# The train blue is too dark to see on a dark plot (contrast 2.5 on #1e1e1e): there it is
# drawn in the light blue of the phase line (views/palette.py), the same hue.
_TRAIN_ON = {False: QColor(TRAIN), True: QColor(palette.NEXT_ON_DARK)}


def curve_colour(colour: str) -> str:
    """The colour to draw a curve (or a mark's text) of `colour` in, on the plots'
    current ground: the train blue and the alarm red are too dark on a dark plot."""
    if _dark_plots():
        return {TRAIN: palette.NEXT_ON_DARK, palette.ALARM: palette.ALARM_ON_DARK}.get(
            colour, colour)
    return colour


def _recolour_train(item: pg.PlotDataItem, dark: bool) -> None:
    """A train-blue curve (line, dots, faded or dotted alike) in the other ground's blue."""
    old, new = _TRAIN_ON[not dark], _TRAIN_ON[dark]
    pen = pg.mkPen(item.opts["pen"])
    if pen.color().rgb() == old.rgb():
        colour = QColor(new)
        colour.setAlpha(pen.color().alpha())
        pen.setColor(colour)
        item.setPen(pen)
    brush = item.opts.get("symbolBrush")
    if brush is not None and pg.mkBrush(brush).color().rgb() == old.rgb():
        item.setSymbolBrush(pg.mkBrush(new))


# A plot's hint ("Press Step (Space) …") is marked so the follower knows to recolour it: its
# grey on white is unreadable on a dark plot (#555 on #1e1e1e: contrast 2.4).
_HINT = "gradbox_plot_hint"


def hint_text(text: str) -> pg.TextItem:
    """A plot's centred hint in the axes' grey, recoloured with the palette like the axes."""
    item = pg.TextItem(text, color=plot_colours()[1], anchor=(0.5, 0.5))
    item.setData(0, _HINT)
    return item


class _PaletteFollower(QObject):
    """Recolours one plot widget when its palette changes (see follow_palette)."""

    def __init__(self, widget: pg.GraphicsView) -> None:
        super().__init__(widget)
        self.widget = widget

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        # Show too: plots added while it was hidden (the Layers tab's) take the colours.
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange,
                            QEvent.Type.Show):
            # after the event: the widget's palette is resolved anew by then
            QTimer.singleShot(0, self, self.apply)  # (not after the widget is gone)
        return False

    def apply(self) -> None:
        background, pen, text = plot_colours()  # the desktop theme: the application's
        self.widget.setBackground(background)
        dark = background != QColor("white")
        for item in self.widget.scene().items():
            if isinstance(item, pg.PlotDataItem):
                _recolour_train(item, dark)
            elif isinstance(item, pg.AxisItem):
                item.setPen(pg.mkPen(pen))
                item.setTextPen(pg.mkPen(text))
            elif isinstance(item, pg.LegendItem):
                item.setLabelTextColor(text)
            elif isinstance(item, pg.TextItem) and item.data(0) == _HINT:
                item.setColor(pen)


def follow_palette(widget: pg.GraphicsView) -> None:
    """The plot widget's background and axes follow the window's palette, now and at
    every change (a dark theme included)."""
    follower = _PaletteFollower(widget)
    widget.installEventFilter(follower)
    follower.apply()


def style_plot(plot: pg.PlotItem, left: str, bottom: str | None = None, *,
               x_grid: bool = False, y_grid: bool = True) -> None:
    """Axes in the palette's colours: dark on white in a light theme (pyqtgraph's
    defaults are for black), light on a dark theme's base (see plot_colours)."""
    _background, pen, text = plot_colours()
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(pen))
        axis.setTextPen(pg.mkPen(text))
        # "loss (x0.001)" with ticks 300..800 reads as a loss of 300: plain numbers only.
        axis.enableAutoSIPrefix(False)
        # An axis is repainted whenever a curve next to it changes (their rectangles
        # touch), replaying all its ticks and text: several ms a frame for a plot's two
        # axes. Cached as a pixmap, it is redrawn only when its own range changes.
        axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    plot.setLabel("left", left)
    if bottom is not None:
        plot.setLabel("bottom", bottom)
    if x_grid or y_grid:
        plot.showGrid(x=x_grid, y=y_grid, alpha=0.15)
    # The "A" auto-range button is a mystery to newcomers; the plots range themselves.
    plot.hideButtons()


class StepAxis(pg.AxisItem):
    """An axis of training steps: whole numbers only, so no tick reads "step 2.5"; and
    along the bottom, labels never closer than their own width (the loss curve's small
    plots read "200040006000" at 1024x700 once a run passed 2,000 steps: pyqtgraph
    limits the share of the axis its labels fill, not how close they stand)."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float  # noqa: N802, N803
                    ) -> list[tuple[float, float]]:
        least = 1.0
        if self.orientation in ("bottom", "top") and maxVal > minVal and size > 0:
            font = self.style.get("tickFont") or self.font()
            widest = max(abs(minVal), abs(maxVal))
            text = f"{-widest if minVal < 0 else widest:.0f}"
            room = QFontMetricsF(font).horizontalAdvance(text) + LABEL_GAP_PX
            least = max(least, room * (maxVal - minVal) / size)
        levels = [(spacing, offset) for spacing, offset in
                  super().tickSpacing(minVal, maxVal, size) if spacing >= least]
        return levels or [(nice_at_least(least), 0.0)]


LABEL_GAP_PX = 8  # between two tick labels along the bottom


def nice_at_least(value: float) -> float:
    """The smallest of 1, 2, 5 times a power of ten that is at least `value` (>= 1)."""
    power = 10.0 ** math.floor(math.log10(max(value, 1.0)))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)


def left_axis_width(axis: pg.AxisItem, levels: int = 2) -> int:
    """The width a left axis needs for its title and the tick labels it writes at its
    present range and height (the first `levels` levels: pyqtgraph writes no more).

    A fixed width narrower than that puts the labels over the title: "grad norm" ran
    into 0.0125 (37 px of text in 34 px beside it)."""
    low, high = axis.range
    size = axis.geometry().height()
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low or size <= 0:
        return 0
    font = axis.style.get("tickFont") or axis.font()
    metrics = QFontMetricsF(font)
    widest = 0.0
    for spacing, values in axis.tickValues(low, high, size)[:levels]:
        for text in axis.tickStrings(values, axis.scale, spacing):
            widest = max(widest, metrics.horizontalAdvance(text))
    title = axis.label.boundingRect().height() if axis.label.isVisible() else 0.0
    return math.ceil(title + widest + max(0, axis.style["tickLength"])
                     + axis.style["tickTextOffset"][0] + 2)


def fit_left_axes(plots: Sequence[pg.PlotItem], least: int) -> None:
    """Give `plots`' left axes one width, the widest their titles and tick labels need
    (`left_axis_width`) and at least `least`: lined up, and no label over a title."""
    width = max([least] + [left_axis_width(p.getAxis("left")) for p in plots])
    for plot in plots:
        axis = plot.getAxis("left")
        if axis.width() != width:
            axis.setWidth(width)


def add_curve(plot: pg.PlotItem, colour: str, name: str | None = None, *,
              dashed: bool = False, dots: bool = False) -> pg.PlotDataItem:
    """A 2-px line that stays cheap however long the run gets."""
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    colour = curve_colour(colour)
    pen = pg.mkPen(colour, width=2, style=style)
    symbol = {"symbol": "o", "symbolSize": 4, "symbolBrush": colour,
              "symbolPen": None} if dots else {}
    # connect="finite": a missing value (a NaN test loss) leaves a gap, not a dive to 0.
    curve = plot.plot(pen=pen, name=name, connect="finite", antialias=True, **symbol)
    # Long runs stay cheap: draw at most ~ one point per pixel of what is visible.
    curve.setDownsampling(auto=True, method="peak")
    curve.setClipToView(True)
    return curve


# The "nice" upper ends a growing step axis snaps to: each at most a third past the last,
# so the curve always fills three quarters of the width or more.
_NICE = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def nice_ceiling(value: float) -> float:
    """The smallest m * 10^k >= value with m in 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 (>= 10)."""
    if not math.isfinite(value) or value <= 10:
        return 10.0
    scale = 10.0 ** math.floor(math.log10(value))
    return next(m * scale for m in _NICE if m * scale >= value)


def steady_range(plot: pg.PlotItem, last_step: float | None, *, y: bool = True) -> None:
    """Range a plot over steps to its data, moving the range only when the data needs it.

    pyqtgraph's auto-range follows every new point: on a growing curve both axes change
    at every step, and each change regenerates their ticks and text and repaints the plot
    whole (a third of a frame's time on the loss curve). Here the step axis runs from 0 to
    a nice number above `last_step` (None: leave it) that grows by jumps, and the value
    axis stays where it is while the data fills at least half of it, then moves with a
    margin. Auto-range is switched off: call this after each change of the data (items
    added with `ignoreBounds` do not count).
    """
    view = plot.getViewBox()
    if any(view.autoRangeEnabled()):
        view.disableAutoRange()
    if last_step is not None:
        # From the caller, not from the items' bounds: a curve clipped to the view
        # reports only what is in view, so the range would creep up a notch a frame.
        want = [0.0, nice_ceiling(last_step)]
        if view.viewRange()[0] != want:
            view.setXRange(*want, padding=0)
    if not y:
        return
    y0, y1 = view.viewRange()[1]
    bounds = view.childrenBounds()[1]
    if bounds is None:
        return
    lo, hi = bounds
    span = hi - lo if hi > lo else max(abs(hi), 1.0) * 0.1
    inside = y0 <= lo and hi <= y1
    if not inside or (hi - lo) < 0.5 * (y1 - y0):
        # A margin of 5 % on the side the data is still, 15 % where it is heading.
        below = 0.15 if lo < y0 else 0.05
        above = 0.15 if hi > y1 else 0.05
        view.setYRange(lo - below * span, hi + above * span, padding=0)


def penalty_text(config: TrainingConfig) -> str:
    """"L1 + L2", "L2" or '': the penalties the training loss includes (the test loss is
    the data loss alone)."""
    return " + ".join(name for name, on in (("L1", config.l1), ("L2", config.l2)) if on)


def export_plot(item: QGraphicsItem, path: str | Path) -> None:
    """Export a pyqtgraph item (a PlotItem, a GraphicsLayout) to PNG/JPEG/... or SVG."""
    path = str(path)
    if not path.lower().endswith(".svg"):
        # The exporter reports a failed write only by returning False.
        if not pyqtgraph.exporters.ImageExporter(item).export(path):
            raise OSError(f"could not write {path} (is the folder there and writable, "
                          "and is the name one of an image type?)")
        return
    try:
        pyqtgraph.exporters.SVGExporter(item).export(path)
    except ValueError:
        # pyqtgraph 0.14's SVG exporter cannot parse the "Z" (close path) that Qt >= 6.9
        # writes in path data (pyqtgraph issue #3495). Retry with each "Z" spelled out
        # as a line back to the subpath's start, which draws the same shape.
        with _explicit_path_closing():
            pyqtgraph.exporters.SVGExporter(item).export(path)


def _spell_out_closing(d: str) -> str:
    tokens, start = [], ""
    for token in re.sub(r"[Zz]", " Z ", d).split():
        if token[0] in "Mm":
            start = token[1:]
        if token == "Z":
            if start:
                tokens.append("L" + start)
            continue
        tokens.append(token)
    return " ".join(tokens)


@contextlib.contextmanager
def _explicit_path_closing() -> Iterator[None]:
    module = importlib.import_module("pyqtgraph.exporters.SVGExporter")
    original = module.correctCoordinates

    def correct(node: Any, defs: Any, item: Any, options: Any) -> Any:
        for element in node.getElementsByTagName("path"):
            element.setAttribute("d", _spell_out_closing(element.getAttribute("d")))
        return original(node, defs, item, options)

    module.correctCoordinates = correct
    try:
        yield
    finally:
        module.correctCoordinates = original
