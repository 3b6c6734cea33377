"""The trainer in its own process: commands and snapshots across the boundary.

Every test starts a real training process (spawn context, as the app does) and checks
what the window would see against an in-process `Trainer` doing the same, bit for bit;
and that nothing is left in /dev/shm afterwards.
"""

from __future__ import annotations

import glob
import multiprocessing.process
import os
import signal
import threading
import time
import zipfile
from collections.abc import Iterator
from multiprocessing.shared_memory import SharedMemory
from types import MappingProxyType

import numpy as np
import pytest

from gradbox.files.sessions import load_state, save_session
from gradbox.runner.process import Died, NewSnapshot, Reply, RunChanged, TrainingProcess
from gradbox.runner.shared import (
    CLOSE_ELSEWHERE,
    SHM_FOLDER,
    Segment,
    block_layout,
    pickled_parts,
    read_block,
    write_block,
)
from gradbox.runner.wire import LazyAnswer
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.snapshots import Snapshot
from gradbox.training.trainer import Trainer

CONFIG = TrainingConfig(hidden=(8, 8), n_samples=60, seed=3)
# A step of seconds (2.3-2.7 s on a loaded 2-core machine): Pause must not wait for it.
BIG = TrainingConfig(hidden=(200, 200), n_samples=100)

pytestmark = pytest.mark.skipif(not os.path.isdir(SHM_FOLDER), reason="needs /dev/shm")


def leftovers(process: TrainingProcess) -> list[str]:
    return glob.glob(os.path.join(SHM_FOLDER, process.prefix + "*"))


@pytest.fixture
def start() -> Iterator[callable]:
    started: list[TrainingProcess] = []

    def make(config_or_state: object = CONFIG) -> TrainingProcess:
        process = TrainingProcess(config_or_state)  # type: ignore[arg-type]
        started.append(process)
        process.wait_for(NewSnapshot, timeout=120)
        return process

    yield make
    for process in started:
        process.close()
        assert leftovers(process) == [], "shared memory left in /dev/shm"


def assert_same(shown: Snapshot, expected: Snapshot) -> None:
    """The snapshot the window got is the in-process trainer's, bit for bit."""
    assert shown.step == expected.step and shown.phase == expected.phase
    for name in ("params", "grads", "batch", "points", "labels", "is_test"):
        a, b = getattr(shown, name), getattr(expected, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), name
    assert shown.history == expected.history
    assert shown.config == expected.config and shown.param_names == expected.param_names
    assert shown.lr == expected.lr and shown.stop_reason == expected.stop_reason
    same_nan = (shown.forward_loss == expected.forward_loss
                or (np.isnan(shown.forward_loss) and np.isnan(expected.forward_loss)))
    assert same_nan and shown.grad_passes == expected.grad_passes


def test_a_step_through_the_process_shows_the_in_process_numbers(start) -> None:
    process = start()
    trainer = Trainer(CONFIG)
    assert_same(process.latest, trainer.snapshot())
    for _ in range(3):
        process.request("step")
        process.wait_for(NewSnapshot)
        trainer.step()
        assert_same(process.latest, trainer.snapshot())
    process.request("substep")
    process.wait_for(NewSnapshot)
    trainer.substep()
    assert_same(process.latest, trainer.snapshot())
    assert not process.latest.params.flags.writeable  # a view of shared memory, read-only


def test_a_steps_snapshot_and_answer_come_in_one_message(start, monkeypatch) -> None:
    """A Step wakes the window once: its snapshot and the command's answer cross the
    pipe as one message, the snapshot first (a window that has the answer has it)."""
    process = start()
    messages: list[tuple[str, int]] = []
    original = TrainingProcess._event

    def seen(self, message, newest):  # type: ignore[no-untyped-def]
        messages.append((message[0], len(message)))
        return original(self, message, newest)
    monkeypatch.setattr(TrainingProcess, "_event", seen)
    number = process.call("step")
    events: list = []
    while not any(isinstance(e, Reply) for e in events):
        events += process.receive(60)
    assert messages == [("snapshot", 3), ("reply", 3)]  # (the answer within the snapshot's)
    assert [type(e) for e in events] == [NewSnapshot, Reply]
    assert events[1].number == number and process.latest.step == 1


