"""The graph panel in a live session: snapshots in, graph, caption, selection, replay, export."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QLabel, QToolButton, QWidget

from gradbox import graph
from gradbox.autograd.nn import numpy_layer_outputs, unflatten
from gradbox.formatting import fmt
from gradbox.port.in_process import InProcessPort
from gradbox.port.protocol import SessionPort
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.graph.items import OpNode
from gradbox.views.graph.panel import (
    GraphPanel,
    data_extent,
    graph_is_current,
    phase_caption,
    sample_choice,
)

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


@pytest.fixture
def panel(qtbot, controller: SessionPort) -> GraphPanel:  # type: ignore[no-untyped-def]
    widget = GraphPanel(controller)
    widget.resize(1000, 750)
    qtbot.addWidget(widget)
    # Shown, the panel asks the session to trace, and the worker answers with a
    # snapshot: wait for it, so that a test's own command gets the next one.
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        widget.show()
    qtbot.waitExposed(widget)
    return widget


def step(qtbot, controller: SessionPort) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        controller.step()


def substep(qtbot, controller: SessionPort) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        controller.substep()


def select(qtbot, controller: SessionPort, index: int) -> None:  # type: ignore[no-untyped-def]
    """Select a point: a view's choice, kept in the controller (the worker never hears of
    it, so no snapshot follows)."""
    controller.select_sample(index)


def op_items(panel: GraphPanel) -> dict[int, OpNode]:
    return {item.index: item for item in panel.view.scene().items()
            if isinstance(item, OpNode)}


def train_point(controller: SessionPort, k: int = 0) -> int:
    """The k-th training point (every training point is in the default full batch)."""
    return int(np.flatnonzero(~controller.snapshot.is_test)[k])


# --- before any step ----------------------------------------------------------------------
def test_before_any_step_the_panel_says_how_to_get_a_graph(panel: GraphPanel) -> None:
    assert panel.view.graph() is None
    assert "press Step or Sub-step" in panel.caption.text()
    # network level: the network is drawn from the weights, no graph needed
    assert panel.view.level() == "network" and not panel.view.is_empty()
    panel.view.set_level("operation")
    assert panel.view.is_empty()
    assert "press Step or Sub-step" in panel.view.placeholder_text()
    assert not panel.view.play_action.isEnabled()


# --- values of the selected sample --------------------------------------------------------
def test_a_step_shows_the_graph_with_the_selected_points_numbers(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    chosen = train_point(controller, 5)
    select(qtbot, controller, chosen)
    step(qtbot, controller)
    snapshot = controller.snapshot
    g = snapshot.graph
    assert g is not None and panel.view.graph() is g
    position = snapshot.graph_position(chosen)
    assert position >= 0 and panel.view.sample() == position
    assert panel.view.sample_label() == f"point {chosen}"
    panel.view.show_all_operations()  # every operation, not the overview
    panel.view.set_level("operation")
    items = op_items(panel)
    assert len(items) == len(g)
    values, grads = g.values(position), g.grads(position)
    for i in range(len(g)):
        # the engine's own arrays, at the selected point's place in the batch
        data = g.data(i)
        expected = float(data[position]) if isinstance(data, np.ndarray) else float(data)
        assert values[i] == expected
        assert items[i].value_text == f"data {fmt(values[i])}"
        assert items[i].grad_text == f"grad {fmt(grads[i])}"
    # the network level shows the same point's unit values
    panel.view.set_level("network")
    net = panel.view.network.network
    assert net is not None and net.sample == position and net.units is not None
    assert net.maps is not None  # each unit's map over the data's extent


def test_choosing_another_point_updates_the_numbers(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    step(qtbot, controller)
    panel.view.show_all_operations()  # every operation, not the overview
    panel.view.set_level("operation")
    g = controller.snapshot.graph
    other = train_point(controller, 9)
    select(qtbot, controller, other)
    position = controller.snapshot.graph_position(other)
    assert panel.view.sample() == position
    items = op_items(panel)
    values = g.values(position)
    assert all(items[i].value_text == f"data {fmt(values[i])}" for i in range(len(g)))
    assert not panel.note.isVisibleTo(panel)


def test_a_test_point_shows_its_nearest_training_point_with_a_note(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    step(qtbot, controller)
    snapshot = controller.snapshot
    test_point = int(np.flatnonzero(snapshot.is_test)[0])
    select(qtbot, controller, test_point)
    assert panel.note.isVisibleTo(panel)
    assert f"Point {test_point} is a test point" in panel.note.text()
    batch = snapshot.graph_batch
    distances = np.linalg.norm(snapshot.points[batch] - snapshot.points[test_point], axis=1)
    nearest = int(np.argmin(distances))
    assert panel.view.sample() == nearest
    assert f"showing point {int(batch[nearest])}" in panel.note.text()
    # back to a training point: the note goes away
    select(qtbot, controller, train_point(controller, 0))
    assert not panel.note.isVisibleTo(panel)


def test_sample_choice_outside_the_batch_and_without_a_selection() -> None:
    trainer = Trainer(TrainingConfig(batch_size=10))
    trainer.capture_graph = True
    trainer.step()
    snapshot = trainer.snapshot()
    batch = snapshot.graph_batch
    outside = next(i for i in np.flatnonzero(~snapshot.is_test) if i not in batch)
    position, label, note = sample_choice(snapshot, int(outside))
    assert 0 <= position < 10 and label == f"point {int(batch[position])}"
    assert "not in this step's batch" in note
    position, label, note = sample_choice(snapshot, -1)
    assert position == 0 and "No point selected" in note


# --- selection both ways ------------------------------------------------------------------
def test_parameter_selection_follows_the_parameters_panel_both_ways(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views.panels.parameters import ParametersView

    parameters = ParametersView(controller)
    qtbot.addWidget(parameters)
    parameters.show()
    step(qtbot, controller)
    snapshot = controller.snapshot
    g = snapshot.graph
    # graph -> controller -> parameters panel
    name = snapshot.param_names[7]
    node = g.find_parameter(name)
    panel.view.show_all_operations()  # every operation, not the overview
    panel.view.set_level("operation")
    with qtbot.waitSignal(controller.parameter_selected) as selected:
        panel.view.click_scene_point(panel.view.node_scene_pos(node))
    assert selected.args == [name]
    qtbot.waitUntil(lambda: parameters.selected_name() == name)
    assert name in panel.details.toPlainText()
    # parameters panel -> controller -> graph
    other = snapshot.param_names[20]
    row = parameters.proxy.mapFromSource(
        parameters.model.index(snapshot.param_names.index(other), 0))
    with qtbot.waitSignal(controller.parameter_selected) as selected:
        parameters.table.setCurrentIndex(row)
    assert selected.args == [other]
    assert panel.view.selected_node() == g.find_parameter(other)
    assert other in panel.details.toPlainText()


# --- phases -------------------------------------------------------------------------------
def test_sub_steps_say_which_phase_the_numbers_come_from(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    step(qtbot, controller)
    assert "Step 1 done" in panel.caption.text()
    assert panel.view.play_action.isEnabled()
    substep(qtbot, controller)  # forward
    assert controller.snapshot.phase == "zero_grad"
    assert "After forward of step 2" in panel.caption.text()
    assert "gradients not yet computed" in panel.caption.text()
    assert not panel.view.play_action.isEnabled()
    assert "Sub-step until backward" in panel.view.play_action.toolTip()
    substep(qtbot, controller)  # zero_grad
    assert "After zero_grad of step 2" in panel.caption.text()
    g = controller.snapshot.graph
    params = list(g.parameter_nodes.values())
    assert all(g.grads(0)[i] == 0 for i in params)
    assert not panel.view.play_action.isEnabled()
    substep(qtbot, controller)  # backward
    assert controller.snapshot.phase == "update"
    assert "After backward of step 2" in panel.caption.text()
    assert panel.view.play_action.isEnabled()
    assert panel.play_button.font().bold()  # offered: the thing to do next
    substep(qtbot, controller)  # update
    assert "Step 2 done" in panel.caption.text()
    assert not panel.play_button.font().bold()


def test_caption_when_zero_grad_is_skipped() -> None:
    trainer = Trainer(TrainingConfig())
    trainer.capture_graph = True
    trainer.set_forget_zero_grad(True)
    trainer.substep()
    trainer.substep()
    assert "skipped" in phase_caption(trainer.snapshot())
    assert "No graph yet" in phase_caption(Trainer(TrainingConfig()).snapshot())


def test_a_graph_from_an_earlier_step_is_called_so() -> None:
    trainer = Trainer(TrainingConfig())
    trainer.capture_graph = True
    trainer.step()
    assert graph_is_current(trainer.snapshot())
    trainer.capture_graph = False  # as in a run, where only some steps are traced
    trainer.step()
    snapshot = trainer.snapshot()
    assert snapshot.graph is not None and not graph_is_current(snapshot)


def test_a_stale_graph_is_shown_as_such_and_offers_no_replay(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    trainer = Trainer(TrainingConfig())
    trainer.capture_graph = True
    trainer.step()
    trainer.capture_graph = False  # a run traces only the steps it shows
    trainer.step()
    # as the training process would send it, drawn by the next frame
    controller.pacer.offer(trainer.snapshot())
    controller.pacer.flush_then(lambda: None)
    assert panel.view.graph() is trainer.snapshot().graph
    assert "earlier step" in panel.caption.text()
    assert not panel.view.play_action.isEnabled()
    assert "earlier step" in panel.view.play_action.toolTip()


# --- backward replay ----------------------------------------------------------------------
def test_play_backward_stays_on_its_level(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        substep(qtbot, controller)
    assert controller.snapshot.phase == "update"
    view = panel.view
    assert view.level() == "network"
    visited: list[int] = []
    view.animation_step.connect(lambda node, _place: visited.append(node))
    # network level: the units light up, the loss first, then each layer back to the inputs
    with qtbot.waitSignal(view.animation_finished, timeout=20000):
        view.play_backward(interval_ms=1)
    assert view.level() == "network" and view.replay_level() == "network"
    sizes = controller.snapshot.layer_sizes
    assert len(visited) == sum(sizes) + 1 == view.animation_length()
    units = [view.network.unit_of(k) for k in visited]
    assert [(u.layer, u.index) for u in units[:3]] == [(len(sizes), 0), (len(sizes) - 1, 0),
                                                       (len(sizes) - 2, sizes[-2] - 1)]
    assert [u.layer for u in units] == sorted((u.layer for u in units), reverse=True)
    assert view.replay_counter_text().endswith(f"{len(visited)} of {len(visited)} units")
    assert view.stop_action.isEnabled()  # the lit units stay until stopped
    view.stop_action.trigger()
    assert not view.stop_action.isEnabled()
    # operation level: one box per neuron, the L2 penalty one box: the engine's order
    view.set_level("operation")
    shown = view.shown_graph()
    visited.clear()
    with qtbot.waitSignal(view.animation_finished, timeout=20000):
        view.play_backward(interval_ms=1)
    assert view.level() == "operation"
    assert visited == [shown.original_ids[i] for i in graph.backward_order(shown)]
    assert panel.operations_action.isChecked()


def test_the_play_button_stops_a_running_replay(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    step(qtbot, controller)
    view = panel.view
    assert panel.play_button.defaultAction() is view.play_action
    panel.play_button.click()  # the default pace: it is still running below
    assert view.is_animating() and panel.play_button.defaultAction() is view.stop_action
    assert panel.play_button.actions() == [view.stop_action]  # no menu arrow
    with qtbot.waitSignal(view.animation_stopped):
        panel.play_button.click()
    assert not view.is_animating() and view.animation_length() == 0
    assert panel.play_button.defaultAction() is view.play_action


def test_a_command_that_changes_nothing_does_not_stop_the_replay(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    step(qtbot, controller)
    panel.view.set_level("operation")
    panel.view.step_backward()
    with qtbot.waitSignal(controller.snapshot_changed):
        controller.send(Session.unpin)  # a command that changes nothing shown
    assert panel.view.animation_position() == 1


# --- export -------------------------------------------------------------------------------
def test_export_png_svg_dot(qtbot, tmp_path: Path, controller: SessionPort,  # type: ignore[no-untyped-def]
                            panel: GraphPanel) -> None:
    step(qtbot, controller)
    g = controller.snapshot.graph
    panel.export_png(tmp_path / "net.png")
    assert (tmp_path / "net.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panel.view.set_level("operation")
    panel.export_svg(tmp_path / "ops.svg")
    text = (tmp_path / "ops.svg").read_text(encoding="utf-8")
    assert "<svg" in text and "</svg>" in text
    panel.export_dot(tmp_path / "ops.dot")
    nodes, edges = graph.parse_dot_counts((tmp_path / "ops.dot").read_text(encoding="utf-8"))
    assert (nodes, edges) == (len(g), len(g.edges))


# --- tracing only while visible -----------------------------------------------------------
def test_the_trainer_traces_only_while_the_panel_is_visible(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    assert controller.graph_wanted
    panel.hide()
    assert not controller.graph_wanted
    step(qtbot, controller)
    assert controller.snapshot.graph is None
    assert panel.view.graph() is None  # a hidden panel does no work either
    with qtbot.waitSignal(controller.snapshot_changed):
        panel.show()
    assert controller.graph_wanted
    assert controller.snapshot.graph is not None
    assert panel.view.graph() is controller.snapshot.graph


def test_hidden_tab_in_a_tab_widget_stops_tracing(qtbot, controller: SessionPort) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QTabWidget

    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QWidget(), "other")
    panel = GraphPanel(controller)
    tabs.addTab(panel, "graph")
    tabs.show()
    assert not controller.graph_wanted
    tabs.setCurrentIndex(1)
    assert controller.graph_wanted
    tabs.setCurrentIndex(0)
    assert not controller.graph_wanted


def test_reset_clears_the_old_graph(qtbot, controller: SessionPort,  # type: ignore[no-untyped-def]
                                    panel: GraphPanel) -> None:
    step(qtbot, controller)
    assert panel.view.graph() is not None
    with qtbot.waitSignal(controller.snapshot_changed):
        controller.send(Session.reset)
    assert controller.snapshot.graph is None
    assert panel.view.graph() is None
    assert "press Step or Sub-step" in panel.caption.text()


# --- while running ------------------------------------------------------------------------
def test_running_refreshes_are_paced_and_the_last_snapshot_is_shown(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    panel.view.set_level("operation")
    snapshots: list[object] = []
    controller.snapshot_changed.connect(snapshots.append)
    before = len(panel.refresh_costs)
    with qtbot.waitSignal(controller.running_changed, timeout=30000,
                          check_params_cb=lambda running: not running):
        controller.run(60)
    assert controller.snapshot.step == 60
    # the final snapshot is on screen once the run is over
    qtbot.waitUntil(lambda: panel._pending is None)
    assert panel._shown is controller.snapshot
    assert 0 < len(panel.refresh_costs) - before <= len(snapshots)
    assert "Step 60 done" in panel.caption.text() or "earlier step" in panel.caption.text()


# --- controls -----------------------------------------------------------------------------
def test_every_control_has_a_tooltip_and_an_accessible_name(panel: GraphPanel) -> None:
    controls = [w for w in panel.findChildren(QWidget)
                if isinstance(w, QToolButton | QLabel) and w.isVisibleTo(panel)]
    controls += [panel.view, panel.details, panel.export_button]
    assert len(controls) >= 8
    for widget in controls:
        assert widget.accessibleName(), widget
        tip = widget.toolTip() or (widget.defaultAction().toolTip()
                                   if isinstance(widget, QToolButton) and widget.defaultAction()
                                   else "")
        assert tip or widget is panel.view, widget
    assert len(panel.buttons) == 7
    for button in panel.buttons:
        assert button.accessibleName() and button.toolTip(), button.text()
    assert all(a.toolTip() for a in panel.export_menu.actions())


def test_level_buttons_follow_the_view(panel: GraphPanel) -> None:
    panel.operations_action.trigger()
    assert panel.view.level() == "operation" and not panel.view.gradients_action.isEnabled()
    panel.view.set_level("network")
    assert panel.network_action.isChecked() and panel.view.gradients_action.isEnabled()


def test_a_bigger_window_font_scales_the_graphs_labels(panel: GraphPanel) -> None:
    base = QApplication.font().pointSizeF()
    font = QFont(panel.font())
    font.setPointSizeF(base * 1.5)
    panel.setFont(font)
    assert panel.view.font_scale() == pytest.approx(1.5)


def test_the_offered_play_button_keeps_the_windows_bigger_font(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    for _ in range(3):
        substep(qtbot, controller)  # to just after backward: Play is offered, in bold
    font = QFont(panel.font())
    font.setPointSizeF(QApplication.font().pointSizeF() * 1.5)
    panel.setFont(font)  # what teacher mode does to the window
    assert panel.play_button.font().bold()
    assert panel.play_button.font().pointSizeF() == pytest.approx(font.pointSizeF())


def test_buttons_wrap_onto_a_second_row_in_a_narrow_panel(qtbot, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    panel.resize(330, 600)
    qtbot.waitUntil(lambda: panel.toolbar.width() <= 330)
    rows = {button.geometry().top() for button in panel.buttons}
    assert len(rows) >= 2
    for button in panel.buttons:  # none hidden past the edge
        assert button.isVisible() and button.geometry().right() <= panel.toolbar.width()
    # the bar is as tall as its rows, and the graph starts below it
    assert panel.toolbar.height() > max(b.geometry().bottom() for b in panel.buttons)
    assert panel.view.mapTo(panel, QPoint(0, 0)).y() > panel.toolbar.geometry().bottom()


def test_export_from_a_hidden_panel_shows_the_current_model(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    controller = InProcessPort(Session(Trainer(TrainingConfig(hidden=(6,)))))
    try:
        panel = GraphPanel(controller)
        qtbot.addWidget(panel)
        panel.show()
        with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
            controller.step()
        qtbot.waitUntil(lambda: panel.view.graph() is not None, timeout=5000)
        panel.hide()
        small = TrainingConfig(hidden=(2,))
        with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
            controller.send(Session.new_run, small, "A smaller network")
        controller.set_graph_wanted(True)  # as if the tab were showing again
        controller.step()
        # (the tracing asked for above publishes a snapshot of its own first)
        qtbot.waitUntil(lambda: controller.snapshot.step == 1
                        and controller.snapshot.graph is not None, timeout=5000)
        path = tmp_path / "g.dot"
        panel.export_dot(path)
        nodes, _edges = graph.parse_dot_counts(path.read_text())
        assert controller.snapshot.graph is not None
        assert nodes == len(controller.snapshot.graph)
    finally:
        controller.shutdown()


# --- the selected sample's path -------------------------------------------------------------
def forward_pass(snapshot, point: int) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """numpy's forward pass of one point: [inputs, h1, ..., output], each a vector."""
    x = snapshot.config.inputs(snapshot.points[[point]])
    outputs = numpy_layer_outputs(snapshot.params, snapshot.layer_sizes,
                                  snapshot.config.activation, x)
    return [x[0], *(h[0] for h in outputs)]


