"""Every message says what the screen shows, once, and only while it holds (issue 20):
the assign variant names every wrong gradient, the landscape says which loss it reads,
the mini-batch frames follow their points, a diverging run is said once with today's
step, and a layer of identical neurons is named with its cause."""

from __future__ import annotations

import numpy as np
import pytest

from gradbox.teaching.playground import Playground
from gradbox.training import datasets
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import identical_layers, symmetry
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer

# --- the Playground's assign variant ----------------------------------------------------------

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process
def test_assign_variant_names_the_intermediate_it_got_wrong() -> None:
    playground = Playground("a = 1; b = a + a; c = b + b")
    playground.set_variant("assign")
    outcome = playground.backward()
    # The graph shows b's gradient: 1 where the chain rule gives 2.
    b = next(node for node in playground.root.topological_order() if node.label == "b")
    assert b.grad == 1.0
    assert outcome.title.endswith("2 wrong gradients")
    assert "Wrong: a, b (in the graph: 1, correct 2)" in outcome.text


def test_assign_variant_on_a_tree_still_says_nothing_is_wrong() -> None:
    playground = Playground("b = a * 2; c = b + 1")
    playground.set_variant("assign")
    assert "same numbers here" in playground.backward().title


def test_wrong_order_names_only_what_differs() -> None:
    playground = Playground("a = 1; b = a + a; c = b + b")
    playground.set_variant("wrong order")
    outcome = playground.backward()
    # b collects both of c's deliveries before firing twice: its own total is right.
    assert outcome.title.endswith("1 wrong gradient") and "Wrong: a." in outcome.text


# --- the mini-batch frames after an edit of the points ----------------------------------------
def test_the_last_batch_follows_its_points_when_one_is_removed() -> None:
    trainer = Trainer(TrainingConfig(batch_size=10))
    trainer.run_steps(3)
    before = trainer.snapshot()
    framed = before.points[before.batch]
    dataset = trainer.dataset.copy()
    removed = dataset.remove_nearest(*before.points[before.batch[2]])
    trainer.replace_dataset(dataset)
    after = trainer.snapshot()
    assert removed == before.batch[2]
    np.testing.assert_array_equal(after.points[after.batch], np.delete(framed, 2, axis=0))


def test_the_last_batch_keeps_its_points_when_one_is_added() -> None:
    trainer = Trainer(TrainingConfig(batch_size=10))
    trainer.run_steps(2)
    before = trainer.snapshot()
    dataset = trainer.dataset.copy()
    dataset.add_point(0.25, -0.5, 1)
    trainer.replace_dataset(dataset)
    after = trainer.snapshot()
    np.testing.assert_array_equal(after.points[after.batch], before.points[before.batch])
    assert len(after.points) - 1 not in after.batch


def test_same_points_matches_duplicates_once() -> None:
    old = datasets.Dataset(np.array([[0, 0], [1, 1], [0, 0]]), np.array([0, 1, 0]))
    new = datasets.Dataset(np.array([[1, 1], [0, 0], [0, 0]]), np.array([1, 0, 0]))
    np.testing.assert_array_equal(datasets.same_points(old, new, np.array([0, 2, 1])),
                                  [1, 2, 0])


@pytest.mark.parametrize("batch_size", [None, 200])
def test_a_point_added_after_a_full_batch_step_frames_nothing(
        qtbot, make_session, show_widget, step_session, batch_size) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views.plots.boundary import DecisionBoundaryView
    controller = make_session(batch_size=batch_size)
    view = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 2)
    with qtbot.waitSignal(controller.snapshot_changed):
        controller.send(Session.add_point, 0.3, 0.3, 1)
    assert view.batch.full
    assert len(view.batch.frames.getData()[0]) == 0


def test_mini_batch_frames_stay_on_their_points_after_a_removal(
        qtbot, make_session, show_widget, step_session) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views.plots.boundary import DecisionBoundaryView
    controller = make_session(batch_size=10)
    view = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 2)
    s = controller.snapshot
    framed = s.points[s.batch]
    gone = s.points[s.batch[0]]
    with qtbot.waitSignal(controller.snapshot_changed):
        controller.send(Session.remove_point, *gone)
    xs, ys = view.batch.frames.getData()
    np.testing.assert_array_equal(np.column_stack([xs, ys]), framed[1:])