def test_a_run_to_a_goal_matches_the_in_process_run(start) -> None:
    process = start()
    process.want_snapshot()
    process.run(1, RunGoal(steps=40))
    events = process.wait_for(RunChanged)  # started
    while not any(isinstance(e, RunChanged) and not e.running for e in events):
        events = process.wait_for(RunChanged)
        process.want_snapshot()
    process.receive(0.5)
    trainer = Trainer(CONFIG)
    trainer.run_steps(40)
    assert_same(process.latest, trainer.snapshot())


def test_the_graph_crosses_with_the_engine_numbers(start) -> None:
    process = start()
    process.tell("set_graph_wanted", True)  # as a graph view that opens
    process.tell("capture_graph")
    process.wait_for(NewSnapshot)
    for _ in range(2):
        process.request("step")
    trainer = Trainer(CONFIG)
    trainer.capture_graph = True
    trainer.step()
    trainer.step()
    shown, expected = process.latest.graph, trainer.snapshot().graph
    assert shown is not None and expected is not None
    assert shown.ops == expected.ops and shown.structure_key == expected.structure_key
    assert shown.names == expected.names and shown.children == expected.children
    for sample in (0, 7):
        assert shown.values(sample).tobytes() == expected.values(sample).tobytes()
        assert shown.grads(sample).tobytes() == expected.grads(sample).tobytes()
    root = shown.root
    assert shown.data(root) == expected.data(root) and shown.n_samples == expected.n_samples
    # A snapshot without a new trace keeps the same graph object (views compare them).
    process.request("unpin")
    assert process.latest.graph is shown


def test_a_snapshot_held_by_the_window_never_changes(start) -> None:
    """Newer snapshots go to other slots: the one a view keeps stays as it was."""
    process = start()
    process.request("step")
    process.wait_for(NewSnapshot)
    held = process.latest
    params, history = held.params.copy(), held.history.column("loss").copy()
    for _ in range(5):
        process.request("step")
        process.wait_for(NewSnapshot)
    assert process.latest.step == held.step + 5
    assert held.params.tobytes() == params.tobytes()
    assert held.history.column("loss").tobytes() == history.tobytes()
    # The history grows in place: the newer one extends the held one (plots append).
    assert process.latest.history.extends(held.history)
    process.request("rewind", 2)
    process.wait_for(NewSnapshot)
    assert len(process.latest.history) == 2
    assert not process.latest.history.extends(held.history)  # a new run of records


def test_pause_abandons_a_long_step_and_restores_its_start(start) -> None:
    process = start(BIG)
    initial = process.latest.params.copy()
    process.run(1)
    process.wait_for(RunChanged)
    while not process.stepping:  # the first step is under way
        process.receive(0.01)
    process.pause(1)
    events = process.wait_for(RunChanged)
    assert [e.running for e in events if isinstance(e, RunChanged)] == [False]
    # The step's start came first: a window that hears the run stopped shows it.
    assert isinstance(events[-2], NewSnapshot)
    assert process.latest.step == 0 and process.latest.phase == "forward"
    assert process.latest.params.tobytes() == initial.tobytes()
    # The step's start was restored exactly: a step from here is the in-process step.
    process.request("step", timeout=600)
    process.wait_for(NewSnapshot)
    trainer = Trainer(BIG)
    trainer.step()
    assert process.latest.params.tobytes() == trainer.snapshot().params.tobytes()


def test_pause_in_a_big_steps_backward_pass_restores_its_start(start) -> None:
    # With an L2 penalty: its sum over every parameter is part of the graph given up.
    config = BIG.with_changes(l2=1e-4)
    process = start(config)
    process.request("step", timeout=600)  # so the step's start has gradients
    process.wait_for(NewSnapshot)
    before = process.latest
    assert before.step == 1 and np.any(before.grads != 0)
    params, grads = before.params.copy(), before.grads.copy()
    process.request("substep", timeout=600)  # the forward pass
    process.request("substep", timeout=600)  # zero_grad: the gradients have changed
    process.run(1)  # the run goes on with the step's backward pass
    process.wait_for(RunChanged)
    while not process.stepping:
        process.receive(0.01)
    process.pause(1)
    events = process.wait_for(RunChanged)
    assert [e.running for e in events if isinstance(e, RunChanged)] == [False]
    restored = process.latest
    assert restored.step == 1 and restored.phase == "forward"
    assert restored.params.tobytes() == params.tobytes()
    assert restored.grads.tobytes() == grads.tobytes()
    # The process answers afterwards (a question while the abandoned graph is freed in
    # pieces: tests/test_leftovers.py), and a step from here is the in-process step.
    assert process.request("timeline_view", timeout=600) is not None
    assert process.request("step", timeout=600) is not None
    process.wait_for(NewSnapshot)
    trainer = Trainer(config)
    trainer.run_steps(2)
    assert process.latest.step == 2
    assert process.latest.params.tobytes() == trainer.snapshot().params.tobytes()


