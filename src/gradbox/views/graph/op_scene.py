"""The operation level's scene: one box per node of the graph, every edge, landmarks.

Items are made once per graph *structure* (`sync`); a training step only swaps the
numbers they paint (`update_numbers`). Large graphs open collapsed on one neuron.
Node ids in this scene's public methods are ids of the graph given to `sync` (the
"original" graph); `shown` may be a part of it, renumbered (see `Graph.subgraph`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QLineF, QObject, QPointF, QRectF
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsSimpleTextItem

from gradbox import graph as g
from gradbox.autograd import ops
from gradbox.autograd.nn import parameter_name, parse_parameter_name
from gradbox.graph import Graph
from gradbox.graph.groups import Group, collapse, overview_groups, with_numbers_of
from gradbox.graph.layout import penalty_nodes
from gradbox.views.graph.items import (
    BRUSHES,
    PENDING_BRUSH,
    PENDING_KEY,
    EdgeLayer,
    Numbers,
    OpNode,
    Style,
    op_title,
)

# Op-level graphs larger than this open collapsed (one neuron expanded).
OP_NODE_CAP = 5000


def roomy(rect: QRectF) -> QRectF:
    """Room around a drawing, so fit() can centre it below the legend and panning
    does not stop hard at the outermost node."""
    margin = max(rect.width(), rect.height(), 800.0)
    return rect.adjusted(-margin, -margin, margin, margin)


class OperationScene(QGraphicsScene):
    """Every operation of the graph (or of one neuron), laid out left to right."""

    def __init__(self, style: Style, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # Items never move; a BSP index only costs time on every rebuild.
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.NoIndex)
        self.setBackgroundBrush(QColor("#fafafa"))
        self.style = style
        self.graph: Graph | None = None  # as given
        self.shown: Graph | None = None  # what is drawn: the graph or a neuron's part
        self._shown_key: tuple | None = None
        self.expanded: tuple[int, int] | None = None  # the neuron opened, if one is
        self.show_all = False
        # Graphs up to OP_NODE_CAP open as an overview: each neuron and each penalty one
        # box (`gradbox.graph.groups`); these group keys are opened in place.
        self.opened: set[str] = set()
        self._groups: tuple[tuple, list[Group]] | None = None  # (structure key, groups)
        self._collapsed: tuple[tuple, Graph] | None = None  # (key, collapsed structure)
        self._member_index: dict[int, int] | None = None  # original id -> shown id
        self.nodes: list[OpNode] = []
        self.edges: EdgeLayer | None = None
        self._edge_lines: list[QLineF] = []
        self._edge_index: list[tuple[int, int]] = []
        self._edge_array = np.empty(0, dtype=object)
        # (shown key, per edge the product it carries, that product's layer)
        self._products: tuple[tuple | None, np.ndarray, np.ndarray] | None = None
        # per edge of `shown`, its share of the selected sample's signal (edge order)
        self.path_shares = np.zeros(0)
        self.selected: int | None = None  # the selected node's id in `shown`
        self._node_rects: list[QRectF] = []
        self.node_xy = np.zeros((0, 2))
        self.numbers = Numbers(0)
        self.landmarks: list[QGraphicsSimpleTextItem] = []
        self.landmark_beside: list[bool] = []
        self.boxes_shown = False
        self.replaying = False

    # --- what is shown ----------------------------------------------------------------
    def forget(self) -> None:
        """No graph any more (a new model has none yet)."""
        self.graph = self.shown = None
        self._shown_key = None
        self.selected = None
        self.clear()
        self.nodes, self.edges, self.landmarks, self.landmark_beside = [], None, [], []
        self._edge_lines, self._edge_index, self._node_rects = [], [], []
        self.node_xy = np.zeros((0, 2))
        self.expanded = None
        self.replaying = False

    def expand(self, neuron: tuple[int, int] | None, show_all: bool = False) -> None:
        """Open one neuron into its operations, the others collapsed (or, with
        `show_all`, show every operation); takes effect on the next sync."""
        self.expanded = neuron
        self.show_all = show_all
        self.opened = set() if neuron is None else {
            parameter_name(*neuron, None).removesuffix(".b")}
        self._shown_key = None

    def toggle_group(self, node: int) -> bool:
        """Open the box a shown node is (or close the opened group it belongs to).

        Returns whether anything changed; takes effect on the next sync.
        """
        group = self._group_of_shown(node)
        if group is None:
            return False
        if group.key in self.opened:
            self.opened.discard(group.key)
        else:
            self.opened.add(group.key)
        neurons = [key for key in self.opened if key.startswith("layers.")]
        parsed = parse_parameter_name(neurons[-1] + ".b") if neurons else None
        self.expanded = parsed[:2] if parsed is not None else None
        self._shown_key = None
        return True

    def _group_of_shown(self, node: int) -> Group | None:
        shown = self.shown
        if shown is None or self.graph is None or not 0 <= node < len(shown):
            return None
        original = self.to_original(node)
        for group in self.groups():
            if original in group.members:
                return group
        return None

    def groups(self) -> list[Group]:
        """The neurons and penalties of the given graph (made once per structure)."""
        graph = self.graph
        if graph is None:
            return []
        if self._groups is None or self._groups[0] != graph.structure_key:
            self._groups = (graph.structure_key, overview_groups(graph))
        return self._groups[1]

    def restyle(self, style: Style) -> None:
        """New sizes and fonts: the items are made again on the next sync."""
        self.style = style
        self._shown_key = None

    def is_collapsed(self) -> bool:
        return self.shown is not None and self.shown is not self.graph

    def is_overview(self) -> bool:
        """Whether some parts are drawn as boxes (rather than one neuron cut out)."""
        return self.shown is not None and self.shown.members is not None

    def collapsed_by_size(self) -> bool:
        """Whether the graph is shown one neuron at a time (too big, or the user chose)."""
        graph = self.graph
        return graph is not None and not self.show_all and len(graph) > OP_NODE_CAP

    def sync(self, graph: Graph | None, sample: int, selected_node: int | None
             ) -> bool:
        """Show `graph`'s numbers for `sample`; returns whether the items were rebuilt."""
        self.graph = graph
        shown = self._choose_shown()
        self.shown = shown
        if shown is None:
            return False
        key = (shown.structure_key, self.expanded if shown is not graph else None)
        if shown.members is not None:
            self._member_index = None
        rebuilt = key != self._shown_key
        if rebuilt:
            self._build(shown)
            self._shown_key = key
        selected = self.to_shown(selected_node)
        if rebuilt or selected != self.selected:
            self.selected = selected
            self.apply_selection()
        self.update_numbers(sample)
        return rebuilt

    def _choose_shown(self) -> Graph | None:
        graph = self.graph
        if graph is None:
            return None
        if self.show_all:
            return graph
        if len(graph) <= OP_NODE_CAP:
            return self._overview(graph)
        # Too many to draw even as boxes: one neuron cut out, the output one to start.
        if self.expanded is None and (sizes := layer_sizes(graph)):
            self.expanded = (len(sizes) - 1, 0)
        if self.expanded is not None:
            part = g.neuron_subgraph(graph, *self.expanded)
            if part is not None:
                return part
            self.expanded = None
        # Not an MLP: the nodes nearest the root, so the loss end is visible.
        return graph.subgraph(range(len(graph) - OP_NODE_CAP, len(graph)))

    def _overview(self, graph: Graph) -> Graph:
        """The graph with every group not opened drawn as one box."""
        closed = [group for group in self.groups() if group.key not in self.opened]
        if not closed:
            return graph
        key = (graph.structure_key, frozenset(self.opened))
        if self._collapsed is None or self._collapsed[0] != key:
            self._collapsed = (key, collapse(graph, closed))
            self._member_index = None
        return with_numbers_of(self._collapsed[1], graph)

    # --- ids ----------------------------------------------------------------------------
    def to_shown(self, node: int | None) -> int | None:
        shown = self.shown
        if node is None or shown is None:
            return None
        if shown.members is not None:
            if self._member_index is None or len(self._member_index) < len(shown):
                self._member_index = {m: k for k, ms in enumerate(shown.members) for m in ms}
            return self._member_index.get(node)
        if shown.original_ids is None or shown is self.graph:
            return node if 0 <= node < len(shown) else None
        try:
            return shown.original_ids.index(node)
        except ValueError:
            return None

    def to_original(self, node: int | None) -> int | None:
        shown = self.shown
        if node is None or shown is None or shown is self.graph or shown.original_ids is None:
            return node
        return shown.original_ids[node]

    def focus_point(self) -> QPointF | None:
        """The middle of the opened neuron's operations (what a double-click on it asked
        to see), or None when none is opened."""
        if self.expanded is None or self.graph is None or not len(self.node_xy):
            return None
        neuron = g.neuron_nodes(self.graph, *self.expanded)
        if neuron is None:
            return None
        shown = [self.to_shown(n) for n in (*neuron.ops, *neuron.weights)]
        xy = self.node_xy[[k for k in shown if k is not None and k < len(self.node_xy)]]
        if not len(xy):
            return None
        middle = (xy.min(axis=0) + xy.max(axis=0)) / 2
        return QPointF(float(middle[0]), float(middle[1]))

    def node_at(self, point: QPointF) -> int | None:
        """The shown node under a scene point (by geometry: zoomed out the items hide)."""
        if not len(self.node_xy):
            return None
        dx = np.abs(self.node_xy[:, 0] - point.x())
        dy = np.abs(self.node_xy[:, 1] - point.y())
        hits = np.flatnonzero((dx <= self.style.node_w / 2) & (dy <= self.style.node_h / 2))
        return int(hits[0]) if len(hits) else None

    def occupied(self) -> list[QRectF]:
        """Every node's box (scene units): what an overlay must not cover."""
        return self._node_rects

    def drawing_rect(self) -> QRectF:
        """The nodes and edges, without the landmarks (scene units)."""
        return QRectF(self.edges.boundingRect()) if self.edges is not None else QRectF()

    def whole_rect(self) -> QRectF:
        """The drawing with the room every node keeps for its backward-order badge (at
        its top-left corner: "fit" framed the boxes alone and cut the left badges)."""
        rect = self.drawing_rect()
        if not self.nodes or rect.isEmpty():
            return rect
        node = self.nodes[0]
        box, core = node.boundingRect(), node.style.rect
        return rect.adjusted(box.left() - core.left(), box.top() - core.top(),
                             box.right() - core.right(), box.bottom() - core.bottom())

    # --- building -------------------------------------------------------------------
    def _build(self, shown: Graph) -> None:
        self.clear()
        layout = g.layered_layout(shown)
        style = self.style
        self.numbers = numbers = Numbers(len(shown))
        # Geometry in plain floats: item.pos(), QRectF.united() and the like each make
        # a Qt value, and while training runs each of those waits for the GIL (adding
        # the demo graph took 5 s that way).
        n = len(shown)
        titles = [op_title(shown, i) for i in range(n)]
        style.set_node_width(style.node_width_for(
            [(t, bool(shown.names[i]) and not shown.children[i]) for i, t in enumerate(titles)]))
        xy = np.array([layout[i] for i in range(n)], dtype=np.float64).reshape(-1, 2)
        xy[:, 0] *= style.dx
        xy[:, 1] *= style.dy
        w, h = style.node_w, style.node_h
        nodes = []
        for i, (x, y) in enumerate(xy.tolist()):
            if shown.is_group(i):
                kind = OpNode.GROUP
            elif shown.children[i]:
                kind = OpNode.OP
            elif shown.names[i]:
                kind = OpNode.PARAM
            elif shown.labels[i] or i in shown.boundary:
                kind = OpNode.INPUT
            else:
                kind = OpNode.CONST
            item = OpNode(i, kind, titles[i], shown.is_fanout(i), style, numbers)
            item.setPos(x, y)
            tip = shown.names[i] or shown.display_name(i)
            if kind == OpNode.GROUP:
                tip += f" ({len(shown.members[i])} nodes) — double-click: open it"
            item.setToolTip(f"#{self.to_original(i)} {tip}")
            nodes.append(item)
        lines, index, long = [], [], []
        points = xy.tolist()
        for c, p in shown.edges:
            lines.append(QLineF(*style.edge_line(*points[c], *points[p])))
            index.append((c, p))
            long.append(g.is_faint_edge(shown, layout, c, p))
        self._node_rects = [QRectF(x - w / 2, y - h / 2, w, h) for x, y in points]
        self.node_xy = xy
        # the edges run between node sides, so the nodes' extent holds them too
        lo, hi = xy.min(axis=0) if n else (0.0, 0.0), xy.max(axis=0) if n else (0.0, 0.0)
        area = QRectF(float(lo[0]) - w / 2, float(lo[1]) - h / 2,
                      float(hi[0] - lo[0]) + w, float(hi[1] - lo[1]) + h)
        self.edges = EdgeLayer(lines, long, area, style)
        borders: dict[int, list[QRectF]] = {}
        for item, rect in zip(nodes, self._node_rects):
            if item.kind in (OpNode.PARAM, OpNode.INPUT):
                borders.setdefault(item.kind, []).append(rect)
        self.edges.borders = [(OpNode.border_pen(kind), rects)
                              for kind, rects in borders.items()]
        self.edges.fanout = [QRectF(x - w / 2 - 4, y - h / 2 - 4, w + 8, h + 8)
                             for item, (x, y) in zip(nodes, points) if item.fanout]
        self._edge_lines = lines
        self._edge_array = np.empty(len(lines), dtype=object)  # picked by index arrays
        self._edge_array[:] = lines
        self._edge_index = index
        self.addItem(self.edges)
        for item in nodes:
            item.setVisible(not self.boxes_shown)
            self.addItem(item)
        self.nodes = nodes
        self._add_landmarks(shown)
        self.setSceneRect(roomy(self.itemsBoundingRect()))

    def _add_landmarks(self, shown: Graph) -> None:
        """Names for the regions of a zoomed-out graph, at a constant size on screen."""
        # (node, text, beside): beside = to the left of the whole graph, at the node's
        # height, where the label covers nothing; otherwise just above the node
        marks: list[tuple[int, str, bool]] = [(shown.root, "loss: backward starts here",
                                               False)]
        inputs = [i for i in range(len(shown))
                  if shown.labels[i] and not shown.children[i] and i not in shown.boundary]
        if inputs:  # one label: the inputs sit next to each other and would overprint
            top = min(inputs, key=lambda i: self.node_xy[i, 1])
            marks.append((top, "inputs " + ", ".join(shown.labels[i] for i in inputs) + " →",
                          True))
        for chain in g.folded_sums(shown):
            # label the block's top node: the terms of the first addition sit above it
            first = min((chain[0], *shown.children[chain[0]]),
                        key=lambda i: self.node_xy[i, 1])
            marks.append((first, f"a sum of {len(chain)} terms, folded into rows\n"
                                    "(read left to right, row by row)", False))
        for node in penalty_nodes(shown.ops, shown.children):
            marks.append((node, f"{ops.symbol(shown.ops[node])}: one node; its "
                                f"{len(shown.children[node])} inputs are the weights",
                          False))
        if shown is not self.graph and self.expanded is not None:
            marks.append((0, f"neuron {self.expanded[1]} of layers.{self.expanded[0]}",
                          False))
        style = self.style
        left = (float(self.node_xy[:, 0].min()) if len(self.node_xy) else 0.0) - style.node_w / 2
        font = style.header_font
        self.landmarks = []
        self.landmark_beside = []
        for node, text, beside in marks:
            item = self.addSimpleText(text, font)
            item.setBrush(QColor("#333333"))
            item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIgnoresTransformations)
            pos = self.nodes[node].pos()
            box = item.boundingRect()
            if beside:
                item.setPos(left - 10, pos.y())
                item.setTransform(item.transform().translate(-box.width(), -box.height() / 2))
            else:
                item.setPos(pos.x() - style.node_w / 2, pos.y() - style.node_h / 2 - 4)
                # drawn from its top-left corner up: lift it by its own height
                item.setTransform(item.transform().translate(0, -box.height()))
            item.setZValue(5)
            item.setVisible(style.lod < style.text_lod)
            self.landmarks.append(item)
            self.landmark_beside.append(beside)

    # --- numbers ------------------------------------------------------------------------
    def update_numbers(self, sample: int) -> None:
        shown = self.shown
        if shown is None:
            return
        sample = min(sample, shown.n_samples - 1)
        numbers = self.numbers
        numbers.values = shown.values(sample)
        numbers.grads = shown.grads(sample)
        numbers.bins = g.gradient_bins(numbers.grads)
        numbers.generation += 1
        self._refresh_path(sample)
        # Only the nodes on screen are repainted now; the others when scrolled into view.
        # At the demo graph's 1,663 nodes, touching every item cost most of a refresh.
        for view in self.views():
            self.touch_visible(view.mapToScene(view.viewport().rect()).boundingRect())
        self.refresh_boxes()

    def _refresh_path(self, sample: int) -> None:
        """Draw darker the edges that carried most of `sample`'s signal: its biggest
        weight × input products, into the neurons' boxes or their operations."""
        shown, graph, edges = self.shown, self.graph, self.edges
        if shown is None or graph is None or edges is None:
            return
        if self._products is None or self._products[0] != self._shown_key:
            self._products = (self._shown_key, *g.edge_products(shown, graph))
        _, products, layers = self._products
        shares = g.edge_shares(graph, products, layers, min(sample, graph.n_samples - 1))
        self.path_shares = shares
        lines = self._edge_array
        edges.path = [(pen, lines[(shares >= low) & (shares < high)].tolist())
                      for pen, low, high in ((EdgeLayer.path_pens[0], 0.2, 0.5),
                                             (EdgeLayer.path_pens[1], 0.5, 2.0))]
        edges.update()

    def has_path(self) -> bool:
        """Whether some edges are drawn darker for the selected sample."""
        return self.edges is not None and any(lines for _, lines in self.edges.path)

    def touch_visible(self, area: QRectF) -> None:
        """Repaint the node items in `area` that show older numbers than the current."""
        if self.boxes_shown or not self.nodes:
            return  # zoomed out the edge layer draws the nodes, from the same numbers
        generation = self.numbers.generation
        xy = self.node_xy
        w, h = self.style.node_w, self.style.node_h
        on_screen = ((xy[:, 0] >= area.left() - w) & (xy[:, 0] <= area.right() + w)
                     & (xy[:, 1] >= area.top() - h) & (xy[:, 1] <= area.bottom() + h))
        for k in np.flatnonzero(on_screen).tolist():
            item = self.nodes[k]
            if item.drawn != generation:
                item.update()

    def set_zoom(self, scale: float) -> None:
        """Zoomed out too far to read, nodes are drawn by the edge layer as boxes grouped
        by colour: one Python paint() per node made panning the demo graph stutter."""
        for mark in self.landmarks:
            mark.setVisible(scale < self.style.text_lod)
        boxes = scale < self.style.text_lod
        if boxes != self.boxes_shown and self.nodes:
            self.show_boxes(boxes)

    def show_boxes(self, boxes: bool) -> None:
        for node in self.nodes:
            node.setVisible(not boxes)
        self.boxes_shown = boxes
        self.refresh_boxes()

    def refresh_boxes(self) -> None:
        edges = self.edges
        if edges is None:
            return
        if not self.boxes_shown:
            if edges.boxes:
                edges.boxes, edges.marked, edges.current = [], [], []
                edges.update()
            return
        current: list[QRectF] = []
        if self.replaying:
            current = [rect for n, rect in zip(self.nodes, self._node_rects) if n.current]
        selected, rects = self.selected, self._node_rects
        marked = [rects[selected]] if selected is not None and selected < len(rects) else []
        edges.boxes = self.colour_groups()
        edges.marked = marked
        edges.current = current
        edges.update()

    def colour_groups(self) -> list[tuple[QBrush, list[QRectF]]]:
        """Every node's box, grouped by its fill: its gradient's colour class, or grey
        while a replay has not reached it."""
        # Grouped by colour class with numpy: a Python pass over every node's fill was
        # most of a step's refresh of the demo graph when zoomed out.
        nodes, rects = self.nodes, self._node_rects
        keys = np.array(self.numbers.bins, dtype=np.int64)
        if self.replaying:  # nodes still waiting for their gradient are grey
            pending = np.fromiter((n.pending for n in nodes), bool, len(nodes))
            keys[pending] = PENDING_KEY
        return [(PENDING_BRUSH if key == PENDING_KEY else BRUSHES[key],
                 [rects[k] for k in np.flatnonzero(keys == key).tolist()])
                for key in np.unique(keys).tolist()]

    # --- selection ------------------------------------------------------------------------
    def select(self, node: int | None) -> None:
        """Select a node of the given graph (None: nothing)."""
        self.selected = self.to_shown(node)
        self.apply_selection()

    def apply_selection(self) -> None:
        for item in self.nodes:
            if item.selected != (item.index == self.selected):
                item.selected = item.index == self.selected
                item.update()
        if self.edges is not None:
            sel = self.selected
            self.edges.inputs = [ln for ln, (c, p) in zip(self._edge_lines, self._edge_index)
                                 if p == sel]
            self.edges.outputs = [ln for ln, (c, p) in zip(self._edge_lines, self._edge_index)
                                  if c == sel]
            self.edges.update()
        self.refresh_boxes()

    # --- backward replay ------------------------------------------------------------------
    def replay_steps(self, order: Sequence[int] | None) -> list[tuple[int, ...]]:
        """Shown ids in replay order, a tuple per step: the engine's own order, with a
        penalty's whole sum one step (105 additions one by one told nothing and took
        most of the replay); or `order` (ids of the given graph), one node a step, the
        nodes not shown left out."""
        if self.shown is None:
            return []
        if order is not None:
            mapped = (self.to_shown(int(node)) for node in order)
            return [(node,) for node in mapped if node is not None]
        together: dict[int, tuple[int, ...]] = {}
        for group in self.groups():
            if group.kind != "penalty":
                continue
            shown = {self.to_shown(m) for m in group.members} - {None}
            step = tuple(sorted(shown, reverse=True))
            together.update((node, step) for node in step)
        steps: list[tuple[int, ...]] = []
        done: set[int] = set()
        for node in g.backward_order(self.shown):
            if node in done:
                continue
            step = together.get(node, (node,))
            done.update(step)
            steps.append(step)
        return steps

    def reported_id(self, step: Sequence[int]) -> int:
        """What `GraphView.animation_step` reports for a step: its node's id in the
        given graph."""
        original = self.to_original(step[0])
        return original if original is not None else step[0]

    def begin_replay(self) -> None:
        """Every node waits for its gradient (grey) until the replay reaches it."""
        self.replaying = True
        for node in self.nodes:
            node.pending = True
            node.update()
        self.refresh_boxes()

    def light(self, step: Sequence[int], place: int, previous: Sequence[int]) -> OpNode:
        """The replay reaches the shown nodes of `step`, its `place`-th step; returns the
        first (the one to keep in view)."""
        self.unlight(previous)
        for index in step:
            node = self.nodes[index]
            node.pending = False
            node.current = True
            node.places.append(place)
            node.update()
        if self.edges is not None:
            # The gradient now flows from these nodes back to their inputs.
            inside = set(step)
            self.edges.flow = [self._edge_lines[k] for k, (c, p) in enumerate(self._edge_index)
                               if p in inside]
            self.edges.update()
        self.refresh_boxes()
        return self.nodes[step[0]]

    def unlight(self, step: Sequence[int]) -> None:
        for index in step:
            node = self.nodes[index]
            node.current = False
            node.update()

    def end_replay(self) -> None:
        """Every node shows its gradient again."""
        self.replaying = False
        for node in self.nodes:
            node.pending = False
            node.current = False
            node.places = []
            node.update()
        if self.edges is not None:
            self.edges.flow = []
            self.edges.update()
        self.refresh_boxes()


def layer_sizes(graph: Graph) -> list[int]:
    """Units per layer of an MLP-shaped graph, counted from its bias names."""
    counts: dict[int, int] = {}
    for name in graph.parameter_nodes:
        parsed = parse_parameter_name(name)
        if parsed is not None and parsed[2] is None:
            counts[parsed[0]] = counts.get(parsed[0], 0) + 1
    return [counts[k] for k in sorted(counts)]
