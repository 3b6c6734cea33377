"""A training session without Qt: the run, its timeline, and the commands that change it.

The `Session` owns a `Timeline` (and so the `Trainer` inside it) and is changed only by
named commands (`Session.command(name, *args)`, or the methods of the same names;
`Session.perform` adds the snapshot a command leaves), whose
arguments and results are plain data -- numbers, strings, configurations, states,
snapshots -- never a closure over the trainer. A command can therefore be sent to the
thread that owns the session, or to another process.

The vocabulary is named once, here: a method marked `@command` may change the session
(a snapshot follows it to the window), one marked `@question` only answers, one marked
`@setting` changes how the session works but nothing on show (no snapshot follows).
`COMMANDS`, `QUESTIONS` and `SETTINGS`, the training process's dispatch and the window's
`port.send(Session.x)` all follow from the marks.

What the session has to say it tells its view (`SessionView`): a note to read (what a
change replaced and how to get it back, a goal reached), or that training stopped
itself (a non-finite loss or gradient, a diverging loss). This is the shape of mu's
`logic.Editor`: the logic owns the state and drives the window through a small
interface, so it is tested with a mock view and no window at all.

A Run is `start_run(goal)` then `tick()` until a tick says the run is over: one step per
tick (one phase for a big network, see `splits_steps`), with the stop rules of
`gradbox.training.goals.RunLoop` -- the same loop as `Trainer.run_steps`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import numpy as np

from gradbox.autograd.gradcheck import GradCheck, network_gradient_check
from gradbox.autograd.phases import PHASES
from gradbox.training import limits
from gradbox.training.config import TrainingConfig, config_for, plan_config_change, splits_steps
from gradbox.training.datasets import Dataset
from gradbox.training.goals import RunGoal, RunLoop, Tick
from gradbox.training.history import History, StepRecord
from gradbox.training.landscape import Problem, Request
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import ParameterEdit, TrainingState, edit_text
from gradbox.training.timeline import Timeline
from gradbox.training.trainer import Trainer

__all__ = ["COMMANDS", "QUESTIONS", "SETTINGS", "ParameterHistory", "Session", "SessionView",
           "record_key"]

# What parameter_history answers: (name, steps, values, gradient steps, gradients, edits).
ParameterHistory = tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                         tuple[ParameterEdit, ...]]


class SessionView(Protocol):
    """What the session tells the window."""

    def show_message(self, text: str) -> None:
        """A note for the user: what a change replaced, a goal reached, an edit made."""

    def show_stop(self, reason: str) -> None:
        """Training stopped by itself (non-finite numbers, a diverging loss): an alarm."""


class _NoView:
    def show_message(self, text: str) -> None:
        pass

    def show_stop(self, reason: str) -> None:
        pass


F = TypeVar("F", bound=Callable[..., Any])


def command(method: F) -> F:
    """Mark a `Session` method as a command: it may change the session, and a snapshot
    follows it."""
    method.session_verb = "command"  # type: ignore[attr-defined]
    return method


def question(method: F) -> F:
    """Mark a `Session` method as a question: it answers, and changes nothing (nothing
    is redrawn after it)."""
    method.session_verb = "question"  # type: ignore[attr-defined]
    return method


def setting(method: F) -> F:
    """Mark a `Session` method as a setting: it changes how the session works from now
    on, not what is on show, so no snapshot follows it."""
    method.session_verb = "setting"  # type: ignore[attr-defined]
    return method


def record_key(record: StepRecord) -> tuple[int, float, float]:
    """What tells one run's step from another's (same numbers: the same state)."""
    return record.step, record.loss, record.grad_norm


class Session:
    """Owns the timeline and its trainer; changed only through its named commands."""

    def __init__(self, trainer: Trainer | None = None, view: SessionView | None = None,
                 read_file: Callable[[str], TrainingState] | None = None) -> None:
        self.timeline = Timeline(trainer if trainer is not None else Trainer(TrainingConfig()))
        self.view: SessionView = view if view is not None else _NoView()
        # Reads a session file for `open_file` (gradbox.files.sessions.load_state: files
        # sit above this layer, so whoever hosts the session hands it over).
        self.read_file = read_file
        # A graph view is showing: trace the graph with the steps that are shown.
        self.graph_wanted = False
        self._run: RunLoop | None = None

    @classmethod
    def fresh(cls, config: TrainingConfig | None = None) -> Session:
        """A session of a new run of `config` (the defaults if None)."""
        return cls(Trainer(config or TrainingConfig()))

    @property
    def trainer(self) -> Trainer:
        """The run on show (for code in the same thread that owns the session)."""
        return self.timeline.trainer

    # --- what is on show --------------------------------------------------------------------
    @question
    def snapshot(self) -> Snapshot:
        """The run on show, with what the timeline holds beside it (the steps kept ahead,
        what Undo and Redo would do): one parcel for the window."""
        t = self.timeline
        return dataclasses.replace(self.trainer.snapshot(), ahead=t.ahead_history,
                                   undo_text=t.undo_stack.undo_text,
                                   redo_text=t.undo_stack.redo_text)

    @question
    def timeline_view(self) -> tuple[History | None, str, str]:
        """(the whole run's record while the timeline is back or None, what Undo would do,
        what Redo would do), for the window beside each snapshot."""
        t = self.timeline
        return t.ahead_history, t.undo_stack.undo_text, t.undo_stack.redo_text

    # --- questions: nothing changes ---------------------------------------------------------
    @question
    def parameter_history(self, index: int, name: str) -> ParameterHistory | None:
        """One parameter's weights and gradients along the run, with the edits typed into
        it; None if parameter `index` is no longer called `name` (the network changed
        since the question was asked)."""
        trainer = self.trainer
        if index >= len(trainer.param_names) or trainer.param_names[index] != name:
            return None
        steps, values, grad_steps, grads = trainer.parameter_history(index)
        # Read with the history, in the same thread, so the two always agree.
        edits = tuple(e for e in trainer.edits if e.name == name)
        return name, steps, values, grad_steps, grads, edits

    @question
    def gradient_check(self) -> GradCheck:
        """The network's gradients beside finite differences, on its training points and
        the loss it trains on (penalties included)."""
        trainer = self.trainer
        train = ~trainer.dataset.is_test
        c = trainer.config
        # The network's inputs are its features of the points.
        return network_gradient_check(trainer.model, c.inputs(trainer.dataset.points[train]),
                                      trainer.dataset.truth[train], trainer.data_loss,
                                      c.l1, c.l2)

    @question
    def landscape_request(self, mode: str, axes: tuple[int, int], seed: int,
                          ) -> Request | str:
        """What the loss landscape is computed from (the run's path and loss, copied), or
        why it cannot be: the grid itself is computed elsewhere, off this thread."""
        try:
            snapshot = self.trainer.snapshot()
            steps, path = self.trainer.trajectory()
        except Exception as error:  # an answer must come back, or the view waits forever
            return f"The landscape could not be computed: {error}"
        train = ~snapshot.is_test
        c = snapshot.config
        truth = snapshot.targets if snapshot.targets is not None else snapshot.labels
        problem = Problem(snapshot.layer_sizes, c.activation, c.effective_loss, c.l1,
                          c.l2, c.inputs(snapshot.points[train]), truth[train],
                          regression=snapshot.targets is not None)
        return Request(problem, snapshot.params, steps, path, mode, axes, seed)

    @question
    def whole_run(self) -> tuple[TrainingState, int | None, Snapshot]:
        """The run to its end, the step the timeline stands at (None at the end) and the
        snapshot on show: what a saved file keeps."""
        state, position = self.timeline.whole_run()
        return state, position, self.trainer.snapshot()

    @question
    def whole_state(self) -> TrainingState:
        """The run to its end, alone (what an animation export replays)."""
        return self.timeline.whole_run()[0]

    @question
    def state(self) -> TrainingState:
        return self.trainer.state()

    # --- training ---------------------------------------------------------------------------
    @command
    def step(self) -> StepRecord | None:
        """One whole step (finishing a sub-stepped one); None if it stopped (said)."""
        self.diverge("Step")
        record = self.trainer.step()
        if record is None:
            self.view.show_stop(self.trainer.stop_reason)
        return record

    @command
    def substep(self) -> str:
        """The next phase; returns its name."""
        self.diverge("Sub-step")
        phase = self.trainer.substep()
        if self.trainer.stop_reason:
            self.view.show_stop(self.trainer.stop_reason)
        return phase

    @command
    def start_run(self, goal: RunGoal | None = None) -> None:
        """A Run begins: `tick()` goes on until `goal` or a stop rule says it is over."""
        self.diverge("Run")
        self._run = RunLoop(goal if goal is not None else RunGoal())

    @command
    def tick(self, capture_graph: bool | None = None) -> Tick:
        """One step of the Run (one phase for a big network). `capture_graph`: trace this
        step's graph (default: whenever a graph view shows)."""
        if self._run is None:
            self._run = RunLoop(RunGoal())
        trainer = self._traced(capture_graph)
        return self._run.tick(trainer, split=splits_steps(trainer.config))

    @command
    def finish_run(self) -> None:
        """The Run is over: the graph of the last step, if steps went by untraced (traced
        again if none is kept: a Pause that abandoned a step went back to its start)."""
        self._run = None
        if self.graph_wanted:
            self.capture_graph()

    @setting
    def use_step_costs(self, costs: limits.StepCosts) -> None:
        """The step costs the window measured at launch (`gradbox.training.calibration`):
        this process's estimates -- the warning after a change to a slow network -- use
        them instead of a guess."""
        limits.calibrated(costs)

    @setting
    def set_graph_wanted(self, wanted: bool) -> None:
        """A graph view shows (or no longer does): trace the graph with the steps that
        are shown (`capture_graph` traces the last forward pass's now)."""
        self.graph_wanted = wanted

    @command
    def capture_graph(self) -> None:
        """A graph view opened: the last forward pass's graph, now -- traced again if
        none is kept (after a rewind, an Undo or a reopened run)."""
        self.trainer.capture_current_graph()
        if self.trainer.last_graph is None:
            trace_last_step_again(self.trainer)

    # --- the timeline -----------------------------------------------------------------------
    @command
    def rewind(self, step: int, mark: tuple[int, float, float] | None = None) -> bool:
        """Move the timeline to `step` (back, or forward to steps it still holds). `mark`
        is `record_key` of what the window showed for that step: a request that reaches
        a different run (a Reset queued before it) is dropped with a note. Whether it moved."""
        record = self.timeline.record_at(step)
        if (step > self.timeline.end or
                (mark is not None and (record is None or record_key(record) != tuple(mark)))):
            self.view.show_message(f"Not moved to step {step}: the run changed before the "
                                   "request arrived")
            return False
        self.timeline.move_to(step)
        return True

    @command
    def undo(self) -> str:
        """Bring back the run the last run-replacing action replaced; what it was ('')."""
        return self._undo_redo(True)

    @command
    def redo(self) -> str:
        return self._undo_redo(False)

    def _undo_redo(self, undo: bool) -> str:
        text = self.timeline.undo() if undo else self.timeline.redo()
        if text:
            self.view.show_message(f"{'Undid' if undo else 'Redid'}: {text}")
        return text

    def diverge(self, what: str) -> None:
        """`what` changes the run: made with the timeline moved back, it replaces the later
        steps (undoably), and the user is told."""
        text = self.timeline.diverge(what)
        if text:
            self.view.show_message(text)

    # --- changes to the run ----------------------------------------------------------------
    @command
    def set_parameter(self, name: str, value: float) -> ParameterEdit:
        """A weight typed in by hand, from the next step on."""
        self.diverge("A weight typed in")
        change = self.trainer.set_parameter(name, value)
        self.view.show_message(f"{edit_text(change)} (after step {change.step}; "
                               "rewind past it to undo)")
        return change

    @command
    def set_forget_zero_grad(self, on: bool) -> None:
        self.diverge("Forget zero_grad")
        self.trainer.set_forget_zero_grad(on)

    @command
    def set_ghost(self, on: bool) -> None:
        self.diverge("Ghost run")
        self.trainer.set_ghost(on)

    @command
    def set_lr(self, lr: float) -> None:
        self.diverge("A new learning rate")
        self.trainer.set_lr(lr)

    @command
    def pin(self) -> None:
        """Keep this run's curves to compare the next one with (replaces an older pin)."""
        self.diverge("A change")
        self.trainer.pin()

    @command
    def unpin(self) -> None:
        self.diverge("A change")
        self.trainer.unpin()

    @command
    def add_point(self, x: float, y: float, label: int, test: bool = False,
                  target: float | None = None) -> None:
        """Add a point; a regression point over the plane needs its `target`."""
        self.diverge("A point added")
        dataset = self.trainer.dataset.copy()
        dataset.add_point(x, y, label, test, target)
        self.trainer.replace_dataset(dataset)

    @command
    def remove_point(self, x: float, y: float) -> None:
        self.diverge("A point removed")
        dataset = self.trainer.dataset.copy()
        if dataset.remove_nearest(x, y) >= 0:
            self.trainer.replace_dataset(dataset)

    # --- run-replacing actions: each undoable --------------------------------------------------
    def replace_run(self, what: str, change: Any, said: bool = True) -> None:
        """`change(trainer)` returns the new trainer (or changes it in place and returns
        None); if it raises, the old run stays and the error goes to the caller. Unless
        not `said` (the caller says it in words of its own), what it replaced is said."""
        hint = self.timeline.replace(what, change)
        if said:
            self.view.show_message(f"{what}: {hint}")

    @command
    def reset(self) -> None:
        """Back to step 0 with the same initial weights."""
        self.replace_run("Reset to the same initial weights", lambda t: t.reset())

    @command
    def reinitialize(self) -> None:
        self.replace_run("Re-initialized with new random weights", lambda t: t.reinitialize())

    @command
    def set_config(self, config: TrainingConfig) -> None:
        """Use a new configuration, keeping whatever it does not change (see
        `plan_config_change`: a new rate from the next step, a restart from the same
        initial weights, a new model, or new data)."""
        change = plan_config_change(self.trainer.config, config)
        if change.kind == "none":
            return
        if change.kind == "lr":
            self.set_lr(config.lr)
            return
        warning = limits.slow_warning(config)
        self.replace_run(change.message + (f". Warning: {warning}" if warning else ""),
                         lambda t: t.with_config(config))

    @command
    def new_run(self, config: TrainingConfig, what: str) -> None:
        """A fresh run of `config`, replacing this one (File → New)."""
        self.replace_run(what, lambda _old: Trainer(config))

    @command
    def open_run(self, state: TrainingState, what: str, said: bool = True) -> None:
        """Continue the run `state` (a file opened, a session restored), replacing this one."""
        self.replace_run(what, lambda _old: Trainer.from_state(state), said)

    @command
    def open_file(self, path: str, what: str, said: bool = True) -> int:
        """Continue the run saved in session file `path`, replacing this one undoably;
        its step count. Read and built where the session lives: in the app, the training
        process -- the window only checks the file (and says what is wrong with it) and
        never builds the run nor sends it across, which froze it for 1.9 s on a 1000x1000
        session (five seconds of building, then the state pickled on its UI thread). A
        file that cannot be read or built (changed since, or too big for this process's
        memory) leaves the run as it was. Not `said`: the window says it (the reopening
        at start said it twice, in two messages in a row)."""
        if self.read_file is None:
            raise RuntimeError("this session was given no way to read files")
        state = self.read_file(path)
        self.open_run(state, what, said)
        return state.step

    @command
    def import_points(self, dataset: Dataset, what: str) -> None:
        """Train on imported points: the same run on new points if the configuration can
        take them, otherwise a new run of the nearest configuration that can."""
        def replace(old: Trainer) -> Trainer | None:
            config = config_for(dataset, old.config)
            if config == old.config:
                old.replace_dataset(dataset)
                return None
            return Trainer(config, dataset, init_seed=old.init_seed)
        self.replace_run(what, replace)

    @command
    def start_lesson(self, config: TrainingConfig, forget_zero_grad: bool = False,
                     ghost: bool = False) -> None:
        """A lesson starts from its own step 0, whatever ran before it."""
        def fresh(_old: Trainer) -> Trainer:
            trainer = Trainer(config)
            trainer.set_forget_zero_grad(forget_zero_grad)
            trainer.set_ghost(ghost)
            return trainer
        self.replace_run("Lesson set up on a fresh run", fresh)


    # --- the dispatch (last in the class: above it, `@command` is the module's mark) --------
    def command(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Run the command, question or setting `name` (one of COMMANDS, QUESTIONS or
        SETTINGS) with plain-data arguments."""
        if name not in COMMANDS and name not in QUESTIONS and name not in SETTINGS:
            raise KeyError(f"there is no session command named {name!r}")
        self._traced()
        result = getattr(self, name)(*args, **kwargs)
        if name in _LOSES_THE_GRAPH and self.graph_wanted:
            self.capture_graph()  # traced again: a graph view is open
        return result

    def perform(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Snapshot | None]:
        """Run `name` as `command` does: (its answer, the snapshot after it) for a command
        (a command may change what is on show: its snapshot goes to the window with the
        answer, in one hand-off), (its answer, None) for a question or a setting."""
        result = self.command(name, *args, **kwargs)
        return result, (self.snapshot() if name in COMMANDS else None)

    def _traced(self, capture: bool | None = None) -> Trainer:
        """The run on show, set to trace its graph with the next phases as asked (by
        default: whenever a graph view shows). The one place the trainer's flag is set."""
        trainer = self.trainer
        trainer.capture_graph = self.graph_wanted if capture is None else capture
        return trainer

# Past this many parameters a graph lost to a rewind is not traced again (a replay of
# the step costs as much as the step; the network level draws up to 20,000 anyway).
REPLAY_GRAPH_LIMIT = 20_000


def trace_last_step_again(trainer: Trainer) -> None:
    """Give `trainer` the graph of its last whole step when none is kept: the Graph tab
    said 'No graph yet: press Step' on a run of 90 steps (after an Undo, a move on the
    timeline, a restart), where a Step would have replaced the later steps. A copy of
    the run goes back one step and runs that step's forward, zero_grad and backward
    again (bit for bit: a rewind replays exactly); the run itself does not move."""
    step = trainer.step_count
    if (step == 0 or trainer.phase != PHASES[0]
            or len(trainer.param_names) > REPLAY_GRAPH_LIMIT):
        return
    copy = Trainer.from_state(trainer.state(), policy=trainer.policy)
    copy.rewind(step - 1)
    copy.set_forget_zero_grad(trainer.history[-1].zero_grad_skipped)  # as the step ran
    copy.capture_graph = True
    for _ in range(3):  # forward, zero_grad, backward: the graph before the update
        copy.substep(capture_every_phase=False)
    trainer.last_graph, trainer.last_graph_batch = copy.last_graph, copy.last_graph_batch


# The commands after which the run on show has no forward pass kept.
_LOSES_THE_GRAPH = frozenset({"rewind", "undo", "redo", "open_run", "open_file"})

# The commands that may change the session (a snapshot follows each), and the questions
# (nothing changes, nothing is redrawn), as marked: a command's name must be in one of them.
COMMANDS = frozenset(name for name, f in vars(Session).items()
                     if getattr(f, "session_verb", None) == "command")
QUESTIONS = frozenset(name for name, f in vars(Session).items()
                      if getattr(f, "session_verb", None) == "question")
SETTINGS = frozenset(name for name, f in vars(Session).items()
                     if getattr(f, "session_verb", None) == "setting")
