"""Issue 15 in the views: the designer's inputs and initialization, the boundary view's
heat map (regression over the plane) and fitted curve (a 1-D function)."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt

from gradbox.port.in_process import InProcessPort
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.panels.designer import DesignerPanel
from gradbox.views.plots.boundary import DecisionBoundaryView
from gradbox.views.plots.heatmap import VALUE_TINT, value_colours, value_scale

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


@pytest.fixture
def make_controller(qtbot):  # type: ignore[no-untyped-def]
    made = []

    def make(**config):  # type: ignore[no-untyped-def]
        session = InProcessPort(Session(Trainer(TrainingConfig(**config))))
        made.append(session)
        return session

    yield make
    for session in made:
        session.shutdown()


def test_designer_inputs_and_init_reach_the_model(qtbot, controller, show_widget) -> None:  # type: ignore[no-untyped-def]
    designer = show_widget(DesignerPanel(controller), 420, 900)
    assert [n for n, box in designer.feature_boxes.items() if box.isChecked()] == ["x1", "x2"]
    qtbot.mouseClick(designer.feature_boxes["x1^2"], Qt.MouseButton.LeftButton)
    qtbot.mouseClick(designer.feature_boxes["sin x2"], Qt.MouseButton.LeftButton)
    designer.init.setCurrentIndex(designer.init.findData("he"))
    designer.init_scale.setValue(2.0)
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        designer.apply()
    qtbot.waitUntil(lambda: controller.snapshot.config.features == ("x1", "x2", "x1^2",
                                                                    "sin x2"), timeout=5000)
    config = controller.snapshot.config
    assert (config.init, config.init_scale) == ("he", 2.0)
    assert controller.snapshot.layer_sizes[0] == 4
    assert "MLP(4," in designer.summary.text()
    designer.init.setCurrentIndex(designer.init.findData("zeros"))
    assert not designer.init_scale.isEnabled()  # zeros has no scale


def test_designer_on_a_one_d_function_offers_only_what_fits(qtbot, controller,  # type: ignore[no-untyped-def]
                                                            show_widget) -> None:
    designer = show_widget(DesignerPanel(controller), 420, 900)
    designer.kind.setCurrentText("sine")
    assert not designer.feature_boxes["x2"].isEnabled()
    assert not designer.feature_boxes["x1*x2"].isEnabled()
    assert designer.feature_boxes["sin x1"].isEnabled()
    model = designer.loss.model()
    enabled = {designer.loss.itemData(i): model.item(i).isEnabled()
               for i in range(designer.loss.count())}
    assert enabled == {"hinge": False, "mse": True, "logistic": False, "softmax": False,
                       "mae": True, "huber": True}
    assert designer.loss.currentData() == "mse"  # hinge is for classes: the box follows
    designer.loss.setCurrentIndex(designer.loss.findData("mae"))
    designer.kind.setCurrentText("moons")
    assert designer.loss.currentData() == "hinge"  # MAE is for regression
    designer.kind.setCurrentText("sine")
    assert "x₁ alone" in designer.status.text()


def test_regression_over_the_plane_is_a_heat_map_of_the_prediction(  # type: ignore[no-untyped-def]
        qtbot, make_controller, show_widget, step_session) -> None:
    controller = make_controller(dataset="plane", hidden=(4,), lr=0.1)
    view = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 3)
    assert view.mode == "heat map" and view.view_box.state["aspectLocked"]
    snapshot = controller.snapshot
    n = view.grid_size
    expected = value_colours(snapshot.predict(view.grid_points())[:, 0],
                             scale=value_scale(snapshot.targets))
    # Within one unit of colour: the heat map's forward pass is in single precision.
    np.testing.assert_allclose(view.image.image, expected.reshape(n, n, 3), atol=1)
    # points wear their target's colour; a click adds a point with the picked target
    assert view.class_picker.itemText(1).startswith("target +1")
    view.class_picker.setCurrentIndex(1)
    before = len(snapshot.points)
    scene = view.view_box.mapViewToScene(QPointF(5.5, -5.5))
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.NoModifier, view.plot.mapFromScene(scene))
    assert len(controller.snapshot.points) == before + 1
    assert controller.snapshot.targets[-1] == 1.0


def test_a_one_d_function_shows_the_fitted_curve_over_its_points(  # type: ignore[no-untyped-def]
        qtbot, make_controller, show_widget, step_session) -> None:
    controller = make_controller(dataset="sine", hidden=(8,), lr=0.1)
    view = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 5)
    assert view.mode == "curve" and not view.view_box.state["aspectLocked"]
    assert not view.image.isVisible()
    xs, ys = view.curve_points()
    (x0, x1), _ = view.view_box.viewRange()
    assert len(xs) > 100 and xs[0] == pytest.approx(x0) and xs[-1] == pytest.approx(x1)
    expected = controller.snapshot.predict(np.column_stack([xs, np.zeros_like(xs)]))[:, 0]
    np.testing.assert_allclose(ys, expected, rtol=1e-12)
    # a click adds a point where it lands: its height is its target
    scene = view.view_box.mapViewToScene(QPointF(0.3, 1.4))
    pos: QPoint = view.plot.mapFromScene(scene)
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.NoModifier, pos)
    added = controller.snapshot
    assert added.targets[-1] == added.points[-1, 1]
    assert added.points[-1, 1] == pytest.approx(1.4, abs=0.05)


def test_switching_between_classes_and_regression_redraws_in_the_right_mode(  # type: ignore[no-untyped-def]
        qtbot, controller, show_widget) -> None:
    view = show_widget(DecisionBoundaryView(controller))
    assert view.mode == "classes"
    for kind, mode in (("sine", "curve"), ("multi_gaussian", "heat map"), ("moons", "classes")):
        with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
            controller.apply_config(controller.snapshot.config.with_changes(dataset=kind))
        qtbot.waitUntil(lambda kind=kind: controller.snapshot.config.dataset == kind,
                        timeout=5000)
        assert view.mode == mode
        assert view.image.isVisible() == (mode != "curve")


@pytest.mark.parametrize("config", [
    TrainingConfig(dataset="sine", features=("x1", "sin x1"), loss="huber", hidden=(3,)),
    TrainingConfig(dataset="circle", features=("x1^2", "x2^2", "x1*x2"), hidden=(3,)),
    TrainingConfig(dataset="plane", loss="mae", hidden=(2,), l1=0.01),
], ids=["sine-huber", "circle-features", "plane-mae"])
def test_the_playgrounds_network_check_passes_on_features_and_regression(
        config: TrainingConfig) -> None:
    """The playground's gradient check of the training network builds the same loss
    the trainer trains on: the network's features as inputs, the regression loss."""

    trainer = Trainer(config)
    trainer.run_steps(3)
    check = Session(trainer).command("gradient_check")
    assert len(check.names) == len(trainer.param_names) and check.passed(1e-6)


