"""The run record: everything a run keeps of its past, changed together.

    history      what every step measured (`HistoryBuffer`, one row per step)
    events       what the user changed between steps (`Event`s; the first is the data)
    checkpoints  full copies to rewind to any step from (`CheckpointStore`)
    path         the weights along the way, for the loss landscape (`WeightPath`)
    peaks        the run's largest |gradient| so far, after each step

The trainer appends a step (`begin_step`, `finish_step`), an event (`events`), and
forgets the steps after a rewind (`truncate`); a saved run's record is loaded whole
(`load`). What these hold is described in gradbox.training.state.

Checkpoints are kept by a `CheckpointPolicy`: full ones to rewind to any step by replaying
from the nearest one (`CheckpointStore`), and the weights along the way (`WeightPath`).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace

import numpy as np

from gradbox.training.datasets import Dataset
from gradbox.training.history import History, HistoryBuffer, StepRecord, passes_after
from gradbox.training.state import (
    Checkpoint,
    DataChange,
    Event,
    ModelState,
    ParameterEdit,
    TrainingState,
    frozen,
)


@dataclass(frozen=True)
class CheckpointPolicy:
    """How far apart full checkpoints are kept (see `Trainer` and gradbox.training.state).

    A checkpoint is kept once `replay_seconds` of measured training have passed since the
    last one -- so reaching any step replays at most that long -- but never closer than
    `bytes_per_step` of checkpoint per step of history allows. The last steps are also
    kept whole (up to `recent_bytes`), so stepping back a little is instant. `every`, if
    set, replaces the measured rule by a fixed spacing (tests and benchmarks).
    """

    replay_seconds: float = 0.2
    bytes_per_step: int = 700
    recent_bytes: int = 2 * 2**20
    min_recent: int = 2
    max_recent: int = 256
    every: int | None = None

    def recent_count(self, checkpoint_bytes: int) -> int:
        fit = self.recent_bytes // max(checkpoint_bytes, 1)
        return int(min(max(fit, self.min_recent), self.max_recent))

    def keep(self, steps_since: int, seconds_since: float, checkpoint_bytes: int) -> bool:
        if self.every is not None:
            return steps_since >= self.every
        return (seconds_since >= self.replay_seconds
                and steps_since * self.bytes_per_step >= checkpoint_bytes)


class CheckpointStore:
    """The checkpoints of one run: sparse ones kept for good (always at step 0 and at
    any step with an event), the last few steps whole, and the start of the step under
    way (`start`, None between steps)."""

    def __init__(self, policy: CheckpointPolicy) -> None:
        self.policy = policy
        self._sparse: list[Checkpoint] = []
        self._recent: deque[Checkpoint] = deque()
        self.start: Checkpoint | None = None  # the step under way began here
        self._since_sparse = 0.0  # seconds of training since the last sparse checkpoint

    def load(self, checkpoints: tuple[Checkpoint, ...], current_bytes: int) -> None:
        """Take a saved run's checkpoints (the last few also count as recent)."""
        self._sparse = list(checkpoints)
        recent = self.policy.recent_count(current_bytes)
        self._recent = deque(checkpoints[-recent:])

    def trained(self, seconds: float) -> None:
        """`seconds` more of training since the last sparse checkpoint."""
        self._since_sparse += seconds

    def begin_step(self, cp: Checkpoint, evented: bool) -> None:
        """The start of a step: kept as the step under way's start, among the last few
        steps, and sparsely for good (always at step 0 and after any event: `evented`)."""
        self.start = cp
        while self._recent and self._recent[-1].step >= cp.step:
            self._recent.pop()
        self._recent.append(cp)
        recent = self.policy.recent_count(cp.nbytes)
        while len(self._recent) > recent:
            self._recent.popleft()
        if self._sparse and self._sparse[-1].step == cp.step:
            self._sparse[-1] = cp
            return
        last = self._sparse[-1].step if self._sparse else -1
        if (last < 0 or evented
                or self.policy.keep(cp.step - last, self._since_sparse, cp.nbytes)):
            self._sparse.append(cp)
            self._since_sparse = 0.0

    def amend_start(self, lr: float, ghost: ModelState | None) -> None:
        """A change mid-step (the rate, the ghost): the step's start takes it in too, so
        that it stays 'the start of this step, after its events'."""
        if self.start is None:
            return
        self.start = replace(self.start, lr=lr, ghost=ghost)
        self._recent[-1] = self.start
        if self._sparse and self._sparse[-1].step == self.start.step:
            self._sparse[-1] = self.start

    def latest(self) -> Checkpoint | None:
        """The newest checkpoint (the start of the last step begun), or None."""
        return self._recent[-1] if self._recent else None

    def nearest(self, step: int) -> Checkpoint:
        best = None
        for cp in (*self._sparse, *self._recent):
            if cp.step <= step and (best is None or cp.step > best.step):
                best = cp
        assert best is not None, "step 0 is always kept"
        return best

    def at(self, step: int) -> Checkpoint | None:
        """The checkpoint kept at `step`, or None."""
        return next((cp for cp in (*self._sparse, *self._recent) if cp.step == step), None)

    def kept(self, below: float = math.inf) -> tuple[Checkpoint, ...]:
        """Every checkpoint kept before step `below`, one per step, in step order."""
        by_step = {cp.step: cp for cp in (*self._sparse, *self._recent) if cp.step < below}
        return tuple(by_step[s] for s in sorted(by_step))

    def truncate(self, step: int) -> None:
        """Forget the checkpoints after `step` (a rewind to it)."""
        self._sparse = [cp for cp in self._sparse if cp.step <= step]
        self._recent = deque(cp for cp in self._recent if cp.step <= step)
        last = self._sparse[-1].step
        self._since_sparse = 0.0 if step == last else self.policy.replay_seconds / 2


