"""The "Computation graph" tab: the live `GraphView` of the training session.

A thin widget around the view: a toolbar made of the view's own actions, a caption that
says which phase of which step the numbers come from, a note when the selected point is
not in the graph, and a details pane. All drawing is the view's; what a graph *is* comes
from `gradbox.graph`; which numbers exist comes from the controller's snapshots.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Slot
from PySide6.QtGui import QAction, QActionGroup, QFont, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QLayout,
    QLayoutItem,
    QMenu,
    QPlainTextEdit,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gradbox.autograd.phases import Phase
from gradbox.graph import network_level
from gradbox.port.frame_pacer import Rate
from gradbox.port.protocol import SessionPort
from gradbox.training.snapshots import Snapshot
from gradbox.views.graph.view import GraphView
from gradbox.views.plots.heatmap import PADDING
from gradbox.views.window.errors import ErrorReporter

# The network level draws every unit and weight: 17,025 parameters (128x128) took ~100
# ms to build and paint, 66,817 (256x256) 0.7 s, a 1000x1000 network 5.4 s and ~700 MB
# of the window -- for a picture of solid colour. Past this, it says so instead.
MAX_DRAWN_PARAMETERS = 20_000


def too_big_to_draw(parameters: int) -> str:
    return (f"{parameters:,} parameters are too many to draw one by one (the network "
            f"level draws up to {MAX_DRAWN_PARAMETERS:,}).\nParameters & gradients lists "
            "every one; the Layers tab sums them up layer by layer.")


NO_GRAPH_HINT = ("No graph yet: press Step or Sub-step to build it.\n"
                 "The graph of the last forward pass appears here, with every value "
                 "and gradient.")
# While training runs, the graph is refreshed by the window's FramePacer at its TEN_HZ
# tier: at most 10 times a second, in a turn of its own after a frame, and after a
# refresh that (with its repaint) took t, not before 3 t: the boundary, loss curve and
# parameters want their share of the frames too (gradbox.port.frame_pacer).
MAPS_EVERY_S = 0.5


def phase_caption(snapshot: Snapshot, running: bool = False) -> str:
    """Which phase the graph's numbers come from, in words a first-time user can follow."""
    if snapshot.graph is None and snapshot.step > 0:
        # (a small network's graph is traced again after a rewind: see Trainer)
        return (f"No graph of step {snapshot.step} is kept: this network is too big to "
                "trace a step again. The next Sub-step traces the next step's forward pass.")
    if snapshot.graph is None:
        return "No graph yet: press Step or Sub-step to build one."
    if running:
        return ("Training: the graph shows a recent step's numbers (values from its "
                "forward pass, gradients from its backward pass). Pause to look closer.")
    current = snapshot.step + 1  # the step being taken, when it is half done
    phase = snapshot.phase  # the phase the next Sub-step will run
    if phase == Phase.ZERO_GRAD:
        return (f"After forward of step {current}: values only, gradients not yet "
                "computed (the weights still hold the last step's).")
    if phase == Phase.BACKWARD:
        if snapshot.forget_zero_grad:
            return (f"After zero_grad of step {current} — skipped, Forget zero_grad is "
                    "on: the weights keep the last step's gradients and backward will add "
                    "to them.")
        return (f"After zero_grad of step {current}: every gradient is 0, ready for "
                "backward.")
    if phase == Phase.UPDATE:
        return (f"After backward of step {current}: every gradient computed. Press Play "
                "backward to watch them arrive node by node.")
    return (f"Step {snapshot.step} done: values from its forward pass, gradients from its "
            "backward pass (the update has since moved the weights).")


def graph_is_current(snapshot: Snapshot) -> bool:
    """Whether the graph's parameter gradients are the snapshot's: false for a graph
    left over from an earlier step (captured only on some steps, or before a pause).

    Between any two phases of a step the parameters' gradients in the graph and in the
    trainer are the same numbers, so a mismatch can only mean another step's graph.
    """
    graph = snapshot.graph
    if graph is None:
        return False
    ids = [graph.find_parameter(name) for name in snapshot.param_names]
    if any(i is None for i in ids):
        return False
    grads = np.fromiter((float(graph.grad(i)) for i in ids), np.float64, len(ids))
    return bool(np.allclose(grads, snapshot.grads, rtol=1e-9, atol=1e-12))


