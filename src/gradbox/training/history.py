"""The record of a run: what every step measured, kept as columns, with each layer's
gradient size and activation spread (`LayerStats`).

A long run has hundreds of thousands of steps. One Python object per step would cost
~400 bytes each and a loop per redraw; columns cost 73 bytes a step and hand a plot its
arrays at once. `History` is the immutable face of those columns: a `Sequence` of
`StepRecord`s (so `history[-1].loss`, `len`, iteration and slices read as before), whose
arrays are read-only views that the trainer never writes again (`HistoryBuffer` appends
past the end of every view it gave out, and copies before it forgets steps).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from typing import overload

import numpy as np

from gradbox.autograd.nn import layer_slices, numpy_layer_outputs

# --- per-layer statistics of a step --------------------------------------------------------
QUANTILES = (0, 10, 25, 50, 75, 90, 100)
# Columns of a LayerStats table.
GRAD, SATURATED, FIRST_QUANTILE = 0, 1, 2
COLUMNS = 2 + len(QUANTILES)
SATURATION = 0.99  # |tanh| or |2·sigmoid − 1| above this: the slope is < 2 % of its peak


class LayerStats:
    """Per-layer statistics of one training step, as an immutable (layers, COLUMNS)
    table: grad, saturated, then the quantiles.

    How big each layer's gradients are, and how its activations are spread -- what shows
    vanishing gradients and saturated units. The trainer takes them in every step's
    update phase (from the weights the forward pass used and the gradients backward left,
    `LayerInputs`) and keeps them in the step's record, so they are plotted over time,
    rewound and saved with the rest. They are measured when first read, or with other
    steps' (`measure_all`: the history measures its new steps together when it is read,
    `HistoryBuffer.view`). For each layer, input side first (the last is the output
    layer):

        grad      mean |∂L/∂θ| over the layer's parameters (weights and biases)
        saturated the fraction of the layer's outputs (units × samples of the batch) that
                  sit where the activation is flat, its slope under 2 % of its peak:
                  |tanh| > 0.99, sigmoid within 0.005 of 0 or 1, relu exactly 0 (a unit
                  that passes no gradient for that sample); NaN for linear
        quantiles the 0, 10, 25, 50, 75, 90 and 100th percentiles of those outputs
    """

    __slots__ = ("_inputs", "_table")

    def __init__(self, table: np.ndarray) -> None:
        table = np.array(table, dtype=np.float64, copy=True)
        if table.ndim != 2 or table.shape[1] != COLUMNS:
            raise ValueError(f"a LayerStats table is (layers, {COLUMNS}), got {table.shape}")
        table.flags.writeable = False
        self._table: np.ndarray | None = table
        self._inputs: LayerInputs | None = None

    @classmethod
    def later(cls, inputs: LayerInputs) -> LayerStats:
        """The statistics of a step, measured from `inputs` when first read."""
        stats = cls.__new__(cls)
        stats._table, stats._inputs = None, inputs
        return stats

    @classmethod
    def measure_all(cls, stats: Sequence[LayerStats]) -> None:
        """Measure those of `stats` not measured yet: the steps of one network on the
        same points (the same array) in one batch -- the same numbers, bit for bit, as
        one `measure_layers` each (tests), for a fraction of numpy's overhead per call
        (W1: 2 percentile calls for 64 steps instead of 128)."""
        groups: dict[tuple[object, ...], list[tuple[LayerStats, LayerInputs]]] = {}
        for s in stats:
            if s._inputs is not None:
                i = s._inputs
                groups.setdefault((i.layer_sizes, i.activation, id(i.points)), []).append(
                    (s, i))
        for group in groups.values():
            first = group[0][1]
            tables = _measure(np.stack([i.params for _, i in group]),
                              np.stack([i.grads for _, i in group]),
                              first.layer_sizes, first.activation, first.points)
            tables.flags.writeable = False
            for (s, _), table in zip(group, tables):
                s._table, s._inputs = table, None

    @property
    def table(self) -> np.ndarray:
        if self._table is None:
            LayerStats.measure_all([self])
        assert self._table is not None
        return self._table

    @property
    def measured(self) -> bool:
        return self._table is not None

    @property
    def waiting_bytes(self) -> int:
        """What its inputs hold until it is measured (0 once it is)."""
        return 0 if self._inputs is None else self._inputs.nbytes

    @property
    def shape(self) -> tuple[int, int]:
        """(layers, COLUMNS), measured or not."""
        if self._table is not None:
            return self._table.shape  # type: ignore[return-value]
        assert self._inputs is not None
        return len(self._inputs.layer_sizes) - 1, COLUMNS

    def __reduce__(self) -> tuple[type, tuple[np.ndarray]]:
        return LayerStats, (self.table,)

    @property
    def layers(self) -> int:
        return self.table.shape[0]

    @property
    def grad(self) -> np.ndarray:
        return self.table[:, GRAD]

    @property
    def saturated(self) -> np.ndarray:
        return self.table[:, SATURATED]

    @property
    def quantiles(self) -> np.ndarray:
        """(layers, len(QUANTILES)) percentiles of each layer's outputs."""
        return self.table[:, FIRST_QUANTILE:]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LayerStats):
            return NotImplemented
        return bool(np.array_equal(self.table, other.table, equal_nan=True))

    __hash__ = None  # type: ignore[assignment]  # equal tables, not identity

    def __repr__(self) -> str:
        return f"LayerStats(grad={np.round(self.grad, 6).tolist()})"