def test_the_heat_maps_colours_span_the_datasets_own_range(  # type: ignore[no-untyped-def]
        qtbot, make_controller, show_widget, step_session) -> None:
    """Multiple gaussians' targets stay within about ±0.9 (half of them 0): full colour is
    at the largest target, not at 1, and the key above the plot says so."""
    controller = make_controller(dataset="multi_gaussian", n_samples=200, hidden=(6,),
                                 lr=0.05)
    view = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 2)
    targets = controller.snapshot.targets
    scale = float(np.max(np.abs(targets)))
    assert 0.5 < scale < 1.0 and value_scale(targets) == scale
    # The heat map is the prediction on that scale.
    snapshot = controller.snapshot
    prediction = snapshot.predict(view.grid_points())[:, 0]
    n = view.grid_size
    np.testing.assert_allclose(view.image.image,  # single precision: within one unit
                               value_colours(prediction, scale=scale).reshape(n, n, 3), atol=1)
    # The same meaning as before: white at 0, orange below, blue above; full at ±scale.
    white, orange, blue = value_colours(np.array([0.0, -scale, scale]), tint=1.0, scale=scale)
    assert tuple(white) == (255, 255, 255)
    assert tuple(orange) == (0xf5, 0x93, 0x22) and tuple(blue) == (0x08, 0x77, 0xbd)
    # More colour than on a fixed ±1: the strongest target is full, not 0.9 of it.
    strongest = int(np.argmax(np.abs(targets)))
    brush = view.scatter.points()[strongest].brush().color()
    assert (brush.red(), brush.green(), brush.blue()) in ((0xf5, 0x93, 0x22), (0x08, 0x77, 0xbd))
    old = value_colours(prediction, tint=0.6)  # full at 1, as it was
    new = value_colours(prediction, scale=scale)
    assert np.abs(255 - new.astype(int)).mean() > 1.5 * np.abs(255 - old.astype(int)).mean()
    # The colour bar beside the plot tells what full colour means, in the heat map's
    # own colours, both ends written out.
    bar = view.value_bar
    assert bar.isVisible() and bar.parentItem() is not None
    assert bar.levels() == (-scale, scale)
    ticks = [text for _, text in bar.axis._tickLevels[0]]
    assert ticks == [f"−{scale:.2g}", "0", f"+{scale:.2g}"]
    assert f"+{scale:.2g}" in bar.toolTip() and "largest target" in bar.toolTip()
    ends = bar.colorMap().map(np.array([0.0, 0.5, 1.0]), mode="byte")[:, :3]
    np.testing.assert_array_equal(ends, value_colours(np.array([-scale, 0.0, scale]),
                                                      scale=scale))
    # A point of target +1 widens the range: the key and the picture follow at once.
    view.class_picker.setCurrentIndex(1)
    scene = view.view_box.mapViewToScene(QPointF(5.5, -5.5))
    with qtbot.waitSignal(controller.snapshot_changed, timeout=5000):
        qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.NoModifier, view.plot.mapFromScene(scene))
    assert bar.levels() == (-1.0, 1.0)
    assert [text for _, text in bar.axis._tickLevels[0]] == ["−1", "0", "+1"]
    prediction = controller.snapshot.predict(view.grid_points())[:, 0]
    np.testing.assert_allclose(view.image.image,
                               value_colours(prediction, scale=1.0).reshape(n, n, 3), atol=1)
    assert VALUE_TINT > 0.6


