"""The graph view's drawing pieces: sizes and colours (`Style`), and the scene items.

One item per node of the operation graph (`OpNode`), every edge in one item
(`EdgeLayer`), one item per unit of the network level (`Unit`) and every weight in one
item (`WeightLayer`). Items paint from plain numbers the scenes hand them; they know
nothing about graphs or training.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QImage,
    QPainter,
    QPainterPath,
    QPen,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QStyleOptionGraphicsItem,
    QWidget,
)

from gradbox.autograd import ops
from gradbox.formatting import fmt
from gradbox.graph import Graph
from gradbox.views.palette import NEGATIVE, POSITIVE, rgb

# The size of a node's text at 100 % zoom: the smallest a graph opens with (at
# 1024 x 700 its 7 pt names opened at zoom 0.52, 3.6 pt on screen; see Framer.reframe).
NODE_PT = 9.0
# Node size (op level), grown with its text from 132 x 44 at 7.5 pt: NODE_W at most (a
# graph of short titles has narrower nodes, see Style.node_width_for); scene units
# between node centres: the node and a fixed gap.
NODE_W, NODE_H = 158.0, 53.0
DX, DY = NODE_W + 18.0, NODE_H + 12.0
# The longest line of numbers a node writes (fmt's four digits, a sign, an exponent).
WIDEST_NUMBER_LINE = "grad -8.888e-08"
# Below this zoom, text is too small to read: draw boxes only.
TEXT_LOD = 0.45
# Below this, nodes are a few pixels: plain filled rectangles.
BOX_LOD = 0.2
# Network level
# Network level: a unit is a square of UNIT scene units, NET_GAP apart in its column,
# as dense as TensorFlow Playground's, so that a column of eight fits the graph tab of
# the default window with units ~35-40 px wide; the columns are NET_DX apart.
UNIT = 48.0
UNIT_R = UNIT / 2
NET_GAP = 6.0
NET_DX, NET_DY = 150.0, UNIT + NET_GAP
# Below this many pixels on screen a unit's value does not fit inside it.
UNIT_TEXT_PX = 26.0

# Blue for positive, orange for negative: the convention of the decision boundary and
# the parameters panel (TensorFlow Playground's), so the same sign has the same colour
# in every panel of the window. Six levels of |gradient| each, light to dark.
POS = [QColor("#dcecf7"), QColor("#b3d5ee"), QColor("#7fb8e0"), QColor("#3e95d0"),
        QColor(POSITIVE), QColor("#05548a")]
NEG = [QColor("#fdebd6"), QColor("#fbd3a6"), QColor("#f8b56d"), QColor(NEGATIVE),
        QColor("#cf6f06"), QColor("#8f4a00")]
ZERO = QColor("#ffffff")
# The replay's current node and the edges its gradient flows along: a colour no sign
# uses (orange would read as "negative gradient").
REPLAY = "#d81b60"
PENDING = QColor("#e6e6e6")
BRUSHES = {0: QBrush(ZERO)}
for _k in range(6):
    BRUSHES[_k + 1] = QBrush(POS[_k])
    BRUSHES[-(_k + 1)] = QBrush(NEG[_k])
PENDING_BRUSH = QBrush(PENDING)
TEXT, TEXT_ON_DARK = QColor("#111111"), QColor("#ffffff")
WHITE_BRUSH = QBrush(QColor("#ffffff"))
LEGEND_BORDER, LEGEND_BACK = QPen(QColor("#cccccc")), QBrush(QColor(255, 255, 255, 225))
LEGEND_MARK, LEGEND_TEXT = QColor("#777777"), QColor("#222222")


def _map_colours() -> np.ndarray:
    """257 RGBA colours from -1 (orange) through 0 (white, the middle one) to +1 (blue):
    the weights' and the decision boundary's colours, so an output unit's map looks like
    the boundary."""
    t = np.linspace(-1.0, 1.0, 257)[:, None]
    pos = np.array(rgb(POSITIVE), dtype=np.float64)
    neg = np.array(rgb(NEGATIVE), dtype=np.float64)
    shades = np.where(t >= 0, 255.0 + (pos - 255.0) * t, 255.0 + (neg - 255.0) * (-t))
    colours = np.full((257, 4), 255, dtype=np.uint8)
    colours[:, :3] = np.rint(shades)
    return colours


MAP_COLOURS = _map_colours()
FANOUT_PEN = QPen(QColor("#333333"), 1.2)
BADGE_PEN, BADGE_BRUSH = QPen(QColor("#7a4a00"), 1.0), QBrush(QColor("#ffcc33"))
PENDING_KEY = 99  # a colour class no gradient has (see OperationScene.refresh_boxes)
WEIGHT_POS, WEIGHT_NEG = QColor(POSITIVE), QColor(NEGATIVE)

# A node that receives its gradient more than this many times in a custom replay
# shows the first numbers and "…": the badge must stay smaller than the node.
BADGE_PLACES = 4  # the wrong-order lesson fires a four times: all of them fit


def font(points: float, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


class Style:
    """One view's sizes and fonts, scaled together by `GraphView.set_font_scale`.

    Boxes grow with their text (a bigger font in the same box would spill over), but
    the gaps between them do not: at "fit" a scaled graph's text is then a little
    larger on screen, and a small graph (the playground's) fills more of the window
    before fit's zoom limit stops it.
    """

    def __init__(self, scale: float = 1.0, lines: int = 3) -> None:
        self.scale = scale
        # Title, data, grad: three lines. A view that writes more into each node (the
        # Build workspace's expected numbers, in `free_rect`) asks for taller nodes; the
        # rows of the layout move apart with them.
        self.lines = max(3, lines)
        self.node_h = NODE_H * scale * self.lines / 3
        self.font = font(NODE_PT * scale)
        self.bold = font(NODE_PT * scale, bold=True)
        # parameter names are long ('layers.1.neurons.12.w.15'): regular weight
        self.name_font = font(NODE_PT * scale)
        self.badge_font = font(NODE_PT * scale, bold=True)
        self.unit_font = font(7.0 * scale)
        self.header_font = font(9.0 * scale, bold=True)
        self.legend_font = font(8.5 * scale)
        self.net_dy = NET_DY
        self.bold_metrics = QFontMetricsF(self.bold)
        self.name_metrics = QFontMetricsF(self.name_font)
        self.value_metrics = QFontMetricsF(self.font)
        self.set_node_width(NODE_W * scale)
        self.badge_metrics = QFontMetricsF(self.badge_font)
        self.header_metrics = QFontMetricsF(self.header_font)
        self.square = QRectF(-UNIT_R, -UNIT_R, UNIT, UNIT)
        self.square_path = QPainterPath()
        self.square_path.addRoundedRect(self.square, 4, 4)
        self.unit_title_rect = QRectF(-UNIT_R - 44 * scale, -8 * scale, 40 * scale, 16 * scale)
        self.unit_metrics = QFontMetricsF(self.unit_font)
        self._unit_rects: tuple[float, QRectF, QRectF] | None = None
        # The zoom the items are painted at: set by the view before it paints (reading
        # it from the painter's transform would make a QTransform per item).
        self.lod = 1.0
        self.text_lod = TEXT_LOD
        self.text_pt = NODE_PT * scale  # a node's text at 100 % zoom, in points

    def set_node_width(self, width: float) -> None:
        """Nodes `width` scene units wide (the gap between columns stays). Everything
        paint() needs is made here, once: every Qt value (QRectF, QColor, QPen...) made
        from Python costs the UI thread -- about 0.5 ms each when training still ran on
        a thread of the window's process and held the GIL -- so paint() makes none."""
        self.node_w = width
        self.dx, self.dy = self.node_w + DX - NODE_W, self.node_h + DY - NODE_H
        self.rect = QRectF(-self.node_w / 2, -self.node_h / 2, self.node_w, self.node_h)
        r, third = self.rect, NODE_H * self.scale / 3
        below = self.node_h - 3 * third  # the room of the lines past the third
        self.title_rect = r.adjusted(4, 1, -4, -2 * third - below)
        self.value_rect = r.adjusted(4, third, -4, -third - below)
        self.grad_rect = r.adjusted(4, 2 * third - 1, -4, -1 - below)
        self.free_rect = r.adjusted(4, 3 * third - 1, -4, -1)  # empty with three lines
        self.fanout_rect = r.adjusted(-4, -4, 4, 4)
        self.title_width = int(self.title_rect.width())

    def node_width_for(self, titles: list[tuple[str, bool]]) -> float:
        """The node width a graph with these titles (text, is a parameter) needs: the
        widest title or number line whole, at most NODE_W. A playground graph's short
        titles ('a', 'tanh') made nodes of NODE_W wider than their text, and at 9 pt a
        four-node chain no longer fitted a 1024 x 700 window."""
        widest = self.value_metrics.horizontalAdvance(WIDEST_NUMBER_LINE)
        for text, parameter in titles:
            metrics = self.name_metrics if parameter else self.bold_metrics
            widest = max(widest, metrics.horizontalAdvance(text))
        return min(NODE_W * self.scale, widest + 12)

    def unit_rects(self, lod: float) -> tuple[QRectF, QRectF]:
        """A unit's title and value rects in screen-sized units at zoom `lod`, made once
        per zoom: paint() makes no Qt values (see `Style.set_node_width`)."""
        if self._unit_rects is None or self._unit_rects[0] != lod:
            r = self.unit_title_rect
            title = QRectF(-UNIT_R * lod - r.width() - 4, r.top(), r.width(), r.height())
            side = UNIT * lod
            height = self.unit_metrics.height() + 1
            strip = QRectF(-side / 2, side / 2 - height, side, height)
            self._unit_rects = (lod, title, strip)
        return self._unit_rects[1], self._unit_rects[2]

    def edge_line(self, ax: float, ay: float, bx: float, by: float
                  ) -> tuple[float, float, float, float]:
        """From the child's right side to the parent's left; top/bottom when stacked."""
        w, h = self.node_w, self.node_h
        if bx - ax >= w:
            return ax + w / 2, ay, bx - w / 2, by
        # a term drawn right above the sum that adds it, or a folded row's wrap-around
        sign = 1 if by >= ay else -1
        return ax, ay + sign * h / 2, bx, by - sign * h / 2


def op_title(graph: Graph, i: int) -> str:
    if graph.is_group(i):
        return graph.labels[i]  # "neuron 3 of layers.0", "L2 penalty, 105 terms"
    if graph.children[i]:
        symbol = ops.symbol(graph.ops[i])
        # The engine's label names the result (b = a + a): without it two "+" boxes
        # of an expression cannot be told apart.
        label = graph.labels[i]
        return f"{label} = {symbol}" if label and i not in graph.boundary else symbol
    return graph.display_name(i)


def bounded(item: QGraphicsRectItem, bounds: QRectF) -> None:
    """Give an item its bounding rect in C++ (a pen-less QGraphicsRectItem's rect).

    Not a Python boundingRect(): Qt asks every changed item for it from its event loop,
    and each such call into Python took the GIL -- when training still ran on a thread
    of the window's process, adding the demo graph's 1,663 nodes froze the window for
    10 s; with the rect in C++ it takes 20 ms. Only paint() stays in Python, for items on screen.
    """
    item.setRect(bounds)
    item.setPen(Qt.PenStyle.NoPen)


class Numbers:
    """The shown graph's numbers for the selected sample, shared by all its node items.

    A step replaces the arrays and bumps `generation`; an item reads its numbers when
    it paints, so only the items on screen do any work (see `OperationScene.touch_visible`).
    """

    __slots__ = ("bins", "generation", "grads", "values")

    def __init__(self, n: int) -> None:
        self.values = np.zeros(n)
        self.grads = np.zeros(n)
        self.bins = np.zeros(n, dtype=np.int64)
        self.generation = 0


class OpNode(QGraphicsRectItem):
    """One node of the operation graph: one item painting it all, cheaper than several."""

    PARAM, INPUT, CONST, OP, GROUP = range(5)
    _border: ClassVar[dict[int, QPen]] = {
        OP: QPen(QColor("#555555"), 1.0), PARAM: QPen(QColor("#8a6d00"), 2.2),
        GROUP: QPen(QColor("#37474f"), 2.6),
        INPUT: QPen(QColor("#1b7f5b"), 2.2),
        CONST: QPen(QColor("#a0a0a0"), 1.0, Qt.PenStyle.DashLine)}
    _select_pen = QPen(QColor("#111111"), 3.5)
    _current_pen = QPen(QColor(REPLAY), 5.0)

    def __init__(self, index: int, kind: int, title: str, fanout: bool,
                 style: Style, numbers: Numbers | None = None) -> None:
        super().__init__()
        self.style = style
        self.numbers = numbers if numbers is not None else Numbers(index + 1)
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
        bounded(self, style.rect.adjusted(-6 - 14 * s, -6 - 12 * s, 10, 10))
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def core_rect(self) -> QRectF:
        """The box itself in scene units, without the badge's room."""
        return self.style.rect.translated(self.pos())

    @classmethod
    def border_pen(cls, kind: int) -> QPen:
        return cls._border[kind]

    @property
    def value_text(self) -> str:
        return f"data {fmt(float(self.numbers.values[self.index]))}"

    @property
    def grad_text(self) -> str:
        return f"grad {fmt(float(self.numbers.grads[self.index]))}"

    @property
    def fill(self) -> QBrush:
        return BRUSHES[int(self.numbers.bins[self.index])]

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
            painter.fillRect(rect, PENDING_BRUSH if self.pending else self.fill)
            if self.current or self.selected:
                painter.setPen(self._current_pen if self.current else self._select_pen)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawRect(rect)
            return
        painter.setBrush(PENDING_BRUSH if self.pending else self.fill)
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
            painter.setPen(FANOUT_PEN)
            outer = style.fanout_rect
            if self.kind == self.OP:
                painter.drawRoundedRect(outer, 12, 12)
            else:
                painter.drawRect(outer)
        if self.places:
            self._paint_badge(painter, lod)
        if lod < TEXT_LOD:
            return
        painter.setPen(TEXT_ON_DARK if self.dark and not self.pending else TEXT)
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
        painter.setPen(BADGE_PEN)
        painter.setBrush(BADGE_BRUSH)
        painter.drawRoundedRect(badge, 11 * s, 11 * s)
        if lod >= TEXT_LOD * 0.6:
            painter.setPen(TEXT)
            painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, text)


