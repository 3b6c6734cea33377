"""The training loop as PyTorch-shaped Python, one line per piece of a phase, with live figures.

Pure Python, no Qt: the training-loop panel renders `loop_lines` and asks `loop_state`
which line was just run, which runs next, and what each one measured. The code is the
loop the app really runs (see `gradbox.training.trainer`): forward, zero_grad, backward, update.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradbox.autograd import losses
from gradbox.autograd.phases import PHASES, Phase
from gradbox.formatting import number
from gradbox.training.config import TrainingConfig
from gradbox.training.snapshots import Snapshot

__all__ = ["CodeLine", "LoopState", "loop_lines", "loop_state", "phase_done", "phase_summary",
           "shown_step_skipped", "switch_note"]

@dataclass(frozen=True)
class CodeLine:
    phase: str  # one of PHASES, or "" for the loop's own line
    code: str


def loop_lines(config: TrainingConfig) -> tuple[CodeLine, ...]:
    """The loop for this configuration: its loss and penalties, its optimizer."""
    # Penalties on lines of their own: short lines fit a narrow panel.
    penalties = [f"    loss += {strength:g} * {name}(model)"
                 for name, strength in (("l2", config.l2), ("l1", config.l1)) if strength]
    loss = losses.lookup(config.effective_loss, config.is_regression)
    batch = "for x, y in batches:" if config.batch_size else "for step in range(steps):"
    return (
        CodeLine("", batch),
        CodeLine(Phase.FORWARD, "    scores = model(x)"),
        CodeLine(Phase.FORWARD, f"    loss = {loss.loop_call}"),
        *(CodeLine(Phase.FORWARD, line) for line in penalties),
        CodeLine(Phase.ZERO_GRAD, "    optimizer.zero_grad()"),
        CodeLine(Phase.BACKWARD, "    loss.backward()"),
        CodeLine(Phase.UPDATE, "    optimizer.step()"),
    )


def phase_done(snapshot: Snapshot) -> str:
    """The phase the last Sub-step ran ('' before the first step of the run)."""
    index = PHASES.index(snapshot.phase)
    if index == 0:
        return PHASES[-1] if snapshot.step > 0 else ""
    return PHASES[index - 1]


def numbered(phase: str) -> str:
    """'2/4 zero_grad': where a phase sits in the step."""
    return f"{Phase(phase).number}/{len(PHASES)} {phase}"


def phase_summary(snapshot: Snapshot) -> tuple[str, str]:
    """('done: 2/4 zero_grad (skipped)', 'next: 3/4 backward'): the phase indicator."""
    phase, done = snapshot.phase, phase_done(snapshot)
    skipped = " (skipped)" if snapshot.forget_zero_grad else ""
    done_text = (f"done: {numbered(done)}" + (skipped if done == Phase.ZERO_GRAD else "")
                 if done else "nothing run yet")
    return done_text, f"next: {numbered(phase)}" + (skipped if phase == Phase.ZERO_GRAD else "")


@dataclass(frozen=True)
class LoopState:
    """What the panel shows: the phase just run, the next one, and a figure per phase."""

    done: str
    next: str
    skipping_zero_grad: bool
    figures: dict[str, str]  # phase -> text shown beside its line ('' when not run yet)


def shown_step_skipped(snapshot: Snapshot) -> bool:
    """Whether the step the loop's figures describe skipped zero_grad -- which the switch
    need not say: it acts from the next zero_grad on, so right after it is toggled the
    step on show (done, or past its zero_grad) did the other thing."""
    index = PHASES.index(snapshot.phase)
    if index == 0:  # at a step boundary: the step just completed
        record = snapshot.history[-1] if snapshot.history else None
        return record.zero_grad_skipped if record is not None else snapshot.forget_zero_grad
    if index > PHASES.index(Phase.ZERO_GRAD):  # this step's zero_grad has run
        held = snapshot.grad_passes - (1 if snapshot.phase == Phase.UPDATE else 0)
        # Nothing held: .grad is 0 either way, and the switch's word is as true as any.
        return held > 0 if held > 0 or not snapshot.forget_zero_grad else True
    return snapshot.forget_zero_grad  # this step's zero_grad is still to come


def switch_note(snapshot: Snapshot) -> str:
    """'' when the switch agrees with the step on show; else from which step it acts."""
    if shown_step_skipped(snapshot) == snapshot.forget_zero_grad:
        return ""
    first = snapshot.step + (1 if PHASES.index(snapshot.phase) == 0 else 2)
    return (f"skipped from step {first} on" if snapshot.forget_zero_grad
            else f"runs again from step {first} on")


def _plural(n: int) -> str:
    return f"{n} backward pass" + ("" if n == 1 else "es")


def loop_state(snapshot: Snapshot) -> LoopState:
    """The figures beside each line, for the phases this step has run so far.

    At a step boundary every line shows the figures of the step just completed.
    """
    done = phase_done(snapshot)
    finished = PHASES.index(snapshot.phase) == 0
    ran = set(PHASES) if finished and done else set(PHASES[:PHASES.index(snapshot.phase)])
    skipping = snapshot.forget_zero_grad
    record = snapshot.history[-1] if snapshot.history else None
    figures = dict.fromkeys(PHASES, "")
    if Phase.FORWARD in ran:
        loss = record.loss if finished and record is not None else snapshot.forward_loss
        figures[Phase.FORWARD] = f"loss = {number(loss)}"
    if Phase.ZERO_GRAD in ran:
        skipped = record.zero_grad_skipped if finished and record is not None else skipping
        held = snapshot.grad_passes - (1 if Phase.BACKWARD in ran else 0)
        figures[Phase.ZERO_GRAD] = (f"skipped: .grad keeps {_plural(held)}" if skipped
                                else ".grad = 0 everywhere")
        note = switch_note(snapshot)
        if note:  # the line is struck (or not) for the next step, the figure is this one's
            figures[Phase.ZERO_GRAD] = f"this step: {figures[Phase.ZERO_GRAD]}; {note}"
    if Phase.BACKWARD in ran:
        norm = float(np.linalg.norm(snapshot.grads))
        text = f"|grad| = {number(norm)}"
        if snapshot.grad_passes > 1:
            text += f", the sum of {snapshot.grad_passes} passes"
            if snapshot.step_grads is not None:
                text += f"; this one alone: {number(float(np.linalg.norm(snapshot.step_grads)))}"
        figures[Phase.BACKWARD] = text
    if Phase.UPDATE in ran and finished and record is not None:
        figures[Phase.UPDATE] = (f"step size |Δw| = {number(snapshot.update_norm)}, "
                                 f"lr = {record.lr:g}")
    return LoopState(done, snapshot.phase, skipping, figures)
