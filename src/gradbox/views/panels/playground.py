"""The expression playground: type an expression, run backward, break it on purpose.

Thin by design: every number comes from `gradbox.teaching.expression.Playground` (parse,
forward, backward and its broken variants, gradient check) and from
`gradbox.teaching.pitfalls` (micro-batches, forget zero_grad); this widget only shows them.
The graph is the shared `GraphView` at operation level.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gradbox.autograd.gradcheck import GradCheck
from gradbox.formatting import MISSING, fmt, number
from gradbox.graph import trace
from gradbox.teaching import lessons as names
from gradbox.teaching.expression import (
    CHECK_TOLERANCE,
    PLAYGROUND_VARIANTS,
    ExpressionError,
    Outcome,
    Playground,
)
from gradbox.teaching.pitfalls import microbatch_demo
from gradbox.views.controller import SessionController
from gradbox.views.graph.view import GraphView
from gradbox.views.palette import ERROR_BOX, HIGHLIGHT, NOTE_BOX

# (what the examples box shows, the expression, starting values). The values keep tanh
# off its flat ends, where every gradient would be too small to read.
EXAMPLES: tuple[tuple[str, str, dict[str, float]], ...] = (
    ("chain rule", "tanh(a*b + c)", {"a": 0.5, "b": -1.5, "c": 0.25}),
    ("product and sum", "a*b + c", {"a": 2.0, "b": -3.0, "c": 10.0}),
    ("a value used twice", "a + a", {"a": 3.0}),
    ("multiply (saves its inputs)", "a * b", {"a": 2.0, "b": -3.0}),
    ("neuron", "(x1*w1 + x2*w2 + b).tanh()",
     {"x1": 2.0, "w1": -3.0, "x2": 0.0, "w2": 1.0, "b": 6.8813735870195432}),
    ("sigmoid by hand", "exp(x) / (1 + exp(x))", {"x": 0.7}),
    ("reused intermediate", "a = 1; b = a + a; c = b + b", {}),
    ("neuron with a reused hidden value", "h = 2*x; tanh(b + w1*h + w2*h)",
     {"x": 0.5, "w1": 0.5, "w2": 0.25, "b": -0.25}),
)
TOLERANCE_TEXT = f"{CHECK_TOLERANCE:.0e}".replace("e-0", "e-")  # "1e-6", as people write it
_RED = QColor("#f6c9c4")
_WORST_OK = QColor(HIGHLIGHT)
_MESSAGE_STYLE = {
    "info": "background: #eef4fb; color: #1d3557; border: 1px solid #b9cfe6;",
    "warning": "background: {}; color: {}; border: 1px solid {};".format(*NOTE_BOX),
    "error": "background: {}; color: {}; border: 1px solid {};".format(*ERROR_BOX),
}
_TABS = ("variables", "micro-batches", "forget zero_grad", "network check")

# Table columns
C_NAME, C_VALUE, C_GRAD, C_VARIANT, C_NUMERIC, C_ERROR = range(6)


def _tip(widget: QWidget, object_name: str, accessible: str, tip: str) -> None:
    widget.setObjectName(object_name)
    widget.setAccessibleName(accessible)
    widget.setToolTip(tip)


def _cell(text: str, tip: str = "", editable: bool = False) -> QTableWidgetItem:
    item = QTableWidgetItem(text)
    flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
    if editable:
        flags |= Qt.ItemFlag.ItemIsEditable
    item.setFlags(flags)
    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if tip:
        item.setToolTip(tip)
    return item


CARET_CONTEXT = 56  # characters of the offending line shown around the caret


def caret_text(text: str, line: int, column: int, end: int | None = None,
               context: int = CARET_CONTEXT) -> tuple[str, str]:
    """The offending line of `text` and a caret line under `column` (1-based).

    A line longer than `context` is cut to the part around the caret, with "…" where it
    was cut: the caret must stay under its character, so this text cannot wrap, and a
    300-character line would widen the panel past the window.
    """
    lines = text.split("\n")
    shown = lines[line - 1] if 0 < line <= len(lines) else ""
    width = max(1, (end - column) if end is not None and end > column else 1)
    start = 0
    if len(shown) > context:
        start = max(0, min(column - 1 - context // 2, len(shown) - context))
        cut = shown[start:start + context]
        shown = ("…" if start else "") + cut + ("…" if start + context < len(shown) else "")
        start -= 1 if start else 0  # the "…" takes the first cut character's place
        width = min(width, context)
    return shown, " " * max(0, column - 1 - start) + "^" * width


def breakable(text: str, every: int = 24) -> str:
    """`text` with a zero-width space every `every` characters of any longer word, so a
    word-wrapping label can wrap a 300-character name instead of widening its panel."""
    def split(match: re.Match[str]) -> str:
        word = match.group(0)
        return "\u200b".join(word[i:i + every] for i in range(0, len(word), every))
    return re.sub(rf"\S{{{every + 1},}}", split, text)


class PlaygroundPanel(QWidget):
    """Expression, variables table, graph, and the buttons that run (and break) backward."""

    expression_changed = Signal(str)
    outcome_shown = Signal(object)  # the Outcome now in the message area

    def __init__(self, controller: SessionController | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # The expression graphs are the playground's own and never touch the training
        # session; the controller serves only the network gradient check.
        self.controller = controller
        self.setObjectName(names.PLAYGROUND_TAB)
        self.setAccessibleName("Expression playground")
        self.model = Playground("tanh(a*b + c)")
        # None: the replay's own pace, which its speed control sets; tests make it 1 ms
        self.animation_ms: int | None = None
        self._filling = False
        # While backward is replayed, rows whose leaf has not lit up yet show "…" in the
        # table, as the graph shows "grad ?": both reveal a gradient at the same moment.
        self._pending_rows: dict[int, int] = {}  # graph node id -> table row
        # The message before the last one stays visible, dimmed: "Gradient check failed"
        # should not wipe out the explanation Backward just gave.
        self._latest: Outcome | None = None
        self._previous: Outcome | None = None

        # --- expression row ---
        self.examples = QComboBox()
        _tip(self.examples, names.PG_EXAMPLES, "Examples",
             "Put an example expression in the box and run its forward pass")
        self.examples.addItem("Examples…", "")
        # The items are long ("label:  expression"); the box itself stays narrow.
        self.examples.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.examples.setMinimumContentsLength(14)
        for label, text, _values in EXAMPLES:
            self.examples.addItem(f"{label}:  {text}", text)
        self.expression = QLineEdit(self.model.text)
        _tip(self.expression, names.PG_EXPRESSION, "Expression",
             "An expression of variables: + - * / **, tanh exp log relu sigmoid abs, as "
             "functions or methods. Name steps with ; as in a = 1; b = a + a; b * b. "
             "Press Enter to build its graph.")
        self.expression.setPlaceholderText("e.g. tanh(a*b + c)")
        self.forward_button = QPushButton("Forward")
        _tip(self.forward_button, names.PG_FORWARD, "Forward",
             "Build the graph from the expression and the variables' values (Enter)")
        row1 = QHBoxLayout()
        row1.addWidget(self.examples)
        row1.addWidget(self.expression, 1)
        row1.addWidget(self.forward_button)

        self.error = QLabel()
        self.error.setObjectName("playground_error")
        self.error.setAccessibleName("Expression error")
        self.error.setToolTip("Why the expression was not accepted; the caret marks where. "
                              "The last good graph stays on screen.")
        self.error.setTextFormat(Qt.TextFormat.RichText)
        self.error.setWordWrap(True)  # a long message wraps; it never widens the panel
        self.error.setStyleSheet(_MESSAGE_STYLE["error"] + " padding: 4px;")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()

        # --- backward row ---
        self.backward_button = QPushButton("Backward")
        _tip(self.backward_button, names.PG_BACKWARD, "Backward",
             "loss.backward(): send gradients from the output back to every variable, "
             "node by node in reverse topological order. Leaves add (+=) to what they hold.")
        self.backward_again_button = QPushButton("Backward again")
        _tip(self.backward_again_button, names.PG_BACKWARD_AGAIN, "Backward again",
             "Call backward a second time on the same graph, as PyTorch would")
        self.retain = QCheckBox("retain_graph")
        _tip(self.retain, names.PG_RETAIN, "retain_graph",
             "backward(retain_graph=True): keep the values ops saved for backward, so the "
             "graph can be gone through again. Tick it before Backward.")
        self.zero_button = QPushButton("Zero grads")
        _tip(self.zero_button, names.PG_ZERO, "Zero grads",
             "zero_grad(): set every gradient back to 0")
        self.check_button = QPushButton("Gradient check")
        _tip(self.check_button, names.PG_CHECK, "Gradient check",
             "Compare each gradient shown with a finite difference, "
             "(f(x+ε) − f(x−ε)) / 2ε; the worst relative error is highlighted")
        self.variant = QComboBox()
        _tip(self.variant, names.PG_VARIANT, "Backward variant",
             "Which backward Backward runs: the correct engine, or one broken on purpose. "
             "A broken one's gradients appear beside the correct ones.")
        for key, label in PLAYGROUND_VARIANTS.items():
            self.variant.addItem(label, key)
        variant_label = QLabel("Backward variant:")
        variant_label.setBuddy(self.variant)
        row2 = QHBoxLayout()
        for w in (self.backward_button, self.backward_again_button, self.retain,
                  self.zero_button, self.check_button):
            row2.addWidget(w)
        row2.addStretch(1)
        # The variant on a row of its own: beside five buttons it made the panel wider
        # than the window leaves it beside the lessons (Forward went off screen).
        row3 = QHBoxLayout()
        row3.addWidget(variant_label)
        row3.addWidget(self.variant)
        row3.addStretch(1)

        # --- variables table ---
        self.table = QTableWidget(0, 6)
        _tip(self.table, names.PG_TABLE, "Variables",
             "Each variable's value (double-click to edit) and gradient")
        headers = [("variable", "The leaves of the graph"),
                   ("value", "Double-click to change; the forward pass runs again"),
                   ("grad", "What .grad holds: the engine's gradient"),
                   ("variant grad", "The broken variant's gradient; red where it is wrong"),
                   ("finite\ndiff.", "(f(x+ε) − f(x−ε)) / 2ε with ε = 1e-6"),
                   ("rel.\nerror", "|grad − finite diff.| / max(|grad|, |finite diff.|, 1)")]
        for column, (text, tip) in enumerate(headers):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            self.table.setHorizontalHeaderItem(column, item)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        for column in (C_NAME, C_VALUE):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QAbstractItemView.EditTrigger.AnyKeyPressed)

        self.message = QLabel()
        _tip(self.message, names.PG_MESSAGE, "Playground message",
             "What the last action did, and why")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        variables = QWidget()
        box = QVBoxLayout(variables)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.table, 2)
        box.addWidget(self.message, 1)

        self.extras = QTabWidget()
        _tip(self.extras, names.PG_EXTRAS, "Playground sections",
             "The variables of the expression, micro-batch accumulation, and the "
             "forget-zero_grad demo")
        self.extras.addTab(variables, "Variables")
        self.extras.addTab(self._microbatch_page(), "Micro-batches")
        self.extras.addTab(self._forget_page(), "Forget zero_grad")
        self.extras.addTab(self._network_page(), "Network check")
        for index, tip in enumerate((
                "Each variable's value and gradient, and the message about the last action",
                "k micro-batches with no zero_grad between them give the full batch's "
                "gradient",
                "Backward several times without zero_grad: the gradients pile up",
                "The gradient check on the training network's parameters")):
            self.extras.setTabToolTip(index, tip)

        self.graph = GraphView()
        _tip(self.graph, names.PG_GRAPH, "Expression graph",
             "The graph of the expression: data and grad in every node. Backward lights "
             "the nodes up in the order they receive their gradient. F fits, N steps.")
        self.graph.set_level("operation")
        self.graph_caption = QLabel()
        self.graph_caption.setObjectName("playground_graph_caption")
        self.graph_caption.setAccessibleName("What the graph shows")
        self.graph_caption.setToolTip("Whose gradients the graph's boxes hold")
        self.graph_caption.setWordWrap(True)  # else its length sets the panel's width
        self.details = QPlainTextEdit()
        _tip(self.details, "playground_details", "Node details",
             "Click a node in the graph: its op, local derivative, and what each of its "
             "uses sent back")
        self.details.setReadOnly(True)
        self.details.setPlaceholderText("Click a node in the graph to see its local "
                                        "derivative and what each use sent back.")
        self.details.setMaximumHeight(120)
        right = QWidget()
        right_box = QVBoxLayout(right)
        right_box.setContentsMargins(0, 0, 0, 0)
        right_box.addWidget(self.graph_caption)
        right_box.addWidget(self.graph, 1)
        right_box.addWidget(self.details)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.extras)
        splitter.addWidget(right)
        # Half each: the table's six columns need it as much as the graph.
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([600, 600])

        layout = QVBoxLayout(self)
        layout.addLayout(row1)
        layout.addWidget(self.error)
        layout.addLayout(row2)
        layout.addLayout(row3)
        layout.addWidget(splitter, 1)

        self.examples.activated.connect(self._on_example_chosen)
        self.expression.returnPressed.connect(self.forward)
        self.forward_button.clicked.connect(self.forward)
        self.backward_button.clicked.connect(self.backward)
        self.backward_again_button.clicked.connect(self.backward_again)
        self.retain.toggled.connect(self._on_retain_toggled)
        self.zero_button.clicked.connect(self.zero_grads)
        self.check_button.clicked.connect(self.gradient_check)
        self.variant.currentIndexChanged.connect(self._on_variant_changed)
        self.table.itemChanged.connect(self._on_item_changed)
        self.graph.animation_step.connect(self._on_animation_step)
        self.graph.animation_finished.connect(self._on_animation_finished)
        self.graph.details_changed.connect(self.details.setPlainText)

        self._show_graph()
        self._fill_table()
        self._show(Outcome("info", "Type an expression, or pick an example",
                           "Press Backward to send gradients from the output back to "
                           "every variable."))
        self.compute_microbatches()

    # --- the lower tabs -------------------------------------------------------------------
    def _microbatch_page(self) -> QWidget:
        page = QWidget()
        self.k = QSpinBox()
        _tip(self.k, "playground_microbatch_k", "Micro-batches",
             "How many micro-batches to split the 12 points into")
        self.k.setRange(1, 12)
        self.k.setValue(3)
        self.k.setPrefix("k = ")
        intro = QLabel("An MLP(2, [4, 1]) on 12 moons points, MSE loss. Left: one backward on "
                       "the full batch. Right: k backward calls, one per micro-batch, each "
                       "loss weighted by its share of the points, with no zero_grad between "
                       "them.")
        intro.setWordWrap(True)
        self.micro_table = QTableWidget(0, 4)
        _tip(self.micro_table, "playground_microbatch_table", "Micro-batch gradients",
             "Each parameter's gradient from the full batch and from the micro-batches")
        self.micro_table.setHorizontalHeaderLabels(["parameter", "full batch",
                                                    "k micro-batches", "difference"])
        self.micro_table.verticalHeader().hide()
        self.micro_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Stretch)
        self.micro_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.micro_summary = QLabel()
        self.micro_summary.setAccessibleName("Micro-batch summary")
        self.micro_summary.setToolTip("The largest difference between the two columns")
        self.micro_summary.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        row = QHBoxLayout()
        row.addWidget(self.k)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.micro_table, 1)
        layout.addWidget(self.micro_summary)
        self.k.valueChanged.connect(self.compute_microbatches)
        return page

    def _forget_page(self) -> QWidget:
        page = QWidget()
        self.passes = QSpinBox()
        _tip(self.passes, "playground_forget_passes", "Backward passes",
             "How many backward passes to run on the same values")
        self.passes.setRange(2, 10)
        self.passes.setValue(3)
        self.passes.setSuffix(" passes")
        self.forget_button = QPushButton("Run without zero_grad")
        _tip(self.forget_button, "playground_forget_run", "Run without zero_grad",
             "Run backward several times on this expression without zero_grad in between, "
             "and show each variable's gradient after every pass")
        intro = QLabel("The same forward and backward, repeated on the same values. With "
                       "zero_grad every pass gives the true gradient; without it each pass "
                       "adds the gradient again.")
        intro.setWordWrap(True)
        self.forget_table = QTableWidget(0, 2)
        _tip(self.forget_table, "playground_forget_table", "Gradients without zero_grad",
             "The true gradient, then .grad after each pass without zero_grad")
        self.forget_table.verticalHeader().hide()
        self.forget_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Stretch)
        self.forget_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.forget_summary = QLabel()
        self.forget_summary.setAccessibleName("Forget zero_grad summary")
        self.forget_summary.setToolTip("How the gradients after k passes compare to the true one")
        self.forget_summary.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        row = QHBoxLayout()
        row.addWidget(self.passes)
        row.addWidget(self.forget_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.forget_table, 1)
        layout.addWidget(self.forget_summary)
        self.forget_button.clicked.connect(self.forget_zero_grad_demo)
        return page

    def _network_page(self) -> QWidget:
        page = QWidget()
        intro = QLabel("The same check on the network being trained: every weight's gradient "
                       "from backward beside a finite difference of the training loss "
                       "(all training points, penalties included).")
        intro.setWordWrap(True)
        self.network_button = QPushButton("Check the network's gradients")
        _tip(self.network_button, "playground_network_check", "Check the network's gradients",
             "Run the gradient check on the current network's parameters (in the training "
             "thread; a second or so for a large network)")
        self.network_button.setEnabled(self.controller is not None)
        if self.controller is None:
            self.network_button.setToolTip("Needs a training session: open the playground "
                                           "from the main window")
        self.network_table = QTableWidget(0, 4)
        _tip(self.network_table, "playground_network_table", "Network gradient check",
             "Each parameter's gradient, its finite difference and their relative error")
        self.network_table.setHorizontalHeaderLabels(["parameter", "grad", "finite diff.",
                                                      "rel. error"])
        self.network_table.verticalHeader().hide()
        self.network_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Stretch)
        self.network_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.network_summary = QLabel()
        self.network_summary.setAccessibleName("Network check summary")
        self.network_summary.setToolTip("The worst relative error, and where")
        self.network_summary.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(intro)
        row = QHBoxLayout()
        row.addWidget(self.network_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.network_summary)
        layout.addWidget(self.network_table, 1)
        self.network_button.clicked.connect(self.check_network)
        return page

    # --- public API -------------------------------------------------------------------------
    def setup(self, expression: str, values: Mapping[str, float] | None = None,
              variant: str = "engine", retain_graph: bool = False,
              tab: str = "variables") -> None:
        """Put the playground in a lesson's starting state (a fresh graph, no gradients)."""
        if variant not in PLAYGROUND_VARIANTS:
            raise ValueError(f"unknown variant {variant!r}")
        if tab not in _TABS:
            raise ValueError(f"tab must be one of {_TABS}, got {tab!r}")
        self.retain.setChecked(retain_graph)
        self.variant.setCurrentIndex(self.variant.findData(variant))
        self.model = Playground(expression, values)
        self.model.retain_graph = retain_graph
        self.model.set_variant(variant)
        self.expression.setText(expression)
        self.error.hide()
        self._show_graph()
        self._fill_table()
        self._update_enabled()
        self.extras.setCurrentIndex(_TABS.index(tab))
        self._latest = self._previous = None
        self._show(Outcome("info", f"Forward done: output = {fmt(float(self.model.root.data))}",
                           "A fresh graph; no gradient has flowed yet. Press Backward."))
        self.expression_changed.emit(expression)

    def set_expression(self, text: str) -> bool:
        """Parse `text` and show its graph; on an error show it and keep the last graph."""
        try:
            outcome = self.model.set_text(text)
        except ExpressionError as error:
            self._show_parse_error(text, error)
            return False
        self.error.hide()
        self._show_graph()
        self._fill_table()
        # What was said about the old expression no longer applies.
        self._latest = self._previous = None
        self._show(outcome)
        self.expression_changed.emit(self.model.text)
        return True

    def current_variant(self) -> str:
        return str(self.variant.currentData())

    def message_text(self) -> str:
        """The message area as plain text (what a user reads there)."""
        return _plain(self.message.text())

    def error_text(self) -> str:
        return _plain(self.error.text()) if self.error.isVisibleTo(self) else ""

    def cell(self, row: int, column: int) -> QTableWidgetItem | None:
        return self.table.item(row, column)

    # --- actions ---------------------------------------------------------------------------
    @Slot()
    def forward(self) -> None:
        text = self.expression.text()
        if text != self.model.text:
            self.set_expression(text)
            return
        self.error.hide()
        self._run(self.model.forward)

    @Slot()
    def backward(self) -> None:
        if self.expression.text() != self.model.text and not self.set_expression(
                self.expression.text()):
            return
        self._run(self.model.backward, animate=self.model.variant == "engine")

    @Slot()
    def backward_again(self) -> None:
        self._run(self.model.backward_again)

    @Slot()
    def zero_grads(self) -> None:
        self._run(self.model.zero_grads)

    @Slot()
    def gradient_check(self) -> None:
        self._run(self.model.gradient_check)

    @Slot()
    def compute_microbatches(self) -> None:
        k = self.k.value()
        result = microbatch_demo(k)
        table = self.micro_table
        table.setRowCount(len(result.names))
        table.setHorizontalHeaderItem(2, QTableWidgetItem(f"{k} micro-batches"))
        for row, name in enumerate(result.names):
            full, acc = float(result.full_batch[row]), float(result.accumulated[row])
            table.setItem(row, 0, _left(_cell(_short_name(name), name)))
            # Nine digits fit the column and are plenty to see the two agree.
            table.setItem(row, 1, _cell(f"{full:.9g}", repr(full)))
            table.setItem(row, 2, _cell(f"{acc:.9g}", repr(acc)))
            table.setItem(row, 3, _cell(f"{abs(full - acc):.0e}"))
        sizes = " + ".join(str(n) for n in result.batch_sizes)
        self.micro_summary.setText(
            f"Micro-batches of {sizes} points. Largest difference: "
            f"<b>{result.max_difference:.1e}</b> — the same gradient, to the last digits "
            "floating point can hold. Accumulation (+=) is what makes this work.")

    @Slot()
    def check_network(self) -> None:
        """Run the gradient check on the session's network, in its worker thread."""
        controller = self.controller
        if controller is None:
            return
        self.network_button.setEnabled(False)
        self.network_summary.setText("Checking…")
        # Runs in the worker thread, which alone touches the trainer; the result (a
        # frozen GradCheck) comes back here.
        controller.ask("gradient_check", callback=self._show_network_check)

    def _show_network_check(self, check: GradCheck) -> None:
        self.network_button.setEnabled(True)
        table = self.network_table
        table.setRowCount(len(check.names))
        passed = check.passed(CHECK_TOLERANCE)
        # Worst first: with a hundred parameters, the rows that matter are on top.
        order = np.argsort(-check.relative_error, kind="stable")
        for row, i in enumerate(order.tolist()):
            name = check.names[i]
            table.setItem(row, 0, _left(_cell(_short_name(name), name)))
            table.setItem(row, 1, _cell(fmt(float(check.analytic[i]))))
            table.setItem(row, 2, _cell(fmt(float(check.numeric[i]))))
            error = _cell(f"{check.relative_error[i]:.1e}")
            if i == check.worst:
                error.setBackground(_WORST_OK if passed else _RED)
                _bold(error)
            table.setItem(row, 3, error)
        if check.worst >= 0:
            table.scrollToTop()
            where = _short_name(check.names[check.worst])
            verdict = (f"passes (below {TOLERANCE_TEXT})" if passed else
                       f"FAILS (above {TOLERANCE_TEXT})")
            self.network_summary.setText(
                f"{len(check.names)} parameters, worst first. Worst relative error "
                f"<b>{check.worst_error:.1e}</b> at {where}: the check {verdict}.")

    @Slot()
    def forget_zero_grad_demo(self) -> None:
        passes = self.passes.value()
        result = self.model.forget_zero_grad(passes)
        table = self.forget_table
        table.setColumnCount(passes + 2)
        table.setHorizontalHeaderLabels(["variable", "true grad",
                                         *[f"after pass {k + 1}" for k in range(passes)]])
        table.setRowCount(len(result.names))
        for row, name in enumerate(result.names):
            table.setItem(row, 0, _left(_cell(name)))
            table.setItem(row, 1, _cell(fmt(float(result.true_gradient[row]))))
            for k in range(passes):
                table.setItem(row, k + 2, _cell(fmt(float(result.without_zero_grad[k, row]))))
        ratio = _ratio(result.without_zero_grad[-1], result.true_gradient)
        times = f"{ratio:g} ×" if ratio is not None else "a multiple of"
        self.forget_summary.setText(
            f"After {passes} backward passes without zero_grad every gradient is "
            f"<b>{times} the true one</b>: each pass added it again (+=). A training step "
            "would move the weights that many times too far.")
        self.extras.setCurrentIndex(_TABS.index("forget zero_grad"))

    # --- plumbing ----------------------------------------------------------------------------
    def _run(self, action: Callable[[], Outcome], animate: bool = False) -> None:
        try:
            outcome = action()
        except ExpressionError as error:
            # A value the expression cannot take (log of a negative number).
            self._show(Outcome("error", "Cannot evaluate", str(error)))
            self._fill_table()
            return
        self._show_graph()
        self._fill_table()
        self._show(outcome)
        if animate and self.graph.shown_graph() is not None:
            self._hide_pending_grads()
            self.graph.play_backward(self.animation_ms)

    def _hide_pending_grads(self) -> None:
        graph = self.graph.graph()
        if graph is None:
            return
        self._pending_rows = {}
        for row, leaf in enumerate(self.model.leaves):
            node = graph.node_of(leaf)
            if node is not None:
                self._pending_rows[node] = row
                item = self.table.item(row, C_GRAD)
                if item is not None:
                    item.setData(Qt.ItemDataRole.UserRole, item.text())
                    item.setText("…")

    @Slot(int, int)
    def _on_animation_step(self, node: int, _place: int) -> None:
        row = self._pending_rows.pop(node, None)
        if row is not None:
            item = self.table.item(row, C_GRAD)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) is not None:
                item.setText(str(item.data(Qt.ItemDataRole.UserRole)))

    @Slot()
    def _on_animation_finished(self) -> None:
        if self._pending_rows:
            self._pending_rows = {}
            self._fill_table()

    def _show_graph(self) -> None:
        if self.graph.level() != "operation":
            self.graph.set_level("operation")
        self.graph.set_graph(trace(self.model.root))
        # after every Forward and Backward, not just the first: the graph's extent
        # changes with its numbers and badges, and it was left clipped at the right
        self.graph.keep_framed()
        if self.model.broken is not None:
            self.graph_caption.setText(
                f"The graph holds the gradients of “{PLAYGROUND_VARIANTS[self.model.variant]}”"
                " — broken on purpose; the table has the correct ones beside them.")
            self.graph_caption.setStyleSheet(f"color: {ERROR_BOX[1]}; font-weight: bold;")
        else:
            self.graph_caption.setText("The graph: data and grad of every node, computed by "
                                       "the engine. Click a node for its details.")
            self.graph_caption.setStyleSheet("")

    def _fill_table(self) -> None:
        self._pending_rows = {}
        rows = self.model.rows()
        variant_mode = self.model.broken is not None or self.model.variant != "engine"
        label = PLAYGROUND_VARIANTS[self.model.variant]
        self._filling = True
        try:
            self.table.setRowCount(len(rows))
            self.table.setColumnHidden(C_VARIANT, not variant_mode)
            # Two lines: "wrong order grad" on one line does not fit a quarter of the table.
            # One word per line: beside the lessons the table is about 270 px wide, and
            # "wrong order" on one line was cut to "ong orc".
            self.table.horizontalHeaderItem(C_GRAD).setText(
                "correct\ngrad" if variant_mode else "grad")
            self.table.horizontalHeaderItem(C_VARIANT).setText(
                "\n".join(self.model.variant.split()) if variant_mode else "variant\ngrad")
            self.table.horizontalHeaderItem(C_VARIANT).setToolTip(
                f"The gradient from “{label}”; red where it differs from the correct one")
            check = self.model.check
            failed = check is not None and not check.passed(CHECK_TOLERANCE)
            for r, row in enumerate(rows):
                self.table.setItem(r, C_NAME, _left(_cell(row.name, f"variable {row.name}")))
                self.table.setItem(r, C_VALUE, _cell(
                    f"{row.value:g}", f"{row.name} = {row.value!r}; double-click to change",
                    editable=True))
                self.table.setItem(r, C_GRAD, _cell(number(row.grad)))
                variant = _cell(number(row.variant_grad))
                if row.wrong:
                    variant.setBackground(_RED)
                    variant.setToolTip(f"Wrong: the correct gradient is {number(row.grad)}")
                    _bold(variant)
                self.table.setItem(r, C_VARIANT, variant)
                self.table.setItem(r, C_NUMERIC, _cell(number(row.numeric)))
                error = _cell(MISSING if row.error is None else f"{row.error:.1e}")
                if row.worst:
                    error.setBackground(_RED if failed else _WORST_OK)
                    error.setToolTip("The worst relative error of the check" +
                                     (f": above {TOLERANCE_TEXT}, the check fails"
                                      if failed else f": below {TOLERANCE_TEXT}, it passes"))
                    _bold(error)
                self.table.setItem(r, C_ERROR, error)
        finally:
            self._filling = False
        self._update_enabled()

    def _update_enabled(self) -> None:
        engine = self.model.variant == "engine"
        self.backward_again_button.setEnabled(engine)
        self.backward_again_button.setToolTip(
            "Call backward a second time on the same graph, as PyTorch would" if engine else
            "Backward again shows the correct engine's behaviour: choose “correct engine”")

    def _show(self, outcome: Outcome) -> None:
        if self._latest != outcome:
            # Only a warning or an error is worth keeping in view; plain news is not.
            keep = self._latest is not None and self._latest.kind != "info"
            self._previous = self._latest if keep else None
        self._latest = outcome
        rich = _outcome_html(outcome)
        if self._previous is not None:
            rich += ("<hr><div style='color: #555555'><small>Before that:</small><br>"
                     f"{_outcome_html(self._previous)}</div>")
        self.message.setText(rich)
        self.message.setStyleSheet(_MESSAGE_STYLE.get(outcome.kind, "") + " padding: 6px;")
        self.message.setProperty("kind", outcome.kind)
        self.outcome_shown.emit(outcome)

    def _show_parse_error(self, text: str, error: ExpressionError) -> None:
        shown, caret = caret_text(text, error.line, error.position, error.end)
        where = f"line {error.line}, column {error.position}" if error.line > 1 else \
            f"column {error.position}"
        self.error.setText(f"<pre style='margin:0'>{html.escape(shown)}\n"
                           f"{html.escape(caret)}</pre>"
                           f"<b>{html.escape(breakable(error.message))}</b> "
                           f"({where}). Still showing the last good expression: "
                           f"<code>{html.escape(breakable(self.model.text))}</code>")
        self.error.show()
        self.expression.setFocus()
        self.expression.setCursorPosition(_index_of(text, error.line, error.position))

    @Slot(int)
    def _on_example_chosen(self, index: int) -> None:
        if index > 0:
            _label, text, values = EXAMPLES[index - 1]
            self.setup(text, values, self.current_variant(), self.retain.isChecked())
        self.examples.setCurrentIndex(0)

    @Slot(bool)
    def _on_retain_toggled(self, on: bool) -> None:
        self.model.retain_graph = on

    @Slot(int)
    def _on_variant_changed(self, _index: int) -> None:
        self.model.set_variant(self.current_variant())
        self._fill_table()
        label = PLAYGROUND_VARIANTS[self.model.variant]
        if self.model.variant == "engine":
            self._show(Outcome("info", "Correct engine", "Reverse topological order, and "
                               "gradients accumulate (+=)."))
        else:
            self._show(Outcome("warning", f"Broken on purpose: {label}",
                               "Press Backward: its gradients appear beside the correct "
                               "ones, wrong ones in red."))

    @Slot(QTableWidgetItem)
    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if self._filling or item.column() != C_VALUE:
            return
        name = self.model.names[item.row()]
        try:
            value = float(item.text().replace(",", "."))
        except ValueError:
            self._show(Outcome("error", f"{item.text()!r} is not a number",
                               f"{name} keeps its value."))
            self._fill_table()
            return
        try:
            outcome = self.model.set_value(name, value)
        except ExpressionError as error:
            self._show(Outcome("error", f"{name} = {value:g} does not work here",
                               f"{error.message}. {name} keeps its value."))
            self._fill_table()
            return
        self._show_graph()
        self._fill_table()
        self._show(outcome)