# --- the landscape's loss and the header's ----------------------------------------------------
def test_landscape_says_its_loss_is_after_the_update_and_the_header_before(
        qtbot, controller, show_widget, step_session) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views.plots.landscape_view import LandscapeView
    from gradbox.views.window.headline import Headline
    view = show_widget(LandscapeView(controller))
    header = Headline(controller)
    qtbot.addWidget(header)
    step_session(controller, 3)
    qtbot.waitUntil(lambda: view.result is not None and len(view.result.path_xy) == 4,
                    timeout=20000)
    assert "Loss at ★ (after step 3's update)" in view.status.text()
    assert "before that update" in view.status.toolTip()
    assert "step 3's forward pass (before its update)" in header.values["loss"].toolTip()
    # The two numbers differ, and each is what its words say.
    history = controller.snapshot.history
    assert header.values["loss"].text() == f"{history[-1].loss:.4g}"
    assert view.result.center_loss != pytest.approx(history[-1].loss, rel=1e-6)


# --- the symmetry guard -----------------------------------------------------------------------
@pytest.mark.parametrize("init", ["zeros", "constant"])
def test_symmetry_guard_names_the_layers_and_the_initializer(init: str) -> None:
    trainer = Trainer(TrainingConfig(init=init, init_scale=0.5))
    s = trainer.snapshot()
    assert symmetry(s.params, s.layer_sizes, init, 0) == "", "no step yet: no symptom"
    trainer.step()
    s = trainer.snapshot()
    assert identical_layers(s.params, s.layer_sizes) == [0, 1]
    text = symmetry(s.params, s.layer_sizes, init, 1)
    assert text.startswith("After step 1 every neuron of hidden layers 1, 2 has the same "
                           "incoming weights")
    assert f"Cause: the initializer ({init})" in text


@pytest.mark.parametrize("init", ["uniform", "normal", "xavier", "he"])
def test_symmetry_guard_is_silent_after_a_random_start(init: str) -> None:
    trainer = Trainer(TrainingConfig(init=init))
    trainer.run_steps(5)
    s = trainer.snapshot()
    assert identical_layers(s.params, s.layer_sizes) == []


def test_one_neuron_layers_are_not_a_symmetry() -> None:
    trainer = Trainer(TrainingConfig(hidden=(1, 4), init="zeros"))
    trainer.step()
    s = trainer.snapshot()
    assert identical_layers(s.params, s.layer_sizes) == [1]


# --- the alarms, in the window: once, with the step on screen, gone with the state ------------
def test_divergence_is_said_once_and_follows_the_step(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    from gradbox.views.window.run_controls import SPEEDS
    win = open_window(loss="mse", lr=1.0)
    win.toolbar.run_controls.speed.setCurrentIndex(len(SPEEDS) - 1)
    win.toolbar.run_action.trigger()
    qtbot.waitUntil(lambda: win.controller.snapshot.step > 0, timeout=10000)
    qtbot.waitUntil(lambda: not win.controller.running, timeout=20000)
    paused_at = win.controller.snapshot.step
    assert f"at step {paused_at}," in win.banner.text()
    assert "loss rose to" not in win.messages.text(), "said in the alert, not twice"
    for _ in range(2):
        with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
            win.controller.step()
    text = win.banner.text()
    step = win.controller.snapshot.step
    assert step == paused_at + 2
    assert text.startswith("Still diverging:") and f"at step {step}," in text
    assert f"at step {paused_at}," not in text


def test_symmetry_guard_in_the_window_goes_with_a_random_start(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(init="zeros")
    assert not win.banner.isVisible()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.step()
    assert win.banner.isVisible()
    assert win.banner.text().startswith("After step 1 every neuron of hidden layers 1, 2")
    assert "the initializer (zeros)" in win.banner.text()
    assert "Xavier/Glorot" in win.banner.toolTip()
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.step()
    assert "After step 2" in win.banner.text() and "step 1" not in win.banner.text()
    config = win.controller.snapshot.config.with_changes(init="xavier")
    with qtbot.waitSignal(win.controller.snapshot_changed, timeout=5000):
        win.controller.apply_config(config)
    qtbot.waitUntil(lambda: win.controller.snapshot.config.init == "xavier", timeout=5000)
    assert not win.banner.isVisible()
