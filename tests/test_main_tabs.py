"""The main views' tabs all stay on show at the sizes learners have: none behind arrows."""

from __future__ import annotations

import pytest

from qt_waits import settle

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process

FULL = ["Decision boundary", "Computation graph", "Layers", "Landscape", "Playground"]
SHORT = ["Boundary", "Graph", "Layers", "Landscape", "Playground"]


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768), (1920, 1080)])
def test_every_tab_is_whole_inside_the_tab_bar(qtbot, open_window, size) -> None:  # type: ignore[no-untyped-def]
    win = open_window(size=size)
    settle()
    tabs = win.tabs
    bar = tabs.tabBar()
    assert not tabs.usesScrollButtons()
    shown = [i for i in range(tabs.count()) if tabs.isTabVisible(i)]
    texts = [tabs.tabText(i) for i in shown]
    assert texts in (FULL, SHORT), texts
    for index in shown:
        rect = bar.tabRect(index)
        assert rect.left() >= 0 and rect.right() <= bar.width(), (index, rect, bar.width())
        # whole, not elided: the text's own width fits the tab
        assert bar.fontMetrics().horizontalAdvance(tabs.tabText(index)) < rect.width()
        assert tabs.tabToolTip(index) == FULL[index]
        assert tabs.name_of(index) == FULL[index]
    if size[0] >= 1920:
        assert texts == FULL, "room enough for the full names"


def test_a_tab_is_found_by_either_name(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(size=(1024, 700))
    assert win.tabs.index_named("Computation graph") == win.tabs.indexOf(win.graph)
    assert win.tabs.index_named("Graph") == win.tabs.indexOf(win.graph)
    assert win.tabs.index_named("Nothing") == -1


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768)])
def test_the_build_tab_is_the_build_workspaces_alone(qtbot, open_window, size) -> None:  # type: ignore[no-untyped-def]
    """A sixth tab in the 370 px the docks leave the main views elided every name."""
    win = open_window(size=size)
    tabs = win.tabs
    build = tabs.indexOf(win.build)
    assert not tabs.isTabVisible(build)
    win.workspaces.switch("build")
    settle()
    assert tabs.isTabVisible(build) and tabs.currentIndex() == build
    rect = tabs.tabBar().tabRect(build)
    assert tabs.tabBar().fontMetrics().horizontalAdvance(tabs.tabText(build)) < rect.width()
    win.workspaces.switch("train")
    settle()
    assert not tabs.isTabVisible(build)
    assert [tabs.tabText(i) for i in range(tabs.count()) if tabs.isTabVisible(i)] in (FULL,
                                                                                      SHORT)
