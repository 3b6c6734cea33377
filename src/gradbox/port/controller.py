"""The app's `SessionPort`: a training session in a training process (gradbox.runner),
whose pipe it watches itself.

Widgets call the port's methods, which send the session's named commands
(`gradbox.training.session`: a name and plain-data arguments) to the training process;
it answers with immutable `Snapshot`s whose arrays are views of shared memory, and a
question's answer comes back to a callback. No trainer lives in this process.

Listening. A `QSocketNotifier` on the process's pipe calls `_read` when something
arrives (or the process died and the pipe ended): the events are read at once -- no
thread, no polling timer -- and each goes to the port's own handler (`_on_snapshot`,
`_on_replied`...), in the order they came. Reading costs the UI thread only the small
metadata: a snapshot's arrays are views of shared memory. (A `ProcessLink` between the
pipe and the port turned each event into a signal that one handler of the port
listened to: a layer that only passed events on.)

Frames. The port's `FramePacer` (gradbox.port.frame_pacer) draws them: a
snapshot that arrives is offered to it, and drawn at once if the last frame is a frame
old (a single Step shows without waiting for a tick), else when it is. While running,
the window asks the training process for the next snapshot once it has drawn one
(`want_snapshot`): the training process makes one per frame at most and never waits for
the window.

Process, not thread -- measured with benchmarks/bench_app.py and bench_process.py. With
a training thread, the UI thread and training took turns at one interpreter lock: W1
trained at 0.45-0.58x the bare step rate on the boundary and graph tabs (parked while a
frame drew, by design), the longest stalls were 59-64 ms, Step -> shown 28-33 ms, and
a 1000x1000 network's Pause waited 2.3 s for a phase. In a process, training has its own
lock and core, Pause abandons the step under way (SIGUSR1), a crash or an out-of-memory
kill in training leaves the window up, and the snapshots cross through shared memory:
a 1000x1000 snapshot costs the window 0.6 ms of CPU against 64 ms pickled (0.01x), W1's
traced graph 0.8 ms against 5.5 ms. A training process starts in 0.25 s (forkserver).

What the window's whole process does (the cyclic collector on the UI thread alone,
numpy's BLAS threads, Qt's paint pool) is `gradbox.app`'s, set before any port starts.
"""

from __future__ import annotations

import glob
import logging
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier, Slot

from gradbox.port.common import PortBase, interval_ms
from gradbox.runner.process import (
    CommandError,
    Died,
    Failed,
    NewSnapshot,
    Note,
    Reply,
    RunChanged,
    Stopped,
    TrainingProcess,
)
from gradbox.runner.shared import SHM_FOLDER
from gradbox.runner.wire import LazyAnswer
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

log = logging.getLogger(__name__)

START_PATIENCE_S = 120.0  # a big network takes this long at most to be built
QUIT_PATIENCE_S = 30.0  # the whole run is fetched at quit: a big one takes a while


def _start_of(source: Trainer | Session | TrainingState | TrainingConfig | None,
              ) -> TrainingState | TrainingConfig:
    """What a training process starts from: a run's whole state, or a configuration."""
    if isinstance(source, Session):
        source = source.trainer
    if isinstance(source, Trainer):
        return source.state()
    return source if source is not None else TrainingConfig()


class _FinalRun:
    """The run as the training process had it when the window shut down: what a save on
    quit writes (the shape of `Timeline.whole_run`)."""

    def __init__(self, state: TrainingState, position: int | None) -> None:
        self._run = (state, position)

    def whole_run(self) -> tuple[TrainingState, int | None]:
        return self._run


