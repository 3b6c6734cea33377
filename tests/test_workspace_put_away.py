"""A workspace keeps the panels the user arranged, not the ones a tab put away for its
room: the Graph tab puts the Designer, the loss curve and the loop away while it shows;
left for another workspace (or for teacher mode, then Ctrl+1) and back, the Train
workspace showed without them."""

from __future__ import annotations

from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

TRAIN = ("Designer", "Loss curve", "Training loop")


def _train_on_the_graph_tab(qtbot, open_window) -> MainWindow:  # type: ignore[no-untyped-def]
    win = open_window()
    win.resize(1024, 700)
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700))
    win.workspaces.switch("train")
    settle()
    win.tabs.setCurrentWidget(win.graph)
    settle()
    assert not any(win.docks[title].isVisible() for title in TRAIN)  # put away for its room
    return win


def test_train_comes_back_whole_after_a_tab_put_panels_away(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = _train_on_the_graph_tab(qtbot, open_window)
    win.workspaces.switch("playground")
    settle()
    win.workspaces.switch("train")
    settle()
    assert all(win.docks[title].isVisible() for title in TRAIN)


def test_train_comes_back_whole_from_teacher_mode_on_the_graph_tab(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    """As seen in the real window: teacher mode on the Graph tab, then Ctrl+1."""
    win = _train_on_the_graph_tab(qtbot, open_window)
    win.lessons.set_teacher_mode(True)
    settle()
    win.workspaces.actions["train"].trigger()
    settle()
    assert all(win.docks[title].isVisible() for title in TRAIN)
