"""The playground's lower tabs beside its variables: three demonstrations of accumulation.

    MicrobatchPage    k backward calls, one per micro-batch, give the full batch's gradient
    ForgetZeroGradPage  backward repeated without zero_grad: the gradients pile up
    NetworkCheckPage  the gradient check on the network being trained

Every number comes from `gradbox.teaching.pitfalls`, `gradbox.teaching.expression` and the
session's `gradient_check` command; these widgets only show them.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gradbox.autograd.gradcheck import GradCheck
from gradbox.autograd.nn import short_parameter_name
from gradbox.formatting import fmt
from gradbox.port.protocol import SessionPort
from gradbox.teaching.pitfalls import ForgetZeroGrad, microbatch_demo
from gradbox.teaching.playground import CHECK_TOLERANCE
from gradbox.training.session import Session
from gradbox.views.named import named
from gradbox.views.palette import HIGHLIGHT, ON_HIGHLIGHT
from gradbox.views.panels.parameter_cells import FittedTextDelegate
from gradbox.views.panels.parameter_table import NUMBER_ROLE

TOLERANCE_TEXT = f"{CHECK_TOLERANCE:.0e}".replace("e-0", "e-")  # "1e-6", as people write it
RED = QColor("#f6c9c4")
WORST_OK = QColor(HIGHLIGHT)


def mark(item: QTableWidgetItem, colour: QColor) -> None:
    """A cell on a light ground (RED, WORST_OK), in dark text whatever the theme: a dark
    theme's light text on it could not be read ('Wrong order: 8, in red', lesson 3)."""
    item.setBackground(colour)
    item.setForeground(QColor(ON_HIGHLIGHT))


def cell(text: str, tooltip: str = "", editable: bool = False,
         number: float | None = None) -> QTableWidgetItem:
    """A right-aligned table cell, read-only unless `editable`. A cell given its `number`
    is written with fewer digits when its column is narrow, never cut mid-digit (the
    tables' FittedTextDelegate); its tooltip then keeps the whole value."""
    item = QTableWidgetItem(text)
    if number is not None:
        item.setData(NUMBER_ROLE, number)
        tooltip = tooltip or repr(number)
    flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
    if editable:
        flags |= Qt.ItemFlag.ItemIsEditable
    item.setFlags(flags)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tooltip:
        item.setToolTip(tooltip)
    return item


def left(item: QTableWidgetItem) -> QTableWidgetItem:
    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return item


def bold(item: QTableWidgetItem) -> None:
    font = QFont(item.font())
    font.setBold(True)
    item.setFont(font)


def _ratio(values: np.ndarray, reference: np.ndarray) -> float | None:
    """The common factor values / reference, if every non-zero entry shares it."""
    mask = reference != 0
    if not mask.any():
        return None
    ratios = values[mask] / reference[mask]
    return float(ratios[0]) if np.allclose(ratios, ratios[0], rtol=1e-9) else None


def _read_only_table(columns: int, name: str, accessible: str, text: str) -> QTableWidget:
    table = QTableWidget(0, columns)
    named(table, name, accessible, text)
    table.verticalHeader().hide()
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    # At 1024x700 the micro-batch columns cut '-0.129110432' to '-0.12911…'.
    table.setItemDelegate(FittedTextDelegate(table))
    return table


def _summary(accessible: str, tooltip: str) -> QLabel:
    label = QLabel()
    label.setAccessibleName(accessible)
    label.setToolTip(tooltip)
    label.setWordWrap(True)
    return label


