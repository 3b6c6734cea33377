"""What the two ports share: the signals, the frames, the selection, the run's state as
the window sees it, and the window's side of the named commands.

A subclass supplies the transport -- `_call` (run a session command or question),
`_start_run`, `_pause`, `_speed`, `_want_snapshot` -- and calls back the `_on_...`
handlers with what happened, in the order it happened: a snapshot (`_on_snapshot`),
a reply or a failure (`_on_replied`, `_on_failed`), a run started or over
(`_on_running_changed`), a run that stopped itself (`_on_stopped`). So the two ports
differ only in where the session runs, never in what the views see.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from PySide6.QtCore import QObject, Signal, Slot

from gradbox.port.frame_pacer import FramePacer
from gradbox.training.config import TrainingConfig, plan_config_change
from gradbox.training.goals import RunGoal
from gradbox.training.history import History
from gradbox.training.session import Session, record_key
from gradbox.training.snapshots import Snapshot

P = ParamSpec("P")
R = TypeVar("R")


def interval_ms(steps_per_second: float | None) -> int:
    """Milliseconds between a Run's steps at `steps_per_second` (0: as fast as it can)."""
    return 0 if steps_per_second is None else max(0, round(1000 / steps_per_second))


class PortBase(QObject):
    """A `SessionPort` but for its transport (see the module's docstring)."""

    snapshot: Snapshot  # the one the views were last given (a subclass sets the first)

    snapshot_changed = Signal(object)
    running_changed = Signal(bool)
    # Pause was pressed during a run: the step under way is abandoned, then
    # running_changed(False) follows.
    pause_requested = Signal()
    message = Signal(str)
    error = Signal(str, str)
    stopped = Signal(str)
    sample_selected = Signal(int)
    parameter_selected = Signal(str)
    undo_changed = Signal(str, str)  # what Undo and Redo would do ('' for nothing)
    # The training process ended unasked (killed, out of memory, a crash), in words; the
    # window offers `continue_training()`.
    training_died = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.running = False
        self._runs_asked = 0  # numbers the runs, so a Pause knows which runs it cancels
        self._paused_upto = 0
        self.goal = RunGoal()  # when a Run stops by itself; set by the window's controls
        self.speed: float | None = None  # steps per second; the toolbar sets a watchable one
        self.selected_sample = 0
        self.selected_parameter = ""
        self.graph_wanted = False
        # The whole run's record while the timeline is moved back (later steps faded).
        self.ahead: History | None = None
        self.undo_text = self.redo_text = ""
        self.died = ""  # why the training process ended unasked ('' while it lives)
        self._callbacks: dict[int, Callable[[Any], None]] = {}
        # Who hears a command's failure instead of the window's "Something went wrong".
        self._failures: dict[int, Callable[[str], None]] = {}
        self._rewinding_to: int | None = None  # a rewind sent, its snapshot not yet here
        # Draws the frames; views that want fewer snapshots than every frame, or work
        # off the UI thread, subscribe there (rate tiers).
        self.pacer = FramePacer(self, self)

    # --- the transport (a subclass's) ---------------------------------------------------
    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any],
              waited: bool = False, lazy: bool = False) -> int:
        """Run the session's command or question `name`; the number its reply comes
        back with (`_on_replied`), if `waited`."""
        raise NotImplementedError

    def _start_run(self, number: int, goal: RunGoal, interval_s: float) -> None:
        raise NotImplementedError

    def _pause(self, upto: int) -> None:
        raise NotImplementedError

    def _speed(self, interval_s: float) -> None:
        raise NotImplementedError

    def _want_snapshot(self) -> None:
        """While running: the next step may publish a snapshot (a frame was drawn)."""
        raise NotImplementedError

    # --- the named commands --------------------------------------------------------------
    def send(self, command: Callable[Concatenate[Session, P], Any], *args: P.args,
             **kwargs: P.kwargs) -> None:
        """Send the session's command or setting `command` (a method of `Session`, e.g.
        `Session.reset`) with plain-data arguments; a new snapshot follows a command.
        Nobody waits for its answer, so none comes back (a failure is said: `error`)."""
        self._call(command.__name__, args, kwargs)

    def ask(self, question: Callable[..., R], *args: Any, callback: Callable[[R], None],
            **kwargs: Any) -> None:
        """Ask the session's question `question` (a method of `Session`, e.g.
        `Session.state`); `callback(answer)` is called back on the UI thread, later.
        Nothing changes, nothing is redrawn."""
        self._callbacks[self._call(question.__name__, args, kwargs, waited=True)] = callback

    def ask_lazily(self, question: Callable[..., Any], *args: Any,
                   callback: Callable[[Any], None],
                   failed: Callable[[str], None] | None = None, **kwargs: Any) -> None:
        """As `ask`, for a large answer (a whole run, for a save): `callback` gets an
        answer whose `load()` gives it -- on the thread that writes the file, not this
        one (a 1000x1000 network's run is tens of megabytes). `failed(why)` hears if no
        answer will come (the question failed, or the training process died): a save
        waiting for it must not wait for good."""
        number = self._call(question.__name__, args, kwargs, waited=True, lazy=True)
        self._callbacks[number] = callback
        if failed is not None:
            self._failures[number] = failed

    def step(self) -> None:
        if not self.running:
            self.send(Session.step)

    def substep(self) -> None:
        if not self.running:
            self.send(Session.substep)

    def run(self, goal: RunGoal | int | None = None) -> None:
        """Train until paused, or until `goal` (a RunGoal, or a number of steps; by
        default the goal chosen in the window, `self.goal`) is reached."""
        if isinstance(goal, int):
            goal = RunGoal(steps=goal)
        if not self.running or self.pausing:
            self._runs_asked += 1
            self._set_running(True)  # the button flips now, not when training answers
            self._start_run(self._runs_asked, goal or self.goal,
                            interval_ms(self.speed) / 1000)

    def pause(self) -> None:
        """Stop the run now (the step under way is abandoned, its start restored), or the
        run asked for but not started yet: the last Pause wins. `running` turns False
        when training has stopped."""
        self._paused_upto = self._runs_asked
        self._pause(self._paused_upto)
        if self.running:
            self.pause_requested.emit()

    @property
    def pausing(self) -> bool:
        """Pause was pressed after the newest Run; training may not have stopped yet."""
        return self._paused_upto == self._runs_asked

    def set_speed(self, steps_per_second: float | None) -> None:
        """Steps per second a Run takes (None: as fast as it can); applies at once."""
        self.speed = steps_per_second
        self._speed(interval_ms(steps_per_second) / 1000)

    @property
    def interval_ms(self) -> int:
        """Milliseconds between a Run's steps (0: as fast as possible)."""
        return interval_ms(self.speed)

    def rewind(self, step: int) -> None:
        """Move the timeline to `step` (back, or forward again to steps it still holds).
        The request is checked against the run it reaches: a Reset or a new run queued
        before it has made `step` mean something else (or nothing), and then it is
        dropped with a note."""
        if step == self._rewinding_to:
            return  # asked already, and no snapshot since: the same move, not twice
        seen = self.snapshot.history
        if step > len(seen) and self.ahead is not None:
            seen = self.ahead
        self._rewinding_to = step
        self.send(Session.rewind, step,
                  record_key(seen[step - 1]) if 0 < step <= len(seen) else None)

    def move_timeline(self, step: int) -> None:
        """Move the timeline to `step` of whatever run it holds when the request arrives
        (`rewind` checks the request against the run on screen; a run just opened is not
        on screen yet)."""
        self.send(Session.rewind, step, None)

    def apply_config(self, config: TrainingConfig) -> None:
        """Use a new configuration, keeping whatever it does not change (the core's
        `plan_config_change` decides: a new rate from the next step, a restart from the
        same initial weights, a new model, or new data)."""
        change = plan_config_change(self.snapshot.config, config)
        if change.kind == "none":
            return
        if change.kind == "lr":
            self.send(Session.set_lr, config.lr)
            self.message.emit(change.message)
            return
        self.send(Session.set_config, config)

    def pin_run(self) -> None:
        """Keep this run's curves to compare the next one with (replaces an older pin)."""
        self.send(Session.pin)
        self.message.emit("Run pinned: change a setting and train again to compare")

    def open_file(self, path: Path, what: str, opened: Callable[[int], None],
                  failed: Callable[[str], None], said: bool = True) -> None:
        """Continue the run saved in session file `path`, undoably: then `opened(steps)`
        (its snapshot has come first), or `failed(why)` and the current run stays. Not
        `said`: the session says nothing of it (the caller does)."""
        number = self._call(Session.open_file.__name__, (str(path), what, said), {},
                            waited=True)
        self._callbacks[number], self._failures[number] = opened, failed

    def set_graph_wanted(self, wanted: bool) -> None:
        """A graph view is showing (or no longer): trace the graph with each shown step
        (costs time)."""
        self.graph_wanted = wanted
        self.send(Session.set_graph_wanted, wanted)
        if wanted:
            self.send(Session.capture_graph)  # the last forward pass's graph, now

    # --- selection (UI-side state shared by the views) -----------------------------------
    def select_sample(self, index: int) -> None:
        self.selected_sample = index
        self.sample_selected.emit(index)

    def select_parameter(self, name: str) -> None:
        if name != self.selected_parameter:
            self.selected_parameter = name
            self.parameter_selected.emit(name)

    # --- frames -----------------------------------------------------------------------
    def present(self, snapshot: Snapshot) -> None:
        """A frame (the pacer's): `snapshot` becomes the one on screen."""
        self.snapshot = snapshot
        self.ahead = snapshot.ahead
        undo, redo = snapshot.undo_text, snapshot.redo_text
        if (undo, redo) != (self.undo_text, self.redo_text):
            self.undo_text, self.redo_text = undo, redo
            self.undo_changed.emit(undo, redo)
        self.snapshot_changed.emit(snapshot)

    def frame_drawn(self) -> None:
        """A frame is over: while running, the training process may publish the next."""
        if self.running:
            self._want_snapshot()

    @property
    def frames(self) -> int:
        """Frames drawn so far: each hands one snapshot to every view."""
        return self.pacer.frames

    # --- what happened (the transport calls these) ---------------------------------------
    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        if snapshot is self.snapshot:
            return  # the first one, shown already
        self._rewinding_to = None
        self.pacer.offer(snapshot)

    @Slot(int, object)
    def _on_replied(self, number: int, result: Any) -> None:
        self._failures.pop(number, None)
        callback = self._callbacks.pop(number, None)
        if callback is not None:
            callback(result)

    @Slot(int, str, str)
    def _on_failed(self, number: int, text: str, detail: str) -> None:
        self._callbacks.pop(number, None)
        failure = self._failures.pop(number, None)
        if failure is not None:
            failure(text)
        else:
            self.error.emit(text, detail)

    @Slot(bool, int)
    def _on_running_changed(self, running: bool, number: int) -> None:
        # Only the newest run asked for has a say, and a run already paused here
        # cannot turn the button back to Pause on its way out.
        if number != self._runs_asked or (running and number <= self._paused_upto):
            return
        if running:
            self._set_running(True)
            self._want_snapshot()
            return
        # The run's last snapshot is shown before anyone hears that it stopped.
        self.pacer.flush_then(lambda: self._stop_running(number))

    def _stop_running(self, number: int) -> None:
        if number == self._runs_asked:  # (a newer run asked for meanwhile has the say)
            self._set_running(False)

    def _set_running(self, running: bool) -> None:
        if running != self.running:
            self.running = running
            self.running_changed.emit(running)

    @Slot(str)
    def _on_stopped(self, reason: str) -> None:
        # As for running_changed: the stop is heard with the run's last snapshot on
        # screen (heard within a frame's own event pass, the window's alert took the
        # frame's older step for the step it paused at, and said 'Still diverging').
        # Said once, by whoever shows `stopped` (the window's alert), not also as a message.
        self.pacer.flush_then(lambda: self.stopped.emit(reason))
