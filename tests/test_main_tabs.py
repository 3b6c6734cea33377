"""The main views' tabs all stay on show at the sizes learners have: none behind arrows."""

from __future__ import annotations

import pytest

from qt_waits import settle

FULL = ["Decision boundary", "Computation graph", "Layers", "Landscape", "Playground",
        "Build it yourself"]
SHORT = ["Boundary", "Graph", "Layers", "Landscape", "Playground", "Build"]


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768), (1920, 1080)])
def test_every_tab_is_whole_inside_the_tab_bar(qtbot, open_window, size) -> None:  # type: ignore[no-untyped-def]
    win = open_window(size=size)
    settle()
    tabs = win.tabs
    bar = tabs.tabBar()
    assert not tabs.usesScrollButtons()
    texts = [tabs.tabText(i) for i in range(tabs.count())]
    assert texts in (FULL, SHORT), texts
    for index in range(tabs.count()):
        rect = bar.tabRect(index)
        assert rect.left() >= 0 and rect.right() <= bar.width(), (index, rect, bar.width())
        # whole, not elided: the text's own width fits the tab
        assert bar.fontMetrics().horizontalAdvance(texts[index]) < rect.width()
        assert tabs.tabToolTip(index) == FULL[index]
        assert tabs.name_of(index) == FULL[index]
    if size[0] >= 1920:
        assert texts == FULL, "room enough for the full names"


def test_a_tab_is_found_by_either_name(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(size=(1024, 700))
    assert win.tabs.index_named("Computation graph") == win.tabs.indexOf(win.graph)
    assert win.tabs.index_named("Graph") == win.tabs.indexOf(win.graph)
    assert win.tabs.index_named("Nothing") == -1
