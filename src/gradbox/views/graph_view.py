"""The live computation graph: network level and operation level, with backward replayed.

Thin by design: what to draw comes from `gradbox.graph` (trace, layout, details,
colour classes); this widget only turns it into scene items. Items are made once
per graph *structure*; a training step only changes their text and colour.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QResizeEvent,
    QTransform,
    QWheelEvent,
)
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from gradbox import graph as g
from gradbox.graph import Graph, NetworkLevel

# Scene units per layout unit, and node size (op level).
DX, DY = 150.0, 56.0
NODE_W, NODE_H = 132.0, 44.0
# Below this zoom, text is too small to read: draw boxes only.
TEXT_LOD = 0.45
# Below this, nodes are a few pixels: plain filled rectangles.
BOX_LOD = 0.2
# The legend folds itself while, open, it would cover more than this share of the window.
LEGEND_SHARE = 0.25
# Op-level graphs larger than this open collapsed (one neuron expanded).
OP_NODE_CAP = 5000
# Network level
NET_DX, NET_DY, UNIT_R = 220.0, 64.0, 22.0
MAP_RES = 20

# Blue for positive, orange for negative: the convention of the decision boundary and
# the parameters panel (TensorFlow Playground's), so the same sign has the same colour
# in every panel of the window. Six levels of |gradient| each, light to dark.
_POS = [QColor("#dcecf7"), QColor("#b3d5ee"), QColor("#7fb8e0"), QColor("#3e95d0"),
        QColor("#0877bd"), QColor("#05548a")]
_NEG = [QColor("#fdebd6"), QColor("#fbd3a6"), QColor("#f8b56d"), QColor("#f59322"),
        QColor("#cf6f06"), QColor("#8f4a00")]
_ZERO = QColor("#ffffff")
# The replay's current node and the edges its gradient flows along: a colour no sign
# uses (orange would read as "negative gradient").
_REPLAY = "#d81b60"
_PENDING = QColor("#e6e6e6")
_BRUSHES = {0: QBrush(_ZERO)}
for _k in range(6):
    _BRUSHES[_k + 1] = QBrush(_POS[_k])
    _BRUSHES[-(_k + 1)] = QBrush(_NEG[_k])
_PENDING_BRUSH = QBrush(_PENDING)
_TEXT, _TEXT_ON_DARK = QColor("#111111"), QColor("#ffffff")
_WHITE_BRUSH = QBrush(QColor("#ffffff"))
_LEGEND_BORDER, _LEGEND_BACK = QPen(QColor("#cccccc")), QBrush(QColor(255, 255, 255, 225))
_LEGEND_MARK, _LEGEND_TEXT = QColor("#777777"), QColor("#222222")
_SWATCH_PEN = QPen(QColor("#555555"), 0.8)


def _map_colours() -> np.ndarray:
    """257 RGBA colours from -1 (orange) through 0 (white, the middle one) to +1 (blue):
    the weights' and the decision boundary's colours, so an output unit's map looks like
    the boundary."""
    t = np.linspace(-1.0, 1.0, 257)[:, None]
    pos = np.array([0x08, 0x77, 0xBD], dtype=np.float64)
    neg = np.array([0xF5, 0x93, 0x22], dtype=np.float64)
    rgb = np.where(t >= 0, 255.0 + (pos - 255.0) * t, 255.0 + (neg - 255.0) * (-t))
    colours = np.full((257, 4), 255, dtype=np.uint8)
    colours[:, :3] = np.rint(rgb)
    return colours


_MAP_COLOURS = _map_colours()
_FANOUT_PEN = QPen(QColor("#333333"), 1.2)
_BADGE_PEN, _BADGE_BRUSH = QPen(QColor("#7a4a00"), 1.0), QBrush(QColor("#ffcc33"))
_PENDING_KEY = 99  # a colour class no gradient has (see _refresh_boxes)
_WEIGHT_POS, _WEIGHT_NEG = QColor("#0877bd"), QColor("#f59322")

_OP_SYMBOL = {"*": "×", "+": "+", "neg": "−x", "": ""}
# A node that receives its gradient more than this many times in a custom replay
# shows the first numbers and "…": the badge must stay smaller than the node.
BADGE_PLACES = 4  # the wrong-order lesson fires a four times: all of them fit


def _font(points: float, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


class _Style:
    """One view's sizes and fonts, scaled together by `GraphView.set_font_scale`.

    Boxes grow with their text (a bigger font in the same box would spill over), but
    the gaps between them do not: at "fit" a scaled graph's text is then a little
    larger on screen, and a small graph (the playground's) fills more of the window
    before fit's zoom limit stops it.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = scale
        self.node_w, self.node_h = NODE_W * scale, NODE_H * scale
        self.dx, self.dy = self.node_w + DX - NODE_W, self.node_h + DY - NODE_H
        self.rect = QRectF(-self.node_w / 2, -self.node_h / 2, self.node_w, self.node_h)
        self.font = _font(7.5 * scale)
        self.bold = _font(7.5 * scale, bold=True)
        # parameter names are long ('layers.1.neurons.12.w.15'): regular weight, smaller
        self.name_font = _font(7.0 * scale)
        self.badge_font = _font(7.5 * scale, bold=True)
        self.unit_font = _font(8.0 * scale)
        self.header_font = _font(9.0 * scale, bold=True)
        self.legend_font = _font(8.5 * scale)
        self.net_dy = NET_DY + 16.0 * (scale - 1.0)  # room for the value under a unit
        # Everything paint() needs, made once. While training runs, every Qt value
        # (QRectF, QColor, QPen...) made from Python waits for the training thread to
        # hand over the GIL -- about 0.5 ms each -- so paint() makes none.
        r, third = self.rect, self.node_h / 3
        self.title_rect = r.adjusted(4, 1, -4, -2 * third)
        self.value_rect = r.adjusted(4, third, -4, -third)
        self.grad_rect = r.adjusted(4, 2 * third - 1, -4, -1)
        self.fanout_rect = r.adjusted(-4, -4, 4, 4)
        self.title_width = int(self.title_rect.width())
        self.bold_metrics = QFontMetricsF(self.bold)
        self.name_metrics = QFontMetricsF(self.name_font)
        self.badge_metrics = QFontMetricsF(self.badge_font)
        self.header_metrics = QFontMetricsF(self.header_font)
        self.circle = QRectF(-UNIT_R, -UNIT_R, 2 * UNIT_R, 2 * UNIT_R)
        self.circle_path = QPainterPath()
        self.circle_path.addEllipse(self.circle)
        self.unit_title_rect = QRectF(-UNIT_R - 44 * scale, -8 * scale, 40 * scale, 16 * scale)
        self.unit_text_rect = QRectF(-UNIT_R - 40 * scale, UNIT_R + 1, 2 * UNIT_R + 80 * scale,
                                     15 * scale)
        # The zoom the items are painted at: set by the view before it paints (reading
        # it from the painter's transform would make a QTransform per item).
        self.lod = 1.0

    def edge_line(self, ax: float, ay: float, bx: float, by: float
                  ) -> tuple[float, float, float, float]:
        """From the child's right side to the parent's left; top/bottom when stacked."""
        w, h = self.node_w, self.node_h
        if bx - ax >= w:
            return ax + w / 2, ay, bx - w / 2, by
        # a term drawn right above the sum that adds it, or a folded row's wrap-around
        sign = 1 if by >= ay else -1
        return ax, ay + sign * h / 2, bx, by - sign * h / 2


def _op_title(graph: Graph, i: int) -> str:
    if graph.children[i]:
        op = graph.ops[i]
        k = g.pow_exponent(op)
        symbol = f"x^{k:g}" if k is not None else _OP_SYMBOL.get(op, op)
        # The engine's label names the result (b = a + a): without it two "+" boxes
        # of an expression cannot be told apart.
        label = graph.labels[i]
        return f"{label} = {symbol}" if label and i not in graph.boundary else symbol
    return graph.display_name(i)


def _bounded(item: QGraphicsRectItem, bounds: QRectF) -> None:
    """Give an item its bounding rect in C++ (a pen-less QGraphicsRectItem's rect).

    Not a Python boundingRect(): Qt asks every changed item for it from its event loop,
    and each such call into Python waits for the GIL while the training thread holds
    it -- adding the demo graph's 1,663 nodes then froze the window for 10 s; with the
    rect in C++ it takes 20 ms. Only paint() stays in Python, for items on screen.
    """
    item.setRect(bounds)
    item.setPen(Qt.PenStyle.NoPen)


class _Numbers:
    """The shown graph's numbers for the selected sample, shared by all its node items.

    A step replaces the arrays and bumps `generation`; an item reads its numbers when
    it paints, so only the items on screen do any work (see `GraphView._touch_visible`).
    """

    __slots__ = ("bins", "generation", "grads", "values")

    def __init__(self, n: int) -> None:
        self.values = np.zeros(n)
        self.grads = np.zeros(n)
        self.bins = np.zeros(n, dtype=np.int64)
        self.generation = 0


class _OpNode(QGraphicsRectItem):
    """One node of the operation graph: one item painting it all, cheaper than several."""

    PARAM, INPUT, CONST, OP = range(4)
    _border: ClassVar[dict[int, QPen]] = {
        OP: QPen(QColor("#555555"), 1.0), PARAM: QPen(QColor("#8a6d00"), 2.2),
        INPUT: QPen(QColor("#1b7f5b"), 2.2),
        CONST: QPen(QColor("#a0a0a0"), 1.0, Qt.PenStyle.DashLine)}
    _select_pen = QPen(QColor("#111111"), 3.5)
    _current_pen = QPen(QColor(_REPLAY), 5.0)

    def __init__(self, index: int, kind: int, title: str, fanout: bool,
                 style: _Style, numbers: _Numbers | None = None) -> None:
        super().__init__()
        self.style = style
        self.numbers = numbers if numbers is not None else _Numbers(index + 1)
        self.drawn = -1  # the numbers' generation this item last painted
        self.index = index
        self.kind = kind
        self.title = title
        self.fanout = fanout
        self.selected = False
        self.current = False
        self.pending = False
        # Places in the replay, in order: a custom replay may visit a node twice.
        self.places: list[int] = []
        # elided, not clipped: a long label must still show where it ends
        metrics = style.name_metrics if kind == self.PARAM else style.bold_metrics
        self.shown_title = metrics.elidedText(title, Qt.TextElideMode.ElideMiddle,
                                              style.title_width)
        self._badge: tuple[str, QRectF] | None = None
        s = style.scale
        _bounded(self, style.rect.adjusted(-6 - 14 * s, -6 - 12 * s, 10, 10))
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    @property
    def value_text(self) -> str:
        return f"data {g.fmt(float(self.numbers.values[self.index]))}"

    @property
    def grad_text(self) -> str:
        return f"grad {g.fmt(float(self.numbers.grads[self.index]))}"

    @property
    def fill(self) -> QBrush:
        return _BRUSHES[int(self.numbers.bins[self.index])]

    @property
    def dark(self) -> bool:
        return abs(int(self.numbers.bins[self.index])) >= 5

    @property
    def place(self) -> int | None:
        """The node's latest place in the replay (None before its gradient arrived)."""
        return self.places[-1] if self.places else None

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        self.drawn = self.numbers.generation
        style = self.style
        lod = style.lod
        rect = style.rect
        if lod < BOX_LOD:
            # a few pixels wide: a filled box says as much, for a fraction of the cost
            painter.fillRect(rect, _PENDING_BRUSH if self.pending else self.fill)
            if self.current or self.selected:
                painter.setPen(self._current_pen if self.current else self._select_pen)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
            return
        painter.setBrush(_PENDING_BRUSH if self.pending else self.fill)
        if self.current:
            painter.setPen(self._current_pen)
        elif self.selected:
            painter.setPen(self._select_pen)
        else:
            painter.setPen(self._border[self.kind])
        if self.kind == self.OP:
            painter.drawRoundedRect(rect, 9, 9)
        else:
            painter.drawRect(rect)
        if self.fanout:
            # A double border marks a node used more than once: its gradient is a sum.
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(_FANOUT_PEN)
            outer = style.fanout_rect
            if self.kind == self.OP:
                painter.drawRoundedRect(outer, 12, 12)
            else:
                painter.drawRect(outer)
        if self.places:
            self._paint_badge(painter, lod)
        if lod < TEXT_LOD:
            return
        painter.setPen(_TEXT_ON_DARK if self.dark and not self.pending else _TEXT)
        painter.setFont(style.name_font if self.kind == self.PARAM else style.bold)
        painter.drawText(style.title_rect, Qt.AlignmentFlag.AlignCenter, self.shown_title)
        painter.setFont(style.font)
        painter.drawText(style.value_rect, Qt.AlignmentFlag.AlignCenter, self.value_text)
        painter.drawText(style.grad_rect, Qt.AlignmentFlag.AlignCenter,
                         "grad ?" if self.pending else self.grad_text)

    def badge_text(self) -> str:
        shown = [str(p) for p in self.places[:BADGE_PLACES]]
        return ",".join(shown) + ("…" if len(self.places) > BADGE_PLACES else "")

    def _paint_badge(self, painter: QPainter, lod: float) -> None:
        style = self.style
        s = style.scale
        text = self.badge_text()
        if self._badge is None or self._badge[0] != text:
            # One number is a round badge at the corner; several grow to the right.
            width = max(26 * s, style.badge_metrics.horizontalAdvance(text) + 12 * s)
            self._badge = (text, QRectF(-style.node_w / 2 - 2 - 13 * s,
                                        -style.node_h / 2 - 2 - 11 * s, width, 22 * s))
        badge = self._badge[1]
        painter.setFont(style.badge_font)
        painter.setPen(_BADGE_PEN)
        painter.setBrush(_BADGE_BRUSH)
        painter.drawRoundedRect(badge, 11 * s, 11 * s)
        if lod >= TEXT_LOD * 0.6:
            painter.setPen(_TEXT)
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)