class EdgeLayer(QGraphicsRectItem):
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
    _flow_pen = QPen(QColor(REPLAY), 3.0)
    _flow_pen.setCosmetic(True)

    _mark_pen = QPen(QColor("#111111"), 2.0)
    _mark_pen.setCosmetic(True)
    # The selected sample's path: edges carrying a big share of its signal, darker.
    path_pens = (QPen(QColor("#607d8b"), 1.8), QPen(QColor("#263238"), 2.6))
    path_pens[0].setCosmetic(True)
    path_pens[1].setCosmetic(True)
    _box_pen = QPen(QColor("#b0b0b0"), 0.0)  # hairline: white boxes stay visible

    def __init__(self, lines: list[QLineF], long: list[bool] | None = None,
                 area: QRectF | None = None, style: Style | None = None) -> None:
        super().__init__()
        self.style = style
        long = long or [False] * len(lines)
        self.lines = [ln for ln, far in zip(lines, long) if not far]
        self.long_lines = [ln for ln, far in zip(lines, long) if far]
        self.inputs: list[QLineF] = []
        self.outputs: list[QLineF] = []
        self.flow: list[QLineF] = []
        self.path: list[tuple[QPen, list[QLineF]]] = []  # the selected sample's path
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
        bounded(self, area.adjusted(-4, -4, 4, 4))
        self.setZValue(-1)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        painter.setPen(self._long_pen)
        painter.drawLines(self.long_lines)
        painter.setPen(self._pen)
        painter.drawLines(self.lines)
        for pen, lines in self.path:
            painter.setPen(pen)
            painter.drawLines(lines)
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