def test_a_killed_training_process_is_reported_and_its_run_continues(start) -> None:
    process = start()
    for _ in range(4):
        process.request("step")
    state = process.request("state")
    assert process.last_state is state
    process.request("step")  # one step more than the state holds
    os.kill(process.pid, signal.SIGKILL)
    events = process.wait_for(Died)
    died = [e for e in events if isinstance(e, Died)]
    assert died and "killed" in died[0].text and "SIGKILL" in died[0].text
    assert process.latest is not None and process.latest.step >= 4  # still readable
    process.call("step")  # sending to a dead process does no harm
    assert process.receive() == [] and not process.alive
    # Continue from the last whole state the window holds.
    again = start(process.last_state)
    assert again.latest.step == 4
    for _ in range(6):
        again.request("step")
    again.wait_for(NewSnapshot)
    trainer = Trainer(CONFIG)
    trainer.run_steps(10)
    assert_same(again.latest, trainer.snapshot())


def test_the_steps_trained_there_correct_the_estimates_here(start, monkeypatch) -> None:
    from gradbox.training import limits

    seen: list[float] = []
    monkeypatch.setattr(limits, "observe_step",
                        lambda config, seconds, n=None: seen.append(seconds))
    process = start()
    for _ in range(3):
        process.request("step")
    process.receive(0.5)
    assert len(seen) == 3 and all(s > 0 for s in seen)


def test_a_failing_command_is_an_answer_not_an_end(start) -> None:
    process = start()
    from gradbox.runner.process import CommandError
    with pytest.raises(CommandError, match="no parameter named"):
        process.request("set_parameter", "nonsense", 1.0)
    with pytest.raises(CommandError, match="no session command named"):
        process.request("launch_rockets")
    process.request("step")
    assert process.alive


def test_a_whole_run_asked_lazily_is_read_where_it_is_needed_and_leaves_nothing(
        start) -> None:  # type: ignore[no-untyped-def]
    """A save's whole run stays pickled in shared memory until the writer thread reads
    it: the UI thread only maps it. Read on another thread, it is the run bit for bit."""
    process = start()
    process.request("step")
    process.request("step")
    number = process.call_lazily("whole_run")
    reply = next(e for e in process.wait_for(Reply, timeout=60) if isinstance(e, Reply))
    assert reply.number == number and isinstance(reply.result, LazyAnswer)
    assert not glob.glob(os.path.join(SHM_FOLDER, process.prefix + "b*"))  # mapped: unnamed
    read: list[object] = []
    thread = threading.Thread(target=lambda: read.append(reply.result.load()))
    thread.start()
    thread.join()
    state, position, snapshot = read[0]  # type: ignore[misc]
    expected = process.request("state")
    assert position is None and snapshot.step == 2 == state.step
    assert Trainer.from_state(state).snapshot().params.tobytes() == \
        Trainer.from_state(expected).snapshot().params.tobytes()
    assert state.history == expected.history
    # The window's last whole state is that run (what a death continues from).
    assert process.last_state.step == 2