class _EdgeLayer(QGraphicsRectItem):
    """Every edge in one item: thousands of line items would each cost a paint call.

    Zoomed far out it also draws the nodes, as plain boxes grouped by colour: 1,663
    Python paint() calls per frame made panning the whole demo graph stutter.
    """

    _pen = QPen(QColor("#8c8c8c"), 1.0)
    _pen.setCosmetic(True)
    # Edges that jump many columns (a weight reused by the L2 penalty far away) would
    # cover the picture: drawn faint, they come forward when their node is selected.
    # Opaque light grey, not translucent: blending 700 long lines cost 40 ms a repaint.
    _long_pen = QPen(QColor("#dcdcdc"), 1.0)
    _long_pen.setCosmetic(True)
    _in_pen = QPen(QColor("#1b7f5b"), 2.5)
    _in_pen.setCosmetic(True)
    _out_pen = QPen(QColor("#8a3ab9"), 2.5)
    _out_pen.setCosmetic(True)
    _flow_pen = QPen(QColor(_REPLAY), 3.0)
    _flow_pen.setCosmetic(True)

    _mark_pen = QPen(QColor("#111111"), 2.0)
    _mark_pen.setCosmetic(True)
    _box_pen = QPen(QColor("#b0b0b0"), 0.0)  # hairline: white boxes stay visible

    def __init__(self, lines: list[QLineF], long: list[bool] | None = None,
                 area: QRectF | None = None, style: _Style | None = None) -> None:
        super().__init__()
        self.style = style
        long = long or [False] * len(lines)
        self.lines = [ln for ln, far in zip(lines, long) if not far]
        self.long_lines = [ln for ln, far in zip(lines, long) if far]
        self.inputs: list[QLineF] = []
        self.outputs: list[QLineF] = []
        self.flow: list[QLineF] = []
        self.boxes: list[tuple[QBrush, list[QRectF]]] = []
        self.borders: list[tuple[QPen, list[QRectF]]] = []  # parameters, inputs
        self.fanout: list[QRectF] = []  # the outer border of nodes used more than once
        self.marked: list[QRectF] = []
        self.current: list[QRectF] = []
        if area is None:  # a few lines (outputs to the loss): measured here
            area = QRectF()
            for line in lines:
                area = area.united(QRectF(line.p1(), line.p2()).normalized())
        # else the caller measured everything, lines included, without making QRectFs
        _bounded(self, area.adjusted(-4, -4, 4, 4))
        self.setZValue(-1)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        painter.setPen(self._long_pen)
        painter.drawLines(self.long_lines)
        painter.setPen(self._pen)
        painter.drawLines(self.lines)
        for pen, lines in ((self._in_pen, self.inputs), (self._out_pen, self.outputs),
                           (self._flow_pen, self.flow)):
            if lines:
                painter.setPen(pen)
                painter.drawLines(lines)
        if self.boxes:
            painter.setPen(self._box_pen)
            for brush, rects in self.boxes:
                painter.setBrush(brush)
                painter.drawRects(rects)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            # smaller, borders would only blur the colours
            if self.style is None or self.style.lod >= BOX_LOD:
                for pen, rects in self.borders:
                    painter.setPen(pen)
                    painter.drawRects(rects)
                painter.setPen(self._pen)
                painter.drawRects(self.fanout)
            painter.setPen(self._mark_pen)
            painter.drawRects(self.marked)
            painter.setPen(self._flow_pen)
            painter.drawRects(self.current)


class _Unit(QGraphicsRectItem):
    """A neuron (or input, or the loss) at network level, with a map of its output."""

    _pen = QPen(QColor("#444444"), 1.5)
    _select_pen = QPen(QColor("#111111"), 4.0)

    def __init__(self, layer: int, index: int, title: str, style: _Style) -> None:
        super().__init__()
        self.style = style
        self.layer = layer
        self.index = index
        self.title = title
        self.text = ""
        # the layer's maps in one image, and where this unit's is in it
        self.image: QImage | None = None
        self.source: QRectF | None = None
        self.fill = _WHITE_BRUSH
        self.selected = False
        s = style.scale
        _bounded(self, QRectF(-UNIT_R - 46 * s, -UNIT_R - 4, 2 * UNIT_R + 92 * s,
                              2 * UNIT_R + 22 * s))
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        style = self.style
        circle = style.circle
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.fill)
        painter.drawEllipse(circle)
        if self.image is not None and self.source is not None:
            painter.save()
            painter.setClipPath(style.circle_path)
            painter.drawImage(circle, self.image, self.source)
            painter.restore()
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(self._select_pen if self.selected else self._pen)
        painter.drawEllipse(circle)
        if style.lod < TEXT_LOD:
            return
        painter.setFont(style.unit_font)
        painter.setPen(_TEXT)
        if self.title:
            # beside the circle: above it the units of a column would collide
            painter.drawText(style.unit_title_rect,
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             self.title)
        painter.drawText(style.unit_text_rect, Qt.AlignmentFlag.AlignCenter, self.text)