class Unit(QGraphicsRectItem):
    """A neuron (or input, or the loss) at network level: a square showing its output
    over the plane (TensorFlow Playground's heat map), its value inside at the bottom."""

    _pen = QPen(QColor("#444444"), 1.2)
    _select_pen = QPen(QColor("#111111"), 4.0)
    _current_pen = QPen(QColor(REPLAY), 5.0)
    _strip = QBrush(QColor(255, 255, 255, 215))
    _pending = QBrush(QColor(230, 230, 230, 200))
    # the selected sample's place in the map: a dark ring in a white one, seen on both
    # colours (made once: paint() makes no Qt values)
    _marker_pens = (QPen(QColor("#ffffff"), 2.6), QPen(QColor("#111111"), 1.2))
    _marker_pens[0].setCosmetic(True)
    _marker_pens[1].setCosmetic(True)

    def __init__(self, layer: int, index: int, title: str, style: Style) -> None:
        super().__init__()
        self.style = style
        self.layer = layer
        self.index = index
        self.title = title
        self.text = ""
        # the layer's maps in one image, and where this unit's is in it
        self.image: QImage | None = None
        self.source: QRectF | None = None
        self.fill = WHITE_BRUSH
        self.selected = False
        self.pending = False  # a replay has not reached it yet
        self.current = False  # the replay's latest step
        self.marker: QPointF | None = None  # the selected sample's place in the map
        s = style.scale
        bounded(self, QRectF(-UNIT_R - 46 * s, -UNIT_R - 4, UNIT + 50 * s, UNIT + 8))
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def core_rect(self) -> QRectF:
        """The square itself in scene units, without its title's room."""
        return self.style.square.translated(self.pos())

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        style = self.style
        square = style.square
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.fill)
        painter.drawPath(style.square_path)
        if self.image is not None and self.source is not None:
            painter.save()
            painter.setClipPath(style.square_path)
            # Smoothed between its samples: 20 x 20 drawn in blocks of 4-5 pixels at
            # scale 2. (Painted once: the item is cached.)
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
            painter.drawImage(square, self.image, self.source)
            painter.restore()
        if self.marker is not None and self.image is not None:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            radius = 4.0 / max(style.lod, 0.2)  # 4 pixels, whatever the zoom
            for pen in self._marker_pens:
                painter.setPen(pen)
                painter.drawEllipse(self.marker, radius, radius)
            painter.setPen(Qt.PenStyle.NoPen)
        if self.pending:
            painter.setBrush(self._pending)
            painter.drawPath(style.square_path)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(self._current_pen if self.current
                       else self._select_pen if self.selected else self._pen)
        painter.drawPath(style.square_path)
        lod = style.lod
        if lod < TEXT_LOD * 0.5:
            return
        # Text at a constant size on screen: scaled with the drawing it was unreadable
        # at "fit" (8 pt at zoom 0.6 is 5 pt).
        painter.save()
        painter.scale(1 / lod, 1 / lod)
        painter.setFont(style.unit_font)
        title, strip = style.unit_rects(lod)
        if self.title:
            # beside the square: above it the units of a column would collide
            painter.setPen(TEXT)
            painter.drawText(title, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             self.title)
        if self.text and UNIT * lod >= UNIT_TEXT_PX:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(self._strip)
            painter.drawRect(strip)
            painter.setPen(TEXT)
            painter.drawText(strip, Qt.AlignmentFlag.AlignCenter, self.text)
        painter.restore()


