"""A slow step is seen (issue 32, item 17): the slow-step warning shows whole at
1024x700, its Undo part included (it was cut with '…' before 'Undo'), and a step that
takes longer than a moment says so while it is computed."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt

from qt_waits import settle

# What the session says after the Designer's change to 23 layers x 100,000 points.
SLOW = ("New network and data from step 0. Warning: 226,817 parameters × 100,000 samples: "
        "each step will take about 3.1 s on this machine and need about 1,812 MB: the run "
        "at step 40 comes back with Edit → Undo (Ctrl+Z)")


def test_the_slow_step_warning_shows_whole_with_its_undo(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1024, 700))
    win.messages.show_message(SLOW)
    settle()
    label = win.messages.label
    room = label.contentsRect()
    needed = label.fontMetrics().boundingRect(
        QRect(0, 0, room.width(), 100_000), int(Qt.TextFlag.TextWordWrap), SLOW)
    assert label.text() == SLOW
    one_line = label.fontMetrics().horizontalAdvance(SLOW) <= room.width()
    wrapped = label.wordWrap() and needed.height() <= room.height()
    assert one_line or wrapped, (needed, room)  # every line, "Undo" too
    assert win.size().toTuple() == (1024, 700)  # the window does not grow for it
    win.messages.dismiss()
    settle()
    assert win.size().toTuple() == (1024, 700)


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
