"""The parameter table's model: one row per parameter, sorted with numpy, filtered by name.

`ParameterTableModel` holds the latest snapshot's numbers and sorts them (the gradient
columns by |gradient|); `SourceSortProxyModel` filters by name and leaves the sorting to
it. Each snapshot only emits `dataChanged` (and a layout change if the sorted order
moved), so the user's sort order, selection and scroll position stay.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)

from gradbox.autograd.nn import parameter_count, widest_parameter_names
from gradbox.formatting import fmt, number
from gradbox.training.snapshots import Snapshot
from gradbox.views.fit_text import shared_prefix
from gradbox.views.panels.typed import parse_number as parse_weight

NAME, VALUE, GRAD, GHOST, HELD = range(5)
# "× 1 pass", not "× true": beside "Ghost gradient" a "true" read as Gradient ÷ Ghost
# (0.1373 / 0.0017 ≈ 81 under a ×28.6): it is Gradient ÷ this pass's own gradient.
HEADERS = ("Parameter", "Value", "Gradient", "Ghost gradient", "× 1 pass")
# Each header ever shorter, for a narrow column (its tooltip keeps the full name): cut
# to the column, "Ghost gradient" read "host gradie" at 1024 x 700.
HEADER_FORMS = (("Parameter", "Name"), ("Value",), ("Gradient", "Grad"),
                ("Ghost gradient", "Ghost grad", "Ghost"), ("× 1 pass",))
HEADER_TIPS = (
    "The parameter's name: layer, neuron, then weight w.<input> or bias b. "
    "Sorting keeps the network's order",
    "The parameter's current value. Double-click it (or press F2) to type a new one",
    "d loss / d parameter from the last backward pass; the bar is its size relative to "
    "the largest |gradient|, blue if positive, orange if negative. Sorting orders by "
    "|gradient|",
    "The gradient a correct run (the ghost, which never skips zero_grad) has for this "
    "parameter, on the same scale. Sorting orders by |gradient|",
    "Gradient ÷ this pass's own gradient (not ÷ the ghost's), shown while zero_grad is "
    "skipped: how many times the gradient one backward pass gives at these weights (what "
    "zero_grad would have left) the gradient now is. "
    "It holds the sum of several passes (the count is above the table and in each cell's "
    "tip). Negative: the held sum points the other way. Sorting orders by the ratio",
)
BAR_ROLE = Qt.ItemDataRole.UserRole + 1  # signed gradient / largest |gradient|, in [-1, 1]
NUMBER_ROLE = Qt.ItemDataRole.UserRole + 2  # the cell's number itself, to write it to fit
PREFIX_ROLE = Qt.ItemDataRole.UserRole + 3  # the prefix all the names share ("layers.")
WIDEST_ROLE = Qt.ItemDataRole.UserRole + 4  # the names the name column is fitted to
# The roles `ParameterModel.data` answers; it returns None for every other at once.
_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, WIDEST_ROLE,
                    Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.TextAlignmentRole, BAR_ROLE,
                    NUMBER_ROLE, PREFIX_ROLE})
MAX_RANGES = 32  # runs of changed rows announced one by one; more become one range


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise equality in which NaN equals NaN (a ghost column without a ghost)."""
    if a.shape != b.shape:
        return np.zeros(b.shape, dtype=bool)
    return (a == b) | (np.isnan(a) & np.isnan(b))


def _finite_peak(a: np.ndarray) -> float:
    """The largest finite |value| of `a` (0 if none)."""
    if not len(a):
        return 0.0
    return float(np.max(np.abs(a), where=np.isfinite(a), initial=0.0))


