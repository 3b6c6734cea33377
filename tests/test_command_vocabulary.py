"""The session's vocabulary is named once (the marks on `Session`'s methods) and what
crosses the pipe is only what someone waits for: a command's reply when asked, the
timeline inside the snapshot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gradbox.files import sessions
from gradbox.runner.process import NewSnapshot, Reply, TrainingProcess
from gradbox.training.config import TrainingConfig
from gradbox.training.session import COMMANDS, QUESTIONS, SETTINGS, Session
from gradbox.training.trainer import Trainer

CONFIG = TrainingConfig(hidden=(3,), n_samples=30)


def test_the_sets_are_the_marks() -> None:
    marked = {name: getattr(f, "session_verb", None) for name, f in vars(Session).items()}
    assert {n for n, verb in marked.items() if verb == "command"} == COMMANDS
    assert {n for n, verb in marked.items() if verb == "question"} == QUESTIONS
    assert {n for n, verb in marked.items() if verb == "setting"} == SETTINGS
    assert not COMMANDS & QUESTIONS and not SETTINGS & (COMMANDS | QUESTIONS)
    # What the window sends by name is in the vocabulary, nothing else.
    assert {"step", "open_file", "rewind", "capture_graph"} <= COMMANDS
    assert "set_graph_wanted" in SETTINGS and "replace_run" not in COMMANDS | QUESTIONS


def test_the_timeline_rides_in_the_snapshot() -> None:
    s = Session.fresh(CONFIG)
    for _ in range(3):
        s.command("step")
    s.command("rewind", 1)
    snapshot = s.command("snapshot")
    assert snapshot.step == 1
    assert snapshot.ahead is not None and len(snapshot.ahead) == 3
    s.command("reset")
    assert s.command("snapshot").undo_text.startswith("Reset")


def test_a_session_opens_a_file_through_the_reader_it_was_given(tmp_path) -> None:  # type: ignore[no-untyped-def]
    other = Trainer(CONFIG.with_changes(dataset="circle"))
    other.step()
    sessions.save_session(other, tmp_path / "other.gradbox")
    s = Session(Trainer(CONFIG), read_file=sessions.load_state)
    assert s.command("open_file", str(tmp_path / "other.gradbox"), "Opened") == 1
    assert s.snapshot().config.dataset == "circle"
    with pytest.raises(RuntimeError, match="no way to read files"):
        Session.fresh(CONFIG).command("open_file", str(tmp_path / "other.gradbox"), "x")


@pytest.fixture
def process() -> Iterator[TrainingProcess]:
    started = TrainingProcess(CONFIG)
    started.wait_for(NewSnapshot, timeout=120)
    yield started
    started.close()


def test_a_reply_crosses_only_when_someone_waits(process: TrainingProcess) -> None:
    process.tell("step")  # as the window's Step: nobody waits for the step's record
    events = process.wait_for(NewSnapshot, timeout=60)
    assert not any(isinstance(e, Reply) for e in events)
    assert process.latest is not None and process.latest.step == 1
    number = process.call("step")  # a caller that waits gets its answer
    events = process.wait_for(Reply, timeout=60)
    assert [e.number for e in events if isinstance(e, Reply)] == [number]


def test_a_setting_publishes_nothing(process: TrainingProcess) -> None:
    process.tell("set_graph_wanted", True)
    assert process.request("timeline_view", timeout=60) is not None  # handled in order
    assert not any(isinstance(e, NewSnapshot) for e in process.receive(0.2))
