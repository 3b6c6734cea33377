"""The run on screen, the steps a move back keeps, and the way back from every replacement.

- **A non-destructive timeline.** Moving back to step k keeps the run as it was at its end
  (`ahead`, a `TrainingState`); moving forward again continues that state bit for bit.
  Only a change made at the earlier point -- a step, an edit, a new rate -- replaces the
  later steps, and that is undoable like any other replacement.
- **Undo for run-replacing actions.** A new network or data, a lesson, Re-initialize,
  Reset, Open, an import: the run before is pushed on an `UndoStack` first, with the later
  steps the timeline held.

An undo entry is what to go back to: a whole run as a `TrainingState` (cheap to keep:
states share their history columns and checkpoints with the trainer and with each
other), plus the later steps the timeline was holding at the time, if it had moved back
(`ahead`). The stacks are bounded by memory rather than by count.

Pure Python, no Qt: the training process's `Session` owns one `Timeline` and the trainer
inside it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from gradbox.formatting import counted
from gradbox.training.history import History, StepRecord
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

Change = Callable[[Trainer], "Trainer | None"]

# What the stacks may hold. A state's size counts the columns and checkpoints it shares
# with its neighbours again, so the real footprint is smaller than this.
UNDO_BUDGET_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Undoable:
    """The run an action replaced (`text` names the action), to be brought back."""

    text: str
    state: TrainingState
    ahead: TrainingState | None = None  # the later steps the timeline held, if any

    @property
    def nbytes(self) -> int:
        return self.state.nbytes + (self.ahead.nbytes if self.ahead is not None else 0)


class UndoStack:
    """Undo and redo stacks of `Undoable`s; the oldest entries go first when the budget is
    exceeded (the newest undo is always kept, however large)."""

    def __init__(self, budget_bytes: int = UNDO_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._undo: deque[Undoable] = deque()
        self._redo: deque[Undoable] = deque()

    def push(self, entry: Undoable) -> None:
        """A new action replaced a run: it can be undone; what was undone can no longer be
        redone."""
        self._undo.append(entry)
        self._redo.clear()
        self._trim()

    def undo(self, current: Undoable) -> Undoable | None:
        """The run to go back to (None if there is none); `current` becomes redoable."""
        return self._move(self._undo, self._redo, current)

    def redo(self, current: Undoable) -> Undoable | None:
        """The run an undo went back from (None if there is none); `current` becomes
        undoable again."""
        return self._move(self._redo, self._undo, current)

    def _move(self, source: deque[Undoable], target: deque[Undoable],
              current: Undoable) -> Undoable | None:
        """Take the newest entry of `source`; `current` goes on `target` under its text."""
        if not source:
            return None
        entry = source.pop()
        target.append(Undoable(entry.text, current.state, current.ahead))
        self._trim()
        return entry

    @property
    def undo_text(self) -> str:
        """The action Undo would take back, or '' if none."""
        return self._undo[-1].text if self._undo else ""

    @property
    def redo_text(self) -> str:
        return self._redo[-1].text if self._redo else ""

    def __len__(self) -> int:
        return len(self._undo)

    @property
    def nbytes(self) -> int:
        return sum(e.nbytes for e in (*self._undo, *self._redo))

    def _trim(self) -> None:
        total = self.nbytes
        while total > self.budget_bytes and (self._redo or len(self._undo) > 1):
            # What was undone longest ago goes first, then the oldest undo.
            dropped = self._redo.popleft() if self._redo else self._undo.popleft()
            total -= dropped.nbytes


def _steps(first: int, last: int) -> str:
    return f"step {first}" if first == last else f"steps {first}–{last}"


class Timeline:
    """Owns the trainer; every change that could lose work goes through here."""

    def __init__(self, trainer: Trainer, undo: UndoStack | None = None) -> None:
        self.trainer = trainer
        self.ahead: TrainingState | None = None  # the run's end, while the timeline is back
        self.undo_stack = undo or UndoStack()

    # --- reading ----------------------------------------------------------------------------
    @property
    def end(self) -> int:
        """The last step the timeline reaches (past the current one when moved back)."""
        return self.ahead.step if self.ahead is not None else self.trainer.step_count

    @property
    def ahead_history(self) -> History | None:
        """The whole run's record when moved back (its later steps are drawn faded)."""
        return self.ahead.history if self.ahead is not None else None

    def record_at(self, step: int) -> StepRecord | None:
        """What step `step` (1..end) measured, on the timeline as it is now."""
        if not 1 <= step <= self.end:
            return None
        history = self.trainer.history if step <= self.trainer.step_count else self.ahead_history
        assert history is not None
        return history[step - 1]

    def whole_run(self) -> tuple[TrainingState, int | None]:
        """The run to its end, and the step the timeline stands at when that is before
        the end (None at the end): what a file keeps so the timeline comes back as it is."""
        if self.ahead is None:
            return self.trainer.state(), None
        return self.ahead, self.trainer.step_count

    # --- moving ------------------------------------------------------------------------------
    def move_to(self, step: int) -> None:
        """Show the state after `step` steps, keeping every later step to come back to."""
        if not 0 <= step <= self.end:
            raise ValueError(f"the timeline reaches steps 0..{self.end}, not {step}")
        current = self.trainer.step_count
        if step <= current:
            if step < current and self.ahead is None:
                self.ahead = self.trainer.state()
            self.trainer.rewind(step)
            return
        assert self.ahead is not None
        trainer = Trainer.from_state(self.ahead, policy=self.trainer.policy)
        if step < self.ahead.step:
            trainer.rewind(step)
        else:
            self.ahead = None  # back at the end: nothing is held any more
        self.trainer = trainer

    def diverge(self, what: str) -> str:
        """`what` is about to change the run at an earlier point than its end: the later
        steps are replaced, undoably. Returns what to tell the user ('' if nothing was)."""
        if self.ahead is None:
            return ""
        k, n = self.trainer.step_count, self.ahead.step
        text = f"{what} at step {k}"
        self.undo_stack.push(Undoable(text, self.trainer.state(), self.ahead))
        self.ahead = None
        return (f"{what} at step {k} replaced {_steps(k + 1, n)}; Edit → Undo (Ctrl+Z) brings "
                "them back")

    # --- replacing, undo, redo -------------------------------------------------------------------
    def replace(self, what: str, change: Change) -> str:
        """A run-replacing action: `change(trainer)` returns the new trainer (or changes
        the trainer in place and returns None). If it raises, nothing changes. Returns what
        to tell the user."""
        before = Undoable(what, self.trainer.state(), self.ahead)
        replaced = change(self.trainer)
        self.trainer = replaced if replaced is not None else self.trainer
        self.ahead = None
        self.undo_stack.push(before)
        n = before.ahead.step if before.ahead is not None else before.state.step
        # Nothing trained yet is still something to get back (the data, the network, the
        # weights), but "a run of 0 steps" is not how a person would name it.
        run = (f"the previous run ({counted(n, 'step')})" if n
               else "the previous setup (nothing trained yet)")
        return f"{run} comes back with Edit → Undo (Ctrl+Z)"

    def undo(self) -> str:
        """Back to the run the last action replaced; returns its name ('' if none)."""
        return self._go(self.undo_stack.undo)

    def redo(self) -> str:
        return self._go(self.undo_stack.redo)

    def _go(self, pop: Callable[[Undoable], Undoable | None]) -> str:
        entry = pop(Undoable("", self.trainer.state(), self.ahead))
        if entry is None:
            return ""
        trainer = Trainer.from_state(entry.state, policy=self.trainer.policy)
        self.trainer, self.ahead = trainer, entry.ahead
        return entry.text
