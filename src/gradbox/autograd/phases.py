"""The four phases of a training step, named once: forward, zero_grad, backward, update.

The trainer runs them in this order (a Sub-step runs one); the training-loop panel, the
toolbar, the graph's caption, the parameters table and the session files name them, and
all import them from here. A `Phase` is a `str`, so a snapshot's phase compares equal to
its name and is saved as it.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["PHASES", "Phase"]


class Phase(StrEnum):
    FORWARD = "forward"
    ZERO_GRAD = "zero_grad"
    BACKWARD = "backward"
    UPDATE = "update"

    @property
    def number(self) -> int:
        """Where the phase sits in the step, from 1."""
        return PHASES.index(self) + 1

    @property
    def what(self) -> str:
        """What the phase does, in a learner's words ('update: move each weight ...')."""
        return f"{self.value}: {_WHAT[self]}"


PHASES: tuple[Phase, ...] = tuple(Phase)
_WHAT = {
    Phase.FORWARD: "build the graph, compute the loss",
    Phase.ZERO_GRAD: "set every gradient to 0",
    Phase.BACKWARD: "pass gradients from the loss to every weight",
    Phase.UPDATE: "move each weight against its gradient",
}