def same_names(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Whether two snapshots name the same parameters. Snapshots of one network share
    one tuple: `is` answers at once, where `==` looks at each of a 1000x1000 network's
    million names (~5 ms each time)."""
    return a is b or a == b


def _num(value: float) -> str:
    return fmt(value, signed=True)


class ParameterTableModel(QAbstractTableModel):
    """One row per parameter: name, value, gradient, ghost gradient (NaN without a ghost).

    The value column is editable: a valid number is not stored here but asked for with
    `edit_requested(name, value)`, since the table only ever shows what a snapshot says.

    The model sorts itself, with numpy. A QSortFilterProxyModel sorting by itself calls
    `data()` - Python - twice per comparison: ~200,000 calls, over a second, to re-sort
    a 64x64x64 network's 8,577 rows by |gradient| after every step. `argsort` takes a
    millisecond, then one layout change moves the rows (and the selection with them).
    """

    edit_requested = Signal(str, float)  # (parameter name, new value)
    edit_rejected = Signal(str)  # why the typed text is no weight

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.names: tuple[str, ...] = ()
        # the longest names in every form: the name column is written to fit them all
        self.widest_names: tuple[str, ...] = ()
        self.header_forms: dict[int, int] = {}  # column -> its header's form (HEADER_FORMS)
        self._prefix_of: tuple[str, ...] | None = None
        self._prefix = ""
        self.values = np.zeros(0)
        self.grads = np.zeros(0)
        self.ghost_grads = np.zeros(0)
        self.ratios = np.zeros(0)  # gradient / this pass's own gradient (NaN: none)
        self.passes = 0
        self.scale = 1.0
        # Bars against the largest |gradient| of the run so far, not of this step, so
        # gradients that pile up are seen to grow.
        self.fixed_scale = False
        self.order = np.zeros(0, dtype=np.int64)  # row -> parameter index
        self.rows = np.zeros(0, dtype=np.int64)  # parameter index -> row
        self.sort_column = NAME
        self.sort_order = Qt.SortOrder.AscendingOrder
        self._nans = np.zeros(0)
        # (first, last) row a view shows now, (0, -1) for none; None: every row.
        self.shown_rows: Callable[[], tuple[int, int]] | None = None

    def set_snapshot(self, snapshot: Snapshot) -> None:
        n = len(snapshot.param_names)
        ghost = (np.asarray(snapshot.ghost_grads) if snapshot.ghost_grads is not None
                 else self._nan_column(n))
        same_rows = same_names(snapshot.param_names, self.names)
        if not same_rows:
            # A new network: rows change meaning, so a reset is right (and rare).
            self.beginResetModel()
        old = (self.values, self.grads, self.ghost_grads, self.scale)
        self.names = snapshot.param_names
        if not same_rows:
            widest = widest_parameter_names(snapshot.layer_sizes)
            mlp = (len(self.names) == parameter_count(snapshot.layer_sizes)
                   and bool(widest) and self.names[-1] == widest[-1])
            # Names the network did not make: the longest few stand for the rest.
            self.widest_names = tuple(widest) if mlp else tuple(
                sorted(self.names, key=len)[-4:])
        self.values = np.asarray(snapshot.params)
        self.grads = np.asarray(snapshot.grads)
        self.ghost_grads = ghost
        self.passes = snapshot.grad_passes
        self.ratios = (held_ratios(self.grads, snapshot.step_grads)
                       if _has_own(snapshot.step_grads, n) else self._nan_column(n))
        # One scale for both gradient columns, so a pile-up dwarfs the correct gradient.
        peak = max(_finite_peak(self.grads),
                   _finite_peak(ghost) if snapshot.ghost_grads is not None else 0.0)
        self.scale = peak if peak > 0 else 1.0
        if self.fixed_scale and snapshot.grad_peak > 0:
            self.scale = max(self.scale, snapshot.grad_peak)
        if not same_rows:
            self.order = self._sorted_order()
            self.rows = np.argsort(self.order)
            self.endResetModel()
        elif n:
            # Same parameters: only the numbers changed; sort and selection survive.
            if self.sort_column != NAME:  # in the network's order no number moves a row
                self._resort()
            self._announce_changes(*old)

    def _nan_column(self, n: int) -> np.ndarray:
        """A read-only column of n NaN (no ghost, no ratio), made once per network size:
        a fresh one took ~4 ms a snapshot for a million parameters, twice."""
        if len(self._nans) != n:
            self._nans = np.full(n, np.nan)
            self._nans.flags.writeable = False
        return self._nans

    def _announce_changes(self, values: np.ndarray, grads: np.ndarray, ghost: np.ndarray,
                          scale: float) -> None:
        """dataChanged for the cells whose numbers moved, in runs of adjacent rows, so
        the table repaints those cells (and only those it shows), not every row. Only
        rows `shown_rows` names are looked at: a view asks a row scrolled into sight for
        its data afresh, and announcing a million rows cost the filter proxy ~13 ms a
        signal (it sorts the rows it is told about)."""
        first_row, last_row = self.shown_rows() if self.shown_rows is not None else \
            (0, len(self.names) - 1)
        if last_row < first_row:
            return
        shown = self.order[first_row:last_row + 1]  # the parameters those rows show
        value_moved = ~_same(values[shown], self.values[shown])
        # A new scale redraws every bar, whatever its number did.
        grad_moved = (np.ones(len(shown), dtype=bool) if scale != self.scale else
                      ~(_same(grads[shown], self.grads[shown])
                        & _same(ghost[shown], self.ghost_grads[shown])))
        # The ratio column follows the gradients (it is one over this pass's own).
        for moved, first, last in ((value_moved, VALUE, VALUE), (grad_moved, GRAD, HELD)):
            rows = first_row + np.flatnonzero(moved)
            if len(rows) == 0:
                continue
            # Runs of consecutive rows; past a few dozen, one range from first to last
            # costs the view less than many signals.
            breaks = np.flatnonzero(np.diff(rows) > 1)
            if len(breaks) > MAX_RANGES:
                spans = [(rows[0], rows[-1])]
            else:
                starts = np.concatenate([[rows[0]], rows[breaks + 1]])
                ends = np.concatenate([rows[breaks], [rows[-1]]])
                spans = list(zip(starts.tolist(), ends.tolist()))
            for start, end in spans:
                self.dataChanged.emit(self.index(int(start), first),
                                      self.index(int(end), last))

    # --- sorting --------------------------------------------------------------------------
    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self.sort_column, self.sort_order = column, order
        self._resort()

    def _sorted_order(self) -> np.ndarray:
        """Rows in sort order: name = the network's own order ("neurons.2" before
        "neurons.10"), numbers by value, gradients by |gradient|; ties keep network order."""
        n = len(self.names)
        if self.sort_column == NAME:
            keys = np.arange(n, dtype=np.float64)
        elif self.sort_column == VALUE:
            keys = self.values.astype(np.float64)
        elif self.sort_column == HELD:
            keys = self.ratios.astype(np.float64)
        else:
            keys = np.abs(self.grads if self.sort_column == GRAD else self.ghost_grads)
        keys = np.where(np.isnan(keys), -np.inf, keys)  # missing values sort as smallest
        if self.sort_order == Qt.SortOrder.DescendingOrder:
            keys = -keys
        return np.argsort(keys, kind="stable")

    def _resort(self) -> None:
        order = self._sorted_order()
        if np.array_equal(order, self.order):
            return  # nothing moved: no layout change, nothing for the view to redo
        self.layoutAboutToBeChanged.emit()
        # The view's selection and current row are persistent indexes: move each to the
        # new row of the parameter it was on.
        old = self.persistentIndexList()
        params = [int(self.order[i.row()]) for i in old]
        self.order = order
        self.rows = np.argsort(order)
        self.changePersistentIndexList(
            old, [self.index(int(self.rows[p]), i.column()) for i, p in zip(old, params)])
        self.layoutChanged.emit()

    # --- the model interface ------------------------------------------------------------------
    def parameter_at(self, row: int) -> int:
        """The parameter index (in `names`) that `row` shows."""
        return int(self.order[row])

    def row_of(self, parameter: int) -> int:
        return int(self.rows[parameter])

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.names)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            forms = HEADER_FORMS[section]
            return forms[min(self.header_forms.get(section, 0), len(forms) - 1)]
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{HEADERS[section]}: {HEADER_TIPS[section]}"
        return None

    def set_header_forms(self, forms: dict[int, int]) -> None:
        """Which of HEADER_FORMS each column's header shows (0, the full name, if none)."""
        if forms != self.header_forms:
            self.header_forms = dict(forms)
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(HEADERS) - 1)

    def name_prefix(self) -> str:
        """What every name starts with ('layers.'): a narrow column drops it first."""
        if self._prefix_of is not self.names:
            self._prefix_of, self._prefix = self.names, shared_prefix(self.names)
        return self._prefix

    def number(self, parameter: int, column: int) -> float:
        array = (self.values, self.grads, self.ghost_grads, self.ratios)[column - 1]
        return float(array[parameter])

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        flags = super().flags(index)
        if index.isValid() and index.column() == VALUE:
            flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,  # noqa: N802
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or index.column() != VALUE or role != Qt.ItemDataRole.EditRole:
            return False
        parameter = int(self.order[index.row()])
        name = self.names[parameter]
        try:
            number = parse_weight(value)
        except ValueError as error:
            self.edit_rejected.emit(f"{name} not changed: {error}. Type a number such as "
                                    "0.5 or -1.2e-3, or press Esc")
            return False
        # Enter on an untouched editor is no edit: nothing to record in the history.
        if number != self.values[parameter]:
            self.edit_requested.emit(name, number)
        return True

    def data(self, index: QModelIndex | QPersistentModelIndex,
             role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # A cell's paint asks for a dozen roles, most of which no cell answers: about
        # 300 calls a frame while running, so those go first, before any lookup.
        if role not in _ROLES or not index.isValid():
            return None
        parameter, column = int(self.order[index.row()]), index.column()
        if column == NAME:
            if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                return self.names[parameter]
            if role == PREFIX_ROLE:
                return self.name_prefix()
            if role == WIDEST_ROLE:
                return self.widest_names
            return None
        value = self.number(parameter, column)
        if role == NUMBER_ROLE:
            return value
        if column == HELD:
            return self._held_data(parameter, value, role)
        if role == Qt.ItemDataRole.DisplayRole:
            return "" if math.isnan(value) and column == GHOST else _num(value)
        if role == Qt.ItemDataRole.EditRole and column == VALUE:
            # Six digits fit the cell; all 17 would scroll the sign and the point out of
            # sight. (An untouched editor sends nothing: see ValueEditDelegate.)
            return f"{value:.6g}"
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{self.names[parameter]}: {HEADERS[column].lower()} = {value!r}"
            return tip + ("\nDouble-click to type a new value" if column == VALUE else "")
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == BAR_ROLE and column in (GRAD, GHOST):
            return 0.0 if not math.isfinite(value) else max(-1.0, min(1.0, value / self.scale))
        return None


    def _held_data(self, parameter: int, ratio: float, role: int) -> Any:
        ratio_text = f"×{number(ratio, digits=3)}"
        if role == Qt.ItemDataRole.DisplayRole:
            return ratio_text
        if role == Qt.ItemDataRole.ToolTipRole:
            own = self.grads[parameter] / ratio if ratio and math.isfinite(ratio) else math.nan
            return (f"{self.names[parameter]}: .grad = {_num(self.grads[parameter])} is the "
                    f"sum of {self.passes} backward pass{'es' if self.passes != 1 else ''}; "
                    f"the true gradient at these weights (this pass's own) is {_num(own)}, "
                    f"so .grad is {ratio_text} it")
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def _has_own(step_grads: np.ndarray | None, n: int) -> bool:
    """Whether the last pass's own gradients are known (for `held_ratios`)."""
    return step_grads is not None and len(step_grads) == n


def held_ratios(grads: np.ndarray, step_grads: np.ndarray | None) -> np.ndarray:
    """Each gradient over the last pass's own (NaN where that is 0 or unknown)."""
    if not _has_own(step_grads, len(grads)):
        return np.full(len(grads), np.nan)
    own = np.asarray(step_grads, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        # A pass that left (almost) nothing is no yardstick: 1e-12 of the largest.
        tiny = 1e-12 * max(float(np.abs(own).max(initial=0.0)), 1e-300)
        return np.where(np.abs(own) > tiny, grads / own, np.nan)


class SourceSortProxyModel(QSortFilterProxyModel):
    """Filters by name itself; sorting is handed to the source model (see its docstring)."""

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        # The proxy's own sort column stays -1, so it keeps the source's (sorted) order.
        self.sourceModel().sort(column, order)
