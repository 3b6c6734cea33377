"""The loss curve shows the history of the snapshot: one point per step, values as recorded."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from gradbox.training import history_arrays
from gradbox.views.loss_curve import LossCurveView


@pytest.fixture
def view(controller, show_widget):  # type: ignore[no-untyped-def]
    return show_widget(LossCurveView(controller))


def test_starts_empty_with_a_hint(view) -> None:  # type: ignore[no-untyped-def]
    assert view.empty_text.isVisible()
    xs, _ = view.curves["loss"].getData()
    assert xs is None or len(xs) == 0
    assert view.readout.text() == "No steps yet"


def test_one_point_per_step_with_the_recorded_values(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 4)
    history = history_arrays(controller.snapshot.history)
    xs, ys = view.curves["loss"].getData()
    np.testing.assert_array_equal(xs, [1, 2, 3, 4])
    np.testing.assert_array_equal(ys, history["loss"])
    for name in ("test_loss", "accuracy", "test_accuracy", "grad_norm"):
        np.testing.assert_array_equal(view.curves[name].getData()[1], history[name])
    assert not view.empty_text.isVisible()
    # The default data has a test set: its loss is drawn and listed in the legend.
    assert view.curves["test_loss"].isVisible()
    assert view.loss_legend.getLabel(view.curves["test_loss"]) is not None


def test_step_adds_a_point(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 2)
    assert len(view.curves["loss"].getData()[0]) == 2
    step_session(controller)
    assert len(view.curves["loss"].getData()[0]) == 3
    assert view.curves["loss"].getData()[1][-1] == controller.snapshot.history[-1].loss


def test_rewind_shortens_the_curve(controller, view, step_session, after_snapshot) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 5)
    after_snapshot(controller, controller.rewind, 2)
    np.testing.assert_array_equal(view.curves["loss"].getData()[0], [1, 2])
    after_snapshot(controller, controller.reset)
    assert view.empty_text.isVisible()


def test_ghost_loss_is_dashed_and_only_shown_with_a_ghost_run(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    ghost = view.curves["ghost_loss"]
    step_session(controller)
    assert not ghost.isVisible()
    assert view.loss_legend.getLabel(ghost) is None
    after_snapshot(controller, controller.set_forget_zero_grad, True)
    after_snapshot(controller, controller.set_ghost, True)
    step_session(controller, 3)
    assert ghost.isVisible()
    assert view.loss_legend.getLabel(ghost) is not None
    history = history_arrays(controller.snapshot.history)
    np.testing.assert_array_equal(ghost.getData()[1], history["ghost_loss"])
    assert np.isnan(history["ghost_loss"][0]) and np.isfinite(history["ghost_loss"][1:]).all()
    assert ghost.opts["pen"].style() != view.curves["loss"].opts["pen"].style()
    # The broken run and the correct one drift apart.
    assert history["loss"][-1] != history["ghost_loss"][-1]


def test_log_toggle_switches_the_loss_axis(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 3)
    assert not view.loss_plot.getAxis("left").logMode
    view.log_scale.click()
    assert view.loss_plot.getAxis("left").logMode
    assert view.grad_plot.getAxis("left").logMode
    assert not view.accuracy_plot.getAxis("left").logMode
    # What is drawn is log10 of the data.
    shown = view.curves["loss"].getData()[1]
    np.testing.assert_allclose(shown, np.log10(history_arrays(controller.snapshot.history)["loss"]))
    view.log_scale.click()
    assert not view.loss_plot.getAxis("left").logMode


def test_hover_shows_the_step_under_the_mouse(qtbot, controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 6)
    box = view.loss_plot.getViewBox()
    qtbot.waitUntil(lambda: box.viewRange()[0][1] >= 6)
    mid = box.viewRange()[1]
    scene = box.mapViewToScene(QPointF(3, sum(mid) / 2))
    qtbot.mouseMove(view.graphics.viewport(), view.graphics.mapFromScene(scene))
    qtbot.waitUntil(lambda: "Step 3" in view.readout.text())
    record = controller.snapshot.history[2]
    assert f"train loss {record.loss:.4g}" in view.readout.text()
    assert all(line.isVisible() and line.value() == 3 for line in view.crosshairs)
    # Leaving the plots puts the readout back on the latest step.
    QApplication.sendEvent(view.graphics, QEvent(QEvent.Type.Leave))
    assert "Step 6 (latest)" in view.readout.text()
    assert not view.crosshairs[0].isVisible()


def test_hover_readout_is_clamped_to_the_run(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 2)
    view.show_step(50)
    assert "Step 2" in view.readout.text()
    view.show_step(-3)
    assert "Step 1" in view.readout.text()


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_export_image(controller, view, tmp_path, suffix: str, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 2)
    path = tmp_path / f"loss.{suffix}"
    view.export_image(path)
    if suffix == "png":
        assert path.read_bytes().startswith(b"\x89PNG")
    else:
        assert QSvgRenderer(str(path)).isValid()


def test_controls_are_labelled(view) -> None:  # type: ignore[no-untyped-def]
    for widget in (view.log_scale, view.readout, view.graphics):
        assert widget.accessibleName()
        assert widget.toolTip()