def saturated_fractions(outputs: np.ndarray, activation: str) -> np.ndarray:
    """Each row's share of outputs where `activation` is flat (see `LayerStats`), for
    (steps, outputs) arrays: a count over a size, exact whatever the order of the sum."""
    if outputs.shape[1] == 0 or activation == "linear":
        return np.full(len(outputs), np.nan)
    if activation == "tanh":
        flat = np.abs(outputs) > SATURATION
    elif activation == "sigmoid":
        flat = np.abs(2 * outputs - 1) > SATURATION
    else:  # relu
        flat = outputs <= 0
    # A count over the size: np.mean's numbers (an exact sum, one division), sooner.
    return np.count_nonzero(flat, axis=1) / outputs.shape[1]


@dataclass(frozen=True, eq=False)
class LayerInputs:
    """What a step's statistics are measured from: the weights its forward pass used and
    the gradients its backward pass left (read-only: never written again), the network's
    layer sizes and activation, and the inputs of the batch's points."""

    params: np.ndarray
    grads: np.ndarray
    layer_sizes: tuple[int, ...]
    activation: str
    points: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.params.nbytes + self.grads.nbytes


def measure_layers(params: np.ndarray, grads: np.ndarray, layer_sizes: Sequence[int],
                   activation: str, points: np.ndarray) -> LayerStats:
    """The statistics of a network with these weights and gradients, on these points."""
    return LayerStats(_measure(np.asarray(params)[None], np.asarray(grads)[None],
                               tuple(layer_sizes), activation, points)[0])


