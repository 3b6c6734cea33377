"""The live computation graph: network level and operation level, with backward replayed.

Thin by design: what to draw comes from `gradbox.graph`; the two levels are scenes of
their own (`graph_op_scene.OperationScene`, `graph_net_scene.NetworkScene`); where the
view looks at each level is a `graph_framing.Framer`; the key, the replay bar, the
mini-map and the placeholder float over it as `graph_overlays.GraphOverlays`; backward
is replayed by a `graph_replay.ReplayDriver`; files are written by `graph_export`.
This widget switches levels, zooms, routes the mouse and keys and selections, and is
the one public face of all of it.

Why past 600 lines (~670): the graph panel, the Playground, the lessons and the tests
call some forty verbs here (level, graph, sample, selection, replay, key, export), each
a few documented lines handing over to a scene or one of the parts above; moving them
onto the parts would make every caller learn which part owns which verb.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsView, QWidget

from gradbox import graph as g
from gradbox.autograd.nn import parameter_name, parse_parameter_name
from gradbox.graph import Graph, NetworkLevel
from gradbox.views.graph import export as graph_export
from gradbox.views.graph.framing import MIN_UNIT_PX, READABLE_PT, Framer
from gradbox.views.graph.items import (
    TEXT_LOD,
    Style,
)
from gradbox.views.graph.levels import Levels
from gradbox.views.graph.net_scene import NetworkScene
from gradbox.views.graph.op_scene import OP_NODE_CAP, OperationScene
from gradbox.views.graph.overlays import GraphOverlays
from gradbox.views.graph.replay import ReplayDriver

__all__ = ["MIN_UNIT_PX", "OP_NODE_CAP", "READABLE_PT", "GraphView"]


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
    replay_state_changed = Signal()  # a replay started, paused, resumed, ended

    def __init__(self, parent: QWidget | None = None, lines: int = 3) -> None:
        super().__init__(parent)
        self._style = Style(lines=lines)  # lines: of text per node (see Style)
        # The view does not own a scene it shows: keep references so they live as long.
        self.operations = OperationScene(self._style, self)
        self.network = NetworkScene(self._style, self)
        self.setScene(self.network)
        self.setRenderHints(QPainter.RenderHint.Antialiasing
                            | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        # No scroll bars: the scene has room around the drawing (see roomy), so they
        # were always there and suggested more graph than there is; dragging pans.
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState, True)
        self.setMouseTracking(False)
        # Which level is shown, and its two scenes: what the helpers below are given.
        self.levels = Levels(self.operations, self.network)
        self._sample = 0
        self._sample_label: str | None = None  # what to call the sample ("point 17")
        self._placeholder = ""
        self._selected_node: int | None = None  # id in the given graph: what is selected
        self.replayer = ReplayDriver(self, self.levels, self.animation_step.emit,
                                     self.animation_finished.emit)
        self.replay = self.replayer.replay
        self.replay.stopped.connect(self.animation_stopped)
        self._press: QPointF | None = None
        self._details_sent: str | None = None
        self._make_actions()
        self._make_overlays()
        self.framer = Framer(self, self.levels, self.overlays)

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
        self.fit_action = action("Fit", "Zoom to show everything", "F",
                                 lambda: self.framer.fit_everything())
        self.play_action = action("Play backward", "Replay backward node by node", None,
                                  lambda: self.play_backward())
        # B, not N: N is the main window's Sub-step, and a key two actions share does
        # nothing at all (Qt calls it ambiguous).
        self.step_action = action("Next node", "Next node of the backward replay", "B",
                                  lambda: self.step_backward())
        self.stop_action = action("Stop", "Stop the replay", "Esc", self.stop_animation)

    # --- public API -------------------------------------------------------------------
    def level(self) -> str:
        return self.levels.shown

    def set_level(self, level: str) -> None:
        if level not in ("network", "operation"):
            raise ValueError(f"level must be 'network' or 'operation', got {level!r}")
        if level == self.levels.shown:
            return
        self.stop_animation()
        self.framer.leave(self.levels.shown)
        self.levels.shown = level
        if level == "operation":
            self._sync_operations()
            self.setScene(self.operations)
        else:
            self.setScene(self.network)
        self.overlays.fold_if_crowded()  # each level's key decides anew (see fit)
        self.framer.enter(level)
        self.level_changed.emit(level)
        self._changed()

    def set_graph(self, graph: Graph, sample: int | None = None,
                  sample_label: str | None = None) -> None:
        """Show a new step's graph; re-layout only if its structure changed.

        `sample` indexes the graph's per-sample arrays; `sample_label` is what the
        details call it (e.g. "point 17" when the graph holds a mini-batch).
        """
        self.stop_animation()
        if sample is not None:
            self._sample_label = sample_label
        old = self.operations.graph
        if old is None or graph.structure_key != old.structure_key:
            # node ids mean other nodes now; a parameter keeps its name
            name = self.network.selected
            self._selected_node = graph.find_parameter(name) if name else None
        self.operations.graph = graph
        if sample is not None:
            self._sample = sample
        self.overlays.sample_label = self.sample_label()
        if self.levels.shown == "operation":
            self._sync_operations()

    def graph(self) -> Graph | None:
        return self.operations.graph

    def clear_graph(self) -> None:
        """Forget the operation graph (a new model has none yet); the network level stays."""
        self.stop_animation()
        self._selected_node = None
        self.operations.forget()
        self._emit_details()
        self._changed()

    def shown_graph(self) -> Graph | None:
        """What the operation level draws: the whole graph or one neuron's part of it."""
        return self.operations.shown

    def set_network(self, network: NetworkLevel) -> None:
        """Show the network level (see `gradbox.graph.network_level`)."""
        if self.network.set_network(network):
            self.framer.drawing_changed("network")
        self.overlays.update()

    def clear_network(self) -> None:
        """Draw no network level (its placeholder text shows instead)."""
        if self.network.network is not None:
            self.network.forget()
            self.framer.drawing_changed("network")
        self.overlays.update()
        self._changed()

    def set_sample(self, sample: int, label: str | None = None) -> None:
        """Show the numbers of `sample` (an index into the graph's arrays), called `label`."""
        self._sample = int(sample)
        self._sample_label = label
        self.overlays.sample_label = self.sample_label()
        if self.operations.shown is not None and self.operations.nodes:
            self.operations.update_numbers(self._sample)
        self._emit_details()

    def sample(self) -> int:
        return self._sample

    def set_sample_marker(self, place: tuple[float, float] | None) -> None:
        """Mark the shown sample in every unit's map, at `place` (fractions of the map's
        width and height from its top left), or nowhere."""
        self.network.set_marker(place)

    def sample_label(self) -> str:
        return self._sample_label or f"sample {self._sample}"

    def set_font_scale(self, scale: float) -> None:
        """Scale every text the view draws (teacher mode): node and unit labels, the
        legend, landmarks and headers. Node boxes grow with their text."""
        scale = max(0.5, min(float(scale), 4.0))
        if abs(scale - self._style.scale) < 1e-6:
            return
        self._style = Style(scale, self._style.lines)
        self.legend.set_point_size(8.5 * scale)
        self.overlays.fold_if_crowded()
        # Items take their sizes when built: build them again, keeping what is shown.
        self.operations.restyle(self._style)
        if self.levels.shown == "operation":
            self._sync_operations()
        self.network.restyle(self._style)
        self.framer.drawing_changed()
        self._changed()

    def font_scale(self) -> float:
        return self._style.scale

    def set_placeholder_text(self, text: str) -> None:
        """What to say in the middle of the view while the current level has nothing to
        draw (e.g. before the first step), instead of an empty grey area."""
        self._placeholder = text
        self.overlays.placeholder_text = text
        self._changed()

    def placeholder_text(self) -> str:
        return self._placeholder

    def is_empty(self) -> bool:
        """Whether the current level has nothing to draw."""
        return self.levels.is_empty()

    def set_show_gradients(self, show: bool) -> None:
        """At network level, draw gradients instead of weights on the edges."""
        self.network.show_grads = bool(show)
        self.gradients_action.setChecked(self.network.show_grads)
        self.network.refresh()
        self._changed()

    def show_gradients(self) -> bool:
        return self.network.show_grads

    def expand_neuron(self, layer: int, index: int) -> bool:
        """Show only neuron (layer, index)'s operations at operation level.

        Returns False if the graph has no such neuron (then nothing changes).
        """
        graph = self.operations.graph
        if graph is None or g.neuron_nodes(graph, layer, index) is None:
            return False
        self.operations.expand((layer, index))
        self._refit_operations()
        return True

    def show_all_operations(self) -> None:
        """Show every operation, however many (large graphs open collapsed by default)."""
        self.operations.expand(None, show_all=True)
        self._refit_operations()

    def _open_in_place(self, hit: int) -> None:
        """After a box opened (or closed): the new drawing, framed as before if the user
        had framed it, the opened part in view."""
        original = self.operations.to_original(hit)
        self.stop_animation()
        self._sync_operations()
        self.framer.keep_framed()
        shown = self.operations.to_shown(original)
        if shown is not None and self._viewport_scale() >= TEXT_LOD:
            self.ensureVisible(self.operations.nodes[shown], 60, 60)
        self._changed()

    def _refit_operations(self) -> None:
        if self.levels.shown == "operation":
            self._sync_operations()
        self.framer.drawing_changed("operation")

    def expanded_neuron(self) -> tuple[int, int] | None:
        return self.operations.expanded if self.operations.is_collapsed() else None

    def is_collapsed(self) -> bool:
        return self.operations.is_collapsed()

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
        unit = self.network.selected_unit
        parsed = parse_parameter_name(name)
        if unit is None or parsed is None or (parsed[0] + 1, parsed[1], parsed[2]) != (*unit, None):
            self.network.select_unit(None)  # another parameter: not the unit's own bias
        self.network.select(name)
        ops_scene = self.operations
        graph = ops_scene.graph
        node = graph.find_parameter(name) if graph is not None else None
        if graph is not None and node is not None:
            found = True
            parsed = parse_parameter_name(name)
            if (parsed is not None and ops_scene.collapsed_by_size()
                    and parsed[:2] != ops_scene.expanded):
                # show the neuron the parameter belongs to, now or when the level opens
                ops_scene.expand((parsed[0], parsed[1]))
                self._refit_operations()
            self._select(node, user=False)
            if self.levels.shown == "operation" and ops_scene.selected is not None:
                self.ensureVisible(ops_scene.nodes[ops_scene.selected], 60, 60)
        if self.network.network is not None and parse_parameter_name(name) is not None:
            found = True
        self._emit_details()
        return found

    def set_legend_visible(self, visible: bool) -> None:
        """The colour key and hints in the top-left corner (on by default)."""
        self.overlays.legend_wanted = bool(visible)
        self._changed()

    def details_text(self) -> str:
        """What the details pane shows for the current selection."""
        if self.levels.shown == "network" and self.network.selected_unit is not None:
            return self.network.unit_details(*self.network.selected_unit, self.sample_label())
        if self.levels.shown == "network" and self.network.selected:
            return self.network.details(self.network.selected, self.operations.graph,
                                        self._sample, self._sample_label)
        label = self._sample_label
        ops_scene = self.operations
        shown, selected = ops_scene.shown, ops_scene.selected
        if shown is not None and selected is not None:
            if shown.is_group(selected) and self._selected_node == ops_scene.to_original(
                    selected):
                return g.group_details(shown, selected, self._sample, label)
            if shown.members is not None and ops_scene.graph is not None:
                # a node drawn among boxes: its full story comes from the whole graph
                original = self._selected_node
                if original is None:
                    original = ops_scene.to_original(selected)
                return g.details(ops_scene.graph, original, self._sample, label)
            return g.details(shown, selected, self._sample, label)
        if ops_scene.graph is not None and self._selected_node is not None:
            return g.details(ops_scene.graph, self._selected_node, self._sample, label)
        return ""

    # --- backward replay ------------------------------------------------------------
    def play_backward(self, interval_ms: int | None = None,
                      order: Sequence[int] | None = None) -> None:
        """Replay backward on the level shown: at network level units light up, the loss
        first, as their gradient arrives; at operation level nodes, numbered.

        `order` replays another sequence of node ids (of the graph given to
        `set_graph`), e.g. the order a broken backward really fired in; a node may
        appear more than once and then carries every number it was given (operation
        level only). Without it, a replay paused continues, and a finished one starts
        again. `interval_ms` overrides the replay's speed for this run.
        """
        if order is not None:
            self.set_level("operation")  # a custom order names operations
        if self.replayer.ensure(order):
            self.replay.play(interval_ms)

    def pause_backward(self) -> None:
        self.replay.pause()

    def step_backward(self, order: Sequence[int] | None = None) -> int | None:
        """Advance the replay by one step; returns the id of the node it reached (at
        network level the unit's place in the replay), None when finished.

        `order` starts a replay of that sequence (see `play_backward`).
        """
        if order is not None:
            self.set_level("operation")  # a custom order names operations
        return self.replayer.step(order)

    def stop_animation(self) -> None:
        """Stop and clear the replay: every node shows its gradient again.

        Emits `animation_stopped` if the replay had not finished.
        """
        if self.replayer.stop():
            self._changed()

    def is_animating(self) -> bool:
        return self.replay.is_playing()

    def animation_position(self) -> int:
        """How many steps the replay has taken."""
        return self.replay.position()

    def animation_length(self) -> int:
        """How many steps the current replay has (0 when there is none)."""
        return self.replay.length()

    def replay_level(self) -> str:
        """The level the current replay runs on."""
        return self.replayer.level

    # --- view -------------------------------------------------------------------------
    def fit(self) -> None:
        """Zoom so the whole level fits in the window (see `graph_framing.Framer.fit`)."""
        self.framer.fit()

    def keep_framed(self) -> None:
        """Frame the level again unless the user zoomed or panned since it was framed
        (after a new graph whose boxes now carry other numbers, badges or sizes)."""
        self.framer.keep_framed()

    def legend_rect(self) -> QRectF:
        """The key's box in the viewport's pixels (empty when hidden)."""
        return self.overlays.legend_rect()

    def set_legend_folded(self, folded: bool) -> None:
        """Fold the key to one line ("▸ key"), or open it again (a click on it toggles).

        Until this is called, the key folds itself when open it would cover more than
        LEGEND_SHARE of the window (a small window, or big teacher-mode text), or cost
        the network's units their readable size (see fit)."""
        self.overlays.auto_fold = False
        self.overlays.folded = bool(folded)
        self.overlays.update()
        self.framer.keep_framed()

    def legend_folded(self) -> bool:
        return self.overlays.folded

    def _changed(self) -> None:
        self.overlays.update()
        self.viewport().update()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.overlays.fold_if_crowded()
        self.overlays.update()
        # Still as fit() left it (not zoomed or panned since): fit the new size too.
        # A graph first shown in a hidden tab was fitted to a window of no size.
        self.framer.keep_framed()

    def zoom(self, factor: float) -> None:
        self.framer.user_framed()
        scale = self._viewport_scale()
        factor = max(0.005 / scale, min(factor, 6.0 / scale))
        self.scale(factor, factor)

    def focus_node(self, node: int, scale: float = 1.0) -> None:
        """Centre on a node (of the given graph) at a readable zoom."""
        shown = self.operations.to_shown(node)
        if shown is None or not self.operations.nodes:
            return
        self.zoom(scale / self._viewport_scale())
        self.centerOn(self.operations.nodes[shown])

    def _viewport_scale(self) -> float:
        return float(self.transform().m11())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        scale = self._viewport_scale()
        self._style.lod = scale  # what the items' paint() reads
        if self.levels.shown == "network":
            self.network.fit_headers(scale)
        else:
            self.operations.set_zoom(scale)
            # scrolled or zoomed: nodes now on screen may be stale
            self.operations.touch_visible(
                self.mapToScene(self.viewport().rect()).boundingRect())
        self.overlays.sync_minimap()
        super().paintEvent(event)

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
            self.framer.user_framed()  # the user framed it: keep their frame

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self._click(self.mapToScene(event.position().toPoint()), double=True)
        event.accept()

    def click_scene_point(self, point: QPointF, double: bool = False) -> None:
        """What a click at a scene point does (also used by tests)."""
        self._click(point, double)

    def node_scene_pos(self, node: int) -> QPointF | None:
        shown = self.operations.to_shown(node)
        nodes = self.operations.nodes
        return None if shown is None or not nodes else nodes[shown].pos()

    def weight_scene_pos(self, name: str) -> QPointF | None:
        """A point of a weight's edge near the neuron it feeds (where edges fan apart)."""
        return self.network.weight_pos(name)

    def unit_scene_pos(self, layer: int, index: int) -> QPointF | None:
        return self.network.unit_pos(layer, index)

    # --- overlays: the key, the replay bar, the mini-map, the placeholder ---------------
    def _make_overlays(self) -> None:
        self.overlays = overlays = GraphOverlays(self, self.levels, self.replay,
                                                 self.play_action, self.step_action)
        overlays.sample_label = self.sample_label()
        self.legend, self.replay_bar, self.minimap = (overlays.legend, overlays.replay_bar,
                                                      overlays.minimap)
        # a click on the key is the user's choice from now on
        self.legend.toggled.connect(self.set_legend_folded)
        self.replay_bar.play_clicked.connect(self.play_action.trigger)
        self.replay_bar.pause_clicked.connect(self.pause_backward)
        self.replay_bar.step_clicked.connect(self.step_action.trigger)
        self.replay_bar.stop_clicked.connect(self.stop_action.trigger)
        self.replay_bar.speed_chosen.connect(self.replay.set_speed)
        self.replay.state_changed.connect(overlays.update)
        self.replay.state_changed.connect(self.replay_state_changed)
        self.replay.advanced.connect(lambda *_: overlays.update())
        for action in (self.play_action, self.step_action):
            action.changed.connect(overlays.update)
        self.minimap.moved.connect(self._on_minimap_moved)

    def _on_minimap_moved(self, point: QPointF) -> None:
        self.framer.user_framed()  # the user framed it: keep their frame
        self.centerOn(point)

    def set_replay_bar_visible(self, visible: bool) -> None:
        """The Play/Step/speed bar at the bottom (on by default)."""
        self.overlays.replay_bar_wanted = bool(visible)
        self.overlays.update()

    def replay_counter_text(self) -> str:
        """What the replay bar's counter says ("backward: 3 of 30 steps")."""
        self.overlays.update()
        return self.replay_bar.counter_text()

    def legend_texts(self) -> list[str]:
        """The lines of the key as shown (folded: its one line)."""
        self.overlays.update()
        return self.legend.lines()

    # --- export -----------------------------------------------------------------------
    def export_png(self, path: str | Path, max_side: int = 8000) -> None:
        """The whole current level as a PNG, scaled down if its long side exceeds `max_side`."""
        graph_export.export_png(self.scene(), self._style, path, max_side)

    def export_svg(self, path: str | Path) -> None:
        graph_export.export_svg(self.scene(), self._style, path)

    def export_dot(self, path: str | Path) -> None:
        # the drawing's graph, or the whole one when parts of it are drawn as boxes
        shown = self.operations.shown
        if shown is None or shown.members is not None:
            shown = self.operations.graph
        if shown is None:
            raise ValueError("no graph to export")
        Path(path).write_text(g.to_dot(shown, self._sample), encoding="utf-8")

    # --- the levels' scenes ---------------------------------------------------------
    def _sync_operations(self) -> None:
        if self.operations.sync(self.operations.graph, self._sample, self._selected_node):
            self.framer.drawing_changed("operation")
        self._emit_details()
        self.overlays.update()

    def _select(self, node: int | None, user: bool) -> None:
        """Select a node of the given graph (shown or not); a user's choice is announced."""
        self._selected_node = node
        self.operations.select(node)
        if node is not None:
            self.node_selected.emit(node)
            graph = self.operations.graph
            name = graph.names[node] if graph is not None else None
            if name:
                self.network.select(name)
                if user:
                    self.parameter_selected.emit(name)
        self._emit_details()

    def _emit_details(self) -> None:
        text = self.details_text()
        # Unchanged details (nothing selected, most steps) are not sent again: a signal
        # into Qt costs the UI thread at every frame of a Run.
        if text != self._details_sent:
            self._details_sent = text
            self.details_changed.emit(text)

    def _click(self, point: QPointF, double: bool) -> None:
        if self.levels.shown == "operation":
            hit = self.operations.node_at(point)
            if hit is not None and double and self.operations.toggle_group(hit):
                self._open_in_place(hit)
            elif hit is not None:
                self._select(self.operations.to_original(hit), user=True)
            return
        unit = self.network.unit_at(point)
        units = self.network.units
        if unit is not None:
            layer, index = unit
            neuron = 1 <= layer < len(units) - 1
            if double and neuron:
                if self.expand_neuron(layer - 1, index):
                    self.set_level("operation")
                return
            self.network.select_unit(unit)
            if neuron:
                # the parameters panel follows with the unit's bias
                name = parameter_name(layer - 1, index, None)
                self.network.select(name)
                self.parameter_selected.emit(name)
            self._emit_details()
            return
        self.network.select_unit(None)
        # a few pixels on screen, whatever the zoom
        name = self.network.weight_at(point, 6.0 / max(self._viewport_scale(), 1e-6))
        if name is not None:
            self.network.select(name)
            graph = self.operations.graph
            if graph is not None:
                node = graph.find_parameter(name)
                if node is not None:
                    self._selected_node = node
                    self.operations.select(node)
            self.parameter_selected.emit(name)
            self._emit_details()
