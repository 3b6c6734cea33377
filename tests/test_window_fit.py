"""A window that fits: 1024 x 700 to 1920 x 1080, the Designer whole at 1400 x 900, big
current numbers, a legend off the curves, icons, --version."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

import pytest

from gradbox import __version__
from gradbox.views.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[1]


def shown_at(qtbot, open_window, width: int, height: int) -> MainWindow:  # type: ignore[no-untyped-def]
    win = open_window()
    win.resize(width, height)
    qtbot.waitUntil(lambda: win.width() == width and win.height() == height, timeout=3000)
    qtbot.wait(50)  # the docks' fit for the new size is queued
    return win


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768), (1400, 900),
                                               (1920, 1080)])
def test_everything_fits(qtbot, open_window, width: int, height: int) -> None:  # type: ignore[no-untyped-def]
    win = shown_at(qtbot, open_window, width, height)
    assert win.minimumSizeHint().width() <= 1024, "nothing forces the window wider"
    designer = win.docks["Designer"].widget()
    assert not designer.horizontalScrollBar().isVisible()
    plot = win.boundary.plot
    assert plot.width() >= 0.35 * width and plot.height() >= 0.22 * height, plot.size()
    for dock in win.docks.values():
        if dock.isVisible():
            assert dock.geometry().right() <= width and dock.geometry().bottom() <= height


def test_the_designer_needs_no_scrolling_at_1400x900(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = shown_at(qtbot, open_window, 1400, 900)
    area = win.docks["Designer"].widget()
    assert area.viewport().height() >= win.designer.sizeHint().height()
    assert not area.verticalScrollBar().isVisible()


def test_big_numbers_show_the_latest_step(qtbot, open_window, step_session) -> None:  # type: ignore[no-untyped-def]
    win = open_window()
    assert win.headline.values["loss"].text() == "–"
    step_session(win.controller, 3)
    last = win.controller.snapshot.history[-1]
    assert win.headline.values["loss"].text() == f"{last.loss:.4g}"
    assert win.headline.values["test_accuracy"].text() == f"{100 * last.test_accuracy:.1f}%"
    assert win.headline.captions["loss"].text() == "Train loss (+L2)"
    big = win.headline.values["loss"].font().pointSizeF()
    assert big >= 1.4 * win.font().pointSizeF()


def test_the_legend_sits_above_the_curves(qtbot, open_window, step_session) -> None:  # type: ignore[no-untyped-def]
    win = open_window()
    step_session(win.controller, 2)
    view = win.loss_curve
    legend = view.loss_legend.sceneBoundingRect()
    for plot in (view.loss_plot, view.accuracy_plot, view.grad_plot):
        assert not legend.intersects(plot.getViewBox().sceneBoundingRect())
    # No two axis labels overlap ("grad norm accuracy" ran together when stacked).
    labels = [plot.getAxis(side).label.sceneBoundingRect()
              for plot in (view.loss_plot, view.accuracy_plot, view.grad_plot)
              for side in ("left", "bottom") if plot.getAxis(side).label.isVisible()]
    assert len(labels) == 3
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not a.intersects(b), (a, b)


def test_toolbar_buttons_have_icons_and_the_app_an_icon_and_desktop_file(open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window()
    for action in (win.toolbar.step_action, win.toolbar.substep_action,
                   win.toolbar.run_action, win.toolbar.reset_action, win.toolbar.reinit_action):
        assert not action.icon().isNull(), action.text()
    assert (ROOT / "resources" / "gradbox.svg").is_file()
    desktop = configparser.ConfigParser(interpolation=None)
    desktop.read(ROOT / "resources" / "gradbox.desktop")
    entry = desktop["Desktop Entry"]
    assert entry["Exec"].startswith("gradbox") and entry["Icon"] == "gradbox"
    assert entry["Type"] == "Application"


def test_version_option() -> None:
    done = subprocess.run([sys.executable, "-m", "gradbox", "--version"], capture_output=True,
                          text=True, timeout=60, env={"PYTHONPATH": str(ROOT / "src"),
                                                      "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0
    assert done.stdout.strip() == f"gradbox {__version__}"