@np.errstate(all="ignore")
def _measure(params: np.ndarray, grads: np.ndarray, layer_sizes: tuple[int, ...],
             activation: str, points: np.ndarray) -> np.ndarray:
    """The (steps, layers, COLUMNS) statistics of `steps` networks with these weights and
    gradients (steps, P) on the same points (quietly, as in a step: a diverged run's inf
    and NaN are its statistics)."""
    steps = len(params)
    # (steps, n, units) each: the products are BLAS's per step, the same bits as one call.
    outputs = [out.reshape(steps, -1)
               for out in numpy_layer_outputs(params, layer_sizes, activation, points)]
    last = len(outputs) - 1
    table = np.empty((steps, len(outputs), COLUMNS))
    for i, (where, out) in enumerate(zip(layer_slices(layer_sizes), outputs)):
        table[:, i, GRAD] = np.mean(np.abs(grads[:, where]), axis=1)
        table[:, i, SATURATED] = saturated_fractions(out, "linear" if i == last else activation)
    # The layers of one size in one percentile call, a row each: the same numbers as a call
    # per layer (each is an order statistic, then the same interpolation), for a fraction
    # of numpy's overhead per call (W1: 2 calls for 3 layers, a 6 x 8 network 2 for 7).
    sizes: dict[int, list[int]] = {}
    for i, out in enumerate(outputs):
        sizes.setdefault(out.shape[1], []).append(i)
    for size, layers in sizes.items():
        if not size:
            table[:, layers, FIRST_QUANTILE:] = np.nan
            continue
        rows = np.stack([outputs[i] for i in layers], axis=1).reshape(-1, size)
        rows.sort(axis=1)  # (its own copy: sorted where it is, one big array fewer)
        table[:, layers, FIRST_QUANTILE:] = percentiles(rows, is_sorted=True).reshape(
            steps, len(layers), len(QUANTILES))
    return table


_FRACTIONS = np.true_divide(QUANTILES, 100)


def percentiles(rows: np.ndarray, is_sorted: bool = False) -> np.ndarray:
    """`np.percentile(rows, QUANTILES, axis=1).T`, the same numbers (tests; a zero's sign
    aside, where both signs are in a row), from one sort of each row: numpy partitions a
    copy along a strided axis, 44 us a W1 step in batches of 16 against 25 sorted. Its
    arithmetic, written out: the order statistics either side of (n - 1) q (the top one
    twice for q = 1), then numpy's `_lerp` (b - (b - a)(1 - t) from t = 0.5 on), and NaN
    where a row holds one. `is_sorted`: each row is sorted already."""
    below, above, gamma, upper = _ranks(rows.shape[1])
    ordered = rows if is_sorted else np.sort(rows, axis=1)
    a, b = ordered[:, below], ordered[:, above]
    diff = b - a
    result = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=result, where=upper)
    nans = np.isnan(ordered[:, -1])
    if nans.any():
        result[nans] = ordered[nans, -1:]
    return result


