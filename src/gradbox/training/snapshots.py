"""What views see of a run: an immutable `Snapshot` of the trainer, safe to hand to
another thread or process, and what publishing one reads (`PublishedArrays`, the
weights read once per change; `gradient_peak`, for bars on a fixed scale)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gradbox.autograd.nn import numpy_forward
from gradbox.graph import Graph
from gradbox.training.config import TrainingConfig
from gradbox.training.history import History
from gradbox.training.state import ParameterEdit, PinnedRun, frozen

# Revision numbers (`Snapshot.run_id`, `params_rev`, `graph_rev`), drawn from one counter
# so that no two runs' numbers ever coincide (a view that kept a number from a replaced
# run cannot mistake the new run for it).
_REVISIONS = itertools.count(1)


def next_revision() -> int:
    return next(_REVISIONS)


def start_revisions_at(first: int) -> None:
    """Draw this process's revision numbers from `first` on: a training process started
    after another (one that died) must not hand the window numbers it has seen."""
    global _REVISIONS
    _REVISIONS = itertools.count(first)


@dataclass(frozen=True)
class Snapshot:
    """An immutable picture of the trainer, safe to hand to another thread."""

    step: int
    phase: str
    config: TrainingConfig
    layer_sizes: tuple[int, ...]
    param_names: tuple[str, ...]
    params: np.ndarray
    grads: np.ndarray
    history: History
    points: np.ndarray
    labels: np.ndarray
    is_test: np.ndarray
    classes: int
    forget_zero_grad: bool
    ghost: bool
    ghost_grads: np.ndarray | None
    stop_reason: str
    lr: float
    dataset_version: int
    # The computation graph of the last forward pass, numbers frozen after the last phase
    # run (None unless the trainer was asked to capture it), and the dataset index of
    # each of its samples.
    graph: Graph | None = None
    graph_batch: np.ndarray | None = None
    edits: tuple[ParameterEdit, ...] = ()
    # How many backward passes the gradients now hold (1 while zero_grad runs each step;
    # k after k steps without it), and the last backward pass's own contribution: the
    # true gradient at these weights, what zero_grad would have left (None before any).
    grad_passes: int = 0
    step_grads: np.ndarray | None = None
    # The largest |gradient| of the run so far (main and ghost), for bars on a fixed scale.
    grad_peak: float = 0.0
    # The size of the last update, |Δθ| (NaN before the first update of this history).
    update_norm: float = math.nan
    # The loss of the last forward pass, also mid-step (NaN after a rewind).
    forward_loss: float = math.nan
    # A regression dataset's float targets (None for classes).
    targets: np.ndarray | None = None
    # The dataset indices of the last forward pass's batch (empty before the first).
    batch: np.ndarray = field(default_factory=lambda: np.arange(0))
    # A run pinned for comparison, or None.
    pinned: PinnedRun | None = None
    # Revision numbers, so a view knows what changed without comparing arrays. Equal
    # numbers: the same thing. `run_id` changes when the run's past does (a new run, a
    # reset, a rewind to an earlier step): redraw everything; with the same run_id the
    # history only grows (`history_len`), new rows are history[old_len:]. `params_rev`
    # changes whenever the weights or gradients (the ghost's too) may have; `graph_rev`
    # when `graph` is another. Numbers are never reused, across runs too.
    run_id: int = 0
    params_rev: int = 0
    graph_rev: int = 0
    # What the timeline holds beside the run on show (a Session's snapshot fills them):
    # the whole run's record while it is moved back (later steps drawn faded), and what
    # Undo and Redo would do ('' for nothing).
    ahead: History | None = None
    undo_text: str = ""
    redo_text: str = ""

    @property
    def history_len(self) -> int:
        return len(self.history)

    def graph_position(self, sample: int) -> int:
        """Where dataset sample `sample` sits in the graph's per-sample arrays, or -1."""
        if self.graph_batch is None:
            return -1
        position = int(np.searchsorted(self.graph_batch, sample))
        found = position < len(self.graph_batch) and self.graph_batch[position] == sample
        return position if found else -1

    @property
    def loss(self) -> float:
        return self.history[-1].loss if self.history else math.nan

    def predict(self, points: np.ndarray, dtype: type = np.float64) -> np.ndarray:
        """Network output (n, outputs) for the given points, from this snapshot's weights
        (in `dtype`: float32 is 3x faster, for pictures)."""
        return numpy_forward(self.params, self.layer_sizes, self.config.activation,
                             self.config.inputs(points), dtype=dtype)


def gradient_peak(arrays: Sequence[np.ndarray]) -> float:
    """The largest |gradient| in `arrays` (NaN and inf ignored; 0 if none)."""
    peak = 0.0
    for array in arrays:
        if not len(array):
            continue
        # Two reductions and no temporary arrays when all is finite: every snapshot
        # asks, and a million gradients' temporaries (25 MB) took 10-40 ms of a Pause.
        high, low = float(array.max()), float(array.min())
        if math.isfinite(high) and math.isfinite(low):
            peak = max(peak, high, -low)
            continue
        magnitudes = np.abs(array)
        magnitudes = magnitudes[np.isfinite(magnitudes)]
        if len(magnitudes):
            peak = max(peak, float(magnitudes.max()))
    return peak


class PublishedArrays:
    """The weights and gradients a snapshot shows, read from the parameters only when
    the trainer's `params_rev` moved since the last read (or the run is another).

    Reading a 1000x1000 network's takes 0.2-0.4 s, and a Pause in the forward pass
    publishes the weights last published. Every change to a weight or gradient moves
    `params_rev` (a phase, a restore, an edit); a phase that has just read them says so
    (`known`)."""

    def __init__(self) -> None:
        self._known: tuple[int, object, np.ndarray, np.ndarray] | None = None

    def known(self, rev: int, run: object, params: np.ndarray, grads: np.ndarray) -> None:
        """`params` and `grads` (read-only) are `run`'s at revision `rev`."""
        self._known = (rev, run, params, grads)

    def forget(self) -> None:
        self._known = None

    def read(self, rev: int, run: object, values: Callable[[], np.ndarray],
             grads: Callable[[], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """`run`'s weights and gradients at revision `rev`, read-only (read by `values()`
        and `grads()` only if not known)."""
        known = self._known
        if known is None or known[0] != rev or known[1] is not run:
            known = (rev, run, frozen(values()), frozen(grads()))
            self._known = known
        return known[2], known[3]
