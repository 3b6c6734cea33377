"""Parameters & gradients: every parameter's value and gradient, and one parameter's history.

The table is a model/view pair: `ParameterTableModel` (parameter_table.py) holds the latest
snapshot's numbers and sorts them, a proxy filters by name, and the delegates of
parameter_cells.py draw each gradient as a bar coloured by its sign and write numbers to
fit. This module is the panel: the table, the filter, editing a weight by hand, and the
selected parameter's history below, fetched from the training side while a run goes on.
"""

from __future__ import annotations

import csv
import math
import time
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    Qt,
    QTimer,
    Slot,
)
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gradbox.autograd.phases import Phase
from gradbox.port.frame_pacer import TEN_HZ_S, Rate
from gradbox.port.protocol import SessionPort
from gradbox.teaching.loop_code import shown_step_skipped, switch_note
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import ParameterEdit
from gradbox.views.label_holder import LabelHolder
from gradbox.views.panels.parameter_cells import (
    FittedTextDelegate,
    GradientBarDelegate,
    ValueEditDelegate,
)
from gradbox.views.panels.parameter_table import (
    GHOST,
    GRAD,
    HEADER_FORMS,
    HELD,
    NAME,
    VALUE,
    ParameterTableModel,
    SourceSortProxyModel,
    held_ratios,
    same_names,
)
from gradbox.views.plots.plotting import (
    EDIT,
    TRAIN,
    StepAxis,
    add_curve,
    edit_text,
    fit_left_axes,
    follow_palette,
    style_plot,
)
from gradbox.views.plots.plotting import GRAD as GRAD_COLOUR
from gradbox.views.status_colour import set_tone


def _no_rows() -> tuple[int, int]:
    return 0, -1


QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum size"
HISTORY_AXIS = 56  # px: the history plots' least left-axis width
HISTORY_INTERVAL_MS = 250  # at most four history fetches per second while running
# While running, the table takes a new snapshot at most this often. Its numbers change at
# every step, and at 60 a second nobody reads them; repainting every visible cell is the
# costliest part of a frame (6 of 12 ms on W1), so most frames skip it. A single Step,
# every step of a Run slow enough to watch (10 steps/s or fewer), and the end of a run
# show at once.
TABLE_INTERVAL_S = TEN_HZ_S  # (gradbox.port.frame_pacer paces the table)
FETCH_PATIENCE = 2.0  # seconds to wait for a history answer before asking again


EDIT_HINT = "Double-click a value to type a new one"


# (name, steps, values, gradient steps, gradients, edits of that parameter)
History = tuple[str, np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[ParameterEdit, ...]]