class _WeightLayer(QGraphicsRectItem):
    """All weights as lines, grouped by pen: colour = sign, width = magnitude class."""

    WIDTHS = (0.4, 0.8, 1.3, 2.0, 3.0, 4.5)

    def __init__(self, lines: list[QLineF], bounds: QRectF, thickness: float = 1.0) -> None:
        super().__init__()
        self.lines = lines
        self.groups: list[tuple[QPen, list[QLineF]]] = []
        self.selected: QLineF | None = None
        _bounded(self, bounds.adjusted(-8, -8, 8, 8))
        self._pens = {}
        # Opaque colours pre-mixed with the background, and flat caps: translucent
        # round-capped wide lines cost 65 ms per repaint of the demo network, these 8 ms.
        background = QColor("#fafafa")
        for sign, colour in ((1, _WEIGHT_POS), (-1, _WEIGHT_NEG)):
            for level, width in enumerate(self.WIDTHS):
                strength = 0.25 + 0.12 * level
                mixed = QColor.fromRgbF(
                    *(strength * a + (1 - strength) * b for a, b in zip(
                        colour.getRgbF()[:3], background.getRgbF()[:3])))
                self._pens[sign, level] = QPen(mixed, width * thickness, Qt.PenStyle.SolidLine,
                                               Qt.PenCapStyle.FlatCap)
        self._select_pen = QPen(QColor("#111111"), 4.0)
        self.setZValue(-1)

    def set_strengths(self, values: np.ndarray) -> None:
        """One number per line: sign picks the colour, |value| relative to the largest the width."""
        magnitude = np.abs(values)
        top = float(magnitude.max()) if magnitude.size else 0.0
        if top > 0:
            level = np.minimum((magnitude / top * len(self.WIDTHS)).astype(int),
                               len(self.WIDTHS) - 1)
        else:
            level = np.zeros(len(values), dtype=int)
        buckets: dict[tuple[int, int], list[QLineF]] = {}
        for line, s, lv in zip(self.lines, np.sign(values), level):
            buckets.setdefault((1 if s >= 0 else -1, int(lv)), []).append(line)
        # thin lines first, so strong weights are drawn on top
        order = sorted(buckets, key=lambda k: k[1])
        self.groups = [(self._pens[key], buckets[key]) for key in order]
        self.update()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        for pen, lines in self.groups:
            painter.setPen(pen)
            painter.drawLines(lines)
        if self.selected is not None:
            painter.setPen(self._select_pen)
            painter.drawLine(self.selected)