def expected_shares(snapshot, layers: list[np.ndarray]) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    """|w × input| over the largest of its layer, per layer, as numpy computes them."""
    weights, _ = unflatten(snapshot.params, snapshot.layer_sizes)
    flows = [np.abs(w * a[None, :]) for w, a in zip(weights, layers)]
    return [f / f.max() for f in flows]


def test_the_selected_points_path_stands_out_and_shows_its_forward_pass(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    first, second = train_point(controller, 3), train_point(controller, 11)
    select(qtbot, controller, first)
    substep(qtbot, controller)  # forward: the graph's weights are the snapshot's
    snapshot = controller.snapshot
    scene = panel.view.network
    shown: dict[int, np.ndarray] = {}
    for point in (first, second):
        select(qtbot, controller, point)
        layers = forward_pass(snapshot, point)
        # each unit shows this point's value, as numpy's forward pass computes it
        for column, values in enumerate(layers):
            for k, unit in enumerate(scene.units[column]):
                assert unit.text == fmt(float(values[k]), digits=3), (point, column, k)
        # each weight drawn by its share of this point's signal
        expected = np.concatenate([s.ravel() for s in expected_shares(snapshot, layers)])
        assert scene.path is not None
        np.testing.assert_allclose(scene.path, expected, rtol=1e-9, atol=1e-12)
        shown[point] = scene.path.copy()
        # and the point is marked in every unit's map, where it lies in the plane
        xmin, xmax, ymin, ymax = data_extent(snapshot.points)
        x, y = snapshot.points[point]
        assert scene.marker == pytest.approx(((x - xmin) / (xmax - xmin),
                                              (ymax - y) / (ymax - ymin)))
        assert all(unit.marker is not None for row in scene.units for unit in row)
        faint = {id(line) for pen, lines in scene.weights.groups for line in lines
                 if pen.color().lightnessF() > 0.9}
        assert faint, "a weight that carried little of the point is drawn faint"
    # another point, another path
    assert not np.allclose(shown[first], shown[second])
    assert any(f"faint: carried little of point {second}" in line
               for line in panel.view.legend_texts())
    # gradients are the whole batch's: no sample's path over them
    panel.view.set_show_gradients(True)
    assert scene.path is None


def test_the_operation_level_darkens_the_selected_points_path(
        qtbot, controller: SessionPort, panel: GraphPanel) -> None:  # type: ignore[no-untyped-def]
    first, second = train_point(controller, 3), train_point(controller, 11)
    select(qtbot, controller, first)
    substep(qtbot, controller)
    snapshot = controller.snapshot
    panel.view.set_level("operation")
    scene = panel.view.operations
    assert scene.is_overview()  # a box per neuron: an edge per weight between them
    _, _, layers_of = scene._products if scene._products else (None, None, None)
    assert layers_of is not None
    by_point = {}
    for point in (first, second):
        select(qtbot, controller, point)
        expected = expected_shares(snapshot, forward_pass(snapshot, point))
        for layer, shares in enumerate(expected):
            drawn = np.sort(scene.path_shares[layers_of == layer])
            np.testing.assert_allclose(drawn, np.sort(shares.ravel()), rtol=1e-9, atol=1e-12)
        strong = scene.edges.path[1][1]
        assert strong, "the edges that carried most of the point's signal are darker"
        by_point[point] = scene.path_shares.copy()
    assert not np.allclose(by_point[first], by_point[second])
    assert f"dark edges: point {second}'s biggest weight × input" in panel.view.legend_texts()


def test_a_panel_not_yet_shown_draws_nothing_until_it_is(qtbot, controller: SessionPort  # type: ignore[no-untyped-def]
                                                          ) -> None:
    """The window builds the graph tab at start, behind the boundary: a 1000x1000
    network's level took 5 s and 700 MB of the start there, for a tab nobody opened."""
    widget = GraphPanel(controller)
    qtbot.addWidget(widget)
    assert not widget.refresh_costs  # nothing drawn while hidden
    widget.resize(1000, 750)
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        widget.show()
    qtbot.waitExposed(widget)
    assert widget.refresh_costs  # drawn once shown
    assert widget.view.level() == "network" and not widget.view.is_empty()


def test_a_network_too_big_to_draw_says_so_and_a_small_one_is_drawn_again(  # type: ignore[no-untyped-def]
        qtbot, panel: GraphPanel, controller: SessionPort) -> None:
    """The network level of a 1000x1000 network took 5.4 s and 700 MB of the window, for
    a picture of solid colour: past MAX_DRAWN_PARAMETERS it says why it draws nothing."""
    from gradbox.views.graph.panel import MAX_DRAWN_PARAMETERS

    assert panel.view.level() == "network" and not panel.view.is_empty()
    big = TrainingConfig(hidden=(150, 150))
    with qtbot.waitSignal(controller.snapshot_changed, timeout=20000):
        controller.send(Session.new_run, big, "a big network")
    qtbot.waitUntil(lambda: len(controller.snapshot.params) > MAX_DRAWN_PARAMETERS,
                    timeout=20000)
    qtbot.waitUntil(lambda: panel.view.is_empty(), timeout=10000)
    text = panel.view.placeholder_text()
    assert text.startswith(f"{len(controller.snapshot.params):,} parameters are too many")
    panel.operations_action.trigger()
    panel.network_action.trigger()  # back: still said
    assert panel.view.is_empty() and panel.view.placeholder_text() == text
    with qtbot.waitSignal(controller.snapshot_changed, timeout=20000):
        controller.send(Session.new_run, TrainingConfig(), "a small one again")
    qtbot.waitUntil(lambda: not panel.view.is_empty(), timeout=10000)
    assert "too many" not in panel.view.placeholder_text()
