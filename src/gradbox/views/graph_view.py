"""The live computation graph: network level and operation level, with backward replayed.

Thin by design: what to draw comes from `gradbox.graph`; the two levels are scenes of
their own (`graph_op_scene.OperationScene`, `graph_net_scene.NetworkScene`), the
replay's progress is a `backward_replay.BackwardReplay`, the fit's geometry is in
`graph_framing`, the files in `graph_export`, the overlays are widgets of their own
(`graph_legend`, `replay_bar`, `graph_minimap`). This widget switches levels, zooms and
frames, keeps the overlays up to date and routes the mouse and keys.

Why past 600 lines: it is the one public face of the graph for the graph panel, the
Playground, the lessons and the tests (some forty small methods, each a few lines of
routing to a scene or the replay); splitting them across classes would make every
caller learn which part owns which verb.
"""

from __future__ import annotations

import time
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
    QTransform,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QLabel, QWidget

from gradbox import graph as g
from gradbox.graph import Graph, NetworkLevel
from gradbox.nn import parameter_name, parse_parameter_name
from gradbox.views import graph_export, graph_framing
from gradbox.views.backward_replay import BackwardReplay
from gradbox.views.graph_items import (
    TEXT_LOD,
    UNIT,
    Style,
)
from gradbox.views.graph_legend import GraphLegend, Line, legend_lines
from gradbox.views.graph_minimap import MiniMap
from gradbox.views.graph_net_scene import NetworkScene
from gradbox.views.graph_op_scene import OP_NODE_CAP, OperationScene
from gradbox.views.replay_bar import ReplayBar

# The zoom an operation graph opens at when "fit" would make its text unreadable
# (7.5 pt labels at 0.8 are 6 pt on screen).
READABLE_LOD = 0.8
# The legend folds itself while, open, it would cover more than this share of the window.
LEGEND_SHARE = 0.12
# The network level opens with its units at least this many pixels wide: smaller, the
# heat maps are specks and their values do not fit (a wide layer scrolls instead, with
# the mini-map showing where the window is).
MIN_UNIT_PX = 40.0