class SessionController(PortBase):
    """The `SessionPort` over a training process (see the module's docstring)."""

    def __init__(self, trainer: Trainer | Session | TrainingState | TrainingConfig | None
                 = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._final: _FinalRun | None = None
        self._notifier: QSocketNotifier | None
        self._process, self._notifier = self._start(_start_of(trainer))
        latest = self._process.latest
        assert latest is not None
        self.snapshot = latest
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    def _start(self, start: TrainingState | TrainingConfig | str,
               ) -> tuple[TrainingProcess, QSocketNotifier]:
        """A training process for `start`, its first snapshot in hand, and the notifier
        that watches its pipe. Raises what building the run raised (a configuration too
        big for memory, ...)."""
        process = TrainingProcess(start)
        try:
            process.wait_for_snapshot(START_PATIENCE_S)
        except (CommandError, TimeoutError):
            process.close()
            raise
        notifier = QSocketNotifier(process.fileno(), QSocketNotifier.Type.Read, self)
        notifier.activated.connect(self._read)
        if self.graph_wanted:
            process.tell(Session.set_graph_wanted.__name__, True)
            process.tell(Session.capture_graph.__name__)
        if self.speed is not None:
            process.set_speed(interval_ms(self.speed) / 1000)
        return process, notifier

    @Slot()
    def _read(self) -> None:
        """What arrived on the pipe, each to its handler, in order."""
        for event in self._process.receive():
            if isinstance(event, NewSnapshot):
                self._on_snapshot(event.snapshot)
            elif isinstance(event, Reply):
                self._on_replied(event.number, event.result)
            elif isinstance(event, Failed):
                self._on_failed(event.number, event.text, event.detail)
            elif isinstance(event, RunChanged):
                self._on_running_changed(event.running, event.number)
            elif isinstance(event, Stopped):
                self._on_stopped(event.reason)
            elif isinstance(event, Note):
                self.message.emit(event.text)
            elif isinstance(event, Died):
                if self._notifier is not None:  # the pipe stays readable (at its end)
                    self._notifier.setEnabled(False)
                self._on_died(event.text)

    # --- the transport ------------------------------------------------------------------
    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
              waited: bool = False, lazy: bool = False) -> int:
        process = self._process
        if not waited:
            process.tell(name, *args, **kwargs)  # no answer crosses back
            return 0
        return (process.call_lazily if lazy else process.call)(name, *args, **kwargs)

    def _start_run(self, number: int, goal: RunGoal, interval_s: float) -> None:
        self._process.run(number, goal, interval_s)

    def _pause(self, upto: int) -> None:
        self._process.pause(upto)

    def _speed(self, interval_s: float) -> None:
        self._process.set_speed(interval_s)

    def _want_snapshot(self) -> None:
        self._process.want_snapshot()

    # --- saving -------------------------------------------------------------------------
    def whole_run_written(self, answer: LazyAnswer, path: Path, step: int) -> None:
        """The whole run `answer` brought (at `step`) is in session file `path`: the
        window keeps no copy of it (a death continues from the file)."""
        self._process.whole_state_written(answer, str(path), step)

    def stopped_timeline(self) -> _FinalRun:
        """The run as it was when `shutdown()` stopped the training process."""
        if self._final is None:
            raise RuntimeError("the training process is still running, or it died")
        return self._final

    # --- a training process that died ----------------------------------------------------
    @Slot(str)
    def _on_died(self, text: str) -> None:
        self._callbacks.clear()
        # Questions that will never be answered are told so (after the death is said):
        # an autosave waiting for its whole run would otherwise wait for good.
        unanswered = list(self._failures.values())
        self._failures.clear()
        self._set_running(False)
        step, kept = self._process.last_step, self._process.last_start
        where = (f"from step {step}, as saved in {Path(kept).name}" if isinstance(kept, str)
                 else f"from step {step}, the last whole state this window holds (the "
                 "autosave has it too)" if step is not None else
                 "from step 0 of the same settings (no whole state of the run had reached "
                 "this window yet)")
        self.died = (f"{text} The window keeps what it showed (step {self.snapshot.step}); "
                     f"training can continue {where}.")
        log.error("%s", self.died)
        self.training_died.emit(self.died)
        for failed in unanswered:
            failed(text)

    def continue_training(self) -> None:
        """After the training process died: a new one, from the last whole state this
        window holds or the session file it went into (else step 0 of the same
        settings)."""
        last = self._process.last_start
        start: TrainingState | TrainingConfig | str = (
            last if last is not None else self.snapshot.config)
        self._close()
        self._process, self._notifier = self._start(start)
        self.died = ""
        latest = self._process.latest
        assert latest is not None
        self.pacer.offer(latest)
        self.message.emit(f"Training continues from step {latest.step}")

    @property
    def training_pid(self) -> int:
        """The training process's id (tests stop and kill it)."""
        return int(self._process.pid or 0)

    def shared_memory_left(self) -> list[str]:
        """The names this window's training process has in /dev/shm now (none once it
        has been shut down)."""
        prefix = self._process.prefix
        return sorted(os.path.basename(p) for p in
                      glob.glob(os.path.join(SHM_FOLDER, glob.escape(prefix) + "*")))

    @property
    def newest(self) -> Snapshot:
        """The newest snapshot received from the training process (drawn at the next
        frame if it is not `snapshot` yet)."""
        latest = self._process.latest
        return latest if latest is not None else self.snapshot

    @property
    def stepping(self) -> bool:
        """A step (or a big network's phase) is under way in the training process."""
        return self._process.stepping

    # --- the end -------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop the training process, keeping the whole run for a save on quit
        (`stopped_timeline`). Safe to call twice."""
        self.pacer.shutdown()
        if self._process.alive and self._final is None:
            self._process.pause(self._runs_asked + 1)
            try:
                state, position, _snapshot = self._process.request(
                    "whole_run", timeout=QUIT_PATIENCE_S)
                self._final = _FinalRun(state, position)
            except (CommandError, TimeoutError) as error:
                log.error("the run could not be fetched at quit: %s", error)
        self._close()

    def _close(self) -> None:
        """Stop listening, then stop the process. Safe to call twice."""
        notifier, self._notifier = self._notifier, None
        if notifier is not None:
            # Gone now, while the application is: a notifier left to Qt's teardown, on
            # a pipe already closed, crashed the app on its way out (SIGSEGV).
            notifier.setEnabled(False)
            notifier.setParent(None)
            del notifier
        self._process.close()
