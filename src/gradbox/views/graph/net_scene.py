"""The network level's scene: units in columns, weights as lines, a map inside each unit.

What TensorFlow Playground draws: each unit shows its output over the plane, each
weight is a line whose colour is its sign and whose width its size. Built once per
layer sizes (`set_network`); a step only recolours.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QLineF, QObject, QPointF, QRectF
from PySide6.QtGui import QBrush, QColor, QImage, QTransform
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsSimpleTextItem

from gradbox.autograd.nn import parameter_name, parse_parameter_name
from gradbox.formatting import fmt
from gradbox.graph import Graph, NetworkLevel, path_shares
from gradbox.graph import details as node_details
from gradbox.views.graph.items import (
    MAP_COLOURS,
    NET_DX,
    UNIT,
    UNIT_R,
    EdgeLayer,
    Style,
    Unit,
    WeightLayer,
)
from gradbox.views.graph.op_scene import roomy

UNIT_BRUSH = QBrush(QColor("#7fb8e0"))  # a unit in the mini-map


class NetworkScene(QGraphicsScene):
    """The network drawn as units and weights (see `gradbox.graph.network_level`)."""

    def __init__(self, style: Style, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.setBackgroundBrush(QColor("#fafafa"))
        self.style = style
        self.network: NetworkLevel | None = None
        self._key: tuple | None = None
        self.units: list[list[Unit]] = []
        self.weights: WeightLayer | None = None
        self.weight_names: list[str] = []
        self._segments = np.zeros((0, 4))
        self._bounds = QRectF()
        # per weight, its share of the selected sample's signal (None: not drawn so)
        self.path: np.ndarray | None = None
        self.marker: tuple[float, float] | None = None  # the sample's place in the maps
        self.selected: str | None = None  # a parameter name
        self._maps_drawn: tuple[tuple, QImage | None] | None = None  # (maps, their image)
        self.show_grads = False
        # column headers: (item, full text, first line, full width in pixels)
        self.headers: list[tuple[QGraphicsSimpleTextItem, str, str, float]] = []
        self.headers_form = 0
        self._dx = NET_DX
        self.selected_unit: tuple[int, int] | None = None  # (column, index)
        self._flat: list[Unit] = []  # every unit, column by column

    def forget(self) -> None:
        """Draw nothing (a network too big to draw; see the graph panel)."""
        self.clear()
        self.network, self._key = None, None
        self.units, self.weights, self.weight_names, self.headers = [], None, [], []
        self._segments, self._bounds, self._flat = np.zeros((0, 4)), QRectF(), []
        self.path, self.selected_unit, self._maps_drawn = None, None, None

    def set_network(self, network: NetworkLevel) -> bool:
        """Show `network`; returns whether the items were rebuilt (new layer sizes)."""
        self.network = network
        rebuilt = network.structure_key != self._key
        if rebuilt:
            self._build()
        self.refresh()
        return rebuilt

    def restyle(self, style: Style) -> None:
        self.style = style
        if self.network is not None:
            self._build()
            self.refresh()

    def drawing_rect(self) -> QRectF:
        """The units' squares, edge to edge (the weights run between them): what fit
        frames. The weight layer's own rect has a margin for its pens, pixels the units
        could use."""
        return QRectF(self._bounds.adjusted(-2, -2, 2, 2)) if self.weights is not None \
            else QRectF()

    def occupied(self, scale: float) -> list[QRectF]:
        """Each column's units and its header as drawn at zoom `scale` (scene units)."""
        rects = []
        for row, (item, *_) in zip(self.units, self.headers):
            if row:
                top, bottom = row[0].pos(), row[-1].pos()
                rects.append(QRectF(top.x() - UNIT_R - 2, top.y() - UNIT_R - 2, UNIT + 4,
                                    bottom.y() - top.y() + UNIT + 4))
                box = item.boundingRect()
                w, h = box.width() / scale, box.height() / scale
                rects.append(QRectF(top.x() - w / 2, top.y() - UNIT_R - 6 / scale - h, w, h))
        return rects

    def structure(self) -> tuple | None:
        """What the items were built for (new layer sizes or inputs: new items)."""
        return self._key

    def unit_boxes(self) -> list[tuple[QBrush, list[QRectF]]]:
        """Every unit's square, for the mini-map."""
        return [(UNIT_BRUSH, [unit.core_rect() for unit in self._flat])]

    def header_height(self) -> float:
        return max((item.boundingRect().height() for item, *_ in self.headers), default=0.0)

    # --- building -------------------------------------------------------------------
    def _build(self) -> None:
        net = self.network
        assert net is not None
        self.clear()
        sizes = list(net.layer_sizes)
        columns = [*sizes, 1]  # the loss after the outputs
        # Wide layers: spread the columns too, so 64x64 weights are not one solid band.
        net_dy = self.style.net_dy
        dx = max(NET_DX, max(sizes) * net_dy / 3)
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
                    names.append(parameter_name(layer, unit, source))
                    segments.append((line.x1(), line.y1(), line.x2(), line.y2()))
        # outputs -> loss: drawn plain, they carry no weight
        loss_lines = [QLineF(p.x() + UNIT_R, p.y(), positions[-1][0].x() - UNIT_R,
                             positions[-1][0].y()) for p in positions[-2]]
        bounds = QRectF()
        for column in positions:
            for p in column:
                bounds = bounds.united(QRectF(p.x() - UNIT_R, p.y() - UNIT_R, UNIT, UNIT))
        self._bounds = bounds
        self.weights = WeightLayer(lines, bounds, min(1.0, (16 / max(sizes)) ** 0.5))
        self.addItem(self.weights)
        self.addItem(EdgeLayer(loss_lines))
        self.weight_names = names
        self._segments = np.array(segments, dtype=np.float64).reshape(-1, 4)
        self.units = []
        header_font = self.style.header_font
        self.headers = []
        self.headers_form = 0
        self._dx = dx
        for layer, column in enumerate(positions):
            row = []
            title = self._column_title(net, layer)
            header = self.addSimpleText(title, header_font)
            # constant size on screen, centred above the column: readable at any zoom
            header.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
            header.setPos(column[0].x(), column[0].y() - UNIT_R - 6)
            box = header.boundingRect()
            header.setTransform(QTransform().translate(-box.width() / 2, -box.height()))
            self.headers.append((header, title, title.split("\n")[0], box.width()))
            for k, p in enumerate(column):
                title = net.input_label(k) if layer == 0 else ""
                unit = Unit(layer, k, title, self.style)
                unit.marker = self._marker_point()
                if 1 <= layer <= len(sizes) - 1:
                    unit.setToolTip(f"layers.{layer - 1}.neurons.{k} — click: its details; "
                                    "double-click: its operations")
                unit.setPos(p)
                self.addItem(unit)
                row.append(unit)
            self.units.append(row)
        self.setSceneRect(roomy(bounds))
        self._key = net.structure_key
        self._flat = [unit for row in self.units for unit in row]

    def _marker_point(self) -> QPointF | None:
        place = self.marker
        return None if place is None else QPointF(-UNIT_R + place[0] * UNIT,
                                                  -UNIT_R + place[1] * UNIT)

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

    def fit_headers(self, scale: float) -> None:
        """Full column headers when they fit between the columns, else their first line,
        else first lines on alternate heights.

        They keep their size on screen while the columns close up: zoomed out, the
        two-line headers of neighbouring columns ran into each other.
        """
        room = self._dx * scale - 8
        metrics = self.style.header_metrics
        if all(width <= room for _, _, _, width in self.headers):
            form = 0
        elif all(metrics.horizontalAdvance(brief) <= room for _, _, brief, _ in self.headers):
            form = 1
        else:
            form = 2
        if form == self.headers_form:
            return
        self.headers_form = form
        for column, (item, full, brief, _) in enumerate(self.headers):
            item.setText(full if form == 0 else brief)
            box = item.boundingRect()
            lift = box.height() if form == 2 and column % 2 else 0.0
            item.setTransform(QTransform().translate(-box.width() / 2, -box.height() - lift))

    # --- numbers ------------------------------------------------------------------------
    def refresh(self) -> None:
        net = self.network
        if net is None or self.weights is None:
            return
        source = net.weight_grads if self.show_grads else net.weights
        flat = np.concatenate([w.ravel() for w in source]) if source else np.zeros(0)
        # The selected sample's forward pass: a weight that passed little of it on is
        # drawn faint (not with gradients: they are the whole batch's, not the sample's).
        self.path = None if self.show_grads else path_shares(net)
        self.weights.set_strengths(flat, self.path)
        maps = net.maps or ()
        # The same maps as last time (a caller may reuse them between steps while
        # training runs): the same image, without colouring them again.
        if self._maps_drawn is None or self._maps_drawn[0] is not maps:
            self._maps_drawn = (maps, maps_image(maps) if maps else None)
        image = self._maps_drawn[1]
        res = maps[0].shape[1] if maps else 0
        first = 0  # the image's row of unit maps where this layer's start
        for layer, row in enumerate(self.units):
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
        self.refresh_selection()

    def _unit_text(self, net: NetworkLevel, layer: int, k: int) -> str:
        if layer == len(net.layer_sizes):
            return "" if net.loss is None else fmt(net.loss, digits=3)
        if net.units is None:
            return ""
        source = net.unit_grads if self.show_grads else net.units
        value = float(source[layer][k])
        if np.isnan(value):
            return ""
        return fmt(value, digits=3)

    def set_marker(self, place: tuple[float, float] | None) -> None:
        """Mark the sample whose values are shown in every unit's map (see `Unit`)."""
        if place is not None and not (0 <= place[0] <= 1 and 0 <= place[1] <= 1):
            place = None  # outside the maps' plane (a point added far out)
        if place == self.marker:
            return
        self.marker = place
        point = self._marker_point()
        for unit in self._flat:
            unit.marker = point
            unit.update()

    # --- selection and hits -----------------------------------------------------------
    def select(self, name: str | None) -> None:
        self.selected = name
        self.refresh_selection()

    def refresh_selection(self) -> None:
        if self.weights is None:
            return
        name = self.selected
        self.weights.selected = None
        target_unit: tuple[int, int] | None = None
        if name is not None:
            if name in self.weight_names:
                x1, y1, x2, y2 = self._segments[self.weight_names.index(name)]
                self.weights.selected = QLineF(x1, y1, x2, y2)
            parsed = parse_parameter_name(name)
            if parsed is not None and parsed[2] is None:
                target_unit = (parsed[0] + 1, parsed[1])
        if self.selected_unit is not None:
            target_unit = self.selected_unit
        for layer, row in enumerate(self.units):
            for k, unit in enumerate(row):
                chosen = (layer, k) == target_unit
                if unit.selected != chosen:
                    unit.selected = chosen
                    unit.update()
        self.weights.update()

    def unit_at(self, point: QPointF) -> tuple[int, int] | None:
        for row in self.units:
            for unit in row:
                d = unit.pos() - point
                if abs(d.x()) <= UNIT_R + 2 and abs(d.y()) <= UNIT_R + 2:
                    return unit.layer, unit.index
        return None

    def select_unit(self, unit: tuple[int, int] | None) -> None:
        """Select one unit (layer column, index) for its details, or none."""
        self.selected_unit = unit
        self.refresh_selection()

    def weight_at(self, point: QPointF, tolerance: float) -> str | None:
        """The weight whose line passes within `tolerance` scene units of a point."""
        seg = self._segments
        if not len(seg):
            return None
        p = np.array([point.x(), point.y()])
        a, b = seg[:, :2], seg[:, 2:]
        ab = b - a
        t = np.clip(np.einsum("ij,ij->i", p - a, ab) / np.maximum(
            np.einsum("ij,ij->i", ab, ab), 1e-12), 0, 1)
        distance = np.linalg.norm(a + t[:, None] * ab - p, axis=1)
        best = int(np.argmin(distance))
        return self.weight_names[best] if distance[best] <= tolerance else None

    def weight_pos(self, name: str) -> QPointF | None:
        """A point of a weight's edge near the neuron it feeds (where edges fan apart).

        Not the middle: there every edge a->b with the same a + b crosses the others.
        """
        if name not in self.weight_names:
            return None
        x1, y1, x2, y2 = self._segments[self.weight_names.index(name)]
        return QPointF(x1 + 0.85 * (x2 - x1), y1 + 0.85 * (y2 - y1))

    def unit_pos(self, layer: int, index: int) -> QPointF | None:
        try:
            return self.units[layer][index].pos()
        except IndexError:
            return None

    def details(self, name: str, graph: Graph | None, sample: int,
                sample_label: str | None) -> str:
        net = self.network
        parsed = parse_parameter_name(name)
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
        text = [f"{name}", where, f"value: {fmt(float(value))}",
                f"grad (sum over all samples): {fmt(float(grad))}"]
        node = graph.find_parameter(name) if graph is not None else None
        if graph is not None and node is not None:
            text.append("")
            text.append(node_details(graph, node, sample, sample_label))
        return "\n".join(text)


    def unit_details(self, layer: int, index: int, sample_label: str) -> str:
        """What a click on a unit tells: what it computes, its value and gradient for the
        selected sample, its bias and the weights coming in."""
        net = self.network
        if net is None:
            return ""
        sizes = net.layer_sizes
        if layer == len(sizes):
            return ("The loss: one number for the whole batch; backward starts here with "
                    f"gradient 1.\nvalue: {fmt(net.loss) if net.loss is not None else '?'}")
        lines = []
        if layer == 0:
            lines.append(f"Input x{index}: the point's coordinate {index} (a leaf).")
        else:
            act = net.activations[layer - 1]
            role = "output" if layer == len(sizes) - 1 else "hidden"
            name = parameter_name(layer - 1, index, None).removesuffix(".b")
            lines.append(f"{name}: {role} unit, {act}(w · inputs + b)")
        if net.units is not None and net.unit_grads is not None:
            value, grad = float(net.units[layer][index]), float(net.unit_grads[layer][index])
            if not np.isnan(value):
                lines.append(f"output for {sample_label}: {fmt(value)}")
                lines.append(f"gradient of the loss for {sample_label}: {fmt(grad)}")
        lines.append("inside the square: its output over the whole plane "
                     "(blue > 0, orange < 0)")
        if layer >= 1:
            w, wg = net.weights[layer - 1][index], net.weight_grads[layer - 1][index]
            lines.append(f"bias: {fmt(net.biases[layer - 1][index])} "
                         f"(grad {fmt(net.bias_grads[layer - 1][index])})")
            lines.append("weights in:")
            source = "x" if layer == 1 else "unit "
            for k in range(len(w)):
                lines.append(f"  from {source}{k}: {fmt(w[k])} (grad {fmt(wg[k])})")
            lines.append("double-click: its operations")
        return "\n".join(lines)

    # --- backward replay --------------------------------------------------------------
    def replay_steps(self, order: Sequence[int] | None = None) -> list[tuple[int, ...]]:
        """Units in the order their gradient arrives: the loss, the outputs, then each
        layer back to the inputs (within a layer, as the engine's reverse order goes:
        the last-built neuron first). Ids index every unit, column by column."""
        steps: list[tuple[int, ...]] = []
        if self.network is None:
            return steps
        first = [0]
        for row in self.units:
            first.append(first[-1] + len(row))
        for layer in range(len(self.units) - 1, -1, -1):
            for k in range(len(self.units[layer]) - 1, -1, -1):
                steps.append((first[layer] + k,))
        return steps

    def unit_of(self, flat: int) -> Unit:
        return self._flat[flat]

    def begin_replay(self) -> None:
        for unit in self._flat:
            unit.pending = True
            unit.current = False
            unit.update()

    def reported_id(self, step: Sequence[int]) -> int:
        """What `GraphView.animation_step` reports for a step: the unit's place."""
        return step[0]

    def light(self, step: Sequence[int], place: int, previous: Sequence[int]) -> Unit:
        """The replay reaches a unit: its gradient has arrived; it sends it back along
        the weights coming in."""
        for flat in previous:
            before = self._flat[flat]
            before.current = False
            before.update()
        unit = self._flat[step[0]]
        unit.pending = False
        unit.current = True
        unit.update()
        if self.weights is not None:
            flow = []
            if unit.layer >= 1 and unit.layer < len(self.units) - 1:
                for source in range(len(self.units[unit.layer - 1])):
                    name = parameter_name(unit.layer - 1, unit.index, source)
                    x1, y1, x2, y2 = self._segments[self.weight_names.index(name)]
                    flow.append(QLineF(x1, y1, x2, y2))
            self.weights.flow = flow
            self.weights.update()
        return unit

    def unlight(self, step: Sequence[int]) -> None:
        for flat in step:
            unit = self._flat[flat]
            unit.current = False
            unit.update()
        if self.weights is not None:
            self.weights.flow = []
            self.weights.update()

    def end_replay(self) -> None:
        for unit in self._flat:
            unit.pending = unit.current = False
            unit.update()
        if self.weights is not None:
            self.weights.flow = []
            self.weights.update()


def maps_image(maps: Sequence[np.ndarray]) -> QImage:
    """Every unit's map, layer by layer ((units, res, res) values each), as one image:
    the n-th unit's in rows n*res to (n+1)*res, coloured through `MAP_COLOURS`.

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
    rgba = np.ascontiguousarray(MAP_COLOURS[index].reshape(units * stack.shape[1], res, 4))
    # copy(): own the pixels, `rgba` dies with this frame
    return QImage(rgba.data, res, units * stack.shape[1], 4 * res,
                  QImage.Format.Format_RGBA8888).copy()
