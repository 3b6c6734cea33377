"""What a Run at the fastest speed publishes (gradbox.runner.child): a snapshot only when
the window wants one, each with its own step's graph, traced for published steps only,
and publishing kept to a small share of the training process's time. Counted, not
timed: the training process's loop runs here, on a pipe whose far end is drained."""

from __future__ import annotations

import gc
import glob
import itertools
import os
import threading
import time
from collections.abc import Iterator
from multiprocessing import Pipe

import numpy as np
import pytest

from gradbox.runner import child as child_module
from gradbox.runner.child import Abandoned, Child
from gradbox.runner.shared import SHM_FOLDER
from gradbox.runner.wire import CONTROL_CELLS, PAUSED_UPTO, WANTED
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.trainer import Trainer

SMALL = TrainingConfig(dataset="moons", n_samples=40, hidden=(6, 6), l2=1e-4, loss="hinge",
                       lr=0.5)


@pytest.fixture
def made() -> Iterator[tuple[Child, list[Snapshot]]]:
    """A training process's loop over SMALL, and every snapshot it publishes. The loop's
    Pause turns the cyclic collector on, as the training process runs; this test worker
    runs with it off (the window's policy), so it is put back after."""
    collecting = gc.isenabled()
    ours, theirs = Pipe()
    control = np.zeros(CONTROL_CELLS, dtype=np.int64)
    prefix = f"gbxpub{os.getpid()}_"
    loop = Child(theirs, prefix, control, Session(Trainer(SMALL)))
    published: list[Snapshot] = []
    message = loop.publisher.message

    def recorded(snapshot: Snapshot) -> dict:
        published.append(snapshot)
        control[8:] = 0  # the window let go of every slot (nothing reads them here)
        return message(snapshot)
    loop.publisher.message = recorded  # type: ignore[method-assign]

    def drain() -> None:  # the window's end, read as it comes
        try:
            while True:
                ours.recv()
        except (EOFError, OSError):
            pass
    threading.Thread(target=drain, daemon=True).start()
    yield loop, published
    theirs.close()
    loop.publisher.close()
    (gc.enable if collecting else gc.disable)()
    assert glob.glob(os.path.join(SHM_FOLDER, prefix + "*")) == []


def _run(loop: Child, steps: int, wanted_every: int = 1) -> None:
    """A Run of `steps` steps at the fastest speed, the window wanting a snapshot before
    every `wanted_every`-th step (as it does after each frame)."""
    loop.handle(("run", 1, RunGoal(steps=steps), 0.0))
    done = 0
    while loop.run_number:
        if done % wanted_every == 0:
            loop.control[WANTED] = 1
        loop.run_one_step()
        done += 1


