"""Double-clicking a neuron opens the operation level on that neuron's operations (issue
32, item 9): lesson 6 step 3 opened on the loss end, and the neuron showed after Fit."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt

from gradbox.graph.network import neuron_nodes
from qt_waits import settle


def test_a_double_clicked_neuron_is_in_view_at_the_operation_level(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session) -> None:
    win = open_window((1366, 768))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("moons")
    win.lessons.go_to_step(2)  # "double-click a neuron to see its operations"
    step_session(win.controller, 1)
    settle()
    view = win.graph.view
    qtbot.waitUntil(lambda: view.network.units != [] and view.isVisible())
    unit = view.network.units[1][3].pos()  # a first-layer neuron, not the output's
    spot = view.mapFromScene(unit)
    assert view.viewport().rect().contains(spot)
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=spot)
    qtbot.waitUntil(lambda: view.level() == "operation")
    settle()
    assert view.expanded_neuron() == (0, 3)
    ops = view.operations
    neuron = neuron_nodes(ops.graph, 0, 3)
    seen = QRectF(view.mapToScene(view.viewport().rect()).boundingRect())
    inside = [seen.contains(QPointF(*ops.node_xy[ops.to_shown(n)])) for n in neuron.ops
              if ops.to_shown(n) is not None]
    assert inside and sum(inside) >= len(inside) / 2, (seen, sum(inside), len(inside))