__all__ = ["OP_NODE_CAP", "GraphView"]


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

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._style = Style()
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
        self._level = "network"
        self._sample = 0
        self._sample_label: str | None = None  # what to call the sample ("point 17")
        self._placeholder = ""
        self._selected_node: int | None = None  # id in the given graph: what is selected
        self.replay = BackwardReplay(self)
        self.replay.advanced.connect(self._on_replay_advanced)
        self.replay.finished.connect(self._on_replay_finished)
        self.replay.stopped.connect(self.animation_stopped)
        self._replay_level = "operation"  # the level the loaded replay lights up
        self._follow = True
        self._press: QPointF | None = None
        self._fitted = {"network": False, "operation": False}
        # whether the level is still framed as fit() left it (then a resize refits)
        self._auto_fit = {"network": True, "operation": True}
        # how a level frames itself while auto: "open" (readable, see _reframe) or "fit"
        self._frame_mode = {"network": "open", "operation": "open"}
        self._frames: dict[str, tuple[QTransform, QPointF]] = {}  # a level's own frame
        self._legend = True
        self._legend_folded = False
        self._legend_auto = True  # folds itself in a small window until the user decides
        self._paint_seconds = 0.0
        self._details_sent: str | None = None
        self._replay_bar_wanted = True
        self._make_actions()
        self._make_overlays()

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
        self.fit_action = action("Fit", "Zoom to show everything", "F", self._fit_everything)
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
        # One view shows both scenes, with one transform: each level keeps its own frame
        # (the network came back at the operation level's zoom, a speck).
        self._frames[self._level] = (self.transform(),
                                     self.mapToScene(self.viewport().rect().center()))
        self._level = level
        self._auto_fold_legend()  # each level's drawing decides anew (see fit)
        if level == "operation":
            self._sync_operations()
            self.setScene(self.operations)
        else:
            self.setScene(self.network)
        if not self._fitted[level] or self._auto_fit[level] or level not in self._frames:
            self._reframe()  # the window may have changed while the other level showed
        else:
            transform, centre = self._frames[level]
            self.setTransform(transform)
            self.centerOn(centre)
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
        if self._level == "operation":
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
            self._fitted["network"] = False
            if self._level == "network":
                self._reframe()
        self._update_overlays()

    def set_sample(self, sample: int, label: str | None = None) -> None:
        """Show the numbers of `sample` (an index into the graph's arrays), called `label`."""
        self._sample = int(sample)
        self._sample_label = label
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
        self._style = Style(scale)
        self.legend.set_point_size(8.5 * scale)
        self._auto_fold_legend()
        # Items take their sizes when built: build them again, keeping what is shown.
        self.operations.restyle(self._style)
        if self._level == "operation":
            self._sync_operations()
        self.network.restyle(self._style)
        self._fitted = {"network": False, "operation": False}
        self._reframe()
        self._changed()

    def font_scale(self) -> float:
        return self._style.scale

    def set_placeholder_text(self, text: str) -> None:
        """What to say in the middle of the view while the current level has nothing to
        draw (e.g. before the first step), instead of an empty grey area."""
        self._placeholder = text
        self._changed()

    def placeholder_text(self) -> str:
        return self._placeholder

    def is_empty(self) -> bool:
        """Whether the current level has nothing to draw."""
        if self._level == "operation":
            return not self.operations.nodes or self.operations.graph is None
        return self.network.network is None

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
        if self._auto_fit["operation"]:
            self._reframe()
        shown = self.operations.to_shown(original)
        if shown is not None and self._viewport_scale() >= TEXT_LOD:
            self.ensureVisible(self.operations.nodes[shown], 60, 60)
        self._changed()

    def _refit_operations(self) -> None:
        self._fitted["operation"] = False
        if self._level == "operation":
            self._sync_operations()
            self._reframe()

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
            if self._level == "operation" and ops_scene.selected is not None:
                self.ensureVisible(ops_scene.nodes[ops_scene.selected], 60, 60)
        if self.network.network is not None and parse_parameter_name(name) is not None:
            found = True
        self._emit_details()
        return found

    def set_legend_visible(self, visible: bool) -> None:
        """The colour key and hints in the top-left corner (on by default)."""
        self._legend = bool(visible)
        self._changed()

    def details_text(self) -> str:
        """What the details pane shows for the current selection."""
        if self._level == "network" and self.network.selected_unit is not None:
            return self.network.unit_details(*self.network.selected_unit, self.sample_label())
        if self._level == "network" and self.network.selected:
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
        if not self._ensure_replay(order):
            return
        self.replay.play(interval_ms)

    def pause_backward(self) -> None:
        self.replay.pause()

    def step_backward(self, order: Sequence[int] | None = None) -> int | None:
        """Advance the replay by one step; returns the id of the node it reached (at
        network level the unit's place in the replay), None when finished.

        `order` starts a replay of that sequence (see `play_backward`).
        """
        self.replay.pause()
        if not self._ensure_replay(order, restart_finished=False):
            return None
        index = self.replay.step()
        if index is None:
            return None
        return self._replay_scene().reported_id(self.replay.steps()[index])

    def stop_animation(self) -> None:
        """Stop and clear the replay: every node shows its gradient again.

        Emits `animation_stopped` if the replay had not finished.
        """
        self.replay.pause()
        if not self.replay.is_loaded():
            return
        self._replay_scene().end_replay()
        self.replay.stop()
        self._changed()

    def _replay_scene(self) -> NetworkScene | OperationScene:
        """The scene the loaded replay lights up."""
        return self.network if self._replay_level == "network" else self.operations

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
        return self._replay_level

    def _ensure_replay(self, order: Sequence[int] | None,
                       restart_finished: bool = True) -> bool:
        if order is not None and self._level != "operation":
            self.set_level("operation")  # a custom order names operations
        replay = self.replay
        if order is None and replay.is_loaded() and self._replay_level == self._level \
                and not (replay.is_finished() and restart_finished):
            return True  # continue the replay in progress
        # a new replay replaces the old one: not a stop the caller must hear about
        replay.pause()
        if replay.is_loaded():
            self._replay_scene().end_replay()
        self._replay_level = self._level
        scene = self._replay_scene()
        steps = scene.replay_steps(order)
        replay.load(steps)
        if not steps:
            return False
        scene.begin_replay()
        return True

    def _on_replay_advanced(self, index: int, position: int) -> None:
        steps = self.replay.steps()
        scene = self._replay_scene()
        item = scene.light(steps[index], position, steps[index - 1] if index > 0 else ())
        if self._follow and self._viewport_scale() >= TEXT_LOD:
            # follow a step out of sight; one in sight stays put (ensureVisible's margins
            # scrolled a fitted graph past its right edge: it looked clipped)
            box = self.mapFromScene(item.core_rect()).boundingRect()
            if not self.viewport().rect().contains(box):
                self.ensureVisible(item, 40, 40)
        self.animation_step.emit(scene.reported_id(steps[index]), position)
        self.viewport().update()

    def _on_replay_finished(self) -> None:
        last = self.replay.current()
        if last:
            self._replay_scene().unlight(last)
        self.animation_finished.emit()

    # --- view -------------------------------------------------------------------------
    def fit(self) -> None:
        """Zoom so the whole level fits in the window.

        The key and the replay bar float over the drawing: first the drawing gets the
        whole window, and only if one of them would then cover part of it is it framed
        beside or below them (a network's corners are mostly empty: keeping a band free
        for the key cost its units a fifth of their size).
        """
        scene = self._current_scene()
        if self.scene() is not scene:
            self.setScene(scene)
        rect, left, top, hanging = self._fit_frame()
        if rect.isEmpty():
            return
        self._frame(rect, left, top, hanging, overlays=False)
        if self._overlays_cover_drawing():
            self._frame(rect, left, top, hanging, overlays=True)
            if (self._level == "network" and self._legend and self._legend_auto
                    and not self._legend_folded
                    and UNIT * self._viewport_scale() < MIN_UNIT_PX):
                # The open key would cost the units their readable size: it folds to
                # one line ("▸ key", a click opens it) and the units get the room.
                self._legend_folded = True
                self._update_overlays()
                self._frame(rect, left, top, hanging, overlays=False)
                if self._overlays_cover_drawing():
                    self._frame(rect, left, top, hanging, overlays=True)
        self._fitted[self._level] = True
        self._auto_fit[self._level] = True

    def _frame(self, rect: QRectF, left: float, top: float,
               hanging: list[tuple[float, float]], overlays: bool) -> None:
        scene = self.scene()
        marks = self._level == "operation" and bool(self.operations.landmarks)
        # The landmarks show only below readable zoom: a drawing that fits at a readable
        # zoom without them (a small graph) needs no room for them.
        scale, left_, top_, right = self._framing(
            rect, *((0.0, 0.0, []) if marks else (left, top, hanging)), overlays=overlays)
        if marks and scale < TEXT_LOD:
            scale, left_, top_, right = self._framing(rect, left, top, hanging,
                                                      overlays=overlays)
        bottom = self._bottom_room() if overlays else 0.0
        graph_framing.apply(self, scene, rect, scale,
                            QPointF((left_ - right) / 2, (top_ - bottom) / 2))

    def keep_framed(self) -> None:
        """Frame the level again unless the user zoomed or panned since it was framed
        (after a new graph whose boxes now carry other numbers, badges or sizes)."""
        if self._auto_fit.get(self._level):
            self._reframe()

    def _fit_everything(self) -> None:
        """Fit, the user's choice: from now on a resize keeps everything in view too."""
        self._frame_mode[self._level] = "fit"
        self.fit()

    def _reframe(self) -> None:
        """Frame the level as it opens: everything, unless at that size its text would be
        too small to read -- then at a readable zoom, with the mini-map showing the rest:
        an operation graph on its loss end, where backward starts; a network with its
        units MIN_UNIT_PX wide, on the middle of its columns from the inputs on."""
        self.fit()
        if self._frame_mode[self._level] != "open":
            return
        if self._level == "network":
            self._open_network()
            return
        nodes, shown = self.operations.nodes, self.operations.shown
        if not nodes or shown is None or self._viewport_scale() >= TEXT_LOD:
            return  # whole, and its text drawn: a small graph is best seen whole
        self.resetTransform()
        self.scale(READABLE_LOD, READABLE_LOD)
        root = nodes[shown.root].pos()
        port = self.viewport().rect()
        right = root.x() + self._style.node_w / 2 + 24 / READABLE_LOD
        self.centerOn(QPointF(right - port.width() / 2 / READABLE_LOD, root.y()))
        self._fitted["operation"] = True

    def _open_network(self) -> None:
        """Units at least MIN_UNIT_PX wide, when fitting everything made them smaller."""
        if self.network.weights is None:
            return
        scale = MIN_UNIT_PX / UNIT
        if self._viewport_scale() >= scale:
            return
        drawing = self.network.drawing_rect()
        port = self.viewport().rect()
        half_w = port.width() / 2 / scale
        self.resetTransform()
        self.scale(scale, scale)
        # the inputs at the left edge (past the key), unless the width fits whole
        left = drawing.left() - (self.legend_rect().right() + 16) / scale
        x = drawing.center().x() if drawing.width() <= 2 * half_w - 24 / scale \
            else left + half_w
        self.centerOn(QPointF(x, drawing.center().y()))
        self._fitted["network"] = True

    def _overlays_cover_drawing(self) -> bool:
        """Whether the key or the replay bar covers a unit, a node or a header."""
        covers = [self.legend_rect()]
        if self.replay_bar.isVisibleTo(self):
            geometry = self.replay_bar.geometry()
            port = self.viewport().geometry()
            covers.append(QRectF(geometry.translated(-port.topLeft())))
        scale = self._viewport_scale()
        if self._level == "network":
            occupied = self.network.occupied(max(scale, 1e-9))
        else:
            occupied = self.operations.occupied()
        return graph_framing.covers(self, covers, occupied)

    def _framing(self, rect: QRectF, left: float, top: float,
                 hanging: list[tuple[float, float]], overlays: bool = True
                 ) -> tuple[float, float, float, float]:
        keyed = self._legend and overlays
        return graph_framing.framing(
            rect, self.viewport().rect(), left, top, hanging,
            self.legend_rect() if keyed else None,
            self._bottom_room() if overlays else 0.0)

    def legend_rect(self) -> QRectF:
        """The key's box in the viewport's pixels (empty when hidden)."""
        if not self._legend:
            return QRectF()
        self._update_overlays()
        return self.legend.rect_in(self.viewport())

    def _bottom_room(self) -> float:
        """Pixels the replay bar takes at the bottom of the window."""
        return self.replay_bar.height() + 8.0 if self.replay_bar.isVisibleTo(self) else 0.0

    def set_legend_folded(self, folded: bool) -> None:
        """Fold the legend to one line ("▸ key"), or open it again (a click on it toggles).

        Until this is called, the legend folds itself when open it would cover more than
        LEGEND_SHARE of the window (a small window, or big teacher-mode text)."""
        self._legend_auto = False
        self._fold_legend(folded)

    def _fold_legend(self, folded: bool) -> None:
        self._legend_folded = bool(folded)
        self._update_overlays()
        if self._auto_fit.get(self._level):
            self._reframe()

    def legend_folded(self) -> bool:
        return self._legend_folded

    def _auto_fold_legend(self) -> None:
        if not self._legend_auto or not self._legend:
            return
        self.legend.set_lines(self._full_legend_lines())
        self.legend.set_folded(False)
        box = self.legend.size()
        port = self.viewport().rect()
        crowded = box.width() * box.height() > LEGEND_SHARE * port.width() * port.height()
        self._legend_folded = crowded  # fit() follows in the caller
        self._update_overlays()

    def _changed(self) -> None:
        self._update_overlays()
        self.viewport().update()

    def _current_scene(self) -> QGraphicsScene:
        return self.operations if self._level == "operation" else self.network

    def _fit_frame(self) -> tuple[QRectF, float, float, list[tuple[float, float]]]:
        """What fit() frames: the drawing (scene units), the pixels its constant-size
        labels need on the left and top, and the labels that may hang over its right
        edge as (width in pixels, start in scene units from the drawing's left edge).

        The scene's own bounding rect would not do: a label that ignores the zoom
        counts there as if drawn at scale 1, so at "fit" it hung over the window's edge.
        """
        ops_scene = self.operations
        if self._level == "operation" and ops_scene.edges is not None and ops_scene.nodes:
            rect = ops_scene.drawing_rect()
            left = top = 0.0
            hanging: list[tuple[float, float]] = []
            for item, beside in zip(ops_scene.landmarks, ops_scene.landmark_beside):
                box = item.boundingRect()
                if beside:
                    left = max(left, box.width() + 14)
                else:
                    top = max(top, box.height() + 4)
                    hanging.append((box.width(), item.pos().x() - rect.left()))
            return rect, left, top, hanging
        if self._level == "network" and self.network.weights is not None:
            return self.network.drawing_rect(), 0.0, self.network.header_height(), []
        scene = self.scene()
        return scene.itemsBoundingRect(), 0.0, 0.0, []

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._auto_fold_legend()
        self._update_overlays()
        # Still as fit() left it (not zoomed or panned since): fit the new size too.
        # A graph first shown in a hidden tab was fitted to a window of no size.
        if self._auto_fit.get(self._level):
            self._reframe()

    def zoom(self, factor: float) -> None:
        self._auto_fit[self._level] = False
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
        if self._level == "network":
            self.network.fit_headers(scale)
        else:
            self.operations.set_zoom(scale)
            # scrolled or zoomed: nodes now on screen may be stale
            self.operations.touch_visible(
                self.mapToScene(self.viewport().rect()).boundingRect())
        self._sync_minimap()
        start = time.perf_counter()
        super().paintEvent(event)
        self._paint_seconds = time.perf_counter() - start

    def paint_seconds(self) -> float:
        """How long the last repaint took (wall clock), for callers pacing their updates."""
        return self._paint_seconds

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
            self._auto_fit[self._level] = False  # the user framed it: keep their frame

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

    # --- overlays: the key, the replay bar, the placeholder ----------------------------
    def _make_overlays(self) -> None:
        self.legend = GraphLegend(self)
        # a click on the key is the user's choice from now on
        self.legend.toggled.connect(self.set_legend_folded)
        self.replay_bar = ReplayBar(self)
        self.replay_bar.play_clicked.connect(self.play_action.trigger)
        self.replay_bar.pause_clicked.connect(self.pause_backward)
        self.replay_bar.step_clicked.connect(self.step_action.trigger)
        self.replay_bar.stop_clicked.connect(self.stop_action.trigger)
        self.replay_bar.speed_chosen.connect(self.replay.set_speed)
        self.replay.state_changed.connect(self._update_overlays)
        self.replay.state_changed.connect(self.replay_state_changed)
        self.replay.advanced.connect(lambda *_: self._update_overlays())
        for action in (self.play_action, self.step_action):
            action.changed.connect(self._update_overlays)
        self.minimap = MiniMap(self)
        self.minimap.resize(180, 110)
        self.minimap.moved.connect(self._on_minimap_moved)
        self.minimap.hide()
        self._minimap_key: tuple | None = None  # (numbers' generation, replay position)
        self._minimap_time = 0.0  # when its colours were last brought up to date
        self._placeholder_label = QLabel(self)
        self._placeholder_label.setWordWrap(True)
        self._placeholder_label.setAccessibleName("Graph placeholder")
        self._placeholder_label.setToolTip("Why the graph is empty, and what to do")
        self._placeholder_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._placeholder_label.setStyleSheet(
            "background: white; border: 1px solid #cccccc; border-radius: 6px; "
            "padding: 10px 14px; color: #333333;")
        self._placeholder_label.hide()

    def _update_overlays(self) -> None:
        """Bring the key, the replay bar and the placeholder up to date, and place them."""
        empty = self.is_empty()
        if self._placeholder_label.text() != self._placeholder:
            self._placeholder_label.setText(self._placeholder)
        self._placeholder_label.setVisible(bool(self._placeholder) and empty)
        self.legend.set_lines(self._full_legend_lines())
        self.legend.set_folded(self._legend_folded)
        self.legend.setVisible(self._legend and not empty)
        replay = self.replay
        unit = "units" if self._level == "network" else "steps"
        self.replay_bar.compact = self.viewport().width() < 560
        self.replay_bar.show_state(replay.is_playing(), replay.position(), replay.length(),
                                   unit)
        self.replay_bar.play.setEnabled(replay.is_playing()
                                        or self.play_action.isEnabled())
        self.replay_bar.step.setEnabled(self.step_action.isEnabled())
        # nothing to replay (training runs, no backward yet): out of the way, and not
        # repainted with every frame of the graph under it
        playable = replay.is_loaded() or self.play_action.isEnabled()
        self.replay_bar.setVisible(self._replay_bar_wanted and not empty and playable)
        port = self.viewport().geometry()
        self.legend.move(port.left() + 8, port.top() + 8)
        # bottom right: a network's last columns (the output, the loss) are short, and an
        # operation graph's loss end sits in the middle of its height
        self.replay_bar.move(port.right() - self.replay_bar.width() - 8,
                             port.bottom() - self.replay_bar.height() - 6)
        # a corner's worth of the window, never most of a small one
        self.minimap.resize(max(60, min(180, int(port.width() * 0.28))),
                            max(40, min(110, int(port.height() * 0.3))))
        self.minimap.move(port.right() - self.minimap.width() - 8, port.top() + 8)
        label = self._placeholder_label
        label.setFixedWidth(max(120, min(port.width() - 60, 520)))
        label.adjustSize()
        label.move(port.center().x() - label.width() // 2,
                   port.center().y() - label.height() // 2)

    def _sync_minimap(self) -> None:
        """Show the overview while part of the drawing is out of the window."""
        ops_scene = self.operations
        if self._level == "operation":
            drawing = ops_scene.drawing_rect()
        else:
            drawing = self.network.drawing_rect()
        seen = self.mapToScene(self.viewport().rect()).boundingRect()
        wanted = not drawing.isEmpty() and not seen.contains(drawing.adjusted(4, 4, -4, -4))
        if wanted != self.minimap.isVisible():
            self.minimap.setVisible(wanted)
        if not wanted:
            return
        if self._level == "network":
            key: tuple = ("network", self.network.structure(), self._style.scale)
            if key != self._minimap_key:
                self._minimap_key = key
                self.minimap.set_drawing(drawing, self.network.unit_boxes())
            self.minimap.set_view(seen)
            return
        key = (id(ops_scene.shown), ops_scene.numbers.generation, self.replay.position(),
               self._style.scale)
        # Its colours follow training at most a few times a second: regrouping 1,663
        # boxes by colour every step cost a readable-zoom refresh of the demo graph a
        # third of its time (measured: 53 ms against 33 without the mini-map).
        now = time.perf_counter()
        structure = key[0] != (self._minimap_key or (None,))[0]
        if key != self._minimap_key and (structure or now - self._minimap_time > 0.3
                                         or self.replay.is_loaded()):
            self._minimap_key = key
            self._minimap_time = now
            self.minimap.set_drawing(drawing, ops_scene.colour_groups())
        self.minimap.set_view(seen)

    def _on_minimap_moved(self, point: QPointF) -> None:
        self._auto_fit[self._level] = False  # the user framed it: keep their frame
        self.centerOn(point)

    def set_replay_bar_visible(self, visible: bool) -> None:
        """The Play/Step/speed bar at the bottom (on by default)."""
        self._replay_bar_wanted = bool(visible)
        self._update_overlays()

    def replay_counter_text(self) -> str:
        """What the replay bar's counter says ("backward: 3 of 30 steps")."""
        self._update_overlays()
        return self.replay_bar.counter_text()

    def legend_texts(self) -> list[str]:
        """The lines of the key as shown (folded: its one line)."""
        self._update_overlays()
        return self.legend.lines()

    def _full_legend_lines(self) -> list[Line]:
        ops_scene = self.operations
        net = self.network.network
        return legend_lines(
            self._level, self.network.show_grads, self.sample_label(),
            net is not None and net.maps is not None, net is not None and net.units is not None,
            ops_scene.shown, ops_scene.graph, ops_scene.expanded if self.is_collapsed() else None,
            ops_scene.has_path())

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
            self._fitted["operation"] = False
            if self._level == "operation":
                self._reframe()
        self._emit_details()
        self._update_overlays()

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
        # Unchanged details (nothing selected, most steps) are not sent again: while
        # training runs, every signal into Qt waits for the training thread's GIL.
        if text != self._details_sent:
            self._details_sent = text
            self.details_changed.emit(text)

    def _click(self, point: QPointF, double: bool) -> None:
        if self._level == "operation":
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
