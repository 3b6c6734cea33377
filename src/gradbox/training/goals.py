"""When a Run stops by itself: a diverging loss (an alarm), or the goal chosen in the
window (a step count, a train loss, an accuracy). Beside the divergence guard, the
symmetry guard: a hidden layer whose neurons are all the same neuron.

Neurons with identical incoming weights and bias compute the same output for every
point; if their outgoing weights are alike too, backward hands them the same gradient and
the update keeps them identical forever: a layer of eight is one neuron eight times. Only
a random start breaks the tie, which is why this follows a zeros or constant
initialization and (in practice) never a random one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gradbox.autograd.nn import INIT_LABELS, INITIALIZERS, unflatten
from gradbox.formatting import fmt
from gradbox.training.history import History, StepRecord

# A loss this far above its best (and above where it started), or past DIVERGED_LOSS, is
# a run going the wrong way: Run pauses as it does for a non-finite loss.
DIVERGED_RATIO = 100.0
# The most steps a Run is asked for, however it is asked (the run controls' "for N
# steps", a lesson's claim read at a step): one range.
MAX_RUN_STEPS = 1_000_000
DIVERGED_LOSS = 1e6


def divergence(history: History | Sequence[StepRecord], forget_zero_grad: bool = False) -> str:
    """Why the run of `history` is diverging, naming the likely cause, or '' if it is not.
    (One pass over the loss column: cheap enough to ask after every step.)"""
    history = history if isinstance(history, History) else History.from_records(history)
    return diverging(history.column, forget_zero_grad)


def diverging(column: Callable[[str], np.ndarray], forget_zero_grad: bool = False) -> str:
    """`divergence` of the history whose columns `column(name)` gives (the losses, and the
    step and rate of the last step and of the best)."""
    losses = column("loss")
    if not len(losses):
        return ""
    best_at = int(np.argmin(losses))
    last, best, first = float(losses[-1]), float(losses[best_at]), float(losses[0])
    far_above = last > DIVERGED_RATIO * best and last > first and best > 0
    if not (last > DIVERGED_LOSS or far_above):
        return ""
    steps = column("step")
    cause = ("zero_grad is skipped, so every step's gradient piles onto the last ones"
             if forget_zero_grad else
             f"the learning rate ({float(column('lr')[-1]):g}) is probably too large. "
             "Rewind or lower it")
    times = f"{last / best:,.0f} ×" if best > 0 else "far above"
    return (f"the loss rose to {fmt(last)} at step {int(steps[-1])}, {times} its best "
            f"({fmt(best)} at step {int(steps[best_at])}): {cause}.")


@dataclass(frozen=True)
class RunGoal:
    """When a Run stops by itself: after `steps` steps, at a train loss <= `loss`, at a
    train accuracy >= `accuracy` (each None: no such limit)."""

    steps: int | None = None
    loss: float | None = None
    accuracy: float | None = None

    def reached(self, record: StepRecord, steps_done: int) -> str:
        """What was reached after this step of the run, or ''."""
        if self.loss is not None and record.loss <= self.loss:
            return f"reached loss {fmt(record.loss)} ≤ {self.loss:g} at step {record.step}"
        if self.accuracy is not None and record.accuracy >= self.accuracy:
            return (f"reached accuracy {record.accuracy:.1%} ≥ {self.accuracy:.0%} "
                    f"at step {record.step}")
        if self.steps is not None and steps_done >= self.steps:
            return f"ran {steps_done} step{'s' if steps_done != 1 else ''}"
        return ""


# --- the symmetry guard ---------------------------------------------------------------------
def identical_layers(params: np.ndarray, layer_sizes: Sequence[int]) -> list[int]:
    """The hidden layers (0 = the first) of two or more neurons whose incoming weights
    and biases are equal neuron for neuron."""
    weights, biases = unflatten(params, layer_sizes)
    found = []
    for index, (w, b) in enumerate(zip(weights[:-1], biases[:-1])):
        if len(b) < 2:
            continue
        rows = np.column_stack([w, b])
        if np.all(rows == rows[0]):
            found.append(index)
    return found


def symmetry(params: np.ndarray, layer_sizes: Sequence[int], init: str, steps: int) -> str:
    """Why this run's hidden layers cannot learn different features, or '' if they can.

    Said only once a step has been taken: at step 0 a constant start is the cause, not
    yet the symptom, and one step is what shows the gradient kept them alike. Short, for
    the status bar; `SYMMETRY_WHY` says the rest."""
    if steps < 1:
        return ""
    layers = identical_layers(params, layer_sizes)
    if not layers:
        return ""
    names = ", ".join(str(i + 1) for i in layers)
    which = f"hidden layer {names}" if len(layers) == 1 else f"hidden layers {names}"
    return (f"After step {steps} every neuron of {which} has the same incoming weights: "
            "same gradient, so they stay alike. Cause: the initializer "
            f"({INIT_LABELS.get(init, init)}); a random one breaks the tie.")


# The initializers that draw each weight at random: the ones that break the tie.
_RANDOM = ", ".join(INIT_LABELS[name] for name in INITIALIZERS
                    if name not in ("constant", "zeros"))
SYMMETRY_WHY = (
    "Neurons with the same incoming weights compute the same output for every point, so "
    "backward hands them the same gradient and the update keeps them equal: the layer acts "
    f"as one neuron, however many it has. A random initializer ({_RANDOM}) starts each "
    "neuron elsewhere, and they learn different features.")


class Stepping(Protocol):
    """What a Run drives (a `Trainer`; named here so this module does not import it)."""

    stop_reason: str
    forget_zero_grad: bool

    @property
    def history(self) -> History: ...

    def column(self, name: str) -> np.ndarray: ...

    def step(self) -> StepRecord | None: ...

    def substep(self, capture_every_phase: bool = True) -> str: ...


@dataclass(frozen=True)
class Tick:
    """What one tick of a Run did: `stepped` a whole step was completed; `alarm` the run
    stopped itself (non-finite numbers, a diverging loss); `reached` the goal was."""

    stepped: bool
    alarm: str = ""
    reached: str = ""

    @property
    def over(self) -> bool:
        return bool(self.alarm or self.reached)


@dataclass
class RunLoop:
    """The loop of one Run (the button) toward `goal`, a step (or, `split`, a phase)
    per tick, with the stop rules every Run shares: the trainer's own stop (a non-finite
    loss or gradient), then a diverging loss, then the goal. `Trainer.run_steps` and the
    window's Run both tick it."""

    goal: RunGoal
    # Every Run pauses on a diverging loss (the window's, and Trainer.run_steps by
    # default); a script may turn it off to train on into non-finite numbers on purpose.
    stop_diverging: bool = True
    steps_done: int = 0

    def tick(self, trainer: Stepping, split: bool = False) -> Tick:
        record = None
        if not split:
            record = trainer.step()
        elif trainer.substep(capture_every_phase=False) == "update" and not trainer.stop_reason:
            record = trainer.history[-1]
        if trainer.stop_reason:
            return Tick(False, alarm=trainer.stop_reason)
        if record is None:
            return Tick(False)
        self.steps_done += 1
        # The columns, not the history: its new steps' layer statistics wait to be
        # measured together when it is read (`HistoryBuffer`).
        alarm = self.stop_diverging and diverging(trainer.column, trainer.forget_zero_grad)
        if alarm:
            return Tick(True, alarm=alarm)
        return Tick(True, reached=self.goal.reached(record, self.steps_done))
