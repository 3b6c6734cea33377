"""The graph view, driven offscreen: levels, labels per sample, animation, selection, export."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtWidgets import QGraphicsSimpleTextItem

from gradbox import graph
from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP
from gradbox.formatting import fmt
from gradbox.graph import groups
from gradbox.training import datasets
from gradbox.views.graph.items import TEXT_LOD, UNIT, OpNode
from gradbox.views.graph.net_scene import maps_image
from gradbox.views.graph.view import MIN_UNIT_PX, OP_NODE_CAP, READABLE_PT, GraphView

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


def demo(seed: int = 0, sizes: tuple[int, ...] = (16, 16, 1), n: int = 100
         ) -> tuple[MLP, Value, datasets.Dataset]:
    ds = datasets.make("moons", n, 0.1, seed=0)
    model = MLP(2, list(sizes), seed=seed)
    out = model([ds.points[:, 0], ds.points[:, 1]])
    loss = losses.hinge(out, ds.labels) + 1e-4 * losses.l2_penalty(model.parameters())
    loss.backward(retain_graph=True)
    return model, loss, ds


@pytest.fixture
def view(qtbot) -> GraphView:  # type: ignore[no-untyped-def]
    widget = GraphView()
    widget.resize(900, 600)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def small_graph() -> graph.Graph:
    a, b, c = Value(np.array([2.0, 1.0]), label="a"), Value(-3.0, label="b"), Value(10.0)
    out = (a * b + c).tanh().sum()
    out.backward()
    return graph.trace(out, {b: "b"})


def op_items(view: GraphView) -> list[OpNode]:
    return [item for item in view.scene().items() if isinstance(item, OpNode)]


def click_scene(qtbot, view: GraphView, point) -> None:  # type: ignore[no-untyped-def]
    pos = view.mapFromScene(point)
    assert view.viewport().rect().contains(pos)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(pos))


# --- operation level ----------------------------------------------------------------------
def test_operation_level_shows_every_node_with_values_of_the_sample(view: GraphView) -> None:
    model, loss, _ = demo()
    g = graph.trace(loss, model)
    view.set_graph(g, sample=7)
    view.show_all_operations()  # every operation, not the overview
    view.set_level("operation")
    items = sorted(op_items(view), key=lambda item: item.index)
    assert len(items) == len(g) == 1663 - 674  # the L2 penalty is one node
    values, grads = g.values(7), g.grads(7)
    for item in items[::37]:
        assert item.value_text == f"data {fmt(values[item.index])}"
        assert item.grad_text == f"grad {fmt(grads[item.index])}"
    view.set_sample(42)
    values = g.values(42)
    assert all(item.value_text == f"data {fmt(values[item.index])}" for item in items)
    fanout = [item for item in items if item.fanout]
    assert {item.index for item in fanout} == {i for i in range(len(g)) if g.is_fanout(i)}
    kinds = {item.index: item.kind for item in items}
    assert kinds[g.find_parameter("layers.0.neurons.0.w.0")] == OpNode.PARAM
    assert kinds[g.root] == OpNode.OP


def test_new_step_of_same_shape_reuses_items_and_updates_labels(view: GraphView) -> None:
    model, loss, _ = demo()
    view.set_graph(graph.trace(loss, model), sample=3)
    view.show_all_operations()  # every operation, not the overview
    view.set_level("operation")
    before = {id(item) for item in op_items(view)}
    _, loss2, _ = demo(seed=9)
    g2 = graph.trace(loss2)
    view.set_graph(g2, sample=3)
    items = op_items(view)
    assert {id(item) for item in items} == before
    root = next(item for item in items if item.index == g2.root)
    assert root.value_text == f"data {fmt(loss2.data)}"


def test_other_structure_rebuilds(view: GraphView) -> None:
    view.set_level("operation")
    view.set_graph(small_graph())
    assert len(op_items(view)) == 7
    _, loss, _ = demo(sizes=(4, 1), n=10)
    g = graph.trace(loss)
    view.set_graph(g)
    assert len(op_items(view)) == len(g)


# --- backward animation -------------------------------------------------------------------
def chained_l2(params: list[Value]) -> Value:
    """The L2 penalty as a learner writes it (and gradbox did before issue 34): a chain."""
    total = 0
    for p in params:
        total = total + p * p
    return total


def test_animation_visits_nodes_in_reverse_topological_order(qtbot, view: GraphView) -> None:
    ds = datasets.make("moons", 20, 0.1, seed=0)
    model = MLP(2, [3, 1], seed=0)
    out = model([ds.points[:, 0], ds.points[:, 1]])
    loss = losses.hinge(out, ds.labels) + 1e-4 * chained_l2(model.parameters())
    loss.backward(retain_graph=True)
    g = graph.trace(loss, model)
    view.set_graph(g)
    view.show_all_operations()
    view.set_level("operation")
    visited: list[tuple[int, int]] = []
    view.animation_step.connect(lambda node, place: visited.append((node, place)))
    with qtbot.waitSignal(view.animation_finished, timeout=10000):
        view.play_backward(interval_ms=1)
    assert view.level() == "operation"
    # the engine's order, except that the L2 penalty's sum (13 additions, their squares
    # and the 0 it starts from) is one step, at its output's place
    [penalty] = [group for group in groups.penalty_groups(g)]
    expected = [n for n in graph.backward_order(g)
                if n not in penalty.members or n == penalty.output]
    assert [node for node, _ in visited] == expected
    assert [place for _, place in visited] == list(range(1, len(expected) + 1))
    assert view.replay_counter_text() == f"backward: {len(expected)} of {len(expected)} steps"
    places = {item.index: item.place for item in op_items(view)}
    assert all(places[node] == place for node, place in visited)
    penalty_place = dict(visited)[penalty.output]
    assert all(places[m] == penalty_place for m in penalty.members)
    assert not view.is_animating()


def test_step_backward_one_node_at_a_time_then_stop(qtbot, view: GraphView) -> None:
    g = small_graph()
    view.set_graph(g)
    view.set_level("operation")
    order = graph.backward_order(g)
    items = {item.index: item for item in op_items(view)}
    assert view.step_backward() == order[0]
    # nodes whose gradient has not arrived yet show none
    assert items[order[0]].place == 1 and not items[order[0]].pending
    assert all(items[i].pending and items[i].place is None for i in order[1:])
    with qtbot.waitSignal(view.animation_step) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_B)
    assert blocker.args == [order[1], 2]
    assert view.animation_position() == 2
    view.stop_animation()
    assert all(not item.pending and item.place is None for item in items.values())


def test_animation_in_a_collapsed_graph_reports_original_ids(qtbot, view: GraphView) -> None:
    model, loss, _ = demo(sizes=(3, 1), n=10)
    g = graph.trace(loss, model)
    view.set_graph(g)
    assert view.expand_neuron(0, 1)
    view.set_level("operation")
    part = view.shown_graph()
    assert view.is_collapsed() and part is not None and len(part) < len(g)
    visited: list[int] = []
    view.animation_step.connect(lambda node, _place: visited.append(node))
    with qtbot.waitSignal(view.animation_finished, timeout=5000):
        view.play_backward(interval_ms=1)
    assert visited == [part.original_ids[i] for i in graph.backward_order(part)]


# --- selection ----------------------------------------------------------------------------
def test_clicking_a_parameter_node_emits_its_name(qtbot, view: GraphView) -> None:
    model, loss, _ = demo(sizes=(3, 1), n=10)
    g = graph.trace(loss, model)
    view.set_graph(g)
    view.show_all_operations()  # every operation, not the overview
    view.set_level("operation")
    name = "layers.0.neurons.2.w.1"
    node = g.find_parameter(name)
    view.focus_node(node, scale=1.0)
    with qtbot.waitSignal(view.parameter_selected) as param, \
            qtbot.waitSignal(view.node_selected) as selected:
        click_scene(qtbot, view, view.node_scene_pos(node))
    assert param.args == [name]
    assert selected.args == [node]
    assert view.selected_node() == node
    assert name in view.details_text() and "sum =" in view.details_text()


def test_clicking_an_op_node_selects_without_parameter_signal(qtbot, view: GraphView) -> None:
    g = small_graph()
    view.set_graph(g)
    view.set_level("operation")
    view.focus_node(2)
    names: list[str] = []
    view.parameter_selected.connect(names.append)
    with qtbot.waitSignal(view.node_selected) as selected:
        click_scene(qtbot, view, view.node_scene_pos(2))
    assert selected.args == [2] and names == []
    assert "∂(a · b)/∂a = b" in view.details_text()


def test_select_parameter_from_outside_selects_silently(qtbot, view: GraphView) -> None:
    model, loss, _ = demo(sizes=(3, 1), n=10)
    g = graph.trace(loss, model)
    view.set_graph(g)
    view.set_level("operation")
    emitted: list[str] = []
    view.parameter_selected.connect(emitted.append)
    with qtbot.waitSignal(view.details_changed) as details:
        assert view.select_parameter("layers.1.neurons.0.b")
    assert view.selected_node() == g.find_parameter("layers.1.neurons.0.b")
    assert emitted == [] and "layers.1.neurons.0.b" in details.args[0]


def test_selection_follows_the_parameters_panel_both_ways(qtbot) -> None:  # type: ignore[no-untyped-def]
    from gradbox.port.in_process import InProcessPort
    from gradbox.training.config import TrainingConfig
    from gradbox.training.session import Session
    from gradbox.training.trainer import Trainer
    from gradbox.views.panels.parameters import ParametersView

    trainer = Trainer(TrainingConfig())
    trainer.capture_graph = True
    trainer.step()
    snapshot = trainer.snapshot()
    controller = InProcessPort(Session(trainer))
    try:
        panel = ParametersView(controller)
        view = GraphView()
        qtbot.addWidget(panel)
        qtbot.addWidget(view)
        view.resize(900, 600)
        view.show()
        # the wiring a graph panel does: the controller is the one place selection lives
        view.parameter_selected.connect(controller.select_parameter)
        controller.parameter_selected.connect(view.select_parameter)
        panel.model.set_snapshot(snapshot)
        view.set_graph(snapshot.graph)
        view.set_network(graph.network_level(snapshot))
        view.show_all_operations()  # a parameter's own node to click
        view.set_level("operation")
        name = snapshot.param_names[5]
        node = snapshot.graph.find_parameter(name)
        view.focus_node(node)
        click_scene(qtbot, view, view.node_scene_pos(node))
        qtbot.waitUntil(lambda: panel.selected_name() == name)
        # and back: choosing a row in the panel selects the node in the graph
        other = snapshot.param_names[11]
        row = panel.proxy.mapFromSource(panel.model.index(snapshot.param_names.index(other), 0))
        panel.table.setCurrentIndex(row)
        qtbot.waitUntil(lambda: view.selected_node() == snapshot.graph.find_parameter(other))
    finally:
        controller.shutdown()


# --- network level ------------------------------------------------------------------------
def test_network_level_weights_units_and_gradient_toggle(qtbot, view: GraphView) -> None:
    model, loss, _ = demo()
    g = graph.trace(loss, model)
    net = graph.network_level(model, g, sample=5, extent=(-2, 3, -1.5, 2))
    view.set_graph(g, 5)
    view.set_network(net)
    assert view.level() == "network"
    assert len(view.network.weight_names) == 2 * 16 + 16 * 16 + 16
    unit = view.network.units[2][7]
    assert unit.text == fmt(net.units[2][7], digits=3) and unit.image is not None
    view.gradients_action.trigger()
    assert view.show_gradients() and view.gradients_action.isChecked()
    assert unit.text == fmt(net.unit_grads[2][7], digits=3)
    # a click on the middle of an edge picks that weight
    name = "layers.2.neurons.0.w.9"
    view.resetTransform()
    view.centerOn(view.weight_scene_pos(name))
    with qtbot.waitSignal(view.parameter_selected) as blocker:
        click_scene(qtbot, view, view.weight_scene_pos(name))
    assert blocker.args == [name]
    assert "weight from neuron 9 of layer 1 to neuron 0 of layer 2" in view.details_text()


def test_double_click_a_neuron_expands_its_operations(qtbot, view: GraphView) -> None:
    model, loss, _ = demo()
    g = graph.trace(loss, model)
    view.set_graph(g)
    view.set_network(graph.network_level(model, g))
    view.resetTransform()
    pos = view.unit_scene_pos(2, 3)  # column 2 = layers.1
    view.centerOn(pos)
    with qtbot.waitSignal(view.level_changed):
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton,
                          pos=QPoint(view.mapFromScene(pos)))
    assert view.level() == "operation" and view.expanded_neuron() == (1, 3)
    shown = view.shown_graph()
    assert {shown.names[i] for i in range(len(shown)) if shown.names[i]} == {
        *(f"layers.1.neurons.3.w.{i}" for i in range(16)), "layers.1.neurons.3.b"}
    view.show_all_operations()
    assert len(op_items(view)) == len(g)


# --- big networks -------------------------------------------------------------------------
def test_64x64x64_network_opens_collapsed_without_freezing(qtbot, view: GraphView) -> None:
    model, loss, _ = demo(sizes=(64, 64, 64, 1))
    start = time.perf_counter()
    g = graph.trace(loss, model)
    assert len(g) > OP_NODE_CAP
    view.set_graph(g, sample=0)
    view.set_network(graph.network_level(model, g, extent=(-2, 3, -1.5, 2)))
    view.set_level("operation")
    view.viewport().repaint()
    elapsed = time.perf_counter() - start
    assert view.is_collapsed() and view.expanded_neuron() == (3, 0)
    assert len(op_items(view)) == len(view.shown_graph()) < 300
    assert elapsed < 5.0, f"took {elapsed:.2f} s"
    assert view.expand_neuron(1, 10)
    names = {n for n in view.shown_graph().names if n}
    assert "layers.1.neurons.10.w.63" in names and len(op_items(view)) < 300
    # selecting a parameter of another neuron expands that one
    assert view.select_parameter("layers.2.neurons.5.w.7")
    assert view.expanded_neuron() == (2, 5)
    assert view.selected_node() == g.find_parameter("layers.2.neurons.5.w.7")
    selected = [item for item in op_items(view) if item.selected]
    assert [view.shown_graph().names[item.index] for item in selected] == [
        "layers.2.neurons.5.w.7"]
    # chosen while the network level shows: the operation level opens on its neuron
    view.set_level("network")
    assert view.select_parameter("layers.0.neurons.9.b")
    view.set_level("operation")
    assert view.expanded_neuron() == (0, 9)
    assert [item.index for item in op_items(view) if item.selected] == [
        view.shown_graph().find_parameter("layers.0.neurons.9.b")]


def test_selection_survives_a_new_step(view: GraphView) -> None:
    model, loss, _ = demo(sizes=(3, 1), n=10)
    view.set_graph(graph.trace(loss, model))
    view.set_level("operation")
    view.select_parameter("layers.1.neurons.0.w.2")
    model2, loss2, _ = demo(sizes=(3, 1), n=10, seed=4)
    g2 = graph.trace(loss2, model2)
    view.set_graph(g2)
    assert view.selected_node() == g2.find_parameter("layers.1.neurons.0.w.2")
    model3, other, _ = demo(sizes=(5, 1), n=10)
    g3 = graph.trace(other, model3)
    view.set_graph(g3)  # another shape: the same parameter name, another node id
    assert view.selected_node() == g3.find_parameter("layers.1.neurons.0.w.2")
    assert sum(item.selected for item in op_items(view)) == 1


# --- zoom and export ----------------------------------------------------------------------
def test_zoom_fit_and_level_of_detail(qtbot, view: GraphView) -> None:
    model, loss, _ = demo()
    view.set_graph(graph.trace(loss, model))
    view.set_level("operation")
    # it opens on one box per neuron, its text READABLE_PT on screen
    points = view.operations.style.name_font.pointSizeF()
    assert view.transform().m11() * points >= READABLE_PT - 1e-6
    view.show_all_operations()
    # every operation: it opens readable on the loss end, the mini-map showing the rest
    # (its text READABLE_PT on screen, however small fitting it all would make it)
    on_screen = view.transform().m11() * view.operations.style.name_font.pointSizeF()
    assert on_screen == pytest.approx(READABLE_PT)
    view.viewport().repaint()
    assert view.minimap.isVisible()
    # and the key, open by itself, folds rather than hide the nodes under it
    key = view.legend_rect()
    assert not any(key.intersects(view.mapFromScene(rect).boundingRect().toRectF())
                   for rect in view.operations.occupied())
    qtbot.keyClick(view, Qt.Key.Key_F)
    fitted = view.transform().m11()
    assert fitted < TEXT_LOD  # the whole demo graph: boxes only, no text
    view.zoom(10)
    assert view.transform().m11() == pytest.approx(fitted * 10)
    view.viewport().repaint()
    qtbot.keyClick(view, Qt.Key.Key_F)
    assert view.transform().m11() == pytest.approx(fitted)


def test_export_png_svg_dot(tmp_path: Path, view: GraphView) -> None:
    g = small_graph()
    view.set_graph(g, sample=1)
    view.set_level("operation")
    view.export_png(tmp_path / "g.png")
    view.export_svg(tmp_path / "g.svg")
    view.export_dot(tmp_path / "g.dot")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"
    svg = (tmp_path / "g.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "tanh" in svg
    dot = (tmp_path / "g.dot").read_text(encoding="utf-8")
    assert graph.parse_dot_counts(dot) == (len(g), len(g.edges))
    assert f"data {fmt(g.values(1)[0])}" in dot


def test_actions_switch_level(qtbot, view: GraphView) -> None:
    view.set_graph(small_graph())
    with qtbot.waitSignal(view.level_changed) as blocker:
        qtbot.keyClick(view, Qt.Key.Key_L)
    assert blocker.args == ["operation"] and view.operations_action.isChecked()
    view.set_level("network")
    assert not view.operations_action.isChecked()


def test_set_level_rejects_unknown(view: GraphView) -> None:
    with pytest.raises(ValueError, match="network"):
        view.set_level("atoms")


# --- requests from the playground: labels, custom replays, stop signal, font scale -------
def labelled_graph() -> graph.Graph:
    a = Value(1.0, label="a")
    b = a + a
    b.label = "b"
    c = b + b
    c.label = "c"
    c.backward()
    return graph.trace(c)


def test_an_operations_label_names_its_box(view: GraphView) -> None:
    g = labelled_graph()
    view.set_graph(g)
    view.set_level("operation")
    titles = {item.index: item.title for item in op_items(view)}
    assert sorted(titles.values()) == ["a", "b = +", "c = +"]  # two "+" told apart
    assert "b = +" in graph.to_dot(g) and "c = +" in graph.to_dot(g)


def test_custom_replay_order_numbers_a_node_each_time_it_fires(qtbot, view: GraphView) -> None:
    g = labelled_graph()  # ids: a 0, b 1, c 2
    view.set_graph(g)
    order = [2, 1, 0, 1, 0]  # a broken backward that fires b and a twice
    visited: list[tuple[int, int]] = []
    view.animation_step.connect(lambda node, place: visited.append((node, place)))
    with qtbot.waitSignal(view.animation_finished, timeout=5000):
        view.play_backward(interval_ms=1, order=order)
    assert visited == [(2, 1), (1, 2), (0, 3), (1, 4), (0, 5)]
    items = {item.index: item for item in op_items(view)}
    assert items[1].places == [2, 4] and items[1].badge_text() == "2,4"
    assert items[2].places == [1] and items[2].place == 1
    many = OpNode(0, OpNode.OP, "+", False, items[0].style)
    many.places = [1, 2, 3, 4, 5]
    assert many.badge_text() == "1,2,3,4…"
    # Play again after the end: the default order, from the start
    with qtbot.waitSignal(view.animation_finished, timeout=5000):
        view.play_backward(interval_ms=1)
    assert [item.places for _, item in sorted(items.items())] == [[3], [2], [1]]


def test_custom_order_in_a_collapsed_graph_keeps_the_shown_nodes(qtbot, view: GraphView) -> None:
    model, loss, _ = demo(sizes=(3, 1), n=10)
    g = graph.trace(loss, model)
    view.set_graph(g)
    assert view.expand_neuron(0, 1)
    view.set_level("operation")
    part = view.shown_graph()
    inside = [part.original_ids[i] for i in (3, 2)]
    # a node inside a box lights its box up
    inner = g.find_parameter("layers.0.neurons.0.w.1")
    box = next(k for k, ms in enumerate(part.members) if inner in ms)
    visited: list[int] = []
    view.animation_step.connect(lambda node, _place: visited.append(node))
    with qtbot.waitSignal(view.animation_finished, timeout=5000):
        view.play_backward(interval_ms=1, order=[inside[0], inner, inside[1]])
    assert visited == [inside[0], part.original_ids[box], inside[1]]


def test_stopping_an_unfinished_replay_says_so(qtbot, view: GraphView) -> None:
    view.set_graph(small_graph())
    view.set_level("operation")
    stopped: list[bool] = []
    view.animation_stopped.connect(lambda: stopped.append(True))
    view.step_backward()
    with qtbot.waitSignal(view.animation_stopped):
        qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert view.animation_length() == 0
    # a new replay replacing an unfinished one is not a stop the caller must hear about
    view.step_backward()
    view.play_backward(interval_ms=1, order=[0])
    assert stopped == [True]
    qtbot.waitUntil(lambda: not view.is_animating())
    view.stop_animation()  # finished: clearing it is no stop either
    assert stopped == [True]
    view.step_backward()
    view.set_graph(small_graph())  # a new graph interrupts the replay
    assert stopped == [True, True]


def test_font_scale_grows_labels_and_boxes(qtbot, view: GraphView) -> None:
    g = small_graph()
    view.set_graph(g)
    view.set_network(graph.network_level(MLP(2, [3, 1], seed=0)))
    view.set_level("operation")
    before = op_items(view)[0]
    width = before.boundingRect().width()
    size = before.style.font.pointSizeF()
    view.set_font_scale(1.5)
    assert view.font_scale() == 1.5
    items = op_items(view)
    assert len(items) == len(g)  # rebuilt, nothing lost
    assert items[0].style.font.pointSizeF() == pytest.approx(1.5 * size)
    assert items[0].boundingRect().width() > width
    # the gaps between boxes stay: text grows relative to the whole drawing
    xs = sorted({round(item.pos().x()) for item in items})
    assert xs[1] - xs[0] == pytest.approx(items[0].style.dx, abs=1)
    view.set_level("network")
    assert view.scene().items()  # network rebuilt at the new scale
    view.set_font_scale(1.0)
    view.set_level("operation")
    assert op_items(view)[0].boundingRect().width() == pytest.approx(width)


def test_placeholder_and_clear_graph(view: GraphView) -> None:
    view.set_placeholder_text("Press Step")
    view.set_level("operation")
    assert view.is_empty()
    view.viewport().repaint()  # draws the placeholder
    view.set_graph(small_graph())
    assert not view.is_empty()
    view.select_node(2)
    view.clear_graph()
    assert view.is_empty() and view.graph() is None and view.selected_node() is None
    assert view.details_text() == ""


def test_sample_label_names_the_point_in_the_details(view: GraphView) -> None:
    g = small_graph()
    view.set_graph(g, sample=1, sample_label="point 17")
    view.select_node(2)
    assert "(point 17)" in view.details_text() and "sample 1" not in view.details_text()
    view.set_sample(0)
    assert "(sample 0)" in view.details_text()


def test_fit_follows_resizes_until_the_user_zooms(qtbot, view: GraphView) -> None:
    model, loss, _ = demo(sizes=(3, 1), n=10)
    view.set_graph(graph.trace(loss, model))
    view.set_level("operation")
    view.fit_action.trigger()  # F: everything, however small, from now on
    fitted = view.transform().m11()
    view.resize(1400, 900)
    qtbot.waitUntil(lambda: view.transform().m11() > fitted * 1.2)
    view.zoom(2.0)
    zoomed = view.transform().m11()
    view.resize(700, 500)  # a shown widget gets its resize event at once
    assert view.transform().m11() == pytest.approx(zoomed)


@pytest.mark.parametrize("size", [(557, 400), (900, 600), (1400, 500)])
def test_fit_leaves_room_for_the_labels_of_constant_size(view: GraphView, size) -> None:  # type: ignore[no-untyped-def]
    model, loss, _ = demo()  # with the L2 penalty drawn below, and its long label
    view.resize(*size)
    view.set_graph(graph.trace(loss, model))
    view.show_all_operations()  # every operation, not the overview
    view.set_level("operation")
    view.fit()
    port = view.viewport().rect()
    assert len(view.operations.landmarks) == 3
    for label in view.operations.landmarks:
        # drawn at a constant size: map its own rect through its device transform
        box = label.deviceTransform(view.viewportTransform()).mapRect(label.boundingRect())
        assert box.left() >= 0 and box.right() <= port.right() + 1, (label.text(), box)
    legend = view.legend_rect()
    drawing = view.mapFromScene(view.operations.drawing_rect()).boundingRect()
    assert not QRectF(drawing).intersects(legend)


def test_clicking_the_legend_folds_it(qtbot, view: GraphView) -> None:
    view.set_graph(small_graph())
    view.set_level("operation")
    tall = view.legend_rect().height()
    qtbot.mouseClick(view.legend, Qt.MouseButton.LeftButton, pos=QPoint(20, 10))
    assert view.legend_folded() and view.legend_rect().height() < tall
    assert view.legend_texts() == ["▸ key"]
    qtbot.mouseClick(view.legend, Qt.MouseButton.LeftButton, pos=QPoint(20, 10))
    assert not view.legend_folded()


def test_a_refresh_repaints_only_the_nodes_on_screen(view: GraphView) -> None:
    model, loss, _ = demo()
    g = graph.trace(loss, model)
    view.set_graph(g, 0)
    view.show_all_operations()  # every operation, not the overview
    view.set_level("operation")
    view.focus_node(g.root, 1.0)
    view.viewport().repaint()
    view.set_sample(5)
    view.viewport().repaint()
    items = op_items(view)
    generation = view.operations.numbers.generation
    painted = [item for item in items if item.drawn == generation]
    assert 0 < len(painted) < len(items) / 10
    # what every node says is the new sample's, painted yet or not
    values = g.values(5)
    assert all(item.value_text == f"data {fmt(values[item.index])}" for item in items)
    # scrolled to, a node is painted with the new numbers
    far = graph.neuron_nodes(g, 0, 3).output
    assert next(item for item in items if item.index == far).drawn != generation
    view.focus_node(far, 1.0)
    view.viewport().repaint()
    assert next(item for item in items if item.index == far).drawn == generation


def test_a_small_graph_fits_at_a_readable_zoom_without_room_for_hidden_labels(
        view: GraphView) -> None:
    view.set_graph(small_graph())
    view.set_level("operation")
    view.fit()
    # the zoomed-out landmarks are hidden at this zoom: no pixels were kept for them
    assert view.transform().m11() >= 1.0
    view.viewport().repaint()
    assert not any(label.isVisible() for label in view.operations.landmarks)


def test_the_legend_folds_itself_in_a_small_window_until_the_user_chooses(
        view: GraphView) -> None:
    view.set_graph(small_graph())
    view.set_level("operation")
    assert not view.legend_folded()  # 900 x 600: room enough
    view.resize(420, 260)
    assert view.legend_folded()
    view.resize(900, 600)
    assert not view.legend_folded()
    view.set_legend_folded(True)  # the user's choice wins from now on
    view.resize(1200, 800)
    assert view.legend_folded()


def test_fit_puts_the_drawing_beside_or_below_the_legend_at_any_zoom(view: GraphView) -> None:
    view.set_network(graph.network_level(MLP(2, [8, 8, 1], seed=0)))
    for size in ((560, 300), (900, 600), (300, 700), (500, 170)):
        view.resize(*size)
        view.fit()
        legend = view.legend_rect()
        units = [view.mapFromScene(view.unit_scene_pos(layer, k))
                 for layer, count in enumerate((2, 8, 8, 1)) for k in range(count)]
        assert not any(legend.contains(QPointF(p)) for p in units), size


def test_column_headers_shorten_then_stagger_as_the_network_shrinks(view: GraphView) -> None:
    view.set_network(graph.network_level(MLP(2, [8, 8, 1], seed=0)))
    headers = view.network.headers
    for zoom, form in ((1.0, 0), (0.42, 1), (0.2, 2)):
        view.resetTransform()
        view.scale(zoom, zoom)
        view.viewport().repaint()
        texts = [item.text() for item, *_ in headers]
        assert view.network.headers_form == form, zoom
        assert all("\n" not in t for t in texts) == (form > 0)
        lifts = {item.transform().dy() + item.boundingRect().height() for item, *_ in headers}
        assert (len(lifts) > 1) == (form == 2)  # alternate heights only when staggered


def test_unit_maps_are_coloured_like_the_decision_boundary() -> None:
    maps = [np.array([[[1.0, -1.0], [0.0, 0.25]]]), np.array([[[0.0, 0.0], [0.0, 0.0]],
                                                              [[-2.0, 0.0], [0.0, 0.0]]])]
    image = maps_image(maps)
    assert (image.width(), image.height()) == (2, 6)  # three units of 2x2, one under another
    rgb = [[image.pixelColor(x, y).getRgb()[:3] for x in range(2)] for y in range(6)]
    assert rgb[0][0] == (0x08, 0x77, 0xBD)  # positive: the boundary's blue
    assert rgb[0][1] == (0xF5, 0x93, 0x22)  # negative: its orange
    assert rgb[1][0] == (255, 255, 255)  # zero: white
    assert rgb[1][1][2] < 255 and rgb[1][1][0] < 255  # a quarter: light blue (square root)
    assert rgb[2] == rgb[3] == [(255, 255, 255)] * 2  # an all-zero map stays white
    assert rgb[4][0] == (0xF5, 0x93, 0x22)  # each unit scaled to its own peak


# --- issue 13: readable at first sight ----------------------------------------------------
def test_the_demo_graph_opens_one_box_per_neuron_and_the_penalty_as_one(
        qtbot, view: GraphView) -> None:  # type: ignore[no-untyped-def]
    model, loss, _ = demo(sizes=(8, 8, 1))
    g = graph.trace(loss, model)
    view.set_graph(g, sample=3)
    view.set_level("operation")
    shown = view.shown_graph()
    titles = [shown.labels[i] for i in range(len(shown)) if shown.is_group(i)]
    assert len(titles) == 8 + 8 + 1
    # the L2 penalty is one node of the engine's graph (issue 34), drawn once, taking
    # each neuron's box once (its weights are inside)
    [penalty] = [i for i in range(len(shown)) if shown.ops[i] == "l2"]
    assert not shown.is_group(penalty)
    assert len(shown.children[penalty]) == len(set(shown.children[penalty])) == 17
    assert "L2 = Σ w²" in [item.title for item in op_items(view)]
    assert len(op_items(view)) == len(shown) < 40 < len(g)
    # a box shows its part's output: the neuron's activation, for the chosen sample
    box = titles.index("neuron 5 of layers.1")
    item = next(i for i in op_items(view) if i.title == "neuron 5 of layers.1")
    output = graph.neuron_nodes(g, 1, 5).output
    assert item.value_text == f"data {fmt(g.values(3)[output])}"
    assert box >= 0
    # double-click opens it in place; the other boxes stay; again closes it
    view.focus_node(output, 1.0)
    point = view.node_scene_pos(output)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton,
                      pos=QPoint(view.mapFromScene(point)))
    opened = view.shown_graph()
    assert "layers.1.neurons.5.w.7" in opened.names and view.expanded_neuron() == (1, 5)
    assert len(opened) == len(shown) - 1 + len(graph.neuron_nodes(g, 1, 5).ops) + 9
    view.focus_node(output, 1.0)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton,
                      pos=QPoint(view.mapFromScene(view.node_scene_pos(output))))
    assert len(view.shown_graph()) == len(shown)
    # a click on a box tells what it stands for
    view.select_node(output)
    assert "one box for" in view.details_text() and "neuron 5 of layers.1" in view.details_text()


def test_penalty_groups_find_l2_and_l1_sums() -> None:
    model = MLP(2, [4, 1], seed=0)
    x = Value(np.array([1.0, 2.0]))
    out = model([x, x])
    l2 = graph.trace(losses.mse(out, np.array([1.0, -1.0]))
                     + 1e-3 * chained_l2(model.parameters()), model)
    [l2_group] = groups.penalty_groups(l2)
    assert l2_group.title == "L2 penalty, 17 terms"
    assert l2.data(l2_group.output) == pytest.approx(sum(p.data ** 2 for p in model.parameters()))
    l1 = graph.trace(sum(abs(p) for p in model.parameters()), model)
    assert [grp.title for grp in groups.penalty_groups(l1)] == ["L1 penalty, 17 terms"]
    few = graph.trace(sum(p * p for p in model.parameters()[:5]), model)
    assert groups.penalty_groups(few) == []  # 5 terms: drawn as they are
    # collapsed, the penalty is one node holding its sum's number
    collapsed = groups.collapse(l2, [l2_group])
    box = collapsed.members.index(l2_group.members)
    assert collapsed.data(box) == l2.data(l2_group.output)
    assert graph.backward_order(collapsed)[0] == collapsed.root


def test_replay_speed_and_pace(qtbot) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views.graph.backward_replay import WHOLE_REPLAY_MS, BackwardReplay
    replay = BackwardReplay()
    replay.load([(i,) for i in range(29)])  # the demo graph's overview
    assert replay.interval() * 29 == pytest.approx(WHOLE_REPLAY_MS, rel=0.01)
    replay.set_speed(2.0)
    assert replay.interval() * 29 == pytest.approx(WHOLE_REPLAY_MS / 2, rel=0.01)
    replay.load([(0,)] * 300)  # every operation: a brisk pace, still ~10 s at 1x
    replay.set_speed(1.0)
    assert replay.interval() * 300 == pytest.approx(WHOLE_REPLAY_MS, rel=0.01)
    replay.load([(0,)] * 6)  # the Playground: no step longer than 0.4 s
    assert replay.interval() == 400


def test_the_speed_box_sets_the_replays_pace(qtbot, view: GraphView) -> None:  # type: ignore[no-untyped-def]
    view.set_graph(small_graph())
    view.set_level("operation")
    view.step_backward()
    slow = view.replay.interval()
    view.replay_bar.speed.setCurrentIndex(view.replay_bar.speed.findData(4.0))
    assert view.replay.speed() == 4.0 and view.replay.interval() == round(slow / 4)
    # the bar's buttons drive the replay; the counter says where it is
    assert view.replay_counter_text() == "backward: 1 of 7 steps"
    view.replay_bar.step.click()
    assert view.replay_counter_text() == "backward: 2 of 7 steps"
    view.replay_bar.play.click()
    assert view.is_animating()
    view.replay_bar.play.click()  # pause
    assert not view.is_animating() and view.animation_position() >= 2
    with qtbot.waitSignal(view.animation_finished, timeout=10000):
        view.replay_bar.play.click()
    assert view.replay_counter_text() == "backward: 7 of 7 steps"


def test_a_level_switch_frames_the_network_readable_and_f_fits_it(qtbot, view: GraphView) -> None:  # type: ignore[no-untyped-def]
    model, loss, _ = demo(sizes=(8, 8, 1))
    g = graph.trace(loss, model)
    view.set_graph(g)
    view.set_network(graph.network_level(model, g))
    view.set_level("operation")
    view.resize(500, 320)  # the window changes while the other level shows
    view.set_level("network")
    # Too small a window for all of it at a legible size: the units keep MIN_UNIT_PX
    # (a value like -0.0132 needs it), and the overview shows what is out of sight.
    side = view.mapFromScene(QRectF(0, 0, UNIT, UNIT)).boundingRect().width()
    assert side >= MIN_UNIT_PX
    view.viewport().repaint()
    assert view.minimap.isVisible()
    # F, the user's choice: everything, for this window and after a level switch
    qtbot.keyClick(view, Qt.Key.Key_F)
    view.set_level("operation")
    view.set_level("network")
    port = QRectF(view.viewport().rect())
    for layer, count in enumerate((2, 8, 8, 1, 1)):
        for k in range(count):
            assert port.contains(QPointF(view.mapFromScene(view.unit_scene_pos(layer, k))))
    view.viewport().repaint()
    assert not view.minimap.isVisible()
    view.zoom(3.0)  # the user zooms: a level switch keeps their frame
    zoomed = view.transform().m11()
    view.set_level("operation")
    view.set_level("network")
    assert view.transform().m11() == pytest.approx(zoomed)
    qtbot.keyClick(view, Qt.Key.Key_F)
    assert view.transform().m11() < zoomed


def test_the_key_and_the_replay_bar_are_widgets_over_the_view(qtbot, view: GraphView) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QGraphicsView
    view.set_graph(small_graph())
    view.set_level("operation")
    # nothing painted at a fixed window position into the scrolling viewport
    assert type(view).drawForeground is QGraphicsView.drawForeground
    for overlay in (view.legend, view.replay_bar, view.minimap):
        assert overlay.parentWidget() is view  # not the viewport: its children scroll
    texts = {item.text() for item in view.scene().items()
             if isinstance(item, QGraphicsSimpleTextItem)}
    assert not any("gradient > 0" in t for t in texts)
    assert view.legend.isVisible() and "gradient > 0" in view.legend_texts()
    before = view.legend.geometry()
    view.horizontalScrollBar().setValue(view.horizontalScrollBar().value() + 120)
    view.viewport().repaint()
    assert view.legend.geometry() == before


def test_clicking_a_unit_tells_its_story(view: GraphView) -> None:
    model, loss, _ = demo(sizes=(8, 8, 1))
    g = graph.trace(loss, model)
    view.set_graph(g, sample=2, sample_label="point 2")
    view.set_network(graph.network_level(model, g, sample=2))
    view.click_scene_point(view.unit_scene_pos(2, 4))
    text = view.details_text()
    net = graph.network_level(model, g, sample=2)
    assert text.startswith("layers.1.neurons.4: hidden unit, relu(w · inputs + b)")
    assert f"output for point 2: {fmt(net.units[2][4])}" in text
    assert f"from unit 7: {fmt(net.weights[1][4, 7])}" in text
    assert view.network.units[2][4].selected


def test_w1s_operation_level_has_one_penalty_node(view: GraphView) -> None:
    """Issue 34: micrograd's demo's L2 penalty was 674 boxes (a group when collapsed);
    it is one node, 'L2 = Σ w²', at the operation level, opened or not."""
    model, loss, _ = demo()
    view.set_graph(graph.trace(loss, model))
    view.set_level("operation")
    for shown in (view.shown_graph(), None):
        if shown is None:
            view.show_all_operations()
            shown = view.shown_graph()
        titles = [item.title for item in op_items(view)]
        assert titles.count("L2 = Σ w²") == 1
        assert not any("penalty" in t for t in titles)
        assert [shown.ops[i] for i in range(len(shown))].count("l2") == 1
    assert any("L2 = Σ w²: one node; its 337 inputs are the weights" in label.text()
               for label in view.operations.landmarks)