def test_a_whole_run_read_lazily_views_its_block_and_names_what_the_window_has(
        start, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The writer thread makes no copy of a whole run's arrays while it holds the
    interpreter lock: they are read-only views of the block the training process wrote;
    the parameter names (a million strings for a 1000x1000 network) are the window's
    own object, not made again. The file written from it is the one written from the
    run taken in process, member for member, byte for byte."""
    process = start()
    process.request("step")
    process.request("set_parameter", process.latest.param_names[3], 0.25)
    process.request("step")
    number = process.call_lazily("whole_run")
    reply = next(e for e in process.wait_for(Reply, timeout=60) if isinstance(e, Reply))
    assert reply.number == number
    state, _position, snapshot = reply.result.load()
    assert snapshot.param_names is process.latest.param_names
    run = state.current.run
    for array in (state.initial_params, run.params, run.grads, snapshot.params,
                  state.history.column("loss"), state.dataset.points):
        assert not array.flags.writeable and not array.flags.owndata
    expected = process.request("state")  # (pickled through the pipe, as ever)
    save_session(state, tmp_path / "lazy.gradbox")
    save_session(expected, tmp_path / "piped.gradbox")
    with zipfile.ZipFile(tmp_path / "lazy.gradbox") as a, \
            zipfile.ZipFile(tmp_path / "piped.gradbox") as b:
        assert a.namelist() == b.namelist()
        for name in a.namelist():
            assert a.read(name) == b.read(name), name
    assert load_state(tmp_path / "lazy.gradbox").edits == expected.edits


@pytest.mark.parametrize("value", [
    np.arange(12.0).reshape(3, 4), np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    np.arange(10)[::3], np.array([True, False]), np.zeros((0, 5)), np.float64(2.5),
    {"m": MappingProxyType({"v": np.ones(3)}), "t": (np.arange(3), "names", None)},
])
def test_a_block_reads_back_what_was_pickled_into_it(value: object) -> None:
    """`write_block`/`read_block`: any value, its arrays of any layout, read back equal
    (contiguous arrays as read-only views of the block, the rest inside the pickle)."""
    stream, buffers = pickled_parts(value)
    header, nbytes = block_layout(stream, buffers)
    block = np.zeros(nbytes, np.uint8)
    write_block(block, header, stream, buffers)
    block.flags.writeable = False
    read = read_block(block)
    flat_in, flat_out = _leaves(value), _leaves(read)
    assert len(flat_in) == len(flat_out)
    for a, b in zip(flat_in, flat_out):
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        else:
            assert a == b


def _leaves(value: object) -> list[object]:
    if isinstance(value, (dict, MappingProxyType)):
        return [x for k in sorted(value) for x in [k, *_leaves(value[k])]]
    if isinstance(value, tuple):
        return [x for v in value for x in _leaves(v)]
    return [value]


def test_a_process_that_cannot_start_leaves_nothing_in_shm(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The window's control block is made before the process starts: a start that fails
    (no more processes, a broken forkserver) must not leave its name behind."""
    ours = os.path.join(SHM_FOLDER, f"gbx{os.getpid()}_*")  # other workers' are theirs
    before = set(glob.glob(ours))

    def refuse(self) -> None:  # type: ignore[no-untyped-def]
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    with pytest.raises(OSError, match="temporarily unavailable"):
        TrainingProcess(CONFIG)
    assert set(glob.glob(ours)) == before


@pytest.mark.parametrize("size", [4096, CLOSE_ELSEWHERE])
def test_a_big_block_is_unmapped_off_the_thread_that_let_go_of_it(monkeypatch, size: int,
                                                                 ) -> None:  # type: ignore[no-untyped-def]
    """Unmapping a block whose name is gone frees its pages (~24 ms for 100 MB): the UI
    thread letting go of an autosave's run must not pay it. A small block is closed at
    once, where it was let go of."""
    closed_on: list[int] = []
    real_close = SharedMemory.close

    def close(self: SharedMemory) -> None:
        closed_on.append(threading.get_ident())
        real_close(self)

    monkeypatch.setattr(SharedMemory, "close", close)
    segment = Segment(f"gbxtest{os.getpid()}_unmap{size}", size, create=True)
    segment.unlink()
    view = segment.view(0, (16,), np.uint8)
    del segment
    assert closed_on == []  # (the view keeps the mapping)
    del view
    deadline = time.monotonic() + 10
    while not closed_on and time.monotonic() < deadline:
        time.sleep(0.005)
    # (SharedMemory's own __del__ closes it again: a no-op, wherever it runs)
    assert closed_on and (closed_on[0] != threading.get_ident()) == (size >= CLOSE_ELSEWHERE)
