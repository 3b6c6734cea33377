"""The loss curve shows the history of the snapshot: one point per step, values as recorded."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PySide6.QtCore import QEvent, QPointF
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from gradbox.training.history import history_arrays
from gradbox.training.session import Session
from gradbox.views.plots.loss_curve import LossCurveView
from gradbox.views.plots.plotting import nice_ceiling, weight

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


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
    after_snapshot(controller, controller.send, Session.reset)
    assert view.empty_text.isVisible()


def test_an_empty_curve_keeps_no_axes_of_the_run_before(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    """After a Reset the plots under the loss kept the old run's steps (0..30) and grad
    norms on their axes, with no curve (issue 32, cosmetic): empty, every plot has the
    axes it has before any run."""
    def ranges() -> list[list[list[float]]]:
        return [[[float(v) for v in r] for r in plot.getViewBox().viewRange()]
                for plot in (view.loss_plot, view.accuracy_plot, view.grad_plot)]
    step_session(controller, 3)  # one step first: the fresh view's first redraw is done
    after_snapshot(controller, controller.send, Session.reset)
    empty = ranges()
    step_session(controller, 30)
    assert ranges() != empty
    after_snapshot(controller, controller.send, Session.reset)
    assert view.empty_text.isVisible()
    assert ranges() == empty
    assert all(x == [0.0, 10.0] for x, _y in empty)


def test_ghost_loss_is_dashed_and_only_shown_with_a_ghost_run(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    ghost = view.curves["ghost_loss"]
    step_session(controller)
    assert not ghost.isVisible()
    assert view.loss_legend.getLabel(ghost) is None
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    after_snapshot(controller, controller.send, Session.set_ghost, True)
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


def test_rewinding_under_the_mouse_moves_the_readout_into_the_run(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    step_session(controller, 5)
    view.show_step(5)
    after_snapshot(controller, controller.rewind, 2)  # used to index past the shortened run
    assert "Step 2" in view.readout.text()
    assert all(line.value() == 2 for line in view.crosshairs)
    after_snapshot(controller, controller.send, Session.reset)
    assert view.readout.text() == "No steps yet" and not view.crosshairs[0].isVisible()


def test_with_the_timeline_moved_back_the_readout_says_where_it_is_not_latest(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    step_session(controller, 14)
    assert "Step 14 (latest)" in view.readout.text()
    after_snapshot(controller, controller.rewind, 4)
    text = view.readout.text()
    assert "Step 4 (timeline; 10 steps kept ahead)" in text and "latest" not in text
    record = controller.snapshot.history[-1]
    assert record.step == 4 and f"train loss {record.loss:.4g}" in text
    view.show_step(2)  # a hovered step names itself only
    assert "Step 2</b>" in view.readout.text() and "kept ahead" not in view.readout.text()
    view.show_step(None)
    after_snapshot(controller, controller.rewind, 13)
    assert "Step 13 (timeline; 1 step kept ahead)" in view.readout.text()
    after_snapshot(controller, controller.rewind, 0)
    assert "Step 0 (timeline; 14 steps kept ahead)" in view.readout.text()
    after_snapshot(controller, controller.rewind, 14)  # at the end again: the latest step
    assert "Step 14 (latest)" in view.readout.text()
    assert "kept ahead" not in view.readout.text()


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


# --- weights edited by hand --------------------------------------------------------------------
def test_an_edit_shows_a_marker_until_rewound_past(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session, after_snapshot) -> None:
    step_session(controller, 3)
    name = "layers.0.neurons.1.w.0"
    old = float(controller.snapshot.params[controller.snapshot.param_names.index(name)])
    after_snapshot(controller, controller.send, Session.set_parameter, name, 2.0)
    # Between step 3, which the edit followed, and step 4, the first to train with it.
    assert list(view.edit_markers) == [3]
    marker = view.edit_markers[3]
    assert marker.value() == 3.5 and marker.isVisible()
    text = f"{name}: {weight(old)} → 2.0"
    assert text in marker.toolTip() and "after step 3" in marker.toolTip()
    assert view.loss_legend.getLabel(view._edit_sample).text == "edited by hand"
    # Shown at once, though no step has used the edit yet: the step axis makes room.
    box = view.loss_plot.getViewBox()
    qtbot.waitUntil(lambda: box.viewRange()[0][0] < 3.5 < box.viewRange()[0][1])
    assert text in view.readout.text()
    # Training on keeps it; hovering the first step that used it names it too.
    step_session(controller, 2)
    assert list(view.edit_markers) == [3]
    view.show_step(4)
    assert text in view.readout.text() and "before this step" in view.readout.text()
    view.show_step(5)
    assert text not in view.readout.text()
    # Rewinding to step 3 keeps the edit (it came after step 3), to step 2 undoes it.
    after_snapshot(controller, controller.rewind, 3)
    assert list(view.edit_markers) == [3]
    after_snapshot(controller, controller.rewind, 2)
    assert view.edit_markers == {}
    assert marker.scene() is None  # gone from the plot, not just hidden
    assert name not in view.readout.text()
    assert view.loss_legend.getLabel(view._edit_sample) is None


def test_the_legend_entry_hides_and_shows_the_edit_markers(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    step_session(controller)
    after_snapshot(controller, controller.send, Session.set_parameter,
                   controller.snapshot.param_names[0], 1.0)
    view._edit_sample.hide()  # what a click on its legend entry does
    assert not view.edit_markers[1].isVisible()
    step_session(controller)
    after_snapshot(controller, controller.send, Session.set_parameter,
                   controller.snapshot.param_names[0], 2.0)
    assert not view.edit_markers[2].isVisible()  # a new marker follows the legend
    view._edit_sample.show()
    assert all(m.isVisible() for m in view.edit_markers.values())


def test_step_axes_tick_whole_steps_only(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 3)
    for plot in (view.loss_plot, view.accuracy_plot, view.grad_plot):
        axis = plot.getAxis("bottom")
        for lo, hi in ((0.8, 3.2), (0, 10), (0, 2000)):
            levels = axis.tickSpacing(lo, hi, 600)
            assert levels and all(spacing >= 1 for spacing, _ in levels)


def test_edits_after_the_same_step_share_one_marker(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    step_session(controller)
    names = controller.snapshot.param_names
    after_snapshot(controller, controller.send, Session.set_parameter, names[0], 1.0)
    after_snapshot(controller, controller.send, Session.set_parameter, names[1], -1.0)
    step_session(controller)
    after_snapshot(controller, controller.send, Session.set_parameter, names[0], 0.5)
    assert sorted(view.edit_markers) == [1, 2]
    tip = view.edit_markers[1].toolTip()
    assert f"{names[0]}: " in tip and f"{names[1]}: " in tip and "→ -1.0" in tip
    after_snapshot(controller, controller.send, Session.reset)
    assert view.edit_markers == {}


def test_an_edit_before_the_first_step_is_marked_too(  # type: ignore[no-untyped-def]
        controller, view, after_snapshot) -> None:
    name = controller.snapshot.param_names[0]
    after_snapshot(controller, controller.send, Session.set_parameter, name, 0.75)
    assert list(view.edit_markers) == [0]
    assert "No steps yet" in view.readout.text() and "0.75" in view.readout.text()
    assert "Reset to undo" in view.edit_markers[0].toolTip()


def test_the_first_step_is_drawn_as_a_dot(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller)
    assert view.curves["loss"].opts["symbol"] == "o"  # one point: a line would be invisible
    step_session(controller)
    assert view.curves["loss"].opts["symbol"] is None


@given(st.floats(min_value=10.0, max_value=1e9, allow_nan=False))
def test_the_step_axis_ends_at_a_nice_number_close_above(value: float) -> None:
    end = nice_ceiling(value)
    assert value <= end <= value * 4 / 3 + 1e-9
    mantissa = end / 10 ** np.floor(np.log10(end))
    assert any(np.isclose(mantissa, m) for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8))


def test_the_ranges_hold_still_while_the_curve_grows_and_always_show_all_of_it(  # type: ignore[no-untyped-def]
        controller, view, step_session) -> None:
    """A range that follows every step regenerates the axes' ticks at every frame: the
    step axis jumps to nice numbers, the value axis moves only when the data needs it."""
    x_ranges, y_ranges = [], []
    for _ in range(45):
        step_session(controller)
        box = view.loss_plot.getViewBox()
        (x0, x1), (y0, y1) = box.viewRange()
        x_ranges.append((x0, x1))
        y_ranges.append((y0, y1))
        steps, losses = view.data("step"), view.data("loss")
        assert x0 == 0 and x1 >= steps[-1]
        finite = losses[np.isfinite(losses)]
        assert y0 <= finite.min() and finite.max() <= y1
    # 45 steps, but the step axis moved only at 10, 12, 15, 20, 25, 30, 40, 50.
    assert sorted(set(x_ranges)) == [(0.0, float(n)) for n in (10, 12, 15, 20, 25, 30, 40, 50)]
    assert len(set(y_ranges)) < 15


# --- Forget zero_grad: where skipping began and ended -----------------------------------------
def test_the_steps_that_skipped_zero_grad_are_marked_from_the_step_it_began(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot, monkeypatch) -> None:
    marker = view.skipped
    step_session(controller, 3)
    assert marker.shown == [] and marker.bands == []
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    step_session(controller, 2)  # steps 4 and 5 skip zero_grad
    assert [r.zero_grad_skipped for r in controller.snapshot.history] == [False] * 3 + [True] * 2
    assert marker.shown == [(4, None)]
    (band,) = marker.bands
    first, right = band.getRegion()
    assert first == 3.5 and right >= 5.5  # step 4 inside, step 3 outside, on to the edge
    assert band.scene() is view.loss_plot.scene() and band.isVisible()
    assert "From step 4 on" in band.toolTip() and "zero_grad" in band.toolTip()
    assert view.loss_legend.getLabel(marker.sample).text == "zero_grad skipped"
    # While it goes on, a step changes nothing on screen (the step axis holds 0..10).
    calls = []
    monkeypatch.setattr(band, "setRegion", lambda *a: calls.append(a))
    step_session(controller, 3)
    assert calls == [] and marker.shown == [(4, None)]
    monkeypatch.undo()
    # Switched off: the band ends at the last step that skipped it.
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, False)
    step_session(controller, 2)
    assert marker.shown == [(4, 8)] and band.getRegion() == (3.5, 8.5)
    assert "Steps 4–8" in band.toolTip()
    # The curve's range is its data's: the band does not widen the step axis.
    assert view.loss_plot.getViewBox().viewRange()[0] == [0.0, 10.0]
    # Rewound to before it began, the band goes, and so does its legend entry.
    after_snapshot(controller, controller.rewind, 3)
    assert marker.shown == [] and band.scene() is None
    assert view.loss_legend.getLabel(marker.sample) is None
    after_snapshot(controller, controller.rewind, 10)  # forward again: back as it was
    assert marker.shown == [(4, 8)]
    assert marker.bands[0].getRegion() == (3.5, 8.5)


def test_during_a_fast_run_the_readout_is_paced_and_ends_on_the_last_step(  # type: ignore[no-untyped-def]
        qtbot, controller, view) -> None:
    controller.set_speed(None)
    controller.run(40)
    qtbot.waitUntil(lambda: not controller.running and controller.snapshot.step == 40,
                    timeout=60000)
    assert "<b>Step 40 (latest)</b>" in view.readout.text()
    assert f"train loss {controller.snapshot.history[-1].loss:.4g}" in view.readout.text()


def test_a_hidden_curve_waits_and_shows_every_step_when_shown_again(  # type: ignore[no-untyped-def]
        controller, view, step_session, monkeypatch) -> None:
    """Behind another tab (the graph tab hides the loss curve's dock) the curves are not
    redrawn at each step; shown again, or read, they hold every step."""
    step_session(controller, 2)
    view.hide()
    redraws = []
    original = LossCurveView._redraw
    monkeypatch.setattr(LossCurveView, "_redraw",
                        lambda self: (redraws.append(1), original(self))[1])
    step_session(controller, 3)
    assert redraws == []
    view.show()
    assert len(redraws) == 1
    xs, ys = view.curves["loss"].getData()
    assert list(xs) == [1, 2, 3, 4, 5]
    np.testing.assert_array_equal(ys, [r.loss for r in controller.snapshot.history])
    view.hide()
    step_session(controller)
    assert view.data("loss")[-1] == controller.snapshot.history[-1].loss  # read: caught up
