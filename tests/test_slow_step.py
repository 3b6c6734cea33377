"""A slow step is seen (issue 32, item 17): a step that takes longer than a moment says
so while it is computed (a 3 s step showed nothing until its snapshot came)."""

from __future__ import annotations


def test_a_step_longer_than_a_moment_shows_it_is_being_computed(  # type: ignore[no-untyped-def]
        qtbot, open_window, monkeypatch) -> None:
    win = open_window((1024, 700))
    counter = win.toolbar.counter
    qtbot.waitUntil(lambda: counter.text() == "step 0")
    # The training process's flag, as a 3 s step holds it (23 layers x 100,000 points).
    under_way = [True]
    monkeypatch.setattr(type(win.controller), "stepping", property(lambda _port: under_way[0]))
    qtbot.waitUntil(lambda: "computing step 1…" in counter.text(), timeout=5_000)
    first = counter.text()
    qtbot.waitUntil(lambda: counter.text() != first)  # it moves: the app is not frozen
    assert "computing step 1…" in counter.text()
    assert counter.fontMetrics().horizontalAdvance(counter.text()) <= counter.width()
    under_way[0] = False  # the snapshot is in: the counter says where the run is
    qtbot.waitUntil(lambda: counter.text() == "step 0")
