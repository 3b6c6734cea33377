"""The views of issue 15: per-layer statistics, the loss landscape, a pinned run on the
loss curve, and the mini-batch on the decision boundary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QThread

from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.plots.boundary import DecisionBoundaryView
from gradbox.views.plots.landscape_view import LandscapeView
from gradbox.views.plots.layer_stats_view import LayerStatsView
from gradbox.views.plots.loss_curve import LossCurveView

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


def test_layer_view_draws_each_layers_gradient_per_step(controller, show_widget,  # type: ignore[no-untyped-def]
                                                      step_session) -> None:
    view = show_widget(LayerStatsView(controller))
    assert len(view.grad_curves) == 3  # hidden 1, hidden 2, output
    assert view.empty_text.isVisible()
    step_session(controller, 3)
    history = controller.snapshot.history
    for k, curve in enumerate(view.grad_curves):
        xs, ys = curve.getOriginalDataset()  # getData() holds log10 on the log axis
        np.testing.assert_array_equal(xs, [1, 2, 3])
        np.testing.assert_array_equal(ys, [r.layers.grad[k] for r in history])
    band = view._act_items[0]
    fills = [item for item in view.act_plots[0].items if type(item).__name__ == "FillBetweenItem"]
    assert len(fills) == 2 and all(f.path().boundingRect().height() > 0 for f in fills)
    np.testing.assert_array_equal(band["1"].getData()[1],
                                  [r.layers.quantiles[0, 1] for r in history])  # 10 %
    median = band["median"].getData()[1]
    np.testing.assert_array_equal(median, [r.layers.quantiles[0, 3] for r in history])
    assert "Step 3" in view.readout.text()
    factor = history[-1].layers.grad[-1] / history[-1].layers.grad[0]
    assert f"{factor:.3g}×" in view.readout.text()
    assert f"hidden 1 (8): {history[-1].layers.grad[0]:.2g}" in view.readout.toolTip()
    assert not view.empty_text.isVisible()


def test_layer_view_follows_a_new_network(make_session, show_widget, step_session,  # type: ignore[no-untyped-def]
                                          after_snapshot) -> None:
    session = make_session(hidden=(4, 4, 4), activation="sigmoid")
    view = show_widget(LayerStatsView(session))
    step_session(session, 1)
    assert len(view.grad_curves) == 4 and len(view.act_plots) == 3
    after_snapshot(session, session.apply_config,
                   session.snapshot.config.with_changes(hidden=(5,)))
    assert len(view.grad_curves) == 2 and len(view.act_plots) == 1
    assert len(view.grad_curves[0].getData()[0] or []) == 0


def test_landscape_is_computed_off_the_ui_thread_and_holds_the_current_loss(  # type: ignore[no-untyped-def]
        qtbot, controller, show_widget, step_session, monkeypatch) -> None:
    from gradbox.training import landscape
    threads = []
    original = landscape.compute

    def spy(request):  # type: ignore[no-untyped-def]
        threads.append(QThread.currentThread())
        return original(request)
    monkeypatch.setattr(landscape, "compute", spy)
    view = show_widget(LandscapeView(controller))
    step_session(controller, 4)
    qtbot.waitUntil(lambda: view.result is not None and len(view.result.path_xy) == 5,
                    timeout=20000)
    ui = QThread.currentThread()
    assert threads and all(t is not ui for t in threads)
    states = []
    controller.ask(Session.state, callback=states.append)
    qtbot.waitUntil(lambda: bool(states))
    # The whole run continues bit for bit here: its training loss is the one over there.
    expected = [Trainer.from_state(states[0]).training_loss()]
    assert view.result.center_loss == pytest.approx(expected[0], rel=1e-12)
    assert view.result.loss_at(0, 0) == pytest.approx(expected[0], rel=1e-12)
    assert f"{expected[0]:.4g}" in view.status.text()
    # The path and the current weights are drawn where the result puts them.
    xs, ys = view.path.getData()
    np.testing.assert_array_equal(np.column_stack([xs, ys]), view.result.path_xy)


def test_landscape_modes_and_axes(qtbot, controller, show_widget, step_session) -> None:  # type: ignore[no-untyped-def]
    view = show_widget(LandscapeView(controller))
    step_session(controller, 2)
    view.set_mode("parameters")
    assert view.axis_x.isVisible() and view.axis_y.isVisible()
    view.axis_y.setCurrentIndex(5)
    qtbot.waitUntil(lambda: view.result is not None and view.result.mode == "parameters"
                    and view.result.directions[1, 5] == 1.0, timeout=20000)
    assert controller.snapshot.param_names[5] in view.plot.getPlotItem().getAxis(
        "left").labelText
    view.set_mode("random")
    assert view.new_directions.isVisible() and not view.axis_x.isVisible()
    qtbot.waitUntil(lambda: view.result.mode == "random", timeout=20000)
    before = view.result.directions.copy()
    view.new_directions.click()
    qtbot.waitUntil(lambda: not np.array_equal(view.result.directions, before),
                    timeout=20000)


def test_a_pinned_run_is_drawn_under_the_current_one(controller, show_widget,  # type: ignore[no-untyped-def]
                                                     step_session, after_snapshot) -> None:
    view = show_widget(LossCurveView(controller))
    assert not view.pinned.pin_button.isEnabled()  # nothing to pin at step 0
    step_session(controller, 4)
    pinned_losses = [r.loss for r in controller.snapshot.history]
    after_snapshot(controller, view.pinned.pin_button.click)
    config = controller.snapshot.config.with_changes(lr=0.1, optimizer="adam")
    after_snapshot(controller, controller.apply_config, config)
    assert controller.snapshot.step == 0 and controller.snapshot.pinned is not None
    step_session(controller, 2)
    xs, ys = view.pinned.curves["loss"].getData()
    np.testing.assert_array_equal(xs, [1, 2, 3, 4])
    np.testing.assert_array_equal(ys, pinned_losses)
    assert view.pinned.curves["accuracy"].isVisible()
    label = view.loss_legend.getLabel(view.pinned.curves["loss"]).text
    assert "optimizer sgd → adam" in label and "lr 0.5 → 0.1" in label
    view.show_step(2)
    assert f"pinned: loss {pinned_losses[1]:.4g}" in view.readout.text()
    after_snapshot(controller, view.pinned.unpin_button.click)
    assert not view.pinned.curves["loss"].isVisible()
    assert view.loss_legend.getLabel(view.pinned.curves["loss"]) is None


def test_the_pinned_run_survives_save_and_load_in_the_window(  # type: ignore[no-untyped-def]
        qtbot, window, tmp_path: Path, step_session, after_snapshot) -> None:
    controller = window.controller
    step_session(controller, 3)
    after_snapshot(controller, controller.pin_run)
    path = tmp_path / "pinned.gradbox.json"
    window.files._save_to(path)
    qtbot.waitUntil(path.exists)
    pinned = controller.snapshot.pinned
    after_snapshot(controller, window.files.new_session)
    assert controller.snapshot.pinned is None
    assert window.loss_curve.pinned.curves["loss"].isVisible() is False
    after_snapshot(controller, window.files.open_session, path)
    assert controller.snapshot.pinned.history == pinned.history
    xs, _ = window.loss_curve.pinned.curves["loss"].getData()
    np.testing.assert_array_equal(xs, [1, 2, 3])


def test_the_batch_is_framed_and_each_point_tells_its_loss(make_session, show_widget,  # type: ignore[no-untyped-def]
                                                           step_session) -> None:
    session = make_session(batch_size=10, n_samples=60)
    view = show_widget(DecisionBoundaryView(session))
    assert len(view.batch.frames.data) == 0  # no step yet, no batch
    step_session(session, 2)
    snapshot = session.snapshot
    batch = snapshot.batch
    assert len(batch) == 10
    framed = np.column_stack([view.batch.frames.data["x"], view.batch.frames.data["y"]])
    np.testing.assert_array_equal(framed, snapshot.points[batch])
    # The batch is the one the step trained on: step 2's, drawn by the same rule.
    trainer = Trainer(snapshot.config)
    np.testing.assert_array_equal(batch, trainer.batch_indices(1))
    index = int(batch[0])
    # Resting the mouse on a point asks the overlay which one it is.
    scene_pos = view.batch.view_box.mapViewToScene(QPointF(*snapshot.points[index]))
    assert view.batch.point_at(scene_pos) == index
    text = view.batch.describe(index)
    assert f"in the batch of step {snapshot.step}" in text
    out = snapshot.predict(snapshot.points[index: index + 1])[0, 0]
    y = 2 * snapshot.labels[index] - 1
    assert f"loss {max(0.0, 1 - y * out):.4g}" in text  # hinge, by hand
    outside = int(np.setdiff1d(np.flatnonzero(~snapshot.is_test), batch)[0])
    assert "not in the batch" in view.batch.describe(outside)
    view.batch.toggle.setChecked(False)
    assert not view.batch.frames.isVisible()


def test_full_batch_frames_nothing(controller, show_widget, step_session) -> None:  # type: ignore[no-untyped-def]
    view = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 1)
    assert len(controller.snapshot.batch) > 0
    assert len(view.batch.frames.data) == 0 and view.batch.full
    train = int(np.flatnonzero(~controller.snapshot.is_test)[0])
    assert "batch" not in view.batch.describe(train)


def test_the_pinned_runs_values_show_past_the_current_runs_last_step(  # type: ignore[no-untyped-def]
        qtbot, controller, show_widget, step_session, after_snapshot) -> None:
    view = show_widget(LossCurveView(controller))
    step_session(controller, 6)
    pinned = controller.snapshot.history
    after_snapshot(controller, view.pinned.pin_button.click)
    after_snapshot(controller, controller.apply_config,
                   controller.snapshot.config.with_changes(lr=0.1, optimizer="adam"))
    assert controller.snapshot.step == 0
    # No step of the new run yet: the pinned run's curves and values are there already.
    assert view.loss_plot.getViewBox().viewRange()[0][1] >= 6
    view.show_step(4)
    assert "Step 4" in view.readout.text() and "no steps yet" in view.readout.text()
    assert f"pinned: loss {pinned[3].loss:.4g}" in view.readout.text()
    view.show_step(None)
    assert "No steps yet" in view.readout.text()
    step_session(controller, 2)
    box = view.loss_plot.getViewBox()
    assert box.viewRange()[0][1] >= 6  # the longer pinned run is in view, whole

    def hover(step: float) -> None:  # the mouse over the loss plot at `step`
        y = sum(box.viewRange()[1]) / 2
        view.graphics.scene().sigMouseMoved.emit(box.mapViewToScene(QPointF(step, y)))

    hover(5)  # past the current run's step 2, over the pinned run
    text = view.readout.text()
    assert "<b>Step 5</b>" in text and "this run is at step 2" in text
    assert f"pinned: loss {pinned[4].loss:.4g}" in text
    assert f"test {pinned[4].test_loss:.4g}" in text
    assert all(line.value() == 5 and line.isVisible() for line in view.crosshairs)
    hover(2)  # both runs: the current run's values and the pinned run's
    assert "train loss" in view.readout.text()
    assert f"pinned: loss {pinned[1].loss:.4g}" in view.readout.text()
    view.show_step(40)  # past both: the pinned run's last step
    assert "<b>Step 6</b>" in view.readout.text()
    assert f"pinned: loss {pinned[5].loss:.4g}" in view.readout.text()
    # Run on past the pinned run: there the readout says where it ended.
    step_session(controller, 6)
    hover(7)
    assert "<b>Step 7</b>" in view.readout.text() and "train loss" in view.readout.text()
    assert "pinned run: ended at step 6" in view.readout.text()
    # Unpinned with the mouse past the current run: back onto a step that exists.
    view.show_step(8)
    after_snapshot(controller, view.pinned.unpin_button.click)
    view.show_step(40)
    assert "<b>Step 8</b>" in view.readout.text() and "pinned" not in view.readout.text()


def test_a_long_pinned_legend_never_widens_the_plots_past_a_narrow_panel(  # type: ignore[no-untyped-def]
        qtbot, controller, show_widget, step_session, after_snapshot) -> None:
    """A 250 px panel: the legend's 'pinned: optimizer sgd → adam, lr 0.5 → 0.1' made the
    plots' layout ~500 px wide, half of it cut off."""
    view = show_widget(LossCurveView(controller), 250, 230)
    step_session(controller, 3)
    after_snapshot(controller, view.pinned.pin_button.click)
    after_snapshot(controller, controller.apply_config,
                   controller.snapshot.config.with_changes(lr=0.1, optimizer="adam"))
    step_session(controller, 1)
    width = view.graphics.viewport().width()
    qtbot.waitUntil(lambda: view.graphics.ci.geometry().width() <= width + 0.5)
    for plot in (view.loss_plot, view.accuracy_plot, view.grad_plot):
        assert plot.geometry().right() <= width + 0.5
    assert view.grad_plot.geometry().width() > 40  # still there to read


def test_layer_view_of_a_64_layer_network_stays_readable(make_session, show_widget,  # type: ignore[no-untyped-def]
                                                        step_session) -> None:
    """The deepest network a file may hold: activation plots for the last few layers
    only, a curve per layer, and a key that names the ends rather than all 65 layers."""
    from gradbox.training.config import MAX_HIDDEN_LAYERS
    from gradbox.views.plots import layer_stats_view

    session = make_session(hidden=(2,) * MAX_HIDDEN_LAYERS, n_samples=20)
    view = show_widget(LayerStatsView(session))
    step_session(session, 1)
    assert len(view.grad_curves) == MAX_HIDDEN_LAYERS + 1
    assert len(view.act_plots) == layer_stats_view.MAX_LAYER_PLOTS
    text = view.legend.text().replace("&nbsp;", " ")
    assert f"each of {MAX_HIDDEN_LAYERS + 1} layers" in text and "hidden 1" in text
    assert "output" in text and "hidden 30" not in text and len(text) < 400