def _outcome_html(outcome: Outcome) -> str:
    rich = f"<b>{html.escape(breakable(outcome.title))}</b>"
    if outcome.quote:
        # The engine's words verbatim, set apart as PyTorch prints them.
        rich += (f"<pre style='white-space: pre-wrap'>{html.escape(breakable(outcome.quote))}"
                 "</pre>")
    if outcome.text:
        rich += ("" if outcome.quote else "<br>") + html.escape(breakable(outcome.text))
    return rich


def _left(item: QTableWidgetItem) -> QTableWidgetItem:
    item.setTextAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return item


def _bold(item: QTableWidgetItem) -> None:
    font = QFont(item.font())
    font.setBold(True)
    item.setFont(font)


def _short_name(name: str) -> str:
    """'layers.0.neurons.3.w.1' -> 'L0 n3 w1'."""
    parts = name.split(".")
    if len(parts) >= 5 and parts[0] == "layers":
        return f"L{parts[1]} n{parts[3]} " + ("b" if parts[4] == "b" else f"w{parts[-1]}")
    return name


def _ratio(values: np.ndarray, reference: np.ndarray) -> float | None:
    """The common factor values / reference, if every non-zero entry shares it."""
    mask = reference != 0
    if not mask.any():
        return None
    ratios = values[mask] / reference[mask]
    return float(ratios[0]) if np.allclose(ratios, ratios[0], rtol=1e-9) else None


def _index_of(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column - 1


def _plain(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText().replace("\u200b", "")  # the break points are no text
