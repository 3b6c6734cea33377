"""A whole run as one immutable value: `TrainingState`, and the pieces it is made of.

`Trainer.state()` returns one and `Trainer.from_state()` continues from one, bit for bit.
Taking a state is cheap (it shares the history's columns and the checkpoints, copies only
the current weights), so a caller may keep many: an autosave hands one to a writer
thread, an undo stack keeps one per action, a session file is one written to disk.

How a run is stored, so that any step can be reached again:

- `history`: what every step measured (`History`, one row per step), including the
  learning rate it used and whether its zero_grad was skipped.
- `events`: what the user changed between steps, in order: weights typed in
  (`ParameterEdit`), the base learning rate (`RateChange`), the ghost run switched on or
  off (`GhostChange`), new points (`DataChange`; the first event is always the data the
  run started with). An event at step `s` happened after `s` steps.
- `checkpoints`: full copies of everything that changes while training (`Checkpoint`),
  each taken at the start of a step, after the events at that step. They are kept
  sparsely (the trainer chooses how far apart from the measured cost of a step), always
  at step 0 and at every step with an event, plus the last few steps.
- `current`: the checkpoint the next step starts from.

A step is deterministic given its starting checkpoint, the data in effect, the batch
(seeded by the config's seed and the step number) and its record, so the state after any
step is the nearest checkpoint at or before it, replayed forward.
"""

from __future__ import annotations

import copyreg
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from gradbox.autograd.phases import Phase
from gradbox.formatting import fmt
from gradbox.training.config import TrainingConfig
from gradbox.training.datasets import Dataset
from gradbox.training.history import History


def frozen(array: np.ndarray, dtype: type | None = None) -> np.ndarray:
    """A read-only copy."""
    out = np.array(array, dtype=dtype or np.asarray(array).dtype, copy=True)
    out.flags.writeable = False
    return out


def frozen_optimizer(state: Mapping[str, np.ndarray | int]) -> Mapping[str, np.ndarray | int]:
    return MappingProxyType({k: frozen(v, np.float64) if isinstance(v, np.ndarray) else int(v)
                             for k, v in state.items()})


def read_only(mapping: dict) -> MappingProxyType:
    return MappingProxyType(mapping)


def _proxy_pickled(proxy: MappingProxyType) -> tuple[object, tuple[dict]]:
    return read_only, (dict(proxy),)


# A state crosses to another process (issue 22) pickled; a read-only mapping is rebuilt
# read-only there (pickle refuses mappingproxy by default).
copyreg.pickle(MappingProxyType, _proxy_pickled)


class FrozenDataset(Dataset):
    """A Dataset that cannot change: read-only arrays, and no attribute can be set again
    (so `add_point` raises). `copy()` gives an ordinary, editable Dataset."""

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "_sealed", True)

    def __setattr__(self, name: str, value: object) -> None:
        if getattr(self, "_sealed", False):
            raise AttributeError("this dataset belongs to a training run and cannot change: "
                                 "edit a copy() and pass it to replace_dataset")
        super().__setattr__(name, value)


def frozen_dataset(dataset: Dataset) -> Dataset:
    """An unchangeable copy (no copy at all if it already is one)."""
    if isinstance(dataset, FrozenDataset):
        return dataset
    targets = None if dataset.targets is None else frozen(dataset.targets, np.float64)
    return FrozenDataset(frozen(dataset.points, np.float64), frozen(dataset.labels, np.int64),
                         frozen(dataset.is_test, np.bool_), dataset.classes, targets,
                         dataset.one_dimensional)


@dataclass(frozen=True)
class ModelState:
    """One network's weights, gradients and optimizer state (read-only arrays)."""

    params: np.ndarray
    grads: np.ndarray
    optimizer: Mapping[str, np.ndarray | int]

    @property
    def nbytes(self) -> int:
        return self.params.nbytes + self.grads.nbytes + sum(
            v.nbytes for v in self.optimizer.values() if isinstance(v, np.ndarray))


