"""Undo and redo for actions that replace a run, bounded by memory rather than by count.

An entry is what to go back to: a whole run as a `TrainingState` (cheap to keep: states
share their history columns and checkpoints with the trainer and with each other), plus
the later steps the timeline was holding at the time, if it had moved back (`ahead`).
Pure Python, no Qt: the training thread keeps the stack, the window shows its texts.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from gradbox.training.state import TrainingState

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