def test_the_colour_bar_shows_only_for_a_heat_map(  # type: ignore[no-untyped-def]
        make_controller, show_widget, after_snapshot) -> None:
    controller = make_controller(dataset="moons")
    view = show_widget(DecisionBoundaryView(controller))
    assert not view.value_bar.isVisible() and view.value_bar.parentItem() is None
    after_snapshot(controller, controller.apply_config,
                   controller.snapshot.config.with_changes(dataset="plane", loss="mse"))
    assert view.mode == "heat map" and view.value_bar.isVisible()
    after_snapshot(controller, controller.apply_config,
                   controller.snapshot.config.with_changes(dataset="sine"))
    assert view.mode == "curve" and not view.value_bar.isVisible()
    assert view.value_bar.parentItem() is None  # out of the layout: no empty column


def test_a_regressions_loss_curve_uses_the_room_accuracy_had(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                            step_session) -> None:
    """issue 32, item 23: sine with MAE, the loss plot was a 60 px strip beside blank
    space where accuracy was."""
    win = open_window((1366, 768), dataset="sine", loss="mae", hidden=(8,))
    step_session(win.controller, 3)
    view = win.loss_curve
    qtbot.waitUntil(lambda: not view.accuracy_plot.isVisible())
    loss = view.loss_plot.sceneBoundingRect()
    grad = view.grad_plot.sceneBoundingRect()
    assert loss.height() >= grad.height()  # its row keeps the larger share
    assert grad.width() >= 0.9 * loss.width()  # the grad norm takes the whole row