def test_every_snapshot_of_a_run_shows_its_own_steps_graph(
        made, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    loop, published = made
    # Every step the window wants publishes (raising=False: fails, not errs, before).
    monkeypatch.setattr(child_module, "PUBLISH_SHARE", 1.0, raising=False)
    loop.handle(("call", 0, "set_graph_wanted", (True,), {}))
    published.clear()
    _run(loop, 30)
    assert len(published) >= 25  # (the window wanted every step)
    for snapshot in published:
        graph = snapshot.graph
        assert graph is not None
        # The graph's loss is the loss this snapshot's step recorded, and its weights
        # the ones that step's forward pass used: the same step, not an older one.
        assert float(graph.data(graph.root)) == pytest.approx(snapshot.loss, abs=1e-12)
        assert snapshot.history[-1].step == snapshot.step
    losses = [float(s.graph.data(s.graph.root)) for s in published]  # type: ignore[union-attr]
    assert len(set(losses)) > len(losses) // 2  # the graphs moved with the steps
    # Its weight nodes hold the weights that step's forward pass used: a twin run's
    # after one step fewer.
    twin, weights = Trainer(SMALL), {}
    for step in range(max(s.step for s in published)):
        weights[step] = twin.snapshot().params
        twin.step()
    for snapshot in published:
        graph = snapshot.graph
        assert graph is not None
        used = dict(zip(snapshot.param_names, weights[snapshot.step - 1]))
        for name, node in graph.parameter_nodes.items():
            assert float(graph.data(node)) == used[name]


def test_a_runs_graph_is_traced_for_the_published_steps_alone(
        made, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    loop, published = made
    monkeypatch.setattr(child_module, "PUBLISH_SHARE", 1.0, raising=False)
    loop.handle(("call", 0, "set_graph_wanted", (True,), {}))
    traces = [0]
    capture = Trainer._capture_graph

    def counted(self: Trainer) -> None:
        traces[0] += 1
        capture(self)
    monkeypatch.setattr(Trainer, "_capture_graph", counted)
    published.clear()
    _run(loop, 40, wanted_every=5)
    # A snapshot for each step the window wanted one (8), and the run's last; a trace
    # for each of those steps, and none for the 31 steps between.
    assert len(published) == 9
    assert traces[0] == 9


def test_publishing_takes_a_small_share_of_a_runs_time(
        made, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    loop, published = made
    message = loop.publisher.message

    def costly(snapshot: Snapshot) -> dict:  # a publish that costs 20 ms of CPU
        until = time.thread_time() + 0.02
        while time.thread_time() < until:
            pass
        return message(snapshot)
    loop.publisher.message = costly  # type: ignore[method-assign]
    published.clear()
    _run(loop, 60)  # the window wants a snapshot before every step
    # 60 steps of this network are ~60 ms of CPU; a publish of 20 ms waits for 380 ms
    # of training at PUBLISH_SHARE 0.05: the first step and the run's end publish.
    assert getattr(child_module, "PUBLISH_SHARE", None) == 0.05
    assert 2 <= len(published) <= 4
    assert published[-1].step == 60


def test_a_pause_mid_step_leaves_the_graph_of_the_step_it_stops_at(
        made, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # At the fastest speed Pause almost always lands inside a step, which is abandoned:
    # the run goes back to the step's start. The graph tab said 'No graph of step 7228
    # is kept: this network is too big to trace a step again' for a 105-parameter
    # network; the last whole step's graph is traced again instead.
    loop, published = made
    loop.handle(("call", 0, "set_graph_wanted", (True,), {}))
    loop.handle(("run", 1, None, 0.0))
    for _ in range(5):
        loop.run_one_step()
    backward = Trainer._phase_backward

    def paused_in_backward(self: Trainer) -> None:
        monkeypatch.setattr(Trainer, "_phase_backward", backward)  # (once)
        loop.control[PAUSED_UPTO] = 1  # what the window's pause() marks; then its signal
        raise Abandoned
    monkeypatch.setattr(Trainer, "_phase_backward", paused_in_backward)
    published.clear()
    loop.run_one_step()
    assert loop.run_number == 0
    shown = published[-1]
    assert shown.step == 5 and shown.graph is not None
    assert float(shown.graph.data(shown.graph.root)) == pytest.approx(shown.loss, abs=1e-12)


def test_the_publishing_share_does_not_count_the_steps_own_statistics(
        made) -> None:  # type: ignore[no-untyped-def]
    # A step's layer statistics wait to be measured together, when the history is next
    # read (`HistoryBuffer`): at a publish. Counted as the publish's cost, they made it
    # grow with the steps since the last one, and so the wait before the next: a Run of
    # W1 published every 64 steps (when the statistics are measured anyway), ~5 frames
    # a second, whatever the window asked for.
    loop, published = made
    published.clear()
    _run(loop, 400)  # the window wants a snapshot before every step
    steps = [s.step for s in published]
    gaps = [b - a for a, b in itertools.pairwise(steps)]
    assert len(published) >= 12, gaps
    assert max(gaps) < 48, gaps
