"""The Qt-free Session: named commands with plain-data arguments and results, tested with
a mocked view as mu tests its logic.Editor (no QApplication, no thread)."""

from __future__ import annotations

import pickle
from unittest import mock

import numpy as np
import pytest

from gradbox.training import datasets
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.session import COMMANDS, QUESTIONS, Session, record_key
from gradbox.training.trainer import Trainer

SMALL = TrainingConfig(n_samples=40, hidden=(4,), seed=3)


def session(config: TrainingConfig = SMALL) -> tuple[Session, mock.MagicMock]:
    view = mock.MagicMock()
    return Session(Trainer(config), view=view), view


def test_no_qt_is_imported_by_the_session() -> None:
    import subprocess
    import sys
    code = ("import sys, gradbox.training.session as s; s.Session().command('step'); "
            "print(any(m.startswith('PySide6') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_a_step_by_name_trains_as_the_trainer_does() -> None:
    s, view = session()
    twin = Trainer(SMALL)
    record = s.command("step")
    assert record == twin.step()
    assert np.array_equal(s.command("snapshot").params, twin.snapshot().params)
    assert s.command("substep") == "forward"
    view.show_stop.assert_not_called()


def test_a_command_hands_back_its_snapshot_with_its_answer() -> None:
    # One hand-off from the training process's loop: a command's answer and the snapshot
    # after it; a question or a setting changes nothing on show and brings none.
    s, _ = session()
    twin = Trainer(SMALL)
    record, snapshot = s.perform("step")
    assert record == twin.step()
    assert snapshot is not None and snapshot.step == 1
    assert np.array_equal(snapshot.params, twin.snapshot().params)
    state, none = s.perform("state")
    assert state.step == 1 and none is None
    assert s.perform("set_graph_wanted", True) == (None, None)


def test_unknown_commands_are_refused() -> None:
    s, _ = session()
    with pytest.raises(KeyError, match="no session command"):
        s.command("__init__")
    with pytest.raises(KeyError):
        s.command("replace_run", "x", lambda t: t)  # a closure is not a command


def test_a_step_into_non_finite_numbers_tells_the_view() -> None:
    s, view = session(TrainingConfig(lr=1e6, n_samples=40, seed=1))
    while s.command("step") is not None:
        pass
    view.show_stop.assert_called_once()
    reason = view.show_stop.call_args.args[0]
    assert "learning rate" in reason and reason == s.snapshot().stop_reason


def test_a_run_to_a_goal_matches_run_steps_bit_for_bit() -> None:
    s, _ = session()
    s.command("start_run", RunGoal(steps=7))
    ticks = []
    while not (ticks and ticks[-1].over):
        ticks.append(s.command("tick"))
    s.command("finish_run")
    assert len(ticks) == 7 and ticks[-1].reached == "ran 7 steps"
    twin = Trainer(SMALL)
    assert twin.run_steps(7) == "ran 7 steps"
    assert np.array_equal(s.snapshot().params, twin.snapshot().params)


def test_a_run_pauses_on_a_diverging_loss_like_run_steps() -> None:
    config = TrainingConfig(lr=40.0, loss="mse", n_samples=40, seed=2, hidden=(8,))
    s, _ = session(config)
    s.command("start_run", RunGoal(steps=300))
    while not (tick := s.command("tick")).over:
        pass
    twin = Trainer(config)
    reason = twin.run_steps(300)
    assert tick.alarm == reason
    assert "loss rose" in reason or "non-finite" in reason or "loss became" in reason
    assert s.snapshot().step == twin.step_count < 300


def test_a_change_made_back_on_the_timeline_says_what_it_replaced_and_undo_says_back() -> None:
    s, view = session()
    for _ in range(5):
        s.command("step")
    assert s.command("rewind", 2) is True
    assert s.command("timeline_view")[0] is not None  # the steps ahead are kept
    view.show_message.assert_not_called()
    s.command("step")
    text = view.show_message.call_args.args[0]
    assert text.startswith("Step at step 2 replaced steps 3–5")
    assert s.command("undo") == "Step at step 2"
    assert view.show_message.call_args.args[0] == "Undid: Step at step 2"


def test_a_rewind_meant_for_another_run_is_dropped_with_a_note() -> None:
    s, view = session()
    for _ in range(3):
        s.command("step")
    mark = record_key(s.snapshot().history[1])
    s.command("reset")
    for _ in range(3):
        s.command("step", )
    s.command("set_lr", 0.01)  # a different run from here on
    s.command("step")
    assert s.command("rewind", 2, (mark[0], mark[1] + 1.0, mark[2])) is False
    assert view.show_message.call_args.args[0].startswith("Not moved to step 2")
    assert s.snapshot().step == 4


def test_a_weight_typed_in_is_said_and_kept() -> None:
    s, view = session()
    name = s.snapshot().param_names[0]
    edit = s.command("set_parameter", name, 0.5)
    assert edit.new == 0.5 and s.snapshot().params[0] == 0.5
    assert view.show_message.call_args.args[0].startswith(f"{name}: ")


def test_questions_answer_plain_data_that_crosses_a_process() -> None:
    s, _ = session()
    for _ in range(3):
        s.command("step")
    name = s.snapshot().param_names[2]
    answers = {
        "snapshot": s.command("snapshot"),
        "timeline_view": s.command("timeline_view"),
        "parameter_history": s.command("parameter_history", 2, name),
        "gradient_check": s.command("gradient_check"),
        "landscape_request": s.command("landscape_request", "pca", (0, 1), 0),
        "whole_run": s.command("whole_run"),
        "whole_state": s.command("whole_state"),
        "state": s.command("state"),
    }
    assert set(answers) == QUESTIONS
    for question, answer in answers.items():
        assert pickle.loads(pickle.dumps(answer)) is not None, question
    assert answers["parameter_history"][0] == name
    assert len(answers["parameter_history"][1]) == 4  # steps 0..3
    assert answers["gradient_check"].passed()
    assert s.command("parameter_history", 2, "not.this.one") is None


def test_run_replacing_commands_are_undoable_and_named() -> None:
    s, view = session()
    s.command("step")
    s.command("start_lesson", SMALL.with_changes(seed=5), True, True)
    snap = s.snapshot()
    assert snap.step == 0 and snap.forget_zero_grad and snap.ghost
    assert view.show_message.call_args.args[0].startswith("Lesson set up")
    s.command("new_run", SMALL, "New session")
    s.command("undo")
    assert s.snapshot().forget_zero_grad
    state = s.command("state")
    s.command("reinitialize")
    s.command("open_run", state, "Opened x")
    assert np.array_equal(s.snapshot().params, snap.params)


def test_imported_points_get_the_network_they_need() -> None:
    s, _ = session()
    data = datasets.make("blobs", 30, 0.1, 0, 0.2, 3)
    s.command("import_points", data, "Imported 30 points")
    config = s.snapshot().config
    assert config.dataset == "blobs" and config.classes == 3 and config.outputs == 3
    same = datasets.make("moons", 30, 0.1, 1, 0.2, 2)
    s.command("import_points", same, "Imported 30 points")
    assert len(s.snapshot().points) == 30


def test_a_new_configuration_keeps_what_it_can() -> None:
    s, view = session()
    s.command("step")
    s.command("set_config", SMALL.with_changes(lr=0.1))
    assert s.snapshot().step == 1 and s.snapshot().lr == 0.1
    s.command("set_config", SMALL.with_changes(lr=0.1, hidden=(3,)))
    assert s.snapshot().step == 0 and s.snapshot().layer_sizes == (2, 3, 1)
    assert "Network changed" in view.show_message.call_args.args[0]


def test_every_command_is_a_method_of_the_session() -> None:
    for name in COMMANDS | QUESTIONS:
        assert callable(getattr(Session, name)), name
