"""The decision boundary view shows the snapshot's predictions and edits the data by mouse."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtSvg import QSvgRenderer

from gradbox.training.session import Session
from gradbox.views.plots.boundary import DecisionBoundaryView
from gradbox.views.plots.heatmap import heatmap_resolution, output_colours
from gradbox.views.plots.plotting import CLASS_COLOURS

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


@pytest.fixture
def view(controller, show_widget):  # type: ignore[no-untyped-def]
    return show_widget(DecisionBoundaryView(controller))


def _widget_pos(view: DecisionBoundaryView, x: float, y: float) -> QPoint:
    """Where the data point (x, y) is on the plot's viewport, in widget pixels."""
    scene = view.view_box.mapViewToScene(QPointF(x, y))
    return view.plot.mapFromScene(scene)


def _click(qtbot, view: DecisionBoundaryView, x: float, y: float,  # type: ignore[no-untyped-def]
           button: Qt.MouseButton = Qt.MouseButton.LeftButton,
           modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    qtbot.mouseClick(view.plot.viewport(), button, modifier, _widget_pos(view, x, y))


def _empty_spot(view: DecisionBoundaryView) -> tuple[float, float]:
    """A place inside the view at least 30 pixels from every point."""
    (x0, x1), (y0, y1) = view.view_box.viewRange()
    for fx in np.linspace(0.1, 0.9, 9):
        for fy in np.linspace(0.1, 0.9, 9):
            x, y = x0 + fx * (x1 - x0), y0 + fy * (y1 - y0)
            if view._nearest(x, y)[1] > 30:
                return x, y
    raise AssertionError("no empty spot in the view")


def test_heatmap_is_the_snapshots_prediction_on_the_grid(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 3)
    snapshot = controller.snapshot
    assert snapshot.step == 3
    grid = view.grid_points()
    assert view.grid_size == 100 and grid.shape == (100 * 100, 2)
    expected = output_colours(snapshot.predict(grid), snapshot.config.effective_loss)
    # Computed in single precision (a colour has 256 levels): at most one level apart.
    shown = view.image.image.astype(np.int64)
    assert np.abs(shown - expected.reshape(100, 100, 3).astype(np.int64)).max() <= 1
    # The grid covers what the plot shows, so the heatmap fills the visible plane.
    (x0, x1), (y0, y1) = view.view_box.viewRange()
    assert grid[:, 0].min() > x0 and grid[:, 0].max() < x1
    assert grid[:, 1].min() > y0 and grid[:, 1].max() < y1


def test_heatmap_follows_training(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    before = view.image.image.copy()
    step_session(controller, 2)
    assert not np.array_equal(before, view.image.image)


def test_colours_follow_the_predicted_class() -> None:
    # One output: positive score = class 1 (blue), negative = class 0 (orange); a zero
    # score is white (no confidence).
    rgb = output_colours(np.array([[5.0], [-5.0], [0.0]]), "hinge")
    blue, orange = np.array([8, 119, 189]), np.array([245, 147, 34])
    assert np.argmax(rgb[0]) == np.argmax(blue) and np.argmax(rgb[1]) == np.argmax(orange)
    np.testing.assert_array_equal(rgb[2], [255, 255, 255])
    # Several outputs: the argmax class, stronger with confidence.
    rgb3 = output_colours(np.array([[0.0, 0.0, 9.0], [0.0, 0.0, 0.5]]), "softmax")
    green = np.array([44, 160, 44])
    assert np.argmax(rgb3[0]) == np.argmax(green)
    assert rgb3[0].sum() < rgb3[1].sum()  # more confident = deeper colour
    assert len(CLASS_COLOURS) == 6


def test_big_networks_get_a_coarser_heatmap(make_session, show_widget) -> None:  # type: ignore[no-untyped-def]
    assert heatmap_resolution(105) == 100  # the default MLP(2, [8, 8, 1])
    assert heatmap_resolution(337) == 100  # micrograd's demo network
    assert 32 <= heatmap_resolution(8577) < 100  # MLP(2, [64, 64, 64, 1])
    session = make_session(hidden=(64, 64, 64), n_samples=10)
    widget = show_widget(DecisionBoundaryView(session))
    n = widget.grid_size
    assert n == heatmap_resolution(len(session.snapshot.params))
    grid = widget.grid_points()
    assert grid.shape == (n * n, 2)
    expected = output_colours(session.snapshot.predict(grid, dtype=np.float32), "hinge")
    np.testing.assert_array_equal(widget.image.image, expected.reshape(n, n, 3))


def test_a_big_networks_heatmap_comes_from_its_own_thread_and_is_the_same(  # type: ignore[no-untyped-def]
        qtbot, make_session, show_widget) -> None:
    # 66,561 parameters x 32 x 32 cells: over the inline budget, so computed off the UI
    # thread and shown when it arrives.
    session = make_session(hidden=(256, 256), n_samples=10)
    widget = show_widget(DecisionBoundaryView(session))
    qtbot.waitUntil(lambda: widget.heatmaps_computed >= 1, timeout=30000)
    n = widget.grid_size
    assert n == 32
    expected = output_colours(
        session.snapshot.predict(widget.grid_points(), dtype=np.float32), "hinge")
    np.testing.assert_array_equal(widget.image.image, expected.reshape(n, n, 3))


def test_the_heatmap_is_not_recomputed_for_the_same_model_nor_while_hidden(  # type: ignore[no-untyped-def]
        qtbot, controller, view, after_snapshot) -> None:
    computed = view.heatmaps_computed
    after_snapshot(controller, controller.send, Session.unpin)  # a snapshot, same weights
    assert view.heatmaps_computed == computed
    view.hide()
    after_snapshot(controller, controller.step)
    assert view.heatmaps_computed == computed  # nobody would see it
    view.show()
    assert view.heatmaps_computed == computed + 1  # shown: brought up to date at once
    expected = output_colours(
        controller.snapshot.predict(view.grid_points(), dtype=np.float32), "hinge")
    np.testing.assert_array_equal(view.image.image, expected.reshape(view.grid_size,
                                                                      view.grid_size, 3))


def test_every_point_is_drawn_train_filled_test_hollow(controller, view) -> None:  # type: ignore[no-untyped-def]
    snapshot = controller.snapshot
    assert len(view.scatter.data) == len(snapshot.points)
    xs, ys = view.scatter.getData()
    np.testing.assert_array_equal(xs, snapshot.points[:, 0])
    np.testing.assert_array_equal(ys, snapshot.points[:, 1])
    test = np.flatnonzero(snapshot.is_test)[0]
    train = np.flatnonzero(~snapshot.is_test)[0]
    assert view.scatter.data["brush"][train].color().alpha() == 255
    assert view.scatter.data["brush"][test].color().alpha() < 255


def test_left_click_on_empty_space_adds_a_point_of_the_picked_class(  # type: ignore[no-untyped-def]
        qtbot, controller, view) -> None:
    n = len(controller.snapshot.points)
    view.class_picker.setCurrentIndex(1)
    x, y = _empty_spot(view)
    _click(qtbot, view, x, y)
    qtbot.waitUntil(lambda: len(controller.snapshot.points) == n + 1)
    snapshot = controller.snapshot
    np.testing.assert_allclose(snapshot.points[-1], [x, y], atol=2 * max(
        view.view_box.viewPixelSize()))
    assert snapshot.labels[-1] == 1
    qtbot.waitUntil(lambda: len(view.scatter.data) == n + 1)


def test_shift_click_adds_the_next_class(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    n = len(controller.snapshot.points)
    view.class_picker.setCurrentIndex(1)
    _click(qtbot, view, *_empty_spot(view), modifier=Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: len(controller.snapshot.points) == n + 1)
    assert controller.snapshot.labels[-1] == 0  # wraps around: 1 -> 0 with two classes


def test_right_click_removes_the_point_under_the_mouse(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    snapshot = controller.snapshot
    n = len(snapshot.points)
    target = snapshot.points[7].copy()
    _click(qtbot, view, *target, button=Qt.MouseButton.RightButton)
    qtbot.waitUntil(lambda: len(controller.snapshot.points) == n - 1)
    remaining = controller.snapshot.points
    assert not np.any(np.all(remaining == target, axis=1))
    # No context menu got in the way of the right-click.
    assert not view.plot.getPlotItem().menuEnabled()


def test_right_click_far_from_every_point_removes_nothing(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session) -> None:
    n = len(controller.snapshot.points)
    _click(qtbot, view, *_empty_spot(view), button=Qt.MouseButton.RightButton)
    # A step afterwards proves the worker has handled everything sent before it.
    step_session(controller)
    assert len(controller.snapshot.points) == n


def test_clicking_a_point_selects_that_sample(qtbot, controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    n = len(controller.snapshot.points)
    target = controller.snapshot.points[12]
    with qtbot.waitSignal(controller.sample_selected) as blocker:
        _click(qtbot, view, *target)
    assert blocker.args == [12]
    # The selected sample wears a ring; no point was added.
    np.testing.assert_array_equal(view.ring.getData()[0], [target[0]])
    step_session(controller)
    assert len(controller.snapshot.points) == n


def test_ring_follows_selection_from_elsewhere(controller, view) -> None:  # type: ignore[no-untyped-def]
    controller.select_sample(30)
    xs, ys = view.ring.getData()
    assert (xs[0], ys[0]) == tuple(controller.snapshot.points[30])


def test_three_class_blobs_picker_and_heatmap(make_session, show_widget, step_session) -> None:  # type: ignore[no-untyped-def]
    session = make_session(dataset="blobs", classes=3, loss="softmax")
    widget = show_widget(DecisionBoundaryView(session))
    assert widget.class_picker.count() == 3
    step_session(session, 3)
    snap = session.snapshot
    expected = output_colours(snap.predict(widget.grid_points(), dtype=np.float32), "softmax")
    n = widget.grid_size
    np.testing.assert_array_equal(widget.image.image, expected.reshape(n, n, 3))


def test_view_range_stays_put_while_editing(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    before = view.view_box.viewRange()
    n = len(controller.snapshot.points)
    _click(qtbot, view, *_empty_spot(view))
    qtbot.waitUntil(lambda: len(view.scatter.data) == n + 1)
    assert view.view_box.viewRange() == before


def test_new_data_is_framed(controller, view, after_snapshot) -> None:  # type: ignore[no-untyped-def]
    # The circle dataset spans radius ~5, the moons ~2: the view must grow to show it.
    config = controller.snapshot.config.with_changes(dataset="circle")
    after_snapshot(controller, controller.apply_config, config)
    points = controller.snapshot.points
    (x0, x1), (y0, y1) = view.view_box.viewRange()
    assert x0 < points[:, 0].min() and points[:, 0].max() < x1
    assert y0 < points[:, 1].min() and points[:, 1].max() < y1
    assert len(view.scatter.data) == len(points)


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_export_image(tmp_path, view, suffix: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"boundary.{suffix}"
    view.export_image(path)
    data = path.read_bytes()
    if suffix == "png":
        assert data.startswith(b"\x89PNG")
    else:
        # pyqtgraph's SVG exporter needs a work-around with recent Qt: the file must
        # exist and be an SVG Qt can draw.
        assert b"<svg" in data[:2000]
        assert QSvgRenderer(str(path)).isValid()


def test_controls_are_labelled(view) -> None:  # type: ignore[no-untyped-def]
    for widget in (view.class_picker, view.hint, view.key, view.plot):
        assert widget.accessibleName()
        assert widget.toolTip()


def test_points_added_while_hidden_are_drawn_when_shown(  # type: ignore[no-untyped-def]
        qtbot, controller, view, after_snapshot) -> None:
    """A hidden boundary view skips snapshots (another tab shows) and catches up whole
    when shown: the points, not only the heat map."""
    before = len(view.scatter.data)
    view.hide()
    x, y = 0.1234, -0.4321
    after_snapshot(controller, controller.send, Session.add_point, x, y, 1)
    assert len(view.scatter.data) == before  # nobody would see it
    view.show()
    assert len(view.scatter.data) == before + 1
    assert np.any(np.all(np.isclose(view.scatter.getData(), [[x], [y]]), axis=0))
