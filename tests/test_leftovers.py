"""An abandoned step's graph is freed in pieces, and the training process answers
between them (gradbox.runner.leftovers, gradbox.runner.child)."""

from __future__ import annotations

import gc
import glob
import os
import queue
import threading
import weakref
from multiprocessing import Pipe

import numpy as np
import pytest

from gradbox.autograd import nn
from gradbox.autograd.engine import Value
from gradbox.runner.child import Abandoned, Child
from gradbox.runner.leftovers import AbandonedGraph
from gradbox.runner.shared import SHM_FOLDER
from gradbox.runner.wire import CONTROL_CELLS, PAUSED_UPTO
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer

BIG = TrainingConfig(hidden=(200, 200), n_samples=100)


def _build_and_give_up(shared: list[Value], probes: list[weakref.ref]) -> None:
    built: list[Value] = []
    half_made = Value.__new__(Value)  # as Pause may catch one: no inputs set yet
    total = Value(np.ones(4))
    for p in shared:
        total = total * p + 1.0
        built.append(total)
        probes.append(weakref.ref(total.data))
    assert half_made is not None
    raise Abandoned


def test_the_frames_graph_is_let_go_in_pieces_and_shared_lists_are_left_alone() -> None:
    params = [Value(i / 3000, label=f"w{i}") for i in range(3000)]
    probes: list[weakref.ref] = []  # to each node's numbers
    try:
        _build_and_give_up(params, probes)
    except Abandoned as abandoned:
        leftovers = AbandonedGraph(abandoned.__traceback__)
    # Out of the except block: the graph lives on, held by the leftovers alone.
    assert all(probe() is not None for probe in probes)
    pieces, partly = 1, False
    while not leftovers.free_piece(piece=500):
        pieces += 1
        alive = sum(probe() is not None for probe in probes)
        partly = partly or 0 < alive < len(probes)
    assert pieces > 5 and partly  # in pieces, not at once
    assert all(probe() is None for probe in probes)  # the graph is gone
    # The model's list, read through the frames, was not emptied, nor its values changed.
    assert len(params) == 3000
    assert [p.data for p in params] == [i / 3000 for i in range(3000)]
    assert all(p.inputs == () for p in params)


@pytest.fixture
def child(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    # (The abandon path switches the collector back on, as the training process has it;
    # this test process is the window's for other tests, where it is off.)
    collecting = gc.isenabled()
    ours, theirs = Pipe()
    control = np.zeros(CONTROL_CELLS, dtype=np.int64)
    prefix = f"gbxtest{os.getpid()}_"
    made = Child(theirs, prefix, control, Session(Trainer(BIG)))
    # The window's end: read as it comes (a snapshot's message fills the pipe's buffer).
    arrived: queue.Queue[tuple] = queue.Queue()

    def read() -> None:
        try:
            while True:
                arrived.put(ours.recv())
        except (EOFError, OSError):
            pass
    threading.Thread(target=read, daemon=True).start()
    yield made, ours, arrived
    theirs.close()
    made.publisher.close()
    (gc.enable if collecting else gc.disable)()
    assert glob.glob(os.path.join(SHM_FOLDER, prefix + "*")) == []


def _abandon_mid_forward(made: Child, monkeypatch: pytest.MonkeyPatch) -> None:
    """Start a Run, and Pause it half way through the second layer's neurons (as the
    signal handler does: `Abandoned` raised inside the step)."""
    calls = [0]
    call = nn.Neuron.__call__

    def neuron_then_pause(self, x):  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 300:  # layer 1 (200 neurons) and 100 of layer 2 built
            made.control[PAUSED_UPTO] = 1  # what the window's pause() marks
            raise Abandoned
        return call(self, x)

    monkeypatch.setattr(nn.Neuron, "__call__", neuron_then_pause)
    made.handle(("run", 1, None, 0.0))
    made.run_one_step()
    monkeypatch.setattr(nn.Neuron, "__call__", call)


def _until(arrived: queue.Queue, kind: str) -> list[tuple]:
    """The messages that came, up to the first of `kind`."""
    messages = [arrived.get(timeout=60)]
    while messages[-1][0] != kind:
        messages.append(arrived.get(timeout=60))
    return messages


def test_a_question_after_a_pause_is_answered_while_the_graph_is_freed(
        child, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    made, window, arrived = child
    initial = made.session.snapshot().params.copy()
    _abandon_mid_forward(made, monkeypatch)
    kinds = [m[0] for m in _until(arrived, "running")]  # the run started
    kinds = [m[0] for m in _until(arrived, "running")]
    assert kinds[-2:] == ["snapshot", "running"]  # Pause answered: the start, stopped
    assert made.leftovers is not None and not made.leftovers.done
    assert made.session.snapshot().params.tobytes() == initial.tobytes()

    window.send(("call", 7, "timeline_view", (), {}))
    made.free_leftovers()
    assert [m[:2] for m in _until(arrived, "reply")] == [("reply", 7)]
    assert made.leftovers is not None and not made.leftovers.done  # still freeing

    made.free_leftovers()  # a piece more, no message
    assert made.leftovers is not None

    # A Step frees the rest first, then trains exactly as an undisturbed trainer.
    window.send(("call", 8, "step", (), {}))
    made.free_leftovers()
    assert made.leftovers is None
    answer = _until(arrived, "snapshot")
    assert len(answer) == 1 and answer[0][2][:2] == ("reply", 8)
    expected = Trainer(BIG)
    expected.step()
    assert made.session.snapshot().params.tobytes() == expected.snapshot().params.tobytes()


def test_freed_in_pieces_to_the_end_the_run_goes_on_bit_for_bit(
        child, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    made, _window, _arrived = child
    _abandon_mid_forward(made, monkeypatch)
    pieces = 0
    while made.leftovers is not None:
        made.free_leftovers()
        pieces += 1
    assert pieces > 3
    made.handle(("run", 2, None, 0.0))
    while made.session.trainer.step_count < 2:  # (a big network's Run ticks by phases)
        made.run_one_step()
    expected = Trainer(BIG)
    expected.run_steps(2)
    assert made.session.snapshot().params.tobytes() == expected.snapshot().params.tobytes()
