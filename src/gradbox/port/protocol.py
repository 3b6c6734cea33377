"""`SessionPort`: everything a view may use of a training session, and nothing else.

A view is built on a port and never on a concrete session: the app gives it
`SessionController` (the session in a training process), a widget test or a benchmark
gives it `InProcessPort` (the session here, stepped on the UI thread). What a port
offers:

    the snapshot    `snapshot` (the one on screen), `snapshot_changed`, and what the
                    timeline holds beside it (`ahead`, `undo_text`, `redo_text`,
                    `undo_changed`)
    the frames      `pacer` (rate tiers, work off the UI thread), `frames`
    the run         `running`, `pausing`, `goal`, `speed`, `interval_ms`, and the signals
                    `running_changed`, `pause_requested`, `stopped`
    selection       `selected_sample`, `selected_parameter`, `select_sample`,
                    `select_parameter` and their signals: UI-side state the views share
    commands        `send(Session.x, ...)` for any of the session's commands and settings,
                    `ask(Session.y, ..., callback=)` for its questions; and the few that
                    are the window's own: `step`, `substep`, `run`, `pause`, `set_speed`,
                    `rewind`, `move_timeline`, `apply_config`, `pin_run`, `open_file`,
                    `set_graph_wanted`
    words           `message`, `error`, `training_died` (`died`, `continue_training`)
    the end         `shutdown`, `stopped_timeline`, `whole_run_written`

Commands and questions are named by the `Session` method itself (`Session.reset`), so a
reader goes from a button to the code that runs in one jump.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from PySide6.QtCore import SignalInstance

from gradbox.port.frame_pacer import FramePacer
from gradbox.training.config import TrainingConfig
from gradbox.training.goals import RunGoal
from gradbox.training.history import History
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState

P = ParamSpec("P")
R = TypeVar("R")


class WholeRun(Protocol):
    """The run as a save on quit writes it (`Timeline.whole_run`'s shape)."""

    def whole_run(self) -> tuple[TrainingState, int | None]: ...


class SessionPort(Protocol):
    """What a view holds (see the module's docstring)."""

    # Signals.
    snapshot_changed: SignalInstance  # (Snapshot) a frame: the one on screen changed
    running_changed: SignalInstance  # (bool)
    pause_requested: SignalInstance  # Pause pressed during a run; running_changed follows
    message: SignalInstance  # (str) a note for the user
    error: SignalInstance  # (str, str) a command failed: in words, and the traceback
    stopped: SignalInstance  # (str) a run stopped itself (non-finite numbers, divergence)
    sample_selected: SignalInstance  # (int)
    parameter_selected: SignalInstance  # (str)
    undo_changed: SignalInstance  # (str, str) what Undo and Redo would do ('': nothing)
    training_died: SignalInstance  # (str) the training process ended unasked, in words
    destroyed: SignalInstance  # (QObject's)

    # State.
    snapshot: Snapshot
    ahead: History | None  # the whole run's record while the timeline is moved back
    undo_text: str
    redo_text: str
    running: bool
    goal: RunGoal  # when a Run stops by itself (the window's controls set it)
    speed: float | None  # a Run's steps per second (None: as fast as it can)
    selected_sample: int
    selected_parameter: str
    graph_wanted: bool
    died: str  # why training ended unasked ('' while it lives)
    pacer: FramePacer

    @property
    def pausing(self) -> bool: ...
    @property
    def stepping(self) -> bool: ...  # a step is under way in training
    @property
    def interval_ms(self) -> int: ...
    @property
    def frames(self) -> int: ...

    # Commands.
    def send(self, command: Callable[Concatenate[Session, P], Any], *args: P.args,
             **kwargs: P.kwargs) -> None: ...
    def ask(self, question: Callable[..., R], *args: Any, callback: Callable[[R], None],
            **kwargs: Any) -> None: ...
    def ask_lazily(self, question: Callable[..., Any], *args: Any,
                   callback: Callable[[Any], None],
                   failed: Callable[[str], None] | None = None, **kwargs: Any) -> None: ...
    def step(self) -> None: ...
    def substep(self) -> None: ...
    def run(self, goal: RunGoal | int | None = None) -> None: ...
    def pause(self) -> None: ...
    def set_speed(self, steps_per_second: float | None) -> None: ...
    def rewind(self, step: int) -> None: ...
    def move_timeline(self, step: int) -> None: ...
    def apply_config(self, config: TrainingConfig) -> None: ...
    def pin_run(self) -> None: ...
    def open_file(self, path: Path, what: str, opened: Callable[[int], None],
                  failed: Callable[[str], None], said: bool = True) -> None: ...
    def set_graph_wanted(self, wanted: bool) -> None: ...
    def select_sample(self, index: int) -> None: ...
    def select_parameter(self, name: str) -> None: ...

    # The frames (the pacer calls these).
    def present(self, snapshot: Snapshot) -> None: ...
    def frame_drawn(self) -> None: ...

    # A death, and the end.
    def continue_training(self) -> None: ...
    def shutdown(self) -> None: ...
    def stopped_timeline(self) -> WholeRun: ...
    def whole_run_written(self, answer: Any, path: Path, step: int) -> None: ...
