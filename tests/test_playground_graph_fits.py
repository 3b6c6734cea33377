"""The Playground's expression graph shows whole (issue 32, item 19): at 1024x700 it
opened at the readable zoom on its output end, and the nodes on the left -- with their
backward-order badges -- were cut by the window's left edge."""

from __future__ import annotations

import pytest

from qt_waits import settle


def _outside(graph) -> list[str]:  # type: ignore[no-untyped-def]
    """The nodes (their badge's room included) not wholly inside the graph's window."""
    port = graph.viewport().rect()
    cut = []
    for node in graph.levels.operations.nodes:
        shown = graph.mapFromScene(node.sceneBoundingRect()).boundingRect()
        if not port.contains(shown):
            cut.append(f"{node.title}: {shown} not in {port}")
    return cut


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768)])
def test_the_playground_graph_and_its_badges_fit_the_window(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                           size: tuple[int, int]) -> None:
    win = open_window(size)
    win.workspaces.switch("playground")
    settle()
    playground = win.playground
    playground.backward_button.click()
    graph = playground.graph
    nodes = graph.levels.operations.nodes
    assert len(nodes) >= 5
    # every node wears its backward-order badge once the replay has reached it
    qtbot.waitUntil(lambda: all(node.places for node in nodes), timeout=20_000)
    settle()
    assert _outside(graph) == []
    # and on resize: the other size frames it again, whole
    other = (1366, 768) if size == (1024, 700) else (1024, 700)
    win.resize(*other)
    qtbot.waitUntil(lambda: win.size().toTuple() == other)
    qtbot.waitUntil(lambda: _outside(graph) == [])