class WeightLayer(QGraphicsRectItem):
    """All weights as lines, grouped by pen: colour = sign, width = magnitude class, and,
    when a sample is selected, opacity = how much of its signal the weight carried."""

    WIDTHS = (0.4, 0.8, 1.3, 2.0, 3.0, 4.5)
    # How strongly a line is drawn by its share of the sample's path (see `set_strengths`):
    # a weight that carried next to nothing of it fades almost into the background.
    PATH = (0.18, 0.45, 0.75, 1.0)

    def __init__(self, lines: list[QLineF], bounds: QRectF, thickness: float = 1.0) -> None:
        super().__init__()
        self.lines = lines
        self._lines = np.empty(len(lines), dtype=object)  # picked by index arrays
        self._lines[:] = lines
        self.groups: list[tuple[QPen, list[QLineF]]] = []
        self.selected: QLineF | None = None
        self.flow: list[QLineF] = []  # a replay's gradient flowing back along these
        bounded(self, bounds.adjusted(-8, -8, 8, 8))
        self._pens: dict[int, QPen] = {}
        # Opaque colours pre-mixed with the background, and flat caps: translucent
        # round-capped wide lines cost 65 ms per repaint of the demo network, these 8 ms.
        background = QColor("#fafafa")
        for sign, colour in ((1, WEIGHT_POS), (0, WEIGHT_NEG)):
            for level, width in enumerate(self.WIDTHS):
                for path, opacity in enumerate(self.PATH):
                    strength = (0.25 + 0.12 * level) * opacity
                    mixed = QColor.fromRgbF(
                        *(strength * a + (1 - strength) * b for a, b in zip(
                            colour.getRgbF()[:3], background.getRgbF()[:3])))
                    self._pens[self._key(path, level, sign)] = QPen(
                        mixed, width * thickness, Qt.PenStyle.SolidLine,
                        Qt.PenCapStyle.FlatCap)
        self._select_pen = QPen(QColor("#111111"), 4.0)
        self._flow_pen = QPen(QColor(REPLAY), 2.5)
        self._flow_pen.setCosmetic(True)
        self.setZValue(-1)

    def _key(self, path: int | np.ndarray, level: int | np.ndarray,
             sign: int | np.ndarray) -> int | np.ndarray:
        """One number per pen, in drawing order: faint before strong, thin before wide."""
        return (path * len(self.WIDTHS) + level) * 2 + sign

    def set_strengths(self, values: np.ndarray, path: np.ndarray | None = None) -> None:
        """One number per line: sign picks the colour, |value| relative to the largest
        the width; `path` (0..1 per line, see `gradbox.graph.path_shares`), if given, how
        strongly it is drawn.

        Grouped with numpy (a Python pass over every line was most of a refresh of a
        wide network): the lines of a pen are picked from an object array by index.
        """
        values = np.asarray(values, dtype=np.float64)
        magnitude = np.abs(values)
        top = float(magnitude.max()) if magnitude.size else 0.0
        widths = len(self.WIDTHS)
        if top > 0:
            level = np.minimum((magnitude / top * widths).astype(np.intp), widths - 1)
        else:
            level = np.zeros(len(values), dtype=np.intp)
        if path is None:
            faint = np.full(len(values), len(self.PATH) - 1, dtype=np.intp)
        else:
            # square root: a share of a quarter is still clearly part of the path
            faint = np.minimum((np.sqrt(np.clip(path, 0.0, 1.0)) * len(self.PATH))
                               .astype(np.intp), len(self.PATH) - 1)
        keys = self._key(faint, level, (values >= 0).astype(np.intp))
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) \
            if len(ordered) else np.zeros(0, dtype=np.intp)
        ends = np.r_[starts[1:], len(ordered)]
        self.groups = [(self._pens[int(ordered[a])], self._lines[order[a:b]].tolist())
                       for a, b in zip(starts.tolist(), ends.tolist())]
        self.update()

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem,
              widget: QWidget | None = None) -> None:
        for pen, lines in self.groups:
            painter.setPen(pen)
            painter.drawLines(lines)
        if self.flow:
            painter.setPen(self._flow_pen)
            painter.drawLines(self.flow)
        if self.selected is not None:
            painter.setPen(self._select_pen)
            painter.drawLine(self.selected)
