"""What the plots share: the colours, dark axes on white, and image/SVG export.

One place for these, so the boundary, the loss curve and the parameter history look like
one application (the same blue means the same thing everywhere) and an export fix is made
once.
"""

from __future__ import annotations

import contextlib
import importlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyqtgraph as pg
import pyqtgraph.exporters
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem

from gradbox.formatting import fmt
from gradbox.training import ParameterEdit, TrainingConfig

# TensorFlow Playground's orange and blue for the two classes (negative score = class 0
# = orange, positive = class 1 = blue, its sign convention and ours), then well-separated
# hues for up to six blobs.
CLASS_COLOURS = ("#f59322", "#0877bd", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
CLASS_NAMES = ("orange", "blue", "green", "red", "purple", "brown")
# Signs use the classes' colours: a positive gradient is blue like a positive score.
POSITIVE, NEGATIVE = QColor(CLASS_COLOURS[1]), QColor(CLASS_COLOURS[0])

# Curves: one colour per quantity, whichever plot shows it.
TRAIN, TEST, GHOST, GRAD = "#1f5fa8", "#e8710a", "#6b6b6b", "#8e44ad"
# Weights typed in by hand: a colour no curve uses, so a marker is never read as data.
EDIT = "#c2185b"

AXIS_PEN, AXIS_TEXT = "#555", "#222"


def style_plot(plot: pg.PlotItem, left: str, bottom: str | None = None, *,
               x_grid: bool = False, y_grid: bool = True) -> None:
    """Dark axes on the white background (pyqtgraph's defaults are for black)."""
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setPen(pg.mkPen(AXIS_PEN))
        axis.setTextPen(pg.mkPen(AXIS_TEXT))
        # "loss (x0.001)" with ticks 300..800 reads as a loss of 300: plain numbers only.
        axis.enableAutoSIPrefix(False)
    plot.setLabel("left", left)
    if bottom is not None:
        plot.setLabel("bottom", bottom)
    if x_grid or y_grid:
        plot.showGrid(x=x_grid, y=y_grid, alpha=0.15)
    # The "A" auto-range button is a mystery to newcomers; the plots range themselves.
    plot.hideButtons()


class StepAxis(pg.AxisItem):
    """An axis of training steps: whole numbers only, so no tick reads "step 2.5"."""

    def tickSpacing(self, minVal: float, maxVal: float, size: float  # noqa: N802, N803
                    ) -> list[tuple[float, float]]:
        levels = [(spacing, offset) for spacing, offset in
                  super().tickSpacing(minVal, maxVal, size) if spacing >= 1]
        return levels or [(1.0, 0.0)]


def add_curve(plot: pg.PlotItem, colour: str, name: str | None = None, *,
              dashed: bool = False, dots: bool = False) -> pg.PlotDataItem:
    """A 2-px line that stays cheap however long the run gets."""
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    pen = pg.mkPen(colour, width=2, style=style)
    symbol = {"symbol": "o", "symbolSize": 4, "symbolBrush": colour,
              "symbolPen": None} if dots else {}
    # connect="finite": a missing value (a NaN test loss) leaves a gap, not a dive to 0.
    curve = plot.plot(pen=pen, name=name, connect="finite", antialias=True, **symbol)
    # Long runs stay cheap: draw at most ~ one point per pixel of what is visible.
    curve.setDownsampling(auto=True, method="peak")
    curve.setClipToView(True)
    return curve


def weight(value: float) -> str:
    """A weight for people: 4 significant digits, and "2.0" rather than "2" so that a
    round number still reads as a weight, not a count."""
    text = fmt(value)
    return text + ".0" if text.lstrip("-").isdigit() else text


def penalty_text(config: TrainingConfig) -> str:
    """"L1 + L2", "L2" or '': the penalties the training loss includes (the test loss is
    the data loss alone)."""
    return " + ".join(name for name, on in (("L1", config.l1), ("L2", config.l2)) if on)


def edit_text(edit: ParameterEdit) -> str:
    """"layers.0.neurons.1.w.0: 0.3 → 2.0"."""
    return f"{edit.name}: {weight(edit.old)} → {weight(edit.new)}"


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
