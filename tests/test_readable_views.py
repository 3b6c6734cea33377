"""What a view shows is readable at the sizes learners and classrooms have: the real
MainWindow, offscreen, fresh settings, at 1024 x 700 and 1366 x 768.

Graph text opens at READABLE_PT or more on screen (the node's font size times the
view's zoom); a view given less than its readable size says so and offers the room."""

from __future__ import annotations

import pytest

from gradbox.views.graph.framing import READABLE_PT
from gradbox.views.graph.items import OpNode
from gradbox.views.graph.view import GraphView
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

SIZES = [(1024, 700), (1366, 768)]


def _window(qtbot, open_window, width: int, height: int) -> MainWindow:  # type: ignore[no-untyped-def]
    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height), timeout=3000)
    settle()
    return win


def on_screen_points(view: GraphView) -> list[float]:
    """Each node label's size on screen, in points: its font's size times the zoom."""
    zoom = view.transform().m11()
    style = view.operations.style
    sizes = []
    for item in view.operations.nodes:
        assert isinstance(item, OpNode)
        title = style.name_font if item.kind == OpNode.PARAM else style.bold
        sizes += [zoom * title.pointSizeF(), zoom * style.font.pointSizeF()]
    return sizes


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_operation_graph_opens_with_readable_text(qtbot, open_window, step_session,  # type: ignore[no-untyped-def]
                                                      width: int, height: int) -> None:
    win = _window(qtbot, open_window, width, height)
    win.workspaces.switch("graph")
    step_session(win.controller, 1)
    view = win.graph.view
    qtbot.waitUntil(lambda: view.graph() is not None, timeout=5000)
    view.set_level("operation")
    settle()
    assert view.operations.nodes
    assert min(on_screen_points(view)) >= READABLE_PT - 1e-6  # 3.6 pt before at 1024 x 700
    # The rest of the graph is a pan away, and the mini-map says where the view is.
    view.viewport().repaint()
    port = view.viewport().rect()
    drawing = view.mapFromScene(view.operations.drawing_rect()).boundingRect()
    if not port.contains(drawing):
        assert view.minimap.isVisible()
    # F still shows everything, however small (the user's choice).
    view.fit_action.trigger()
    assert port.contains(view.mapFromScene(view.operations.drawing_rect()).boundingRect())


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_playground_graph_opens_with_readable_text(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                       height: int) -> None:
    win = _window(qtbot, open_window, width, height)
    win.workspaces.switch("playground")
    settle()
    view = win.playground.graph
    assert view.isVisible() and view.operations.nodes
    assert min(on_screen_points(view)) >= READABLE_PT - 1e-6  # 5.6 pt before at 1024 x 700
