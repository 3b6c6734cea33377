"""A workspace keeps the panels the user arranged, not the ones a tab put away for its
room: the Graph tab puts the Designer, the loss curve and the loop away while it shows;
left for another workspace (or at quit) and back, the Train workspace showed without them."""

from __future__ import annotations

from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

TRAIN = ("Designer", "Loss curve", "Training loop")


def _graph_tab(win: MainWindow) -> None:
    win.tabs.setCurrentWidget(win.graph)
    settle()
    assert not any(win.docks[title].isVisible() for title in TRAIN)  # put away for its room


def test_train_comes_back_whole_after_a_tab_put_panels_away(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window()
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700))
    win.workspaces.switch("train")
    settle()
    _graph_tab(win)
    win.workspaces.switch("playground")
    settle()
    win.workspaces.switch("train")
    settle()
    assert all(win.docks[title].isVisible() for title in TRAIN)


def test_train_comes_back_whole_after_a_quit_on_the_graph_tab(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    win = open_window()
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700))
    win.workspaces.switch("train")
    settle()
    _graph_tab(win)
    win.save_settings()  # as a quit does
    win.workspaces.switch("graph")
    settle()
    win.workspaces.switch("train")
    settle()
    assert all(win.docks[title].isVisible() for title in TRAIN)