@functools.lru_cache(maxsize=16)
def _ranks(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For rows of `n`: the ranks below and above each quantile's place, how far it lies
    between them, and where it lies in the upper half (read-only; the same for every batch
    of a network's layer, so worked out once)."""
    virtual = (n - 1) * _FRACTIONS
    below = np.floor(virtual)
    above = below + 1
    top = virtual >= n - 1
    below[top] = above[top] = -1
    below, above = below.astype(np.intp), above.astype(np.intp)
    gamma = virtual - below
    arrays = (below, above, gamma, gamma >= 0.5)
    for array in arrays:
        array.flags.writeable = False
    return arrays


def layer_names(layer_sizes: Sequence[int], sized: bool = True) -> list[str]:
    """'hidden 1 (8)', ..., 'output (1)': how the views name the layers ('hidden 1', ...,
    'output' where room is short, not `sized`)."""
    def name(what: str, n: int) -> str:
        return f"{what} ({n})" if sized else what
    hidden = [name(f"hidden {i + 1}", n) for i, n in enumerate(layer_sizes[1:-1])]
    return [*hidden, name("output", layer_sizes[-1])]


# --- the record of every step --------------------------------------------------------------
@dataclass(frozen=True)
class StepRecord:
    """What one step measured. Losses and accuracies are those of the forward pass."""

    step: int
    loss: float
    test_loss: float
    accuracy: float
    test_accuracy: float
    grad_norm: float
    lr: float
    zero_grad_skipped: bool
    ghost_loss: float = math.nan
    # Per-layer gradient size and activation spread (`LayerStats` above); None where
    # they were not measured (sessions saved before they existed).
    layers: LayerStats | None = None

    def __eq__(self, other: object) -> bool:
        """The same measurements: NaN (no test set, no ghost) equals NaN here."""
        if not isinstance(other, StepRecord):
            return NotImplemented
        return (all(a == b or (a != a and b != b)
                    for a, b in zip(_values(self), _values(other)))
                and self.layers == other.layers)

    def __hash__(self) -> int:
        return hash(tuple(v.hex() if isinstance(v, float) else v for v in _values(self)))


def _values(record: StepRecord) -> tuple[object, ...]:
    return tuple(getattr(record, name) for name in RECORD_FIELDS)


# The scalar fields, one column each; `layers` is a (steps, layers, COLUMNS) table beside.
RECORD_FIELDS = tuple(f.name for f in fields(StepRecord) if f.name != "layers")
# Every field is a float64 column except these two.
INT_FIELDS = ("step",)
BOOL_FIELDS = ("zero_grad_skipped",)


def _dtype(name: str) -> type:
    return np.int64 if name in INT_FIELDS else (np.bool_ if name in BOOL_FIELDS else np.float64)


class History(Sequence[StepRecord]):
    """An immutable run record: one StepRecord per step, stored as read-only columns."""

    __slots__ = ("_columns", "_layers", "_origin")

    def __init__(self, columns: dict[str, np.ndarray], origin: object = None,
                 layers: np.ndarray | None = None) -> None:
        lengths = {len(columns[name]) for name in RECORD_FIELDS}
        if layers is not None:
            lengths.add(len(layers))
            if layers.ndim != 3 or layers.shape[2] != COLUMNS:
                raise ValueError(f"layer statistics are (steps, layers, {COLUMNS}), "
                                 f"got {layers.shape}")
            if layers.flags.writeable:
                layers = layers.view()
                layers.flags.writeable = False
        self._layers = layers
        if len(lengths) != 1:
            raise ValueError(f"history columns differ in length: {sorted(lengths)}")
        self._columns = {}
        for name in RECORD_FIELDS:
            column = np.asarray(columns[name], dtype=_dtype(name))
            if column.flags.writeable:
                column = column.view()
                column.flags.writeable = False
            self._columns[name] = column
        # Which buffer these columns are a prefix of (see `extends`).
        self._origin = origin

    @classmethod
    def empty(cls) -> History:
        return cls({name: np.zeros(0, _dtype(name)) for name in RECORD_FIELDS})

    @classmethod
    def from_records(cls, records: Sequence[StepRecord]) -> History:
        layers = None
        if records and all(r.layers is not None for r in records):
            layers = np.stack([r.layers.table for r in records])  # type: ignore[union-attr]
        return cls({name: np.array([getattr(r, name) for r in records], dtype=_dtype(name))
                    for name in RECORD_FIELDS}, layers=layers)

    def __len__(self) -> int:
        return len(self._columns["step"])

    @overload
    def __getitem__(self, index: int) -> StepRecord: ...

    @overload
    def __getitem__(self, index: slice) -> History: ...

    def __getitem__(self, index: int | slice) -> StepRecord | History:
        if isinstance(index, slice):
            start, _, stride = index.indices(len(self))
            origin = self._origin if start == 0 and stride == 1 else None
            return History({k: v[index] for k, v in self._columns.items()}, origin,
                           None if self._layers is None else self._layers[index])
        c = self._columns
        layers = None if self._layers is None else LayerStats(self._layers[index])
        return StepRecord(int(c["step"][index]), *(float(c[n][index]) for n in RECORD_FIELDS[1:7]),
                          bool(c["zero_grad_skipped"][index]), float(c["ghost_loss"][index]),
                          layers)

    def __iter__(self) -> Iterator[StepRecord]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        """Equal records, bit for bit (NaN equals NaN here, unlike in a StepRecord)."""
        if isinstance(other, History):
            same_layers = (self._layers is None) == (other._layers is None) and (
                self._layers is None or np.array_equal(self._layers, other._layers,
                                                       equal_nan=True))
            return same_layers and all(self._columns[n].tobytes() == other._columns[n].tobytes()
                                       for n in RECORD_FIELDS)
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"History({len(self)} steps)"

    def column(self, name: str) -> np.ndarray:
        """One field for every step, read-only (float64; step int64, zero_grad_skipped bool)."""
        return self._columns[name]

    def layers(self) -> np.ndarray | None:
        """Every step's per-layer statistics, (steps, layers, COLUMNS) read-only, or None."""
        return self._layers

    def extends(self, other: History) -> bool:
        """True if `other` is this history's start, given out earlier by the same trainer
        without a rewind in between (so a plot can append just the new steps)."""
        return (self._origin is not None and other._origin is self._origin
                and len(other) <= len(self))

    @property
    def nbytes(self) -> int:
        return sum(column.nbytes for column in self._columns.values()) + (
            0 if self._layers is None else self._layers.nbytes)


# Layer statistics taken but not yet measured (see `HistoryBuffer.view`): at most this many
# steps, holding at most this many bytes of weights and gradients. (W1, CPU time per step
# at load ~11: 459 us alone, 131 in batches of 8, 99 of 16, 128 of 32: bigger batches
# leave the cache.)
PENDING_STEPS = 16
PENDING_BYTES = 4 * 2**20


class HistoryBuffer:
    """The trainer's growing history: amortized appends, immutable views handed out.

    A step's layer statistics may come unmeasured (`LayerStats.later`): they are measured
    together when the history is next read (`view`), or once PENDING_STEPS (or
    PENDING_BYTES) wait, so that a run going fast measures them in batches, not a step at
    a time; every view handed out holds them all. (One thread appends and reads it: the
    trainer's.)"""

    def __init__(self, history: History | None = None) -> None:
        self._load(history if history is not None else History.empty())

    def _load(self, history: History) -> None:
        self._pending: list[tuple[int, LayerStats]] = []  # (row, statistics)
        self._pending_bytes = 0
        n = len(history)
        capacity = max(64, 2 * n)
        self._columns = {name: np.zeros(capacity, _dtype(name)) for name in RECORD_FIELDS}
        for name, column in self._columns.items():
            column[:n] = history.column(name)
        layers = history.layers()
        self._layers: np.ndarray | None = None
        if layers is not None:
            self._layers = np.zeros((capacity, *layers.shape[1:]))
            self._layers[:n] = layers
        self._n = n
        # A new origin: views given out before cannot be mistaken for a prefix.
        self._origin = object()

    def __len__(self) -> int:
        return self._n

    def append(self, record: StepRecord) -> None:
        if self._n == len(self._columns["step"]):
            # A bigger copy; views of the old arrays stay as they were.
            grown = {name: np.zeros(2 * self._n, _dtype(name)) for name in RECORD_FIELDS}
            for name, column in grown.items():
                column[: self._n] = self._columns[name][: self._n]
            self._columns = grown
            if self._layers is not None:
                layers = np.zeros((2 * self._n, *self._layers.shape[1:]))
                layers[: self._n] = self._layers[: self._n]
                self._layers = layers
        for name in RECORD_FIELDS:
            self._columns[name][self._n] = getattr(record, name)
        self._append_layers(record.layers)
        self._n += 1

    def _append_layers(self, stats: LayerStats | None) -> None:
        """Statistics are kept for every step or for none: a record without them (or of
        another shape) after some with them drops the table (it cannot have holes)."""
        capacity = len(self._columns["step"])
        if stats is None:
            self._layers = None
        elif self._layers is None:
            if self._n == 0:
                self._layers = np.zeros((capacity, *stats.shape))
                self._put(stats)
        elif self._layers.shape[1:] != stats.shape:
            self._layers = None
        else:
            self._put(stats)
        if self._layers is None:
            self._pending, self._pending_bytes = [], 0

    def _put(self, stats: LayerStats) -> None:
        """Step `_n`'s statistics: into the table, or waiting to be measured."""
        assert self._layers is not None
        if stats.measured:
            self._layers[self._n] = stats.table
            return
        self._pending.append((self._n, stats))
        self._pending_bytes += stats.waiting_bytes
        if len(self._pending) >= PENDING_STEPS or self._pending_bytes >= PENDING_BYTES:
            self._measure_pending()

    def _measure_pending(self) -> None:
        """Measure the waiting statistics, in one batch, into the table."""
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        if not pending or self._layers is None:
            return
        LayerStats.measure_all([stats for _, stats in pending])
        for row, stats in pending:
            self._layers[row] = stats.table

    def column(self, name: str) -> np.ndarray:
        """One field for every step so far, read-only (as `History.column`), without
        measuring the layer statistics waiting: the Run's checks after every step."""
        column = self._columns[name][: self._n]
        column.flags.writeable = False
        return column

    def truncate(self, n: int) -> None:
        """Forget steps after `n` (copying, so histories already handed out keep them)."""
        if n < self._n:
            self._load(self.view()[:n])

    def view(self) -> History:
        """The history so far, every step's statistics measured."""
        self._measure_pending()
        layers = None if self._layers is None else self._layers[: self._n]
        return History({k: v[: self._n] for k, v in self._columns.items()}, self._origin, layers)

    def last(self) -> StepRecord:
        return self.view()[-1]

    def record(self, index: int) -> StepRecord:
        return self.view()[index]


def history_arrays(history: Sequence[StepRecord]) -> dict[str, np.ndarray]:
    """Column arrays (step, loss, test_loss, ...) as float64, for plotting."""
    names = [f for f in RECORD_FIELDS if f != "zero_grad_skipped"]
    if isinstance(history, History):
        return {name: history.column(name).astype(np.float64) for name in names}
    return {name: np.array([getattr(r, name) for r in history], dtype=np.float64)
            for name in names}



def flag_runs(steps: np.ndarray, flags: np.ndarray) -> list[tuple[int, int]]:
    """The runs of consecutive records where `flags` is true, as (first step, last step):
    steps [1..6] with flags [0,1,1,0,0,1] -> [(2, 3), (6, 6)]."""
    where = np.flatnonzero(flags)
    if not len(where):
        return []
    breaks = np.flatnonzero(np.diff(where) != 1)
    firsts = np.concatenate(([where[0]], where[breaks + 1]))
    lasts = np.concatenate((where[breaks], [where[-1]]))
    return [(int(steps[a]), int(steps[b])) for a, b in zip(firsts, lasts)]


def extend_flag_runs(runs: list[tuple[int, int]], steps: np.ndarray,
                     flags: np.ndarray) -> list[tuple[int, int]]:
    """`flag_runs` of a history given those of its start (`runs`) and the records after it
    (`steps`, `flags`): only the new records are read, so a growing run costs no more
    per step than its new steps."""
    new = flag_runs(steps, flags)
    if runs and new and new[0][0] == runs[-1][1] + 1:  # the last run goes on
        return [*runs[:-1], (runs[-1][0], new[0][1]), *new[1:]]
    return [*runs, *new]


def passes_after(history: Sequence[StepRecord]) -> int:
    """How many backward passes the gradients hold after the last step of `history`.

    A step that ran zero_grad leaves one; each step that skipped it adds one to what
    the step before left (and the gradients start at zero before step 1).
    """
    if isinstance(history, History):
        skipped = history.column("zero_grad_skipped").astype(bool)
    else:
        skipped = np.array([r.zero_grad_skipped for r in history], dtype=bool)
    ran = np.flatnonzero(~skipped)
    if len(ran) == 0:
        return len(skipped)
    return len(skipped) - int(ran[-1])