class ParametersView(QWidget):
    """The parameter table above a small plot of the selected parameter's history."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setAccessibleName("Parameters and gradients")
        self._syncing = False  # true while the table follows the controller's selection
        self._history_index = -1  # parameter index the history plot shows
        self._history_key: tuple[Any, ...] | None = None  # what the last fetch was for
        self._fetch_sent = -math.inf  # time.monotonic() of the request in flight, if any

        self.model = ParameterTableModel(self)
        self.proxy = SourceSortProxyModel(self)
        self.proxy.setSourceModel(self.model)
        # It filters by name only, and names change only with a model reset: re-filtering
        # every changed row (a data() call per row, 66,561 for a 256x256 network) on each
        # snapshot would be for nothing.
        self.proxy.setDynamicSortFilter(False)
        self.proxy.setFilterKeyColumn(NAME)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)

        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter, e.g. layers.1 or .b")
        self.filter.setClearButtonEnabled(True)
        self.filter.setAccessibleName("Filter parameters by name")
        self.filter.setToolTip("Show only the parameters whose name contains this text")
        self.fixed_scale = QCheckBox("Fixed scale")
        self.fixed_scale.setObjectName("parameters_fixed_scale")
        self.fixed_scale.setAccessibleName("Gradient bars on a fixed scale")
        self.fixed_scale.setToolTip(
            "Draw the gradient bars against the largest |gradient| of the run so far, "
            "instead of this step's largest, so gradients that grow are seen growing. "
            "On by default while Forget zero_grad is on")
        self._forgetting = False  # the switch as last seen, to follow its changes
        self.summary = QLabel()
        self.summary.setAccessibleName("Parameter summary")
        self.summary.setToolTip("How many parameters there are and the largest gradient")
        self.warning = QLabel()
        self.warning.setAccessibleName("zero_grad warning")
        self.warning.setToolTip(
            "Shown while Forget zero_grad is on. The update moves each weight by lr × the "
            "held sum: momentum with no decay. While the gradients point the same way (a "
            "plateau) that speeds training up; old gradients never fade, so once the "
            "slope turns they keep pushing and the weights overshoot. The ghost column "
            "is the correct run's gradient")
        self.warning.setWordWrap(True)
        set_tone(self.warning, "alarm", bold=True)  # readable on a dark theme too
        self.warning.hide()
        self.edit_status = QLabel(EDIT_HINT)
        self.edit_status.setAccessibleName("Weight editing")
        self.edit_status.setToolTip("How to type a weight in, and what the last edit did "
                                    "or why a typed value was refused")
        self.edit_status.setWordWrap(True)
        self._edits: tuple[ParameterEdit, ...] = ()
        self._complaining = False  # edit_status shows why typed text was refused

        self.table = QTableView()
        self.table.setModel(self.proxy)
        # Weakly: a model holding this panel would keep it past its deletion by Qt, for
        # the cyclic collector to free later, in the middle of some paint.
        shown_rows = weakref.WeakMethod(self._shown_rows)
        self.model.shown_rows = lambda: (shown_rows() or _no_rows)()
        self.table.setAccessibleName("Parameter table")
        self.table.setToolTip("Every parameter with its value and gradient. Click a header "
                              "to sort (gradients sort by size); select a row to see its "
                              "history below")
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(NAME, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        # Only the value column is editable (see the model's flags); F2 for the keyboard.
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed)
        self.table.setAlternatingRowColors(True)
        # Names start with the layer and end with the neuron and weight: keep both ends.
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.table.verticalHeader().hide()
        # Fixed row heights: no per-row measuring on every update of a big network.
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(
            self.table.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(NAME, QHeaderView.ResizeMode.Stretch)
        for column in (VALUE, GRAD, GHOST, HELD):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        self.table.setColumnHidden(HELD, True)
        self.table.viewport().installEventFilter(self)
        self.bar_delegate = GradientBarDelegate(self.table)
        self.table.setItemDelegateForColumn(GRAD, self.bar_delegate)
        self.table.setItemDelegateForColumn(GHOST, self.bar_delegate)
        self.value_delegate = ValueEditDelegate(self.table)
        self.table.setItemDelegateForColumn(VALUE, self.value_delegate)
        self.name_delegate = FittedTextDelegate(self.table)
        self.table.setItemDelegateForColumn(NAME, self.name_delegate)
        self.held_delegate = FittedTextDelegate(self.table, prefix="×")
        self.table.setItemDelegateForColumn(HELD, self.held_delegate)

        self.history_title = QLabel("Select a row to follow that parameter's value and "
                                    "gradient step by step")
        self.history_title.setWordWrap(True)
        self.history_title.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.history_title.setAccessibleName("History title")
        self.history_title.setToolTip("Which parameter the plot below follows")
        self.history = pg.GraphicsLayoutWidget()
        follow_palette(self.history)
        self.history.setAccessibleName("Parameter history plot")
        self.history.setToolTip("The selected parameter's value (top) and gradient (bottom) "
                                "after each step")
        self.value_plot, self.grad_plot = (
            self.history.addPlot(row=row, col=0, axisItems={"bottom": StepAxis("bottom")})
            for row in range(2))
        self.grad_plot.setXLink(self.value_plot)
        # A few steps of one parameter: vertical grid lines help count them.
        style_plot(self.value_plot, "value", x_grid=True)
        style_plot(self.grad_plot, "gradient", "step", x_grid=True)
        for plot in (self.value_plot, self.grad_plot):
            # As wide as labels and title need (a fixed 56 px put 0.27395 over 'value')
            plot.getAxis("left").setWidth(HISTORY_AXIS)
            plot.getViewBox().sigYRangeChanged.connect(self._fit_history_axes)
            plot.setMenuEnabled(False)
        self.value_plot.getAxis("bottom").setStyle(showValues=False)
        # The same colours as the loss curve: blue is the model, purple a gradient.
        self.value_curve = add_curve(self.value_plot, TRAIN, dots=True)
        self.grad_curve = add_curve(self.grad_plot, GRAD_COLOUR, dots=True)
        self.grad_plot.addItem(pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen("#bbb")),
                               ignoreBounds=True)
        # Values typed in by hand, in the loss curve's edit colour.
        self.edit_points = pg.ScatterPlotItem(symbol="d", size=9, pen=None, brush=EDIT)
        self.value_plot.addItem(self.edit_points)

        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.fixed_scale)
        self.summary.setWordWrap(True)  # its own line, full width: room for a long name
        # Its text changes with every step, its height must not: a word-wrapped label
        # whose text went from one line to two and back moved the table a line at each
        # step, and laid out and repainted the whole dock again after each frame (an
        # extra 8-13 ms repaint pass per Step, W1). In a holder, as tall as its longest
        # text needs at this width (`_fit_summary`), a new text repaints the label alone.
        self._summary_holder = LabelHolder(self.summary)
        upper = QWidget()
        upper_layout = QVBoxLayout(upper)
        upper_layout.setContentsMargins(0, 0, 0, 0)
        upper_layout.addLayout(top)
        upper_layout.addWidget(self._summary_holder)
        upper_layout.addWidget(self.warning)
        upper_layout.addWidget(self.edit_status)
        upper_layout.addWidget(self.table, 1)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.history_title)
        lower_layout.addWidget(self.history, 1)
        self._lower = lower
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(upper)
        self.splitter.addWidget(lower)
        # The table is the main thing; the history plot gets about a third.
        self.splitter.setSizes([600, 400])
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.splitter)
        # An empty plot explains nothing: until a row is chosen only its hint shows, and
        # the table takes the room.
        self.history.hide()
        self._fit_hint()

        self._history_timer = QTimer(self)
        self._history_timer.setSingleShot(True)
        self._history_timer.timeout.connect(self._fetch_history)

        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.fixed_scale.toggled.connect(self._on_fixed_scale_toggled)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_row)
        self.table.doubleClicked.connect(self._on_double_clicked)
        self.model.edit_requested.connect(
            lambda name, value: controller.send(Session.set_parameter, name, value))
        self.model.edit_rejected.connect(self._on_edit_rejected)
        self.value_delegate.closeEditor.connect(self._on_editor_closed)
        self.value_delegate.text_edited.connect(self._on_edit_text_changed)
        # Ten refreshes a second while a fast Run goes on, the last step at its end.
        controller.pacer.subscribe(self._on_snapshot, Rate.TEN_HZ)
        controller.parameter_selected.connect(self._on_parameter_selected)
        self._on_snapshot(controller.snapshot)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        # The table's own viewport, not this widget: its width is final only after the
        # layout (and the splitter) placed it.
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return super().eventFilter(watched, event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_hint()
        self._fit_summary()
        self._fit_history_axes()  # a taller axis writes more (and other) labels

    def _fit_history_axes(self) -> None:
        fit_left_axes((self.value_plot, self.grad_plot), HISTORY_AXIS)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # teacher mode
            self._fit_hint()
            self._fit_summary()
            self._show_edit_line()

    def _show_edit_line(self) -> None:
        """The how-to-edit hint is put away in teacher mode's large type (the table
        needs its rows: 73 px of them at 1024 x 700, lesson 4 step 3); what an edit did,
        or why one was refused, always shows."""
        large = self.font().pointSizeF() > 1.1 * QApplication.font().pointSizeF()
        self.edit_status.setVisible(not (large and self.edit_status.text() == EDIT_HINT))

    def _fit_summary(self) -> None:
        """The summary's height: what the longest text it may show for this network
        needs at its width (the widest names, the longest number `.3g` writes)."""
        label = self.summary
        margins = self.layout().contentsMargins() if self.layout() else None
        width = self.width() - (margins.left() + margins.right() if margins else 0)
        n = len(self.model.names)
        texts = [_summary_text(n, ""), _summary_text(n, "", zeroed=True)]
        texts += [_summary_text(n, f"{8.88e-100:.3g}", name)
                  for name in self.model.widest_names or ("",)]
        shown = label.text()
        height = 0
        for text in texts:  # (measured by the label itself: its font, its wrapping)
            label.setText(text)
            height = max(height, label.heightForWidth(width), label.fontMetrics().height())
        label.setText(shown)
        if self._summary_holder.height() != height or \
                self._summary_holder.minimumHeight() != height:
            self._summary_holder.setFixedHeight(height)

    def _fit_hint(self) -> None:
        """Until a row is chosen, the lower part is its hint alone: as tall as the hint's
        lines at its width and font (in a narrow dock or teacher mode's large font it
        wraps to more lines, which a height fixed at three single lines cut off)."""
        if not self.history.isHidden():
            return
        label = self.history_title
        margins = self.layout().contentsMargins() if self.layout() else None
        width = self.width() - (margins.left() + margins.right() if margins else 0)
        # Its own lines and no more: three of a wrapped label's sizeHint (itself a few
        # lines) left the table one row high at 1024 x 700 under a blank of 60 px.
        height = max(label.heightForWidth(width), label.fontMetrics().height()) + 4
        if self._lower.maximumHeight() != height:
            self._lower.setMaximumHeight(height)

    def _shown_rows(self) -> tuple[int, int]:
        """The model's rows the table shows now, first and last ((0, -1): none). The
        filter keeps the model's order, so the rows between are the model's between."""
        if not self.table.isVisible():
            return 0, -1
        top = self.table.rowAt(0)
        if top < 0:
            return 0, -1
        bottom = self.table.rowAt(self.table.viewport().height() - 1)
        if bottom < 0:
            bottom = self.proxy.rowCount() - 1
        return (self.proxy.mapToSource(self.proxy.index(top, 0)).row(),
                self.proxy.mapToSource(self.proxy.index(bottom, 0)).row())

    def _fit_columns(self) -> None:
        """Each number column as wide as its header and a typical number ('-0.0012345',
        gradients with room for a bar beside it); the names take the rest, at least their
        short form ('L10 n10 w10'). Too narrow for all that, the number columns share
        what there is and their numbers lose digits to fit (never '+0…39')."""
        width = self.table.viewport().width()
        metrics = self.table.fontMetrics()
        header = self.table.horizontalHeader()
        pad = 2 * self.table.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin) + 16
        number = metrics.horizontalAdvance("-0.0012345") + 8
        bar = metrics.horizontalAdvance("0000")  # the gradient's bar, beside its number
        wanted = {VALUE: number, GRAD: number + bar, GHOST: number + bar,
                  HELD: metrics.horizontalAdvance("×-60.55") + 8}
        shown = [c for c in wanted if not self.table.isColumnHidden(c)]
        for column in shown:
            wanted[column] = max(wanted[column],
                                 metrics.horizontalAdvance(HEADER_FORMS[column][0]) + pad)
        names = metrics.horizontalAdvance("L10 n10 w10") + 8
        total = sum(wanted[c] for c in shown)
        scale = min(1.0, max(width - names, 1) / total) if total else 1.0
        # Never below the shortest any number is written ('-1e-05', '×-60'): narrower
        # still, the table scrolls sideways rather than cut a number.
        # (+11: the cell's margins and the pixel text_room keeps for Qt's fractions)
        least = {c: metrics.horizontalAdvance("×-60" if c == HELD else "-1e-05") + 11
                 for c in shown}
        for column in shown:
            header.resizeSection(column, max(int(wanted[column] * scale), least[column]))
        # The name column stretches into what is left. Each header in the longest form
        # its column holds whole (the section's text room: its width less the margins
        # and the sort arrow).
        header_metrics = header.fontMetrics()
        forms = {}
        for column in range(len(HEADER_FORMS)):
            room = header.sectionSize(column) - pad
            texts = HEADER_FORMS[column]
            forms[column] = next((k for k, text in enumerate(texts)
                                  if header_metrics.horizontalAdvance(text) <= room),
                                 len(texts) - 1)
        self.model.set_header_forms(forms)

    # --- snapshot -------------------------------------------------------------------------------
    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        self._show(snapshot, not same_names(snapshot.param_names, self.model.names))

    def _show(self, snapshot: Snapshot, reset: bool) -> None:
        if snapshot.forget_zero_grad != self._forgetting:
            # Growth is the point while gradients pile up: a fixed scale shows it. The
            # user may still untick it; the switch's next change decides again.
            self._forgetting = snapshot.forget_zero_grad
            self.fixed_scale.blockSignals(True)
            self.fixed_scale.setChecked(snapshot.forget_zero_grad)
            self.fixed_scale.blockSignals(False)
            self.model.fixed_scale = snapshot.forget_zero_grad
        self.model.set_snapshot(snapshot)
        held = snapshot.grad_passes > 1 or (snapshot.forget_zero_grad
                                            and snapshot.grad_passes > 0)
        if self.table.isColumnHidden(GHOST) == snapshot.ghost or \
                self.table.isColumnHidden(HELD) == held:
            self.table.setColumnHidden(GHOST, not snapshot.ghost)
            self.table.setColumnHidden(HELD, not held)
            self._fit_columns()
        if reset:
            # Rows were replaced: select the controller's parameter again if it still exists.
            self._on_parameter_selected(self.controller.selected_parameter)
            self._fit_summary()  # (other names, another count)
        self._update_labels(snapshot)
        self._show_edits(snapshot.edits)
        self._schedule_history(snapshot)

    def _update_labels(self, snapshot: Snapshot) -> None:
        grads = np.abs(np.asarray(snapshot.grads))
        n = len(snapshot.param_names)
        # The largest |gradient|, NaN aside: argmax finds it in one pass unless a NaN
        # is there (then it points at the NaN); nanargmax copies the column first.
        i = int(np.argmax(grads)) if len(grads) else -1
        if i >= 0 and np.isnan(grads[i]):
            i = int(np.nanargmax(grads)) if not np.isnan(grads).all() else -1
        if i >= 0 and grads[i] > 0:
            name = self.name_delegate.shown_name(snapshot.param_names[i],
                                                 self.model.name_prefix())
            text = _summary_text(n, f"{grads[i]:.3g}", name)
        else:
            text = _summary_text(n, "", zeroed=snapshot.phase == Phase.BACKWARD
                                 and not snapshot.forget_zero_grad)
        self.summary.setText(text)
        # The scale the bars are drawn against, where the switch is (no extra line).
        self.fixed_scale.setText(f"Fixed scale: {self.model.scale:.3g}"
                                 if self.model.fixed_scale and snapshot.grad_peak > 0
                                 else "Fixed scale")
        # Also just after the switch went off: these gradients are still a pile.
        piled = snapshot.grad_passes > 1 and shown_step_skipped(snapshot)
        if snapshot.forget_zero_grad or piled:
            self.warning.setText(self._forgetting_text(snapshot))
        self.warning.setVisible(snapshot.forget_zero_grad or piled)

    @staticmethod
    def _forgetting_text(snapshot: Snapshot) -> str:
        """What the pile-up is, in numbers from this snapshot only: nothing to contradict."""
        k = snapshot.grad_passes
        if k == 0 or not shown_step_skipped(snapshot):
            # Just switched on: these gradients are still one pass's own.
            return (f"Forget zero_grad is on: {switch_note(snapshot) or 'from the next step on'}"
                    ", gradients pile up, each step's added to the last")
        held = f"{k} backward pass{'es' if k != 1 else ''}"
        text = f"zero_grad skipped: each gradient is the sum of {held}"
        ratios = held_ratios(np.asarray(snapshot.grads), snapshot.step_grads)
        finite = np.abs(ratios[np.isfinite(ratios)])
        if k > 1 and len(finite):
            text += (f", median {float(np.median(finite)):.3g}× the true one "
                     f"(max {float(finite.max()):.3g}×)")
        else:
            text += ": they pile up"
        note = switch_note(snapshot)
        return f"{text}; zero_grad {note}" if note else text

    @Slot(bool)
    def _on_fixed_scale_toggled(self, on: bool) -> None:
        self.model.fixed_scale = on
        self.model.set_snapshot(self.controller.snapshot)
        self._update_labels(self.controller.snapshot)
        self.table.viewport().update()

    # --- editing by hand --------------------------------------------------------------------------
    @Slot(QModelIndex)
    def _on_double_clicked(self, index: QModelIndex) -> None:
        # A double-click anywhere on the row means "edit this weight": only its value can be.
        if index.column() != VALUE:
            value = index.siblingAtColumn(VALUE)
            self.table.setCurrentIndex(value)  # so Enter and Esc reach its editor's cell
            self.table.edit(value)

    @Slot(str)
    def _on_edit_rejected(self, message: str) -> None:
        self.edit_status.setText(message)
        set_tone(self.edit_status, "alarm")
        self._complaining = True
        self._show_edit_line()

    @Slot()
    def _on_edit_text_changed(self) -> None:
        if self._complaining:  # about text that is gone now
            self._show_edits(self._edits, force=True)

    @Slot(QWidget, QStyledItemDelegate.EndEditHint)
    def _on_editor_closed(self, _editor: QWidget, hint: QStyledItemDelegate.EndEditHint) -> None:
        # Esc: the user gave up, so a complaint about what they typed is old news. (A
        # click elsewhere also closes the editor, after a last commit whose complaint
        # must stay.)
        if hint == QStyledItemDelegate.EndEditHint.RevertModelCache:
            self._show_edits(self._edits, force=True)

    def _show_edits(self, edits: tuple[ParameterEdit, ...], force: bool = False) -> None:
        """Say what the latest edit did; the hint again once it is rewound away."""
        if edits == self._edits and not force:
            return
        self._edits = edits
        if edits:
            last = edits[-1]
            undo = f"rewind to step {last.step - 1} to undo" if last.step else "Reset to undo"
            self.edit_status.setText(f"<span style='color:{EDIT}'>✎</span> Edited after "
                                     f"step {last.step}: <b>{edit_text(last)}</b> ({undo})")
        else:
            self.edit_status.setText(EDIT_HINT)
        set_tone(self.edit_status)
        self._complaining = False
        self._show_edit_line()

    # --- selection ------------------------------------------------------------------------------
    def selected_name(self) -> str:
        index = self.table.selectionModel().currentIndex()
        return self._name_at(index) if index.isValid() else ""

    def _name_at(self, index: QModelIndex) -> str:
        """The parameter name shown in the table row of `index` (a proxy index)."""
        return self.model.names[self.model.parameter_at(self.proxy.mapToSource(index).row())]

    @Slot(QModelIndex, QModelIndex)
    def _on_current_row(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not current.isValid():
            return
        name = self._name_at(current)
        self._show_history_of(name)
        if not self._syncing:
            self.controller.select_parameter(name)

    @Slot(str)
    def _on_parameter_selected(self, name: str) -> None:
        if name not in self.model.names or name == self.selected_name():
            return
        source = self.model.index(self.model.row_of(self.model.names.index(name)), NAME)
        index = self.proxy.mapFromSource(source)
        if not index.isValid():  # hidden by the filter: clear it so the row can be shown
            self.filter.clear()
            index = self.proxy.mapFromSource(source)
        self._syncing = True  # the controller already knows: don't tell it again
        try:
            self.table.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect
                | QItemSelectionModel.SelectionFlag.Rows)
            self.table.scrollTo(index)
        finally:
            self._syncing = False

    # --- history --------------------------------------------------------------------------------
    @staticmethod
    def _history_title(name: str, edits: tuple[ParameterEdit, ...] = ()) -> str:
        title = f"History of <b>{name}</b>"
        if edits:
            after = ", ".join(str(e.step) for e in edits)
            title += (f" · <span style='color:{EDIT}'>◆ typed in by hand after step "
                      f"{after}</span>")
        return title

    def _show_history_of(self, name: str) -> None:
        self._history_index = self.model.names.index(name)
        self.history_title.setText(self._history_title(name))
        if self.history.isHidden():
            self.history.show()
            self._lower.setMaximumHeight(QWIDGETSIZE_MAX)
            total = sum(self.splitter.sizes())
            self.splitter.setSizes([total * 3 // 5, total * 2 // 5])
        self._history_key = None
        self._history_timer.start(0)

    def _schedule_history(self, snapshot: Snapshot) -> None:
        if self._history_index < 0 or self._history_index >= len(snapshot.param_names):
            return
        if self._key(snapshot) == self._history_key or self._history_timer.isActive():
            return
        # While running, fetch at most every HISTORY_INTERVAL_MS; a single Step at once.
        self._history_timer.start(HISTORY_INTERVAL_MS if self.controller.running else 0)

    def _key(self, snapshot: Snapshot) -> tuple[Any, ...]:
        """What the history depends on; a snapshot that changes none of it needs no fetch.

        (The worker sends a snapshot after every command, this fetch included: without
        this check each fetch would trigger the next.)
        """
        i = self._history_index
        return (snapshot.param_names, i, snapshot.step, snapshot.phase,
                float(snapshot.params[i]), float(snapshot.grads[i]))

    @Slot()
    def _fetch_history(self) -> None:
        snapshot = self.controller.snapshot
        index = self._history_index
        if not 0 <= index < len(snapshot.param_names):
            return
        # One request at a time; its answer schedules the next. If no answer comes (the
        # worker reports a failing command instead), a later snapshot may ask again.
        if time.monotonic() - self._fetch_sent < FETCH_PATIENCE:
            return
        self._fetch_sent = time.monotonic()
        self._history_key = self._key(snapshot)
        name = snapshot.param_names[index]
        # (None back if the network changed since the question was sent.)
        self.controller.ask(Session.parameter_history, index, name, callback=self._on_history)

    def _on_history(self, result: History | None) -> None:
        if not shiboken6.isValid(self):  # the answer came back after the view was closed
            return
        self._fetch_sent = -math.inf
        names = self.model.names
        current = names[self._history_index] if 0 <= self._history_index < len(names) else ""
        if result is not None and result[0] == current:
            _, steps, values, grad_steps, grads, edits = result
            steps = steps.astype(np.float64)
            grad_steps = grad_steps.astype(np.float64)
            # Dots mark single steps while there are few; later they would be a smear.
            # (A long run is known at its kept checkpoints: every step near the end,
            # sparser further back.)
            symbol = "o" if len(values) <= 100 else None
            edits = tuple(e for e in edits if e.step < steps[-1])
            # values[k] is the weight after step steps[k] and the edits that followed it:
            # an edit is a vertical jump at its step from what that step left, not a slope
            # that would look like training's doing. (A step with an edit is always kept.)
            # From the back, so that the positions still to come keep their places.
            for edit in reversed(edits):
                at = int(np.searchsorted(steps, edit.step))
                steps = np.insert(steps, at, edit.step)
                values = np.insert(values, at, edit.old)
            self.value_curve.setData(steps, values, symbol=symbol)
            self.grad_curve.setData(grad_steps, grads, symbol=symbol)
            self.edit_points.setData([e.step for e in edits], [e.new for e in edits])
            self.history_title.setText(self._history_title(current, edits))
        if self._key(self.controller.snapshot) != self._history_key:
            self._schedule_history(self.controller.snapshot)

    def history_data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(steps, values, gradient steps, gradients) the history plot holds (all of it:
        getData() would give only what is in view, and the view catches up later)."""
        vx, vy = self.value_curve.xData, self.value_curve.yData
        gx, gy = self.grad_curve.xData, self.grad_curve.yData
        empty = np.zeros(0)
        return (empty if vx is None else vx, empty if vy is None else vy,
                empty if gx is None else gx, empty if gy is None else gy)

    # --- export ---------------------------------------------------------------------------------
    def export_csv(self, path: str | Path) -> None:
        """Write name, value, gradient (and the ghost's gradient) of every parameter."""
        snapshot = self.controller.snapshot
        with Path(path).open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            ghost = snapshot.ghost_grads
            writer.writerow(["name", "value", "grad"] + (["ghost_grad"] if ghost is not None
                                                          else []))
            for i, name in enumerate(snapshot.param_names):
                row = [name, repr(float(snapshot.params[i])), repr(float(snapshot.grads[i]))]
                if ghost is not None:
                    row.append(repr(float(ghost[i])))
                writer.writerow(row)


def _summary_text(count: int, largest: str, name: str = "", zeroed: bool = False) -> str:
    """The line above the table: the parameter count and the largest |gradient| (`largest`
    as written, '' for none yet, `zeroed` if zero_grad just set them all to 0)."""
    text = f"{count:,} parameters"
    if largest:
        return text + f" · largest gradient {largest} in {name}"
    if zeroed:
        return text + " · zero_grad set every gradient to 0: backward fills them again"
    return text + " · no gradients yet: Step runs a backward pass"
