"""Errors stay on screen until read: unexpected ones, refusals, and failed exports."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from gradbox.views.window import errors
from gradbox.views.window.main_window import MainWindow

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process

TOO_MANY_PATHS = ("a = 0.5; b1 = a*a + a*a; "
                  + "; ".join(f"b{i} = b{i - 1} + b{i - 1}" for i in range(2, 61))
                  + "; tanh(b60)")


def open_boxes(win: MainWindow) -> list[QMessageBox]:
    return [b for b in win.findChildren(QMessageBox) if b.isVisible()]


def raise_and_report(hook, message: str) -> None:  # type: ignore[no-untyped-def]
    try:
        raise RuntimeError(message)
    except RuntimeError:
        hook(*sys.exc_info())


@pytest.fixture
def hooked(window: MainWindow, monkeypatch) -> MainWindow:  # type: ignore[no-untyped-def]
    """The window with the app's exception hook installed (the old hooks come back after)."""
    monkeypatch.delenv("GRADBOX_NO_DIALOGS", raising=False)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    errors.install_excepthook(window.errors)
    return window


def test_unexpected_error_dialog_stays_on_screen(qtbot, hooked: MainWindow, settle) -> None:  # type: ignore[no-untyped-def]
    window = hooked
    raise_and_report(sys.excepthook, "boom in a slot")
    qtbot.waitUntil(lambda: bool(open_boxes(window)))
    settle()  # deferred deletes too: a box no one holds would be gone now
    boxes = open_boxes(window)
    assert len(boxes) == 1, "shown, and not deleted when the hook returned"
    assert "RuntimeError: boom in a slot" in boxes[0].text()
    assert "boom in a slot" in boxes[0].detailedText()  # the traceback
    assert boxes[0].parent() is window
    # A second error while the first is open is added to it, not stacked over it.
    raise_and_report(sys.excepthook, "second")
    qtbot.waitUntil(lambda: "second" in boxes[0].detailedText())
    settle()
    assert open_boxes(window) == boxes
    assert "second" in boxes[0].detailedText()
    # ... and named in its text, not hidden in the collapsed details.
    assert boxes[0].text().startswith("2 unexpected errors:\n1. RuntimeError: boom in a slot"
                                      "\n2. RuntimeError: second")
    for i in range(3, 12):
        raise_and_report(sys.excepthook, f"error {i}")
    qtbot.waitUntil(lambda: "8. RuntimeError: error 8\n… and 3 more" in boxes[0].text())
    boxes[0].accept()
    qtbot.waitUntil(lambda: not open_boxes(window))


def test_an_error_in_another_thread_is_shown_by_the_ui_thread(qtbot, hooked: MainWindow,  # type: ignore[no-untyped-def]
                                                             settle) -> None:
    window = hooked

    def fail() -> None:
        raise ValueError("from a worker")

    worker = threading.Thread(target=fail)
    worker.start()
    worker.join()
    qtbot.waitUntil(lambda: bool(open_boxes(window)))
    settle()  # one box, not one more once everything queued has arrived
    (box,) = open_boxes(window)
    assert "ValueError: from a worker" in box.text()


def test_playground_wrong_order_with_too_many_paths_says_so_in_place(
        qtbot, window: MainWindow) -> None:  # type: ignore[no-untyped-def]
    panel = window.playground
    window.show_playground(TOO_MANY_PATHS, None, "wrong order", False)
    qtbot.mouseClick(panel.backward_button, Qt.LeftButton)
    text = panel.message_text()
    assert "Too many paths" in text
    assert "4,611,686,018,427,387,904" in text  # the count the recursion would make
    assert not open_boxes(window)


def test_csv_label_of_5000_digits_is_refused_with_a_short_message(
        qtbot, window: MainWindow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    before = window.controller.snapshot.points
    path = tmp_path / "huge.csv"
    path.write_text("x,y,label\n0.1,0.2,0\n0.3,0.4," + "1" * 5000 + "\n")
    window.files.import_csv(path)  # read off the UI thread: the message comes after
    qtbot.waitUntil(lambda: window.error_box is not None and window.error_box.isVisible())
    text = window.error_box.text()
    assert "line 3: label must be a class number" in text
    assert "(5,000 characters)" in text and len(text) < 300
    np.testing.assert_array_equal(window.controller.snapshot.points, before)


@pytest.mark.parametrize("plot", ["boundary", "loss_curve"])
def test_failed_png_export_says_so_and_names_the_file(qtbot, window: MainWindow, tmp_path: Path,
                                                      plot: str) -> None:  # type: ignore[no-untyped-def]
    messages: list[str] = []
    window.messages.shown.connect(messages.append)
    target = tmp_path / "no such folder" / "plot.png"
    assert not window.files.export_plot(getattr(window, plot), target)
    assert window.error_box is not None and window.error_box.isVisible()
    assert "plot.png was not saved" in window.error_box.text()
    assert not any("Saved" in m for m in messages)
    assert not target.exists()
    # and a writable path still works, and says so
    assert window.files.export_plot(getattr(window, plot), tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 0
    assert any("Saved plot.png" in m for m in messages)


def test_a_message_stays_until_dismissed_or_replaced(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                     settle) -> None:
    window.controller.message.emit("Replaced the run before (12 steps): Ctrl+Z brings it back")
    bar = window.messages
    assert bar.isVisible() and "Ctrl+Z brings it back" in bar.text()
    # A status tip on hover, and what that queues, do not take it away.
    window.statusBar().showMessage("a button's status tip")
    settle()
    assert bar.isVisible() and "Ctrl+Z brings it back" in bar.text()
    window.controller.message.emit("Saved run.gradbox")
    assert bar.text() == "Saved run.gradbox"
    qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
    assert not bar.isVisible() and bar.text() == ""


def test_a_long_message_elides_and_never_widens_the_window(qtbot, window: MainWindow,  # type: ignore[no-untyped-def]
                                                           settle) -> None:
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.width() == 1024)
    text = "A very long message about what happened. " * 12
    window.controller.message.emit(text)
    settle()  # the layout requests the message made
    assert window.width() == 1024
    assert window.messages.label.toolTip() == text  # all of it, on hover
    assert window.messages.geometry().right() <= window.width()


def test_the_graph_panels_failed_export_is_said_by_the_windows_reporter(  # type: ignore[no-untyped-def]
        qtbot, window: MainWindow, tmp_path: Path, monkeypatch) -> None:
    """The graph's own Export ▾ said a failure in a box of its own that held the UI
    thread (exec) and was not the window's: now the window's reporter says it, and the
    window stays usable behind it. (An SVG that could not be opened was not a failure
    at all: Qt's painter stayed inactive and nothing said so.)"""
    from PySide6.QtWidgets import QFileDialog
    target = tmp_path / "no such folder" / "graph.svg"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *_args, **_kw: (str(target), "")))
    window.graph._export_svg()  # returns: nothing waits for the box to be closed
    box = window.error_box
    assert box is not None and box.isVisible() and box in window.errors.boxes
    assert box.windowTitle() == "Could not export the graph"
    assert "graph.svg" in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText  # it names the file
