"""What floats over the graph view: the key, the replay bar, the mini-map, the placeholder.

Child widgets of the view, kept up to date and placed here. They are given what they
show -- the Qt view they float over, the levels (`Levels`), the backward replay and the
two actions whose state the bar mirrors -- and the view tells them the rest as values
(`placeholder_text`, `sample_label`); the view routes what the widgets ask for (a click
on the key, a drag in the mini-map) to its own verbs.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QGraphicsView, QLabel

from gradbox.views.graph.backward_replay import BackwardReplay
from gradbox.views.graph.legend import GraphLegend, Line, legend_lines
from gradbox.views.graph.levels import Levels
from gradbox.views.graph.minimap import MiniMap
from gradbox.views.graph.replay_bar import ReplayBar

# The key folds itself while, open, it would cover more than this share of the window.
LEGEND_SHARE = 0.12


class GraphOverlays:
    """The key, the replay bar, the mini-map and the placeholder of one graph view."""

    def __init__(self, view: QGraphicsView, levels: Levels, replay: BackwardReplay,
                 play: QAction, step: QAction) -> None:
        self.view = view
        self.levels = levels
        self.replay = replay
        self.play_action, self.step_action = play, step
        self.placeholder_text = ""  # what to say while the level shown is empty
        self.sample_label = ""  # what the key calls the sample shown ("point 17")
        self.legend = GraphLegend(view)
        self.replay_bar = ReplayBar(view)
        self.minimap = MiniMap(view)
        self.minimap.resize(180, 110)
        self.minimap.hide()
        self._minimap_key: tuple | None = None  # what its picture shows
        self._minimap_time = 0.0  # when its colours were last brought up to date
        self.placeholder = QLabel(view)
        self.placeholder.setWordWrap(True)
        self.placeholder.setAccessibleName("Graph placeholder")
        self.placeholder.setToolTip("Why the graph is empty, and what to do")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setStyleSheet(
            "background: white; border: 1px solid #cccccc; border-radius: 6px; "
            "padding: 10px 14px; color: #333333;")
        self.placeholder.hide()
        self.legend_wanted = True
        self.folded = False
        self.auto_fold = True  # folds itself in a small window until the user decides
        self.replay_bar_wanted = True

    # --- the key -----------------------------------------------------------------------
    def full_legend_lines(self) -> list[Line]:
        levels = self.levels
        ops_scene = levels.operations
        net = levels.network.network
        return legend_lines(
            levels.shown, levels.network.show_grads, self.sample_label,
            net is not None and net.maps is not None, net is not None and net.units is not None,
            ops_scene.shown, ops_scene.graph,
            ops_scene.expanded if ops_scene.is_collapsed() else None, ops_scene.has_path())

    def fold_if_crowded(self) -> None:
        """Until the user decides, fold the key when open it would cover more than
        LEGEND_SHARE of the window (a small window, or teacher mode's big text)."""
        if not self.auto_fold or not self.legend_wanted:
            return
        self.legend.set_lines(self.full_legend_lines())
        self.legend.set_folded(False)
        box = self.legend.size()
        port = self.view.viewport().rect()
        self.folded = box.width() * box.height() > LEGEND_SHARE * port.width() * port.height()
        self.update()

    def may_fold_for_room(self) -> bool:
        """Whether the key is open by itself (not the user's choice): it may fold."""
        return self.legend_wanted and self.auto_fold and not self.folded

    def legend_rect(self) -> QRectF:
        """The key's box in the viewport's pixels (empty when hidden)."""
        if not self.legend_wanted:
            return QRectF()
        self.update()
        return self.legend.rect_in(self.view.viewport())

    def bottom_room(self) -> float:
        """Pixels the replay bar takes at the bottom of the window."""
        bar = self.replay_bar
        return bar.height() + 8.0 if bar.isVisibleTo(self.view) else 0.0

    # --- placing and updating ------------------------------------------------------------
    def update(self) -> None:
        """Bring the key, the replay bar and the placeholder up to date, and place them."""
        view = self.view
        empty = self.levels.is_empty()
        text = self.placeholder_text
        label = self.placeholder
        if label.text() != text:
            label.setText(text)
        label.setVisible(bool(text) and empty)
        self.legend.set_lines(self.full_legend_lines())
        self.legend.set_folded(self.folded)
        self.legend.setVisible(self.legend_wanted and not empty)
        replay, bar = self.replay, self.replay_bar
        unit = "units" if self.levels.shown == "network" else "steps"
        bar.compact = view.viewport().width() < 560
        bar.show_state(replay.is_playing(), replay.position(), replay.length(), unit)
        bar.play.setEnabled(replay.is_playing() or self.play_action.isEnabled())
        bar.step.setEnabled(self.step_action.isEnabled())
        # nothing to replay (training runs, no backward yet): out of the way, and not
        # repainted with every frame of the graph under it
        playable = replay.is_loaded() or self.play_action.isEnabled()
        bar.setVisible(self.replay_bar_wanted and not empty and playable)
        port = view.viewport().geometry()
        self.legend.move(port.left() + 8, port.top() + 8)
        # bottom right: a network's last columns (the output, the loss) are short, and an
        # operation graph's loss end sits in the middle of its height
        bar.move(port.right() - bar.width() - 8, port.bottom() - bar.height() - 6)
        # a corner's worth of the window, never most of a small one
        self.minimap.resize(max(60, min(180, int(port.width() * 0.28))),
                            max(40, min(110, int(port.height() * 0.3))))
        self.minimap.move(port.right() - self.minimap.width() - 8, port.top() + 8)
        label.setFixedWidth(max(120, min(port.width() - 60, 520)))
        label.adjustSize()
        label.move(port.center().x() - label.width() // 2,
                   port.center().y() - label.height() // 2)

    def sync_minimap(self) -> None:
        """Show the overview while part of the drawing is out of the window."""
        view = self.view
        ops_scene, network = self.levels.operations, self.levels.network
        level = self.levels.shown
        drawing = ops_scene.drawing_rect() if level == "operation" else network.drawing_rect()
        seen = view.mapToScene(view.viewport().rect()).boundingRect()
        wanted = not drawing.isEmpty() and not seen.contains(drawing.adjusted(4, 4, -4, -4))
        if wanted != self.minimap.isVisible():
            self.minimap.setVisible(wanted)
        if not wanted:
            return
        if level == "network":
            key: tuple = ("network", network.structure(), self.levels.font_scale())
            if key != self._minimap_key:
                self._minimap_key = key
                self.minimap.set_drawing(drawing, network.unit_boxes())
            self.minimap.set_view(seen)
            return
        key = (id(ops_scene.shown), ops_scene.numbers.generation, self.replay.position(),
               self.levels.font_scale())
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
