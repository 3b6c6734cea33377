"""The training loop as code follows every sub-step, and strikes out a skipped zero_grad."""

from __future__ import annotations

import numpy as np
import pytest

from gradbox.teaching.loop_code import loop_lines
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.views.panels.training_loop import TrainingLoopPanel

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


@pytest.fixture
def panel(controller, show_widget):  # type: ignore[no-untyped-def]
    return show_widget(TrainingLoopPanel(controller), 600, 260)


def test_the_line_just_run_is_highlighted_at_each_sub_step(panel, controller,  # type: ignore[no-untyped-def]
                                                           after_snapshot) -> None:
    assert panel.highlighted() == []
    forward = ["scores = model(x)", "loss = hinge_loss(scores, y)",
               "loss += 0.0001 * l2(model)"]
    assert panel.next_lines() == forward
    expected = {
        "forward": forward,
        "zero_grad": ["optimizer.zero_grad()"],
        "backward": ["loss.backward()"],
        "update": ["optimizer.step()"],
    }
    following = {"forward": "zero_grad", "zero_grad": "backward", "backward": "update",
                 "update": "forward"}
    for number, phase in enumerate(("forward", "zero_grad", "backward", "update"), 1):
        after_snapshot(controller, controller.substep)
        assert panel.highlighted() == expected[phase], phase
        assert panel.next_lines() == expected[following[phase]]
        assert f"done: {number}/4 {phase}" in panel.caption.text()
        # The highlighted line is drawn so: bold on the lesson's yellow.
        assert "#fff1b8" in panel.code.toHtml().lower() or "255, 241, 184" in panel.code.toHtml()
    snap = controller.snapshot
    assert panel.figure("forward") == f"loss = {snap.history[-1].loss:.4g}"
    assert panel.figure("backward") == f"|grad| = {np.linalg.norm(snap.grads):.4g}"
    assert panel.figure("update").startswith(f"step size |Δw| = {snap.update_norm:.4g}")
    assert panel.struck_through() == []


def test_a_skipped_zero_grad_is_struck_through(panel, controller, after_snapshot,  # type: ignore[no-untyped-def]
                                               step_session) -> None:
    step_session(controller, 1)
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    assert panel.struck_through() == ["optimizer.zero_grad()"]
    assert "<s" in panel._html
    after_snapshot(controller, controller.substep)  # forward
    after_snapshot(controller, controller.substep)  # zero_grad, skipped
    assert panel.highlighted() == ["optimizer.zero_grad()"]
    assert panel.figure("zero_grad") == "skipped: .grad keeps 1 backward pass"
    after_snapshot(controller, controller.substep)  # backward adds a second pass
    assert "the sum of 2 passes" in panel.figure("backward")
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, False)
    assert panel.struck_through() == []


def test_the_code_follows_the_configuration() -> None:
    lines = [line.code.strip() for line in loop_lines(TrainingConfig(loss="mse", l2=0.0,
                                                                        batch_size=10))]
    assert lines[0] == "for x, y in batches:"
    assert "loss = F.mse_loss(scores, y)" in lines


@pytest.mark.parametrize(("loss", "line"), [("mse", "loss = F.mse_loss(scores, y)"),
                                            ("mae", "loss = F.l1_loss(scores, y)"),
                                            ("huber", "loss = F.huber_loss(scores, y)")])
def test_a_regression_run_shows_its_own_loss_line(loss, line, make_session, show_widget,  # type: ignore[no-untyped-def]
                                                  step_session) -> None:
    # The panel had no line for MAE or Huber: KeyError 'mae' on every frame, and the
    # previous run's `loss = ...` stayed on screen.
    controller = make_session(dataset="sine", hidden=(4,), loss=loss)
    panel = show_widget(TrainingLoopPanel(controller), 600, 260)
    assert line in panel.next_lines()
    step_session(controller, 1)
    assert line in [code.code.strip() for code in panel.lines]
    assert line.replace(" ", "&nbsp;") in panel._html
    assert panel.figure("forward") == f"loss = {controller.snapshot.history[-1].loss:.4g}"


def test_a_hidden_panel_lays_out_its_code_when_shown_with_the_latest_figures(  # type: ignore[no-untyped-def]
        panel, controller, step_session, monkeypatch) -> None:
    """Behind another tab (the graph tab hides this dock) the code's rich text is not
    laid out again at each step; shown again, it has the last step's figures."""
    step_session(controller)
    panel.hide()
    layouts = []
    original = panel.code.setHtml
    monkeypatch.setattr(panel.code, "setHtml", lambda html: (layouts.append(1), original(html)))
    step_session(controller, 3)
    assert layouts == []
    figure = f"loss = {controller.snapshot.history[-1].loss:.4g}"
    assert panel.figure("forward") == figure  # (what it says is always the latest)
    panel.show()
    assert len(layouts) == 1
    assert figure in panel.code.toPlainText()
    assert "done: 4/4 update" in panel.caption.text()