class GraphView(QGraphicsView):
    """The computation graph of the current step, at network or operation level.

    Node ids in signals are ids of the graph given to `set_graph` (topological numbers),
    also when only one neuron's operations are shown.
    """

    node_selected = Signal(int)
    parameter_selected = Signal(str)
    details_changed = Signal(str)
    animation_step = Signal(int, int)  # node id, its place in backward (1 = first)
    animation_finished = Signal()
    animation_stopped = Signal()  # a replay was stopped (Esc, Stop, a new graph) unfinished
    level_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # The view does not own a scene it shows: keep references so they live as long.
        self._op_scene = QGraphicsScene(self)
        self._net_scene = QGraphicsScene(self)
        for scene in (self._op_scene, self._net_scene):
            # Items never move; a BSP index only costs time on every rebuild.
            scene.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
            scene.setBackgroundBrush(QColor("#fafafa"))
        self.setScene(self._net_scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        # No scroll bars: the scene has room around the drawing (see _roomy), so they
        # were always there and suggested more graph than there is; dragging pans.
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setMouseTracking(False)
        self._level = "network"
        self._sample = 0
        self._sample_label: str | None = None  # what to call the sample ("point 17")
        self._style = _Style()
        self._placeholder = ""
        self._graph: Graph | None = None  # as given
        self._shown: Graph | None = None  # what the op level draws (the graph or a neuron's part)
        self._shown_key: tuple | None = None
        self._expanded: tuple[int, int] | None = None
        self._show_all = False
        self._nodes: list[_OpNode] = []
        self._edges: _EdgeLayer | None = None
        self._edge_lines: list[QLineF] = []
        self._edge_index: list[tuple[int, int]] = []
        self._selected_node: int | None = None  # id in the given graph: what is selected
        self._selected: int | None = None  # the same node's id in the shown graph, if shown
        self._network: NetworkLevel | None = None
        self._net_key: tuple | None = None
        self._units: list[list[_Unit]] = []
        self._weights: _WeightLayer | None = None
        self._weight_names: list[str] = []
        self._weight_segments = np.zeros((0, 4))
        self._net_selected: str | None = None
        self._maps_drawn: tuple[tuple, QImage | None] | None = None  # (maps, their image)
        self._show_grads = False
        self._order: list[int] = []
        self._anim_pos = 0
        self._timer = QTimer(self)
        self._timer.timeout.connect(self._on_timer)
        self._follow = True
        self._press: QPointF | None = None
        self._fitted = {"network": False, "operation": False}
        # whether the level is still framed as fit() left it (then a resize refits)
        self._auto_fit = {"network": True, "operation": True}
        self._boxes_shown = False
        self._landmarks: list[QGraphicsSimpleTextItem] = []
        self._landmark_beside: list[bool] = []
        # network column headers: (item, full text, first line, full width in pixels)
        self._headers: list[tuple[QGraphicsSimpleTextItem, str, str, float]] = []
        self._headers_form = 0
        self._net_dx = NET_DX
        self._legend = True
        self._legend_folded = False
        self._legend_cache: tuple[tuple, tuple] | None = None
        self._legend_auto = True  # folds itself in a small window until the user decides
        self._paint_seconds = 0.0
        self._details_sent: str | None = None
        self._make_actions()
        self._node_rects: list[QRectF] = []
        self._node_xy = np.zeros((0, 2))
        self._numbers = _Numbers(0)

    def _make_actions(self) -> None:
        """Ready-made actions for a toolbar or menu around the view (shortcuts work here)."""
        def action(text: str, tip: str, key: str | None, slot: object,
                   checkable: bool = False) -> QAction:
            act = QAction(text, self)
            act.setToolTip(tip + (f" ({key})" if key else ""))
            act.setCheckable(checkable)
            if key:
                act.setShortcut(QKeySequence(key))
                act.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            act.triggered.connect(slot)
            self.addAction(act)
            return act

        self.operations_action = action(
            "Operations", "Show every operation instead of neurons", "L",
            lambda checked: self.set_level("operation" if checked else "network"), True)
        self.level_changed.connect(
            lambda level: self.operations_action.setChecked(level == "operation"))
        self.gradients_action = action(
            "Gradients", "Draw gradients instead of weights on the network's edges", "G",
            self.set_show_gradients, True)
        self.fit_action = action("Fit", "Zoom to show everything", "F", self.fit)
        self.play_action = action("Play backward", "Replay backward node by node", None,
                                  lambda: self.play_backward())
        # B, not N: N is the main window's Sub-step, and a key two actions share does
        # nothing at all (Qt calls it ambiguous).
        self.step_action = action("Next node", "Next node of the backward replay", "B",
                                  lambda: self.step_backward())
        self.stop_action = action("Stop", "Stop the replay", "Esc", self.stop_animation)

    # --- public API -------------------------------------------------------------------
    def level(self) -> str:
        return self._level

    def set_level(self, level: str) -> None:
        if level not in ("network", "operation"):
            raise ValueError(f"level must be 'network' or 'operation', got {level!r}")
        if level == self._level:
            return
        self.stop_animation()
        self._level = level
        if level == "operation":
            self._sync_op_items()
            self.setScene(self._op_scene)
        else:
            self.setScene(self._net_scene)
        if not self._fitted[level]:
            self.fit()
        self.level_changed.emit(level)
        self.viewport().update()

    def set_graph(self, graph: Graph, sample: int | None = None,
                  sample_label: str | None = None) -> None:
        """Show a new step's graph; re-layout only if its structure changed.

        `sample` indexes the graph's per-sample arrays; `sample_label` is what the
        details call it (e.g. "point 17" when the graph holds a mini-batch).
        """
        self.stop_animation()
        if sample is not None:
            self._sample_label = sample_label
        if self._graph is None or graph.structure_key != self._graph.structure_key:
            # node ids mean other nodes now; a parameter keeps its name
            name = self._net_selected
            self._selected_node = graph.find_parameter(name) if name else None
        self._graph = graph
        if sample is not None:
            self._sample = sample
        if self._level == "operation":
            self._sync_op_items()

    def graph(self) -> Graph | None:
        return self._graph

    def clear_graph(self) -> None:
        """Forget the operation graph (a new model has none yet); the network level stays."""
        self.stop_animation()
        self._graph = self._shown = None
        self._shown_key = None
        self._selected_node = self._selected = None
        self._op_scene.clear()
        self._nodes, self._edges, self._landmarks, self._landmark_beside = [], None, [], []
        self._edge_lines, self._edge_index, self._node_rects = [], [], []
        self._node_xy = np.zeros((0, 2))
        self._expanded = None
        self._emit_details()
        self.viewport().update()

    def shown_graph(self) -> Graph | None:
        """What the operation level draws: the whole graph or one neuron's part of it."""
        return self._shown

    def set_network(self, network: NetworkLevel) -> None:
        """Show the network level (see `gradbox.graph.network_level`)."""
        self._network = network
        if network.structure_key != self._net_key:
            self._build_network()
        self._update_network()

    def set_sample(self, sample: int, label: str | None = None) -> None:
        """Show the numbers of `sample` (an index into the graph's arrays), called `label`."""
        self._sample = int(sample)
        self._sample_label = label
        if self._shown is not None and self._nodes:
            self._update_op_items()
        self._emit_details()

    def sample(self) -> int:
        return self._sample

    def sample_label(self) -> str:
        return self._sample_label or f"sample {self._sample}"

    def set_font_scale(self, scale: float) -> None:
        """Scale every text the view draws (teacher mode): node and unit labels, the
        legend, landmarks and headers. Node boxes grow with their text."""
        scale = max(0.5, min(float(scale), 4.0))
        if abs(scale - self._style.scale) < 1e-6:
            return
        self._style = _Style(scale)
        self._auto_fold_legend()
        # Items take their sizes when built: build them again, keeping what is shown.
        self._shown_key = None
        if self._level == "operation":
            self._sync_op_items()
        if self._network is not None:
            self._build_network()
            self._update_network()
        self._fitted = {"network": False, "operation": False}
        self.fit()
        self.viewport().update()

    def font_scale(self) -> float:
        return self._style.scale

    def set_placeholder_text(self, text: str) -> None:
        """What to say in the middle of the view while the current level has nothing to
        draw (e.g. before the first step), instead of an empty grey area."""
        self._placeholder = text
        self.viewport().update()

    def placeholder_text(self) -> str:
        return self._placeholder

    def is_empty(self) -> bool:
        """Whether the current level has nothing to draw."""
        if self._level == "operation":
            return not self._nodes or self._graph is None
        return self._network is None

    def set_show_gradients(self, show: bool) -> None:
        """At network level, draw gradients instead of weights on the edges."""
        self._show_grads = bool(show)
        self.gradients_action.setChecked(self._show_grads)
        if self._network is not None:
            self._update_network()
        self.viewport().update()

    def show_gradients(self) -> bool:
        return self._show_grads

    def expand_neuron(self, layer: int, index: int) -> bool:
        """Show only neuron (layer, index)'s operations at operation level.

        Returns False if the graph has no such neuron (then nothing changes).
        """
        if self._graph is None or g.neuron_nodes(self._graph, layer, index) is None:
            return False
        self._expanded = (layer, index)
        self._show_all = False
        self._shown_key = None
        self._fitted["operation"] = False
        if self._level == "operation":
            self._sync_op_items()
            self.fit()
        return True

    def show_all_operations(self) -> None:
        """Show every operation, however many (large graphs open collapsed by default)."""
        self._expanded = None
        self._show_all = True
        self._shown_key = None
        self._fitted["operation"] = False
        if self._level == "operation":
            self._sync_op_items()
            self.fit()

    def expanded_neuron(self) -> tuple[int, int] | None:
        return self._expanded if self._shown is not self._graph else None

    def is_collapsed(self) -> bool:
        return self._shown is not None and self._shown is not self._graph

    def select_node(self, node: int | None) -> None:
        """Select a node of the given graph (by id); no parameter_selected is emitted."""
        self._select(node, user=False)

    def selected_node(self) -> int | None:
        return self._selected_node

    def select_parameter(self, name: str) -> bool:
        """Select a parameter by name at both levels (from the parameters panel).

        Returns whether it was found. Does not emit parameter_selected, so two panels
        selecting each other cannot ping-pong.
        """
        found = False
        self._net_selected = name
        self._update_network_selection()
        graph = self._graph
        node = graph.find_parameter(name) if graph is not None else None
        if graph is not None and node is not None:
            found = True
            parsed = NetworkLevel.parse_name(name)
            collapsed = not self._show_all and (self._expanded is not None
                                                or len(graph) > OP_NODE_CAP)
            if parsed is not None and collapsed and parsed[:2] != self._expanded:
                # show the neuron the parameter belongs to, now or when the level opens
                self._expanded = (parsed[0], parsed[1])
                self._fitted["operation"] = False
                if self._level == "operation":
                    self._sync_op_items()
                    self.fit()
            self._select(node, user=False)
            if self._level == "operation" and self._selected is not None:
                self.ensureVisible(self._nodes[self._selected], 60, 60)
        if self._network is not None and NetworkLevel.parse_name(name) is not None:
            found = True
        self._emit_details()
        return found

    def set_legend_visible(self, visible: bool) -> None:
        """The colour key and hints in the top-left corner (on by default)."""
        self._legend = bool(visible)
        self.viewport().update()

    def details_text(self) -> str:
        """What the details pane shows for the current selection."""
        if self._level == "network" and self._net_selected:
            return self._network_details(self._net_selected)
        label = self._sample_label
        if self._shown is not None and self._selected is not None:
            return g.details(self._shown, self._selected, self._sample, label)
        if self._graph is not None and self._selected_node is not None:
            return g.details(self._graph, self._selected_node, self._sample, label)
        return ""

    # --- animation --------------------------------------------------------------------
    def play_backward(self, interval_ms: int = 80, order: Sequence[int] | None = None) -> None:
        """Replay backward: nodes light up in the order they receive their gradient.

        `order` replays another sequence of node ids (of the graph given to
        `set_graph`), e.g. the order a broken backward really fired in; a node may
        appear more than once and then carries every number it was given. Without it,
        a replay paused by `step_backward` continues, and a finished one starts again.
        """
        if not self._ensure_animation(order):
            return
        self._timer.start(max(1, int(interval_ms)))

    def step_backward(self, order: Sequence[int] | None = None) -> int | None:
        """Advance the replay by one node; returns its id, None when finished.

        `order` starts a replay of that sequence (see `play_backward`).
        """
        if self._timer.isActive():
            self._timer.stop()
        if not self._ensure_animation(order, restart_finished=False):
            return None
        return self._advance()

    def stop_animation(self) -> None:
        """Stop and clear the replay: every node shows its gradient again.

        Emits `animation_stopped` if the replay had not finished.
        """
        self._timer.stop()
        if not self._order:
            return
        unfinished = self._anim_pos < len(self._order)
        self._clear_animation()
        if unfinished:
            self.animation_stopped.emit()

    def _clear_animation(self) -> None:
        self._order = []
        self._anim_pos = 0
        for node in self._nodes:
            node.pending = False
            node.current = False
            node.places = []
            node.update()
        if self._edges is not None:
            self._edges.flow = []
            self._edges.update()
        self._refresh_boxes()

    def is_animating(self) -> bool:
        return self._timer.isActive()

    def animation_position(self) -> int:
        """How many nodes the replay has visited."""
        return self._anim_pos

    def animation_length(self) -> int:
        """How many visits the current replay has (0 when there is none)."""
        return len(self._order)

    def _ensure_animation(self, order: Sequence[int] | None,
                          restart_finished: bool = True) -> bool:
        if self._level != "operation":
            self.set_level("operation")
        if self._shown is None:
            return False
        finished = bool(self._order) and self._anim_pos >= len(self._order)
        if order is None and self._order and not (finished and restart_finished):
            return True  # continue the replay in progress
        if order is None:
            shown_order = g.backward_order(self._shown)
        else:
            # ids of the given graph; in a collapsed graph only the shown nodes light up
            mapped = (self._to_shown(int(node)) for node in order)
            shown_order = [node for node in mapped if node is not None]
        # a new replay replaces the old one: not a stop the caller must hear about
        self._timer.stop()
        self._clear_animation()
        if not shown_order:
            return False
        self._order = shown_order
        for node in self._nodes:
            node.pending = True
            node.update()
        self._refresh_boxes()
        return True

    def _advance(self) -> int | None:
        if self._anim_pos >= len(self._order):
            self._timer.stop()
            return None
        if self._anim_pos > 0:
            previous = self._nodes[self._order[self._anim_pos - 1]]
            previous.current = False
            previous.update()
        index = self._order[self._anim_pos]
        self._anim_pos += 1
        node = self._nodes[index]
        node.pending = False
        node.current = True
        node.places.append(self._anim_pos)
        node.update()
        if self._edges is not None:
            # The gradient now flows from this node back to its inputs.
            self._edges.flow = [self._edge_lines[k] for k, (c, p) in enumerate(self._edge_index)
                                if p == index]
            self._edges.update()
        self._refresh_boxes()
        if self._follow and self._viewport_scale() >= TEXT_LOD:
            self.ensureVisible(node, 40, 40)
        original = self._to_original(index)
        self.animation_step.emit(original if original is not None else index, self._anim_pos)
        if self._anim_pos >= len(self._order):
            self._timer.stop()
            node.current = False
            node.update()
            self.animation_finished.emit()
        return original

    def _on_timer(self) -> None:
        self._advance()

    # --- view -------------------------------------------------------------------------
    def fit(self) -> None:
        """Zoom so the whole level fits in the window."""
        scene = self._op_scene if self._level == "operation" else self._net_scene
        if self.scene() is not scene:
            self.setScene(scene)
        rect, left, top, hanging = self._fit_frame()
        if rect.isEmpty():
            return
        marks = self._level == "operation" and bool(self._landmarks)
        # The landmarks show only below readable zoom: a drawing that fits at a readable
        # zoom without them (a small graph) needs no room for them.
        scale, left_, top_, right = self._framing(rect, *((0.0, 0.0, []) if marks
                                                          else (left, top, hanging)))
        if marks and scale < TEXT_LOD:
            scale, left_, top_, right = self._framing(rect, left, top, hanging)
        # The scene must reach past the window on every side at this zoom: a scene
        # smaller than the window is centred in it, whatever centerOn asks, and the
        # drawing sat under the legend.
        port = self.viewport().rect()
        reach = rect.adjusted(-port.width() / scale, -port.height() / scale,
                              port.width() / scale, port.height() / scale)
        if not scene.sceneRect().contains(reach):
            scene.setSceneRect(scene.sceneRect().united(reach))
        self.resetTransform()
        self.scale(scale, scale)
        centre = rect.center()
        self.centerOn(QPointF(centre.x() - (left_ - right) / 2 / scale,
                              centre.y() - top_ / 2 / scale))
        self._fitted[self._level] = True
        self._auto_fit[self._level] = True

    def _framing(self, rect: QRectF, left: float, top: float,
                 hanging: list[tuple[float, float]]) -> tuple[float, float, float, float]:
        """(scale, left, top, right): the zoom that fits `rect` with that many pixels kept
        free on the left and top and for the `hanging` labels, and the legend's room."""
        port = self.viewport().rect()

        def framed(left: float, top: float) -> tuple[float, float]:
            height = max(port.height() - 12 - top, 10)
            room = max(port.width() - 24 - left, 10)
            scale = min(room / rect.width(), height / rect.height(), 2.0)
            # A label hanging off a node d scene units right of the drawing's left edge
            # ends at d*scale + its width: keep that inside the room too. (One wider
            # than the room whatever the scale is left to hang over the edge.)
            for width, d in hanging:
                if d > 0 and room - width > 0:
                    scale = min(scale, (room - width) / d)
            right = max([0.0] + [w - rect.width() * scale + d * scale for w, d in hanging])
            return scale, right

        # The legend covers no node: the drawing goes below it or beside it, whichever
        # lets it be bigger (in a short, wide window the legend's band was half of it).
        legend_w, legend_h = self._legend_size()
        below = (left, top + legend_h + 12) if self._legend else (left, top)
        scale, right = framed(*below)
        if self._legend:
            beside = (max(left, legend_w + 12), top)
            scale_beside, right_beside = framed(*beside)
            if scale_beside > scale * 1.02:
                return scale_beside, beside[0], beside[1], right_beside
        return scale, below[0], below[1], right

    def _legend_size(self) -> tuple[float, float]:
        """The room the legend takes from the window's top-left corner, in pixels."""
        if not self._legend:
            return 0.0, 0.0
        box = self._legend_rect()
        return box.right(), box.bottom()

    def _legend_rect(self) -> QRectF:
        """The legend's box in window pixels, as drawForeground draws it."""
        s = self._style.scale
        lines = self._legend_lines()
        metrics = QFontMetricsF(self._style.legend_font)
        width = max((metrics.horizontalAdvance(t) for t, _ in lines), default=0.0)
        return QRectF(8, 8, width + 50 * s, 18 * s * len(lines) + 8)

    def set_legend_folded(self, folded: bool) -> None:
        """Fold the legend to one line ("▸ key"), or open it again (a click on it toggles).

        Until this is called, the legend folds itself when open it would cover more than
        LEGEND_SHARE of the window (a small window, or big teacher-mode text)."""
        self._legend_auto = False
        self._fold_legend(folded)

    def _fold_legend(self, folded: bool) -> None:
        self._legend_folded = bool(folded)
        if self._auto_fit.get(self._level):
            self.fit()
        self.viewport().update()

    def legend_folded(self) -> bool:
        return self._legend_folded

    def _auto_fold_legend(self) -> None:
        if not self._legend_auto or not self._legend:
            return
        folded, self._legend_folded = self._legend_folded, False
        box = self._legend_rect()
        self._legend_folded = folded
        port = self.viewport().rect()
        crowded = box.width() * box.height() > LEGEND_SHARE * port.width() * port.height()
        if crowded != self._legend_folded:
            self._legend_folded = crowded  # fit() follows in the caller

    def _fit_frame(self) -> tuple[QRectF, float, float, list[tuple[float, float]]]:
        """What fit() frames: the drawing (scene units), the pixels its constant-size
        labels need on the left and top, and the labels that may hang over its right
        edge as (width in pixels, start in scene units from the drawing's left edge).

        The scene's own bounding rect would not do: a label that ignores the zoom
        counts there as if drawn at scale 1, so at "fit" it hung over the window's edge.
        """
        if self._level == "operation" and self._edges is not None and self._nodes:
            rect = QRectF(self._edges.boundingRect())
            left = top = 0.0
            hanging: list[tuple[float, float]] = []
            for item, beside in zip(self._landmarks, self._landmark_beside):
                box = item.boundingRect()
                if beside:
                    left = max(left, box.width() + 14)
                else:
                    top = max(top, box.height() + 4)
                    hanging.append((box.width(), item.pos().x() - rect.left()))
            return rect, left, top, hanging
        if self._level == "network" and self._weights is not None:
            headers = [item for item in self._net_scene.items()
                       if isinstance(item, QGraphicsSimpleTextItem)]
            top = max((item.boundingRect().height() for item in headers), default=0.0)
            return QRectF(self._weights.boundingRect()), 0.0, top, []
        scene = self.scene()
        return scene.itemsBoundingRect(), 0.0, 0.0, []

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._auto_fold_legend()
        # Still as fit() left it (not zoomed or panned since): fit the new size too.
        # A graph first shown in a hidden tab was fitted to a window of no size.
        if self._auto_fit.get(self._level):
            self.fit()

    def zoom(self, factor: float) -> None:
        self._auto_fit[self._level] = False
        scale = self._viewport_scale()
        factor = max(0.005 / scale, min(factor, 6.0 / scale))
        self.scale(factor, factor)

    def focus_node(self, node: int, scale: float = 1.0) -> None:
        """Centre on a node (of the given graph) at a readable zoom."""
        shown = self._to_shown(node)
        if shown is None or not self._nodes:
            return
        self.zoom(scale / self._viewport_scale())
        self.centerOn(self._nodes[shown])

    @staticmethod
    def _roomy(rect: QRectF) -> QRectF:
        # Room around the drawing, so fit() can centre it below the legend and panning
        # does not stop hard at the outermost node.
        margin = max(rect.width(), rect.height(), 800.0)
        return rect.adjusted(-margin, -margin, margin, margin)

    def _viewport_scale(self) -> float:
        return float(self.transform().m11())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        # Zoomed out too far to read, the nodes are drawn by the edge layer as boxes
        # grouped by colour: one Python paint() per node made panning the whole demo
        # graph stutter (45 frames/s at zoom 0.4 on a busy machine, 16 at "fit").
        scale = self._viewport_scale()
        self._style.lod = scale  # what the items' paint() reads
        for mark in self._landmarks:
            mark.setVisible(scale < TEXT_LOD)
        boxes = scale < TEXT_LOD
        if boxes != self._boxes_shown and self._nodes:
            self._show_boxes(boxes)
        if self._level == "network":
            self._fit_headers(scale)
        else:
            self._touch_visible()  # scrolled or zoomed: nodes now on screen may be stale
        start = time.perf_counter()
        super().paintEvent(event)
        self._paint_seconds = time.perf_counter() - start

    def paint_seconds(self) -> float:
        """How long the last repaint took (wall clock), for callers pacing their updates."""
        return self._paint_seconds

    def _fit_headers(self, scale: float) -> None:
        """Full column headers when they fit between the columns, else their first line,
        else first lines on alternate heights.

        They keep their size on screen while the columns close up: zoomed out, the
        two-line headers of neighbouring columns ran into each other.
        """
        room = self._net_dx * scale - 8
        metrics = self._style.header_metrics
        if all(width <= room for _, _, _, width in self._headers):
            form = 0
        elif all(metrics.horizontalAdvance(brief) <= room for _, _, brief, _ in self._headers):
            form = 1
        else:
            form = 2
        if form == self._headers_form:
            return
        self._headers_form = form
        for column, (item, full, brief, _) in enumerate(self._headers):
            item.setText(full if form == 0 else brief)
            box = item.boundingRect()
            lift = box.height() if form == 2 and column % 2 else 0.0
            item.setTransform(QTransform().translate(-box.width() / 2, -box.height() - lift))

    def _show_boxes(self, boxes: bool) -> None:
        for node in self._nodes:
            node.setVisible(not boxes)
        self._boxes_shown = boxes
        self._refresh_boxes()

    def _refresh_boxes(self) -> None:
        edges = self._edges
        if edges is None:
            return
        if not self._boxes_shown:
            if edges.boxes:
                edges.boxes, edges.marked, edges.current = [], [], []
                edges.update()
            return
        # Grouped by colour class with numpy: a Python pass over every node's fill was
        # most of a step's refresh of the demo graph when zoomed out.
        nodes, rects = self._nodes, self._node_rects
        keys = np.array(self._numbers.bins, dtype=np.int64)
        current: list[QRectF] = []
        if self._order:  # a replay: nodes still waiting for their gradient are grey
            pending = np.fromiter((n.pending for n in nodes), bool, len(nodes))
            keys[pending] = _PENDING_KEY
            current = [rect for n, rect in zip(nodes, rects) if n.current]
        groups = {key: (_PENDING_BRUSH if key == _PENDING_KEY else _BRUSHES[key],
                        [rects[k] for k in np.flatnonzero(keys == key).tolist()])
                  for key in np.unique(keys).tolist()}
        selected = self._selected
        marked = [rects[selected]] if selected is not None and selected < len(rects) else []
        edges.boxes = list(groups.values())
        edges.marked = marked
        edges.current = current
        edges.update()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        # AnchorUnderMouse keeps the point under the cursor fixed while zooming.
        steps = event.angleDelta().y() / 120.0
        if steps:
            self.zoom(1.2 ** steps)
        event.accept()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key == Qt.Key.Key_Period:
            self.step_backward()
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(1.25)
        elif key == Qt.Key.Key_Minus:
            self.zoom(0.8)
        else:
            super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if (self._legend and event.button() == Qt.MouseButton.LeftButton
                and self._legend_rect().contains(event.position())):
            self.set_legend_folded(not self._legend_folded)  # the user's choice from now on
            event.accept()
            return
        self._press = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        press, self._press = self._press, None
        super().mouseReleaseEvent(event)
        # A click is a press and release in (almost) the same place; anything else panned.
        if press is not None and (event.position() - press).manhattanLength() < 5 \
                and event.button() == Qt.MouseButton.LeftButton:
            self._click(self.mapToScene(event.position().toPoint()), double=False)
        elif press is not None:
            self._auto_fit[self._level] = False  # the user framed it: keep their frame

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self._click(self.mapToScene(event.position().toPoint()), double=True)
        event.accept()

    def click_scene_point(self, point: QPointF, double: bool = False) -> None:
        """What a click at a scene point does (also used by tests)."""
        self._click(point, double)

    def node_scene_pos(self, node: int) -> QPointF | None:
        shown = self._to_shown(node)
        return None if shown is None or not self._nodes else self._nodes[shown].pos()

    def weight_scene_pos(self, name: str) -> QPointF | None:
        """A point of a weight's edge near the neuron it feeds (where edges fan apart).

        Not the middle: there every edge a->b with the same a + b crosses the others.
        """
        if name not in self._weight_names:
            return None
        x1, y1, x2, y2 = self._weight_segments[self._weight_names.index(name)]
        return QPointF(x1 + 0.85 * (x2 - x1), y1 + 0.85 * (y2 - y1))

    def unit_scene_pos(self, layer: int, index: int) -> QPointF | None:
        try:
            return self._units[layer][index].pos()
        except IndexError:
            return None

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:  # noqa: N802
        # Legend and hints in window coordinates, so they stay put while panning.
        if self._placeholder and self.is_empty():
            self._paint_placeholder(painter)
            return
        if not self._legend:
            return
        lines = self._legend_lines()
        key = (tuple(text for text, _ in lines), self._style.scale, self._legend_folded)
        if self._legend_cache is None or self._legend_cache[0] != key:
            self._legend_cache = (key, self._legend_plan(lines))
        box, fold, rows = self._legend_cache[1]
        painter.save()
        painter.resetTransform()
        # Everything drawn from rects made when the legend changed: made afresh on every
        # frame, each of its Qt values would wait for the training thread's GIL.
        painter.setFont(self._style.legend_font)
        painter.setPen(_LEGEND_BORDER)
        painter.setBrush(_LEGEND_BACK)
        painter.drawRoundedRect(box, 5, 5)
        if fold is not None:
            # the fold mark: a zoomed-in graph should not have to live under the key
            painter.setPen(_LEGEND_MARK)
            painter.drawText(fold, Qt.AlignmentFlag.AlignCenter, "▴")
        for swatch, colour, text_rect, text in rows:
            if swatch is not None:
                painter.setPen(_SWATCH_PEN)
                painter.setBrush(colour)
                painter.drawRect(swatch)
            painter.setPen(_LEGEND_TEXT)
            painter.drawText(text_rect, Qt.AlignmentFlag.AlignVCenter, text)
        painter.restore()

    def _legend_plan(self, lines: list[tuple[str, QColor | None]]
                     ) -> tuple[QRectF, QRectF | None, list[tuple]]:
        s = self._style.scale
        row = 18 * s
        box = self._legend_rect()
        width = box.width() - 50 * s
        fold = (None if self._legend_folded
                else QRectF(box.right() - 18 * s, box.top() + 2, 16 * s, 16 * s))
        rows = []
        for k, (text, colour) in enumerate(lines):
            y = 14 + row * k
            swatch = QRectF(14, y + 2 * s, 14 * s, 10 * s) if colour is not None else None
            text_rect = QRectF(14 + 20 * s if colour is not None else 14, y, width + 4, 16 * s)
            rows.append((swatch, colour, text_rect, text))
        return box, fold, rows

    def _paint_placeholder(self, painter: QPainter) -> None:
        painter.save()
        painter.resetTransform()
        font = QFont(self._style.legend_font)
        font.setPointSizeF(font.pointSizeF() * 1.3)
        painter.setFont(font)
        port = QRectF(self.viewport().rect())
        flags = Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap
        text_rect = painter.fontMetrics().boundingRect(
            port.adjusted(40, 0, -40, 0).toRect(), int(flags), self._placeholder)
        box = QRectF(text_rect).adjusted(-16, -12, 16, 12)
        painter.setPen(QPen(QColor("#cccccc")))
        painter.setBrush(QColor("#ffffff"))
        painter.drawRoundedRect(box, 6, 6)
        painter.setPen(QColor("#333333"))
        painter.drawText(box, flags, self._placeholder)
        painter.restore()

    def _legend_lines(self) -> list[tuple[str, QColor | None]]:
        if self._legend_folded:
            folded: list[tuple[str, QColor | None]] = [("▸ key (click to open)", None)]
            if self._order:
                folded.append((f"backward: {self._anim_pos} of {len(self._order)}", None))
            return folded
        return self._full_legend_lines()

    def _full_legend_lines(self) -> list[tuple[str, QColor | None]]:
        if self._level == "network":
            what = "gradient" if self._show_grads else "weight"
            lines: list[tuple[str, QColor | None]] = [
                (f"{what} > 0", _WEIGHT_POS), (f"{what} < 0", _WEIGHT_NEG),
                (f"line width ∝ |{what}|", None)]
            if self._network is not None and self._network.maps is not None:
                lines.append(("inside a unit: its output over the plane", None))
            if self._network is not None and self._network.units is not None:
                lines.append((f"under a unit: its {what if self._show_grads else 'output'} "
                              f"for {self.sample_label()}", None))
            lines.append(("double-click a neuron: its operations", None))
            return lines
        lines = [("gradient > 0", _POS[3]), ("gradient < 0", _NEG[3]),
                 ("no gradient", _ZERO), ("data flows left → right, gradients back", None)]
        if self._shown is not None:
            total = len(self._graph) if self._graph is not None else len(self._shown)
            if self.is_collapsed():
                where = (f"neuron {self._expanded[1]} of layer {self._expanded[0]}"
                         if self._expanded else "part")
                lines.append((f"{where}: {len(self._shown):,} of {total:,} nodes", None))
            else:
                lines.append((f"{total:,} nodes · double border: used twice or more", None))
            if self._order:
                lines.append((f"backward: {self._anim_pos} of {len(self._order)} nodes"
                              " · B: next · Esc: stop", None))
            elif self._viewport_scale() < TEXT_LOD:
                lines.append(("zoom in (wheel) to read values", None))
            else:
                lines.append(("wheel: zoom · drag: pan · F: fit · B: step backward", None))
        return lines

    # --- export -----------------------------------------------------------------------
    def export_png(self, path: str | Path, max_side: int = 8000) -> None:
        """The whole current level as a PNG, scaled down if its long side exceeds `max_side`."""
        scene = self.scene()
        rect = scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
        scale = min(2.0, max_side / max(rect.width(), rect.height(), 1.0))
        size = QSize(max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale)))
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor("#ffffff"))
        painter = QPainter(image)
        painter.setRenderHints(QPainter.RenderHint.Antialiasing
                               | QPainter.RenderHint.TextAntialiasing)
        self._render_uncached(scene, painter, QRectF(0, 0, size.width(), size.height()), rect)
        if not image.save(str(path), "PNG"):
            raise OSError(f"could not write {path}")

    def export_svg(self, path: str | Path) -> None:
        scene = self.scene()
        rect = scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(int(rect.width()), int(rect.height())))
        generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
        generator.setTitle("gradbox computation graph")
        painter = QPainter(generator)
        self._render_uncached(scene, painter, QRectF(0, 0, rect.width(), rect.height()), rect)

    def _render_uncached(self, scene: QGraphicsScene, painter: QPainter, target: QRectF,
                         source: QRectF) -> None:
        # Cached items would be pasted in as the view's bitmaps (blurred, or without text
        # when the view is zoomed out): draw them afresh at the export's own scale, and
        # as nodes, not as the zoomed-out view's boxes.
        cached = [item for item in scene.items()
                  if item.cacheMode() != QGraphicsItem.CacheMode.NoCache]
        overview = scene is self._op_scene and self._boxes_shown
        for item in cached:
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        if overview:
            self._show_boxes(False)
        view_lod = self._style.lod
        self._style.lod = target.width() / max(source.width(), 1e-9)  # the export's zoom
        try:
            scene.render(painter, target, source)
        finally:
            self._style.lod = view_lod
            painter.end()
            for item in cached:
                item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
            if overview:
                self._show_boxes(True)

    def export_dot(self, path: str | Path) -> None:
        shown = self._shown if self._shown is not None else self._graph
        if shown is None:
            raise ValueError("no graph to export")
        Path(path).write_text(g.to_dot(shown, self._sample), encoding="utf-8")

    # --- operation level --------------------------------------------------------------
    def _choose_shown(self) -> Graph | None:
        graph = self._graph
        if graph is None:
            return None
        if self._expanded is not None:
            part = g.neuron_subgraph(graph, *self._expanded)
            if part is not None:
                return part
            self._expanded = None
        if self._show_all or len(graph) <= OP_NODE_CAP:
            return graph
        # Too many to draw at once: open on the output neuron, the one next to the loss.
        sizes = self._layer_sizes(graph)
        if sizes:
            self._expanded = (len(sizes) - 1, 0)
            part = g.neuron_subgraph(graph, *self._expanded)
            if part is not None:
                return part
            self._expanded = None
        # Not an MLP: the nodes nearest the root, so the loss end is visible.
        return graph.subgraph(range(len(graph) - OP_NODE_CAP, len(graph)))

    @staticmethod
    def _layer_sizes(graph: Graph) -> list[int]:
        counts: dict[int, int] = {}
        for name in graph.parameter_nodes:
            parsed = NetworkLevel.parse_name(name)
            if parsed is not None and parsed[2] is None:
                counts[parsed[0]] = counts.get(parsed[0], 0) + 1
        return [counts[k] for k in sorted(counts)]

    def _sync_op_items(self) -> None:
        shown = self._choose_shown()
        self._shown = shown
        if shown is None:
            return
        key = (shown.structure_key, self._expanded if shown is not self._graph else None)
        rebuilt = key != self._shown_key
        if rebuilt:
            self._build_op_items(shown)
            self._shown_key = key
        selected = self._to_shown(self._selected_node)
        if rebuilt or selected != self._selected:
            self._selected = selected
            self._apply_selection()
        self._update_op_items()

    def _build_op_items(self, shown: Graph) -> None:
        self._op_scene.clear()
        layout = g.layered_layout(shown)
        style = self._style
        self._numbers = numbers = _Numbers(len(shown))
        # Geometry in plain floats: item.pos(), QRectF.united() and the like each make
        # a Qt value, and while training runs each of those waits for the GIL (adding
        # the demo graph took 5 s that way).
        n = len(shown)
        xy = np.array([layout[i] for i in range(n)], dtype=np.float64).reshape(-1, 2)
        xy[:, 0] *= style.dx
        xy[:, 1] *= style.dy
        w, h = style.node_w, style.node_h
        nodes = []
        for i, (x, y) in enumerate(xy.tolist()):
            if shown.children[i]:
                kind = _OpNode.OP
            elif shown.names[i]:
                kind = _OpNode.PARAM
            elif shown.labels[i] or i in shown.boundary:
                kind = _OpNode.INPUT
            else:
                kind = _OpNode.CONST
            item = _OpNode(i, kind, _op_title(shown, i), shown.is_fanout(i), style, numbers)
            item.setPos(x, y)
            tip = shown.names[i] or shown.display_name(i)
            item.setToolTip(f"#{self._to_original(i)} {tip}")
            nodes.append(item)
        lines, index, long = [], [], []
        points = xy.tolist()
        for c, p in shown.edges:
            lines.append(QLineF(*style.edge_line(*points[c], *points[p])))
            index.append((c, p))
            long.append(g.is_faint_edge(shown, layout, c, p))
        self._node_rects = [QRectF(x - w / 2, y - h / 2, w, h) for x, y in points]
        self._node_xy = xy
        # the edges run between node sides, so the nodes' extent holds them too
        lo, hi = xy.min(axis=0) if n else (0.0, 0.0), xy.max(axis=0) if n else (0.0, 0.0)
        area = QRectF(float(lo[0]) - w / 2, float(lo[1]) - h / 2,
                      float(hi[0] - lo[0]) + w, float(hi[1] - lo[1]) + h)
        self._edges = _EdgeLayer(lines, long, area, style)
        borders: dict[int, list[QRectF]] = {}
        for item, rect in zip(nodes, self._node_rects):
            if item.kind in (_OpNode.PARAM, _OpNode.INPUT):
                borders.setdefault(item.kind, []).append(rect)
        self._edges.borders = [(_OpNode._border[kind], rects) for kind, rects in borders.items()]
        self._edges.fanout = [QRectF(x - w / 2 - 4, y - h / 2 - 4, w + 8, h + 8)
                              for item, (x, y) in zip(nodes, points) if item.fanout]
        self._edge_lines = lines
        self._edge_index = index
        self._op_scene.addItem(self._edges)
        for item in nodes:
            item.setVisible(not self._boxes_shown)
            self._op_scene.addItem(item)
        self._nodes = nodes
        self._add_landmarks(shown)
        self._op_scene.setSceneRect(self._roomy(self._op_scene.itemsBoundingRect()))
        self._fitted["operation"] = False
        if self._level == "operation":
            self.fit()

    def _add_landmarks(self, shown: Graph) -> None:
        """Names for the regions of a zoomed-out graph, at a constant size on screen."""
        # (node, text, beside): beside = to the left of the whole graph, at the node's
        # height, where the label covers nothing; otherwise just above the node
        marks: list[tuple[int, str, bool]] = [(shown.root, "loss: backward starts here",
                                               False)]
        inputs = [i for i in range(len(shown))
                  if shown.labels[i] and not shown.children[i] and i not in shown.boundary]
        if inputs:  # one label: the inputs sit next to each other and would overprint
            top = min(inputs, key=lambda i: self._node_xy[i, 1])
            marks.append((top, "inputs " + ", ".join(shown.labels[i] for i in inputs) + " →",
                          True))
        for chain in g.folded_sums(shown):
            # label the block's top node: the terms of the first addition sit above it
            first = min((chain[0], *shown.children[chain[0]]),
                        key=lambda i: self._node_xy[i, 1])
            marks.append((first, f"a sum of {len(chain)} terms, folded into rows\n"
                                    "(read left to right, row by row)", False))
        if shown is not self._graph and self._expanded is not None:
            marks.append((0, f"neuron {self._expanded[1]} of layers.{self._expanded[0]}",
                          False))
        style = self._style
        left = (float(self._node_xy[:, 0].min()) if len(self._node_xy) else 0.0) - style.node_w / 2
        font = style.header_font
        self._landmarks = []
        self._landmark_beside = []
        for node, text, beside in marks:
            item = self._op_scene.addSimpleText(text, font)
            item.setBrush(QColor("#333333"))
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
            pos = self._nodes[node].pos()
            box = item.boundingRect()
            if beside:
                item.setPos(left - 10, pos.y())
                item.setTransform(item.transform().translate(-box.width(), -box.height() / 2))
            else:
                item.setPos(pos.x() - style.node_w / 2, pos.y() - style.node_h / 2 - 4)
                # drawn from its top-left corner up: lift it by its own height
                item.setTransform(item.transform().translate(0, -box.height()))
            item.setZValue(5)
            item.setVisible(self._viewport_scale() < TEXT_LOD)
            self._landmarks.append(item)
            self._landmark_beside.append(beside)

    def _update_op_items(self) -> None:
        shown = self._shown
        if shown is None:
            return
        sample = min(self._sample, shown.n_samples - 1)
        numbers = self._numbers
        numbers.values = shown.values(sample)
        numbers.grads = shown.grads(sample)
        numbers.bins = g.gradient_bins(numbers.grads)
        numbers.generation += 1
        # Only the nodes on screen are repainted now; the others when scrolled into view.
        # At the demo graph's 1,663 nodes, touching every item cost most of a refresh.
        self._touch_visible()
        self._refresh_boxes()
        self._emit_details()

    def _touch_visible(self) -> None:
        """Repaint the node items on screen that show older numbers than the current."""
        if self._boxes_shown or not self._nodes:
            return  # zoomed out the edge layer draws the nodes, from the same numbers
        generation = self._numbers.generation
        area = self.mapToScene(self.viewport().rect()).boundingRect()
        xy = self._node_xy
        w, h = self._style.node_w, self._style.node_h
        on_screen = ((xy[:, 0] >= area.left() - w) & (xy[:, 0] <= area.right() + w)
                     & (xy[:, 1] >= area.top() - h) & (xy[:, 1] <= area.bottom() + h))
        for k in np.flatnonzero(on_screen).tolist():
            item = self._nodes[k]
            if item.drawn != generation:
                item.update()

    def _to_shown(self, node: int | None) -> int | None:
        shown = self._shown
        if node is None or shown is None:
            return None
        if shown.original_ids is None or shown is self._graph:
            return node if 0 <= node < len(shown) else None
        try:
            return shown.original_ids.index(node)
        except ValueError:
            return None

    def _to_original(self, node: int | None) -> int | None:
        shown = self._shown
        if node is None or shown is None or shown is self._graph or shown.original_ids is None:
            return node
        return shown.original_ids[node]

    def _select(self, node: int | None, user: bool) -> None:
        """Select a node of the given graph (shown or not); a user's choice is announced."""
        self._selected_node = node
        self._selected = self._to_shown(node)
        self._apply_selection()
        if node is not None:
            self.node_selected.emit(node)
            name = self._graph.names[node] if self._graph is not None else None
            if name:
                self._net_selected = name
                self._update_network_selection()
                if user:
                    self.parameter_selected.emit(name)
        self._emit_details()

    def _apply_selection(self) -> None:
        for item in self._nodes:
            if item.selected != (item.index == self._selected):
                item.selected = item.index == self._selected
                item.update()
        if self._edges is not None:
            sel = self._selected
            self._edges.inputs = [ln for ln, (c, p) in zip(self._edge_lines, self._edge_index)
                                  if p == sel]
            self._edges.outputs = [ln for ln, (c, p) in zip(self._edge_lines, self._edge_index)
                                   if c == sel]
            self._edges.update()
        self._refresh_boxes()

    def _emit_details(self) -> None:
        text = self.details_text()
        # Unchanged details (nothing selected, most steps) are not sent again: while
        # training runs, every signal into Qt waits for the training thread's GIL.
        if text != self._details_sent:
            self._details_sent = text
            self.details_changed.emit(text)

    def _click(self, point: QPointF, double: bool) -> None:
        if self._level == "operation":
            hit = self._node_at(point)
            if hit is not None:
                self._select(self._to_original(hit), user=True)
            return
        unit = self._unit_at(point)
        if unit is not None:
            layer, index = unit
            if double and layer >= 1 and layer < len(self._units) - 1:
                if self.expand_neuron(layer - 1, index):
                    self.set_level("operation")
                return
            if 1 <= layer < len(self._units) - 1:
                self._net_selected = NetworkLevel.bias_name(layer - 1, index)
                self._update_network_selection()
                self.parameter_selected.emit(self._net_selected)
                self._emit_details()
            return
        name = self._weight_at(point)
        if name is not None:
            self._net_selected = name
            self._update_network_selection()
            if self._graph is not None:
                node = self._graph.find_parameter(name)
                if node is not None:
                    self._selected_node = node
                    self._selected = self._to_shown(node)
                    self._apply_selection()
            self.parameter_selected.emit(name)
            self._emit_details()

    def _node_at(self, point: QPointF) -> int | None:
        # by geometry, not scene.items(): zoomed out the node items are hidden
        if not len(self._node_xy):
            return None
        dx = np.abs(self._node_xy[:, 0] - point.x())
        dy = np.abs(self._node_xy[:, 1] - point.y())
        hits = np.flatnonzero((dx <= self._style.node_w / 2) & (dy <= self._style.node_h / 2))
        return int(hits[0]) if len(hits) else None

    # --- network level ----------------------------------------------------------------
    def _build_network(self) -> None:
        net = self._network
        assert net is not None
        self._net_scene.clear()
        sizes = list(net.layer_sizes)
        columns = [*sizes, 1]  # the loss after the outputs
        # Wide layers: spread the columns too, so 64x64 weights are not one solid band.
        net_dy = self._style.net_dy
        dx = max(NET_DX, max(sizes) * net_dy / 4)
        positions: list[list[QPointF]] = []
        for layer, count in enumerate(columns):
            top = -(count - 1) * net_dy / 2
            positions.append([QPointF(layer * dx, top + k * net_dy) for k in range(count)])
        lines, names, segments = [], [], []
        for layer in range(len(sizes) - 1):
            for unit in range(sizes[layer + 1]):
                for source in range(sizes[layer]):
                    a, b = positions[layer][source], positions[layer + 1][unit]
                    line = QLineF(a.x() + UNIT_R, a.y(), b.x() - UNIT_R, b.y())
                    lines.append(line)
                    names.append(NetworkLevel.weight_name(layer, unit, source))
                    segments.append((line.x1(), line.y1(), line.x2(), line.y2()))
        # outputs -> loss: drawn plain, they carry no weight
        loss_lines = [QLineF(p.x() + UNIT_R, p.y(), positions[-1][0].x() - UNIT_R,
                             positions[-1][0].y()) for p in positions[-2]]
        bounds = QRectF()
        for column in positions:
            for p in column:
                bounds = bounds.united(QRectF(p.x() - 60, p.y() - 40, 120, 80))
        self._weights = _WeightLayer(lines, bounds, min(1.0, (16 / max(sizes)) ** 0.5))
        self._net_scene.addItem(self._weights)
        plain = _EdgeLayer(loss_lines)
        self._net_scene.addItem(plain)
        self._weight_names = names
        self._weight_segments = np.array(segments, dtype=np.float64).reshape(-1, 4)
        self._units = []
        header_font = self._style.header_font
        self._headers = []
        self._headers_form = 0
        self._net_dx = dx
        for layer, column in enumerate(positions):
            row = []
            title = self._column_title(net, layer)
            header = self._net_scene.addSimpleText(title, header_font)
            # constant size on screen, centred above the column: readable at any zoom
            header.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
            header.setPos(column[0].x(), column[0].y() - UNIT_R - 6)
            box = header.boundingRect()
            header.setTransform(QTransform().translate(-box.width() / 2, -box.height()))
            self._headers.append((header, title, title.split("\n")[0], box.width()))
            for k, p in enumerate(column):
                title = f"x{k}" if layer == 0 else ""
                unit = _Unit(layer, k, title, self._style)
                if 1 <= layer <= len(sizes) - 1:
                    unit.setToolTip(f"layers.{layer - 1}.neurons.{k} — click: its bias; "
                                    "double-click: its operations")
                unit.setPos(p)
                self._net_scene.addItem(unit)
                row.append(unit)
            self._units.append(row)
        self._net_scene.setSceneRect(self._roomy(bounds))
        self._net_key = net.structure_key
        self._fitted["network"] = False
        if self._level == "network":
            self.fit()

    @staticmethod
    def _column_title(net: NetworkLevel, layer: int) -> str:
        sizes = net.layer_sizes
        if layer == 0:
            return "inputs"
        if layer == len(sizes):
            return "loss"
        act = net.activations[layer - 1]
        role = "output" if layer == len(sizes) - 1 else "hidden"
        return f"layers.{layer - 1}\n{role} · {act}"

    def _update_network(self) -> None:
        net = self._network
        if net is None or self._weights is None:
            return
        source = net.weight_grads if self._show_grads else net.weights
        flat = np.concatenate([w.ravel() for w in source]) if source else np.zeros(0)
        self._weights.set_strengths(flat)
        maps = net.maps or ()
        # The same maps as last time (a caller may reuse them between steps while
        # training runs): the same image, without colouring them again.
        if self._maps_drawn is None or self._maps_drawn[0] is not maps:
            self._maps_drawn = (maps, self._maps_image(maps) if maps else None)
        image = self._maps_drawn[1]
        res = maps[0].shape[1] if maps else 0
        first = 0  # the image's row of unit maps where this layer's start
        for layer, row in enumerate(self._units):
            count = maps[layer].shape[0] if layer < len(maps) else 0
            for k, unit in enumerate(row):
                unit.text = self._unit_text(net, layer, k)
                unit.image = image if k < count else None
                top = (first + k) * res
                if unit.image is not None and (unit.source is None or unit.source.top() != top
                                               or unit.source.height() != res):
                    unit.source = QRectF(0, top, res, res)
                unit.update()
            first += count
        self._update_network_selection()

    def _unit_text(self, net: NetworkLevel, layer: int, k: int) -> str:
        if layer == len(net.layer_sizes):
            return "" if net.loss is None else f"{g.fmt(net.loss)}"
        if net.units is None:
            return ""
        source = net.unit_grads if self._show_grads else net.units
        value = float(source[layer][k])
        if np.isnan(value):
            return ""
        return ("grad " if self._show_grads else "") + g.fmt(value)

    @staticmethod
    def _maps_image(maps: Sequence[np.ndarray]) -> QImage:
        """Every unit's map, layer by layer ((units, res, res) values each), as one image:
        the n-th unit's in rows n*res to (n+1)*res, coloured through `_MAP_COLOURS`.

        All units in one pass of a few numpy operations, into one image: while training
        runs, numpy lets go of the GIL on every operation over more than a few hundred
        numbers, and each time the UI waits to get it back -- colouring layer by layer
        (and unit by unit before that) took 100 ms of a refresh.
        """
        stack = np.concatenate([np.asarray(m, dtype=np.float64) for m in maps])
        units, res = stack.shape[0], stack.shape[2]
        top = np.max(np.abs(stack), axis=(1, 2), keepdims=True)
        top[top == 0] = 1.0
        # square root: most of a unit's map is far below its peak and would look blank
        t = np.sqrt(np.minimum(np.abs(stack) / top, 1.0)) * np.sign(stack)
        index = np.rint((t + 1.0) * 128.0).astype(np.intp)
        rgba = np.ascontiguousarray(_MAP_COLOURS[index].reshape(units * stack.shape[1], res, 4))
        # copy(): own the pixels, `rgba` dies with this frame
        return QImage(rgba.data, res, units * stack.shape[1], 4 * res,
                      QImage.Format.Format_RGBA8888).copy()

    def _update_network_selection(self) -> None:
        if self._weights is None:
            return
        name = self._net_selected
        self._weights.selected = None
        target_unit: tuple[int, int] | None = None
        if name is not None:
            if name in self._weight_names:
                x1, y1, x2, y2 = self._weight_segments[self._weight_names.index(name)]
                self._weights.selected = QLineF(x1, y1, x2, y2)
            parsed = NetworkLevel.parse_name(name)
            if parsed is not None and parsed[2] is None:
                target_unit = (parsed[0] + 1, parsed[1])
        for layer, row in enumerate(self._units):
            for k, unit in enumerate(row):
                chosen = (layer, k) == target_unit
                if unit.selected != chosen:
                    unit.selected = chosen
                    unit.update()
        self._weights.update()

    def _unit_at(self, point: QPointF) -> tuple[int, int] | None:
        for row in self._units:
            for unit in row:
                if (unit.pos() - point).manhattanLength() <= 2 * UNIT_R and \
                        QLineF(unit.pos(), point).length() <= UNIT_R + 2:
                    return unit.layer, unit.index
        return None

    def _weight_at(self, point: QPointF) -> str | None:
        seg = self._weight_segments
        if not len(seg):
            return None
        p = np.array([point.x(), point.y()])
        a, b = seg[:, :2], seg[:, 2:]
        ab = b - a
        t = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.maximum(
            np.einsum("ij,ij->i", ab, ab), 1e-12), 0, 1)
        distance = np.linalg.norm(a + t[:, None] * ab - p, axis=1)
        best = int(np.argmin(distance))
        # a few pixels on screen, whatever the zoom
        tolerance = 6.0 / max(self._viewport_scale(), 1e-6)
        return self._weight_names[best] if distance[best] <= tolerance else None

    def _network_details(self, name: str) -> str:
        net = self._network
        parsed = NetworkLevel.parse_name(name)
        if net is None or parsed is None:
            return name
        layer, unit, source = parsed
        if source is None:
            value, grad = net.biases[layer][unit], net.bias_grads[layer][unit]
            where = f"bias of neuron {unit} in layer {layer}"
        else:
            value = net.weights[layer][unit, source]
            grad = net.weight_grads[layer][unit, source]
            origin = f"input x{source}" if layer == 0 else f"neuron {source} of layer {layer - 1}"
            where = f"weight from {origin} to neuron {unit} of layer {layer}"
        text = [f"{name}", where, f"value: {g.fmt(float(value))}",
                f"grad (sum over all samples): {g.fmt(float(grad))}"]
        if self._graph is not None and self._graph.find_parameter(name) is not None:
            text.append("")
            text.append(g.details(self._graph, self._graph.find_parameter(name), self._sample,
                                  self._sample_label))
        return "\n".join(text)