def _intro(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def _spin_box(name: str, accessible: str, text: str, lo: int, hi: int, value: int,
              prefix: str = "", suffix: str = "") -> QSpinBox:
    box = QSpinBox()
    named(box, name, accessible, text)
    box.setRange(lo, hi)
    box.setValue(value)
    box.setPrefix(prefix)
    box.setSuffix(suffix)
    return box


def _lay_out(page: QWidget, intro: QLabel, controls: tuple[QWidget, ...],
             below: tuple[QWidget, ...]) -> None:
    """A page: its introduction, a row of its controls, then what it shows (a table
    takes the height that is left)."""
    layout = QVBoxLayout(page)
    layout.addWidget(intro)
    row = QHBoxLayout()
    for widget in controls:
        row.addWidget(widget)
    row.addStretch(1)
    layout.addLayout(row)
    for widget in below:
        layout.addWidget(widget, 1 if isinstance(widget, QTableWidget) else 0)


class MicrobatchPage(QWidget):
    """Gradients of the full batch beside those of k accumulated micro-batches."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.k = _spin_box("playground_microbatch_k", "Micro-batches",
                           "How many micro-batches to split the 12 points into", 1, 12, 3,
                           prefix="k = ")
        intro = _intro("An MLP(2, [4, 1]) on 12 moons points, MSE loss. Left: one backward "
                       "on the full batch. Right: k backward calls, one per micro-batch, each "
                       "loss weighted by its share of the points, with no zero_grad between "
                       "them.")
        self.table = _read_only_table(
            4, "playground_microbatch_table", "Micro-batch gradients",
            "Each parameter's gradient from the full batch and from the micro-batches")
        self.table.setHorizontalHeaderLabels(["parameter", "full batch",
                                              "k micro-batches", "difference"])
        self.summary = _summary("Micro-batch summary",
                                "The largest difference between the two columns")
        _lay_out(self, intro, (self.k,), (self.table, self.summary))
        self.k.valueChanged.connect(self.compute)

    @Slot()
    def compute(self) -> None:
        k = self.k.value()
        result = microbatch_demo(k)
        table = self.table
        table.setRowCount(len(result.names))
        table.setHorizontalHeaderItem(2, QTableWidgetItem(f"{k} micro-batches"))
        for row, name in enumerate(result.names):
            full, acc = float(result.full_batch[row]), float(result.accumulated[row])
            table.setItem(row, 0, left(cell(short_parameter_name(name), name)))
            # Nine digits fit the column and are plenty to see the two agree.
            table.setItem(row, 1, cell(f"{full:.9g}", number=full))
            table.setItem(row, 2, cell(f"{acc:.9g}", number=acc))
            table.setItem(row, 3, cell(f"{abs(full - acc):.0e}", number=abs(full - acc)))
        sizes = " + ".join(str(n) for n in result.batch_sizes)
        self.summary.setText(
            f"Micro-batches of {sizes} points. Largest difference: "
            f"<b>{result.max_difference:.1e}</b> — the same gradient, to the last digits "
            "floating point can hold. Accumulation (+=) is what makes this work.")


class ForgetZeroGradPage(QWidget):
    """Each variable's gradient after every backward pass without zero_grad."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.passes = _spin_box("playground_forget_passes", "Backward passes",
                                "How many backward passes to run on the same values", 2, 10,
                                3, suffix=" passes")
        self.button = QPushButton("Run without zero_grad")
        named(self.button, "playground_forget_run", "Run without zero_grad",
            "Run backward several times on this expression without zero_grad in between, "
            "and show each variable's gradient after every pass")
        intro = _intro("The same forward and backward, repeated on the same values. With "
                       "zero_grad every pass gives the true gradient; without it each pass "
                       "adds the gradient again.")
        self.table = _read_only_table(
            2, "playground_forget_table", "Gradients without zero_grad",
            "The true gradient, then .grad after each pass without zero_grad")
        self.summary = _summary("Forget zero_grad summary",
                                "How the gradients after k passes compare to the true one")
        _lay_out(self, intro, (self.passes, self.button), (self.table, self.summary))

    def show_result(self, result: ForgetZeroGrad) -> None:
        passes = len(result.without_zero_grad)
        table = self.table
        table.setColumnCount(passes + 2)
        table.setHorizontalHeaderLabels(["variable", "true grad",
                                         *[f"after pass {k + 1}" for k in range(passes)]])
        table.setRowCount(len(result.names))
        for row, name in enumerate(result.names):
            table.setItem(row, 0, left(cell(name)))
            true = float(result.true_gradient[row])
            table.setItem(row, 1, cell(fmt(true), number=true))
            for k in range(passes):
                piled = float(result.without_zero_grad[k, row])
                table.setItem(row, k + 2, cell(fmt(piled), number=piled))
        ratio = _ratio(result.without_zero_grad[-1], result.true_gradient)
        times = f"{ratio:g} ×" if ratio is not None else "a multiple of"
        self.summary.setText(
            f"After {passes} backward passes without zero_grad every gradient is "
            f"<b>{times} the true one</b>: each pass added it again (+=). A training step "
            "would move the weights that many times too far.")


class NetworkCheckPage(QWidget):
    """The gradient check on the session's network, asked of the training side."""

    def __init__(self, controller: SessionPort | None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        intro = _intro("The same check on the network being trained: every weight's gradient "
                       "from backward beside a finite difference of the training loss "
                       "(all training points, penalties included).")
        self.button = QPushButton("Check the network's gradients")
        named(self.button, "playground_network_check", "Check the network's gradients",
            "Run the gradient check on the current network's parameters (in the training "
            "thread; a second or so for a large network)")
        self.button.setEnabled(controller is not None)
        if controller is None:
            self.button.setToolTip("Needs a training session: open the playground "
                                   "from the main window")
        self.table = _read_only_table(
            4, "playground_network_table", "Network gradient check",
            "Each parameter's gradient, its finite difference and their relative error")
        self.table.setHorizontalHeaderLabels(["parameter", "grad", "finite diff.",
                                              "rel. error"])
        self.summary = _summary("Network check summary", "The worst relative error, and where")
        _lay_out(self, intro, (self.button,), (self.summary, self.table))
        self.button.clicked.connect(self.check)

    @Slot()
    def check(self) -> None:
        """Run the gradient check on the session's network, where the training runs."""
        if self.controller is None:
            return
        self.button.setEnabled(False)
        self.summary.setText("Checking…")
        # The training side alone touches the trainer; the result (a frozen GradCheck)
        # comes back here.
        self.controller.ask(Session.gradient_check, callback=self._show)

    def _show(self, check: GradCheck) -> None:
        self.button.setEnabled(True)
        table = self.table
        table.setRowCount(len(check.names))
        passed = check.passed(CHECK_TOLERANCE)
        # Worst first: with a hundred parameters, the rows that matter are on top.
        order = np.argsort(-check.relative_error, kind="stable")
        for row, i in enumerate(order.tolist()):
            name = check.names[i]
            table.setItem(row, 0, left(cell(short_parameter_name(name), name)))
            analytic, numeric = float(check.analytic[i]), float(check.numeric[i])
            table.setItem(row, 1, cell(fmt(analytic), number=analytic))
            table.setItem(row, 2, cell(fmt(numeric), number=numeric))
            error = cell(f"{check.relative_error[i]:.1e}",
                         number=float(check.relative_error[i]))
            if i == check.worst:
                mark(error, WORST_OK if passed else RED)
                bold(error)
            table.setItem(row, 3, error)
        if check.worst >= 0:
            table.scrollToTop()
            where = short_parameter_name(check.names[check.worst])
            verdict = (f"passes (below {TOLERANCE_TEXT})" if passed else
                       f"FAILS (above {TOLERANCE_TEXT})")
            self.summary.setText(
                f"{len(check.names)} parameters, worst first. Worst relative error "
                f"<b>{check.worst_error:.1e}</b> at {where}: the check {verdict}.")