PATH_POINTS = 512  # weights kept along a run, for the loss landscape's path
PATH_BYTES = 8 * 2**20


class WeightPath:
    """The weights after every `stride`-th step, from step 0: when more than PATH_POINTS
    (or PATH_BYTES) are held, every other one is dropped and the stride doubles. Cheap and
    bounded however long the run; kept apart from the checkpoints, which may be far apart."""

    def __init__(self, initial: np.ndarray) -> None:
        self.steps: list[int] = [0]
        self.weights: list[np.ndarray] = [frozen(initial, np.float64)]
        self.stride = 1
        self.limit = max(16, min(PATH_POINTS, PATH_BYTES // max(8 * len(initial), 1)))

    def add(self, step: int, weights: np.ndarray) -> None:
        if step % self.stride or (self.steps and step <= self.steps[-1]):
            return
        self.steps.append(step)
        self.weights.append(frozen(weights, np.float64))
        if len(self.steps) > self.limit:
            self.stride *= 2
            keep = [i for i, s in enumerate(self.steps) if s % self.stride == 0]
            self.steps = [self.steps[i] for i in keep]
            self.weights = [self.weights[i] for i in keep]

    def truncate(self, step: int) -> None:
        while len(self.steps) > 1 and self.steps[-1] > step:
            self.steps.pop()
            self.weights.pop()

    def arrays(self, now: int, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        steps, weights = list(self.steps), list(self.weights)
        if steps[-1] == now:
            weights[-1] = current  # an edit typed in since may have changed them
        else:
            steps.append(now)
            weights.append(current)
        return np.array(steps, np.int64), np.stack(weights)




class RunRecord:
    """The history, events, checkpoints, weight path and gradient peaks of one run."""

    def __init__(self, policy: CheckpointPolicy, initial_params: np.ndarray,
                 data: DataChange) -> None:
        self.history = HistoryBuffer()
        self.events: list[Event] = [data]
        self.checkpoints = CheckpointStore(policy)
        self.path = WeightPath(initial_params)
        # Cumulative largest |gradient| after each step (see `peak`).
        self.peaks: list[float] = []

    def load(self, state: TrainingState) -> None:
        """Take a saved run's record (its history, events and checkpoints)."""
        self.history = HistoryBuffer(state.history)
        self.events = list(state.events)
        self.checkpoints.load(state.checkpoints, state.current.nbytes)
        # The path so far is known where the weights are: at the kept checkpoints.
        for cp in state.checkpoints[1:]:
            self.path.add(cp.step, cp.run.params)

    # --- reading ------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return len(self.history)

    def view(self) -> History:
        return self.history.view()

    def edits(self) -> tuple[ParameterEdit, ...]:
        return tuple(e for e in self.events if isinstance(e, ParameterEdit))

    def passes_held(self) -> int:
        """How many backward passes the gradients hold after the last step."""
        return passes_after(self.history.view())

    def data_at(self, step: int) -> Dataset:
        """The points the step after `step` steps trained on."""
        data = self.events[0]
        for event in self.events:
            if isinstance(event, DataChange) and event.step <= step:
                data = event
        assert isinstance(data, DataChange)
        return data.dataset

    def last_peak(self) -> float:
        """The largest |gradient| of the steps recorded in `peaks` (0 before any)."""
        return self.peaks[-1] if self.peaks else 0.0

    def peak(self) -> float:
        """The largest |gradient| from step 1 to the last step recorded."""
        if len(self.peaks) < self.steps:
            # A run restored from a state: its steps' gradients are known only at the
            # kept checkpoints (checkpoint s holds those after step s); use those.
            known = {cp.step: float(np.abs(cp.run.grads).max(initial=0.0))
                     for cp in self.checkpoints.kept()}
            while len(self.peaks) < self.steps:
                s = len(self.peaks) + 1
                self.peaks.append(max(self.last_peak(), known.get(s, 0.0)))
        return self.last_peak()

    def last_update_norm(self, now: np.ndarray, names: tuple[str, ...]) -> float:
        """|Δw| of the last step, from the kept weights at its start and `now` (the
        weights now; its own update: a weight typed in after it is taken back out); NaN
        if its start is not kept."""
        last = self.steps
        start = self.checkpoints.at(last - 1)
        if start is None:
            return math.nan
        after = now.copy()
        for event in reversed(self.events):
            if isinstance(event, ParameterEdit) and event.step == last:
                after[names.index(event.name)] = event.old
        return float(np.linalg.norm(after - start.run.params))

    def parameter_history(self, index: int, value: float, grad: float,
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(steps, values, gradient steps, gradients) of one parameter, where known
        (`value`, `grad`: its weight and gradient now).

        values[i] is the weight at the start of step steps[i] + 1 (after that step's
        edits); gradients[i] is what the backward pass of step grad_steps[i] left. Known at
        every kept checkpoint (every step near the end, sparser further back) and now.
        """
        kept = self.checkpoints.kept(below=self.steps)
        steps = [cp.step for cp in kept]
        values = [cp.run.params[index] for cp in kept]
        grad_steps = [cp.step for cp in kept if cp.step > 0]
        grads = [cp.run.grads[index] for cp in kept if cp.step > 0]
        steps.append(self.steps)
        values.append(value)
        grad_steps.append(self.steps)
        grads.append(grad)
        return (np.array(steps, np.int64), np.array(values, np.float64),
                np.array(grad_steps, np.int64), np.array(grads, np.float64))

    # --- writing ------------------------------------------------------------------------
    def begin_step(self, cp: Checkpoint) -> None:
        """The start of a step: its checkpoint (kept for good after an event)."""
        self.checkpoints.begin_step(cp, evented=self.events[-1].step == cp.step)

    def finish_step(self, record: StepRecord, weights: np.ndarray, peak: float) -> None:
        """A step done: what it measured, the weights it left, the run's |gradient| peak."""
        self.history.append(record)
        self.path.add(record.step, weights)
        self.checkpoints.start = None
        self.peaks.append(peak)

    def truncate(self, step: int) -> None:
        """Forget everything after `step` steps (a rewind to it)."""
        self.history.truncate(step)
        del self.peaks[step:]
        self.path.truncate(step)
        self.events = [e for e in self.events if e.step <= step]
        self.checkpoints.truncate(step)