def data_extent(points: np.ndarray) -> tuple[float, float, float, float] | None:
    """The points' bounds with the decision boundary's margin, for the units' maps."""
    if len(points) == 0:
        return None
    lo, hi = points.min(axis=0), points.max(axis=0)
    span = np.maximum(hi - lo, 1.0)
    lo, hi = lo - PADDING * span, hi + PADDING * span
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def sample_choice(snapshot: Snapshot, selected: int) -> tuple[int, str | None, str]:
    """(position in the graph's arrays, what to call it, a note or "") for a selection.

    A test point, or a point outside this step's mini-batch, has no numbers in the
    graph: the nearest point that has stands in for it, and the note says so.
    """
    batch = snapshot.graph_batch
    if snapshot.graph is None or batch is None or len(batch) == 0:
        return 0, None, ""
    position = snapshot.graph_position(selected)
    if position >= 0:
        return position, f"point {selected}", ""
    points = snapshot.points
    if 0 <= selected < len(points):
        distance = np.linalg.norm(points[batch] - points[selected], axis=1)
        position = int(np.argmin(distance))
        why = ("is a test point" if snapshot.is_test[selected]
               else "is not in this step's batch")
        note = (f"Point {selected} {why}: showing point {int(batch[position])}, the nearest "
                "point the graph has numbers for.")
    else:
        position = 0
        note = (f"No point selected: showing point {int(batch[0])}. Click a point in the "
                "decision boundary to choose another.")
    return position, f"point {int(batch[position])}", note


