"""The Landscape tab at 1024x700 shows its plane's name and its colour bar's values whole
(issue 32, cosmetic): the name read "Path's main directi…" (its room went to a "Plane:"
label and a spacer) and the colour bar's top value was cut in half at the plot's top."""

from __future__ import annotations

from axis_labels import tick_labels
from qt_waits import settle


def test_the_planes_name_and_the_colour_bars_values_show_whole(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session) -> None:
    win = open_window((1024, 700))
    step_session(win.controller, 5)
    view = win.landscape
    win.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.result is not None, timeout=20_000)
    settle()
    # The plane it opens on (the others add their own controls to the row, and elide
    # there, their whole name in the tooltip).
    assert view.mode.currentData() == "pca"
    assert not view.mode.is_elided() and view.mode.shown_text() == "Path's main directions"
    axis = view.colour_bar.axis
    labels = tick_labels(axis)
    assert labels
    port = view.plot.viewport().rect()
    for rect, text in labels:
        shown = view.plot.mapFromScene(axis.mapRectToScene(rect)).boundingRect()
        assert port.contains(shown), (text, shown, port)