@dataclass(frozen=True)
class Checkpoint:
    """Everything that training changes, at the start of step `step + 1`."""

    step: int
    lr: float  # the base learning rate in effect (before the schedule)
    run: ModelState
    ghost: ModelState | None

    @property
    def nbytes(self) -> int:
        return self.run.nbytes + (self.ghost.nbytes if self.ghost is not None else 0)


@dataclass(frozen=True)
class ParameterEdit:
    """A weight typed in by hand between steps `step` and `step + 1`."""

    step: int
    name: str
    old: float
    new: float


def weight(value: float) -> str:
    """A weight for people: 4 significant digits, and "2.0" rather than "2" so that a
    round number still reads as a weight, not a count."""
    text = fmt(value)
    return text + ".0" if text.lstrip("-").isdigit() else text


def edit_text(edit: ParameterEdit) -> str:
    """"layers.0.neurons.1.w.0: 0.3 → 2.0"."""
    return f"{edit.name}: {weight(edit.old)} → {weight(edit.new)}"


@dataclass(frozen=True)
class RateChange:
    """The base learning rate set to `lr` after `step` steps."""

    step: int
    lr: float


@dataclass(frozen=True)
class GhostChange:
    """The ghost run switched on (a copy of the main run) or off after `step` steps."""

    step: int
    on: bool


@dataclass(frozen=True)
class DataChange:
    """Training uses these points from step `step + 1` on (`version` counts the changes)."""

    step: int
    # Compared by `version` (arrays have no single truth value); same run, same points.
    dataset: Dataset = field(compare=False)
    version: int = 0


Event = ParameterEdit | RateChange | GhostChange | DataChange


@dataclass(frozen=True)
class PinnedRun:
    """A finished (or paused) run pinned, to lay its curves over the current one's.

    It keeps its configuration and its per-step records -- what the loss curve draws --
    not its weights: comparing curves needs nothing more, and the records are small. It
    belongs to the session, not to one model: it survives a change of settings (that is
    the point: SGD, pin, switch to Adam, run again), a reset and a save (what differs
    between the two configurations: `config.differences`)."""

    config: TrainingConfig
    history: History

    @property
    def steps(self) -> int:
        return len(self.history)


@dataclass(frozen=True)
class TrainingState:
    """A whole run, immutable: what `Trainer.from_state` needs to continue it bit for bit.

    `phase` is the phase the next substep runs; between phases, `current` is the start of
    the step under way and `zero_grad_skipped` says whether its zero_grad phase (if done)
    was skipped, so the phases done can be run again exactly. Views' choices (a selected
    sample, a zoom) are not part of it.
    """

    config: TrainingConfig  # lr: the base learning rate in effect now
    init_seed: int
    initial_params: np.ndarray  # the network's initial weights, before any edit
    dataset: Dataset  # the points the next step trains on
    dataset_version: int
    forget_zero_grad: bool  # the switch's position (each step's use is in its record)
    history: History
    events: tuple[Event, ...]
    checkpoints: tuple[Checkpoint, ...]  # sorted by step, all before `current`
    current: Checkpoint
    phase: str = Phase.FORWARD
    zero_grad_skipped: bool = False
    stop_reason: str = ""
    pinned: PinnedRun | None = None  # a run kept to compare with (`PinnedRun`)

    @property
    def step(self) -> int:
        return len(self.history)

    @property
    def edits(self) -> tuple[ParameterEdit, ...]:
        return tuple(e for e in self.events if isinstance(e, ParameterEdit))

    @property
    def nbytes(self) -> int:
        """Memory this state holds (shared with the trainer and other states)."""
        data = {id(e.dataset): e.dataset for e in self.events if isinstance(e, DataChange)}
        data[id(self.dataset)] = self.dataset
        return (self.history.nbytes + sum(c.nbytes for c in self.checkpoints)
                + self.current.nbytes + sum(d.points.nbytes + d.labels.nbytes
                                            + d.is_test.nbytes for d in data.values()))