class _FlowLayout(QLayout):
    """Widgets left to right, wrapping onto the next row when the width runs out."""

    GAP = 10  # extra room before a new group of buttons

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gaps: list[bool] = []
        self.setContentsMargins(0, 0, 0, 0)
        self.setSpacing(2)

    def add(self, widget: QWidget, gap: bool = False) -> None:
        self._gaps.append(gap)
        self.addWidget(widget)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802 (Qt's name)
        self._items.append(item)
        if len(self._gaps) < len(self._items):
            self._gaps.append(False)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        if not 0 <= index < len(self._items):
            return None
        del self._gaps[index]
        return self._items.pop(index)

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        return size

    def _arrange(self, rect: QRect, move: bool) -> int:
        x, y, row = rect.x(), rect.y(), 0
        for item, gap in zip(self._items, self._gaps):
            hint = item.sizeHint()
            step = self.spacing() + (self.GAP if gap else 0)
            if x > rect.x() and x + step + hint.width() > rect.right() + 1:
                x, y, row = rect.x(), y + row + self.spacing(), 0
            elif x > rect.x():
                x += step
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width()
            row = max(row, hint.height())
        return y + row - rect.y()


class GraphPanel(QWidget):
    """Toolbar, caption, `GraphView` and details pane, fed by a `SessionPort`."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None,
                 reporter: ErrorReporter | None = None) -> None:
        """`reporter`: where an export that failed is said (the window's; a panel on its
        own shows it over itself)."""
        super().__init__(parent)
        self.controller = controller
        self.reporter = reporter or ErrorReporter(self)
        self.view = GraphView()
        self.view.setAccessibleName("Computation graph")
        self.view.set_placeholder_text(NO_GRAPH_HINT)
        self.toolbar = self._make_toolbar()

        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.caption.setAccessibleName("Graph phase")
        self.caption.setToolTip("Which phase of which training step the graph's numbers "
                                "come from")
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setAccessibleName("Selected point note")
        self.note.setToolTip("The graph holds numbers only for the points of this step's "
                             "training batch")
        self.note.setStyleSheet("background: #fff4d6; border: 1px solid #e6c36a; "
                                "padding: 3px 6px;")
        self.note.hide()
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setAccessibleName("Node details")
        self.details.setToolTip("The selected node or weight: its operation, local "
                                "derivative, inputs, value, gradient, and how its "
                                "gradient adds up")
        self.details.setPlaceholderText(
            "Click a node, weight or neuron for its details: op, local derivative, inputs, "
            "value, gradient, and for a node used more than once each use's share.")

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setAccessibleName("Graph and details")
        splitter.addWidget(self.view)
        splitter.addWidget(self.details)
        splitter.setStretchFactor(0, 4)
        splitter.setStretchFactor(1, 1)
        # the graph first: in a small window the details keep two lines (drag for more)
        self.details.setMinimumHeight(self.details.fontMetrics().lineSpacing() * 2 + 12)
        splitter.setSizes([600, 60])
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.caption)
        layout.addWidget(self.note)
        layout.addWidget(splitter, 1)

        # Refresh pacing: the latest snapshot waits here until it is its turn.
        self._pending: Snapshot | None = None
        self._shown: Snapshot | None = None
        self._current: tuple[Snapshot, bool] | None = None  # (a snapshot, its graph is current)
        # the snapshot and sample the network level was drawn from
        self._net_shown: tuple[Snapshot, int] | None = None
        self._maps: tuple[np.ndarray, ...] | None = None
        self._maps_time = 0.0
        self._maps_sizes: tuple[int, ...] = ()
        self._maps_extent: tuple[float, float, float, float] | None = None  # the maps' plane
        self.refresh_costs: deque[float] = deque(maxlen=200)  # seconds, for measuring

        self.view.details_changed.connect(self._show_details)
        self.view.parameter_selected.connect(controller.select_parameter)
        self.view.level_changed.connect(self._on_level_changed)
        self.view.animation_step.connect(lambda *_: self._update_actions())
        self.view.animation_finished.connect(self._update_actions)
        self.view.animation_stopped.connect(self._update_actions)
        # a finished replay stays on screen until stopped, and stopping it says nothing
        self.view.stop_action.triggered.connect(self._update_actions)
        # the play button turns into Stop as soon as the replay runs, and back when paused
        self.view.play_action.triggered.connect(self._update_actions)
        self.view.step_action.triggered.connect(self._update_actions)
        controller.parameter_selected.connect(self._on_parameter_selected)
        controller.sample_selected.connect(self._on_sample_selected)
        controller.pacer.subscribe(self._on_snapshot, Rate.TEN_HZ)
        controller.running_changed.connect(self._on_running_changed)
        # Drawn when first shown (showEvent), not here: a 1000x1000 network's level took
        # 5 s and 700 MB of the window's start, for a tab nobody had opened.
        self._pending = controller.snapshot

    # --- construction --------------------------------------------------------------------
    def _make_toolbar(self) -> QWidget:
        """The view's actions as buttons that wrap onto a second row when narrow.

        Not a QToolBar: in the tab's usual width, and in teacher mode's bigger text,
        a toolbar hid its last buttons (Play backward, Export) behind a chevron.
        """
        bar = QWidget()
        bar.setAccessibleName("Graph tools")
        layout = _FlowLayout(bar)
        view = self.view
        self.buttons: list[QToolButton] = []

        def button(action: QAction | None = None, gap: bool = False) -> QToolButton:
            tool = QToolButton()
            tool.setAutoRaise(True)
            if action is not None:
                tool.setDefaultAction(action)
                tool.setAccessibleName(action.text())
            layout.add(tool, gap)
            self.buttons.append(tool)
            return tool

        # Two named levels rather than the view's one "Operations" switch: a new user
        # sees where they are and where else they can go.
        self.network_action = QAction("Network", self, checkable=True)
        self.network_action.setToolTip("Neurons and weights, one line per weight (L)")
        self.operations_action = QAction("Operations", self, checkable=True)
        self.operations_action.setToolTip("Every operation the engine recorded, with its "
                                          "value and gradient (L)")
        levels = QActionGroup(self)
        for action, level in ((self.network_action, "network"),
                              (self.operations_action, "operation")):
            levels.addAction(action)
            action.triggered.connect(lambda _checked=False, lv=level: view.set_level(lv))
            button(action)
        self.network_action.setChecked(True)
        view.gradients_action.setToolTip("At network level, draw each weight's gradient "
                                         "instead of the weight (G)")
        view.fit_action.setToolTip("Zoom to show the whole graph (F)")
        view.play_action.setToolTip("Replay backward: nodes light up in the order they "
                                    "receive their gradient, each numbered")
        view.step_action.setToolTip("Replay backward one node at a time (B)")
        view.stop_action.setToolTip("Stop the replay; every gradient shows again (Esc)")
        button(view.gradients_action, gap=True)
        button(view.fit_action)
        # One button plays and, while the replay runs, stops it: Play and Stop side by
        # side took room for nothing (only one of them can do anything at a time).
        self.play_button = button(view.play_action, gap=True)
        self.play_button.setAccessibleName("Play or stop the backward replay")
        button(view.step_action)
        self.export_menu = QMenu("Export", self)
        self.export_menu.setToolTipsVisible(True)
        for text, tip, slot in (
                ("PNG image…", "The whole current level as a PNG image", self._export_png),
                ("SVG image…", "The whole current level as an SVG drawing", self._export_svg),
                ("Graphviz DOT…", "The operation graph as Graphviz DOT text, with the "
                 "selected point's values and gradients", self._export_dot)):
            action = self.export_menu.addAction(text)
            action.setToolTip(tip)
            action.triggered.connect(slot)
        self.export_button = button(gap=True)
        self.export_button.setText("Export")
        self.export_button.setMenu(self.export_menu)
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_button.setToolTip("Save the graph as PNG, SVG or Graphviz DOT")
        self.export_button.setAccessibleName("Export graph")
        return bar

    # --- the session -----------------------------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        # Tracing a graph costs about as much as a step: only while someone looks.
        self.controller.set_graph_wanted(True)
        if self._pending is not None:
            self._refresh()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802
        super().hideEvent(event)
        self.controller.set_graph_wanted(False)
        self.view.stop_animation()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            # Teacher mode scales the window's font; the drawn labels follow.
            base = QApplication.font().pointSizeF()
            if base > 0 and self.font().pointSizeF() > 0:
                self.view.set_font_scale(self.font().pointSizeF() / base)

    def _on_snapshot(self, snapshot: Snapshot) -> None:
        self._pending = snapshot
        if self.isVisible():
            self._refresh()  # (paced by the FramePacer; a hidden panel catches up when shown)

    @Slot(bool)
    def _on_running_changed(self, running: bool) -> None:
        # The pacer hands over the run's last snapshot at its end; the caption must stop
        # saying "Training" even when that snapshot was shown already.
        self._update_caption()
        self._update_actions()

    def _refresh(self) -> None:
        """Show the latest snapshot; only the visible level is brought up to date."""
        snapshot = self._pending
        if snapshot is None:
            return
        start = time.perf_counter()
        self._pending = None
        position, label, note = sample_choice(snapshot, self.controller.selected_sample)
        graph = snapshot.graph
        if graph is None:
            if self.view.graph() is not None:
                self.view.clear_graph()  # a reset or a new model: its old graph is gone
        elif graph is not self.view.graph() or position != self.view.sample():
            # A command that changed nothing (a parameter's history, say) re-sends the
            # same graph: setting it again would stop a replay for nothing.
            self.view.set_graph(graph, position, label)
        self._shown = snapshot
        if self.view.level() == "network":
            self._update_network()
        self._show_note(note)
        self._update_caption()
        self._update_actions()
        self.refresh_costs.append(time.perf_counter() - start)

    def _update_network(self) -> None:
        snapshot = self._shown
        if snapshot is None:
            return
        if len(snapshot.params) > MAX_DRAWN_PARAMETERS:
            self.view.clear_network()
            self._show_placeholder(too_big_to_draw(len(snapshot.params)))
            self._net_shown = None
            return
        self._show_placeholder(NO_GRAPH_HINT)
        position = self.view.sample()
        drawn = self._net_shown
        if drawn is not None and drawn[0] is snapshot and drawn[1] == position:
            return
        # While training runs the units' maps (a forward pass over a grid, then colours:
        # half a network refresh) are remade at most every MAPS_EVERY_S; in between the
        # view keeps the last ones. They change slowly; the numbers beside them do not.
        now = time.perf_counter()
        fresh_maps = (not self.controller.running or self._maps is None
                      or tuple(snapshot.layer_sizes) != self._maps_sizes
                      or now - self._maps_time >= MAPS_EVERY_S)
        extent = data_extent(np.asarray(snapshot.points)) if fresh_maps else None
        net = network_level(snapshot, sample=position, extent=extent)
        if fresh_maps:
            self._maps, self._maps_time, self._maps_sizes = net.maps, now, net.layer_sizes
            self._maps_extent = extent
        else:
            net = replace(net, maps=self._maps)
        self.view.set_network(net)
        self.view.set_sample_marker(self._sample_place(snapshot, position))
        self._net_shown = (snapshot, position)

    def _sample_place(self, snapshot: Snapshot, position: int) -> tuple[float, float] | None:
        """Where the point whose numbers are shown sits in the units' maps, as fractions
        of their width and height from the top left (None: no such point, or no maps)."""
        extent, batch = self._maps_extent, snapshot.graph_batch
        if extent is None or self._maps is None or snapshot.graph is None or batch is None \
                or not 0 <= position < len(batch):
            return None
        x, y = np.asarray(snapshot.points)[int(batch[position])]
        xmin, xmax, ymin, ymax = extent
        return float((x - xmin) / (xmax - xmin)), float((ymax - y) / (ymax - ymin))

    def _graph_is_current(self) -> bool:
        """`graph_is_current` of the snapshot shown, worked out once for it (the caption
        and the actions both ask, at every refresh)."""
        snapshot = self._shown
        if snapshot is None:
            return False
        if self._current is None or self._current[0] is not snapshot:
            self._current = (snapshot, graph_is_current(snapshot))
        return self._current[1]

    def _update_caption(self) -> None:
        snapshot = self._shown
        if snapshot is None:
            return
        text = phase_caption(snapshot, self.controller.running)
        if snapshot.graph is not None and not self.controller.running \
                and not self._graph_is_current():
            text = ("This graph is from an earlier step than the weights now; the next "
                    "Step or Sub-step brings it up to date.")
        if snapshot.graph is not None and not self.note.text():
            text += (f" Showing {self.view.sample_label()}; click a point in Decision "
                     "boundary for another.")
        self.caption.setText(text)

    def _show_note(self, note: str) -> None:
        self.note.setText(note)
        self.note.setVisible(bool(note))

    def _update_actions(self) -> None:
        view = self.view
        snapshot = self._shown
        has_graph = view.graph() is not None
        current = snapshot is not None and self._graph_is_current()
        backward_done = current and snapshot.phase in (Phase.UPDATE, Phase.FORWARD)
        can_replay = has_graph and not self.controller.running and backward_done
        view.play_action.setEnabled(can_replay)
        view.step_action.setEnabled(can_replay)
        view.stop_action.setEnabled(view.animation_length() > 0)
        running = view.is_animating()
        if (self.play_button.defaultAction() is view.stop_action) != running:
            # the old action must go: a tool button with two actions grows a menu arrow
            self.play_button.removeAction(self.play_button.defaultAction())
            self.play_button.setDefaultAction(view.stop_action if running else view.play_action)
        self.export_button.setEnabled(has_graph or view.level() == "network")
        if self.controller.running:
            why = "Pause training first: the graph changes with every step."
        elif not has_graph:
            why = "Press Step or Sub-step to build the graph first."
        elif not current:
            why = "This graph is from an earlier step: take a Step to bring it up to date."
        elif not backward_done:
            why = "Gradients arrive in backward: Sub-step until backward has run."
        else:
            why = ""
        base = "Replay backward: nodes light up in the order they receive their gradient"
        view.play_action.setToolTip(f"{base}. {why}" if why else base + ", each numbered")
        # Right after the backward phase, the replay is the thing to do next: say so.
        offer = can_replay and snapshot is not None and snapshot.phase == Phase.UPDATE
        # Bold by a font that sets only the weight, not by a style sheet: a widget with
        # a style sheet stops following the window's font (teacher mode's bigger text).
        bold = QFont()
        bold.setBold(offer and not running)
        self.play_button.setFont(bold)

    # --- selection ---------------------------------------------------------------------------
    @Slot(str)
    def _on_parameter_selected(self, name: str) -> None:
        if name:
            self.view.select_parameter(name)

    @Slot(int)
    def _on_sample_selected(self, index: int) -> None:
        snapshot = self._shown
        if snapshot is None:
            return
        position, label, note = sample_choice(snapshot, index)
        if snapshot.graph is not None:
            self.view.set_sample(position, label)
        if self.view.level() == "network":
            self._update_network()
        self._show_note(note)
        self._update_caption()

    @Slot(str)
    def _show_details(self, text: str) -> None:
        """The selection's details, every line of them where the panel has the room: the
        pane keeps two lines for the graph's sake, and lesson 8's 'Click x₁: backward adds
        the shares of both uses' pointed at lines it hid (only the node's number and
        order showed at 1024 x 700 and 1366 x 768; its ten lines end with 'sum = … =
        grad'). It grows to at most half the panel, and never below what the learner
        dragged it to."""
        self.details.setPlainText(text)
        if not text:
            return
        lines = self.details.document().documentLayout().documentSize().height()
        margin = 2 * (self.details.frameWidth() + self.details.document().documentMargin())
        # (a line to spare: with the last line's descent cut by a pixel or two, the pane
        # scrolled by a line and hid it)
        need = int((lines + 1) * self.details.fontMetrics().lineSpacing() + margin)
        sizes = self.splitter.sizes()
        total = sum(sizes)
        want = min(need, total // 2)
        if total > 0 and sizes[1] < want:
            self.splitter.setSizes([total - want, want])

    @Slot(str)
    def _on_level_changed(self, level: str) -> None:
        self.network_action.setChecked(level == "network")
        self.operations_action.setChecked(level == "operation")
        self.view.gradients_action.setEnabled(level == "network")
        if level == "network":
            self._update_network()  # skipped while the operations were on screen
        else:
            self._show_placeholder(NO_GRAPH_HINT)
        self._update_actions()

    def _show_placeholder(self, text: str) -> None:
        if self.view.placeholder_text() != text:
            self.view.set_placeholder_text(text)

    # --- export ------------------------------------------------------------------------------
    def _catch_up(self) -> None:
        """A hidden panel does not refresh; an export must still show the latest graph."""
        if self._pending is not None:
            self._refresh()

    def export_png(self, path: str | Path) -> None:
        self._catch_up()
        self.view.export_png(path)

    def export_svg(self, path: str | Path) -> None:
        self._catch_up()
        self.view.export_svg(path)

    def export_dot(self, path: str | Path) -> None:
        self._catch_up()
        self.view.export_dot(path)

    def _export_png(self) -> None:
        self._export_dialog("PNG image (*.png)", ".png", self.export_png)

    def _export_svg(self) -> None:
        self._export_dialog("SVG image (*.svg)", ".svg", self.export_svg)

    def _export_dot(self) -> None:
        self._export_dialog("Graphviz DOT (*.dot *.gv)", ".dot", self.export_dot)

    def _export_dialog(self, filter_text: str, suffix: str, export: object) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export graph", str(Path.home()),
                                              filter_text)
        if not path:
            return
        if not Path(path).suffix:
            path += suffix
        try:
            export(path)  # type: ignore[operator]
        except (OSError, ValueError) as error:  # said until read; the panel stays usable
            self.reporter.show("Could not export the graph", str(error))
            return
        self.controller.message.emit(f"Saved {Path(path).name}")
