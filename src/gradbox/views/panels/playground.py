"""The expression playground: type an expression, run backward, break it on purpose.

Thin by design: every number comes from `gradbox.teaching.playground.Playground` (parse,
forward, backward and its broken variants, gradient check) and from
`gradbox.teaching.pitfalls` (micro-batches, forget zero_grad); this widget only shows them.
The graph is the shared `GraphView` at operation level. The lower tabs beside the
variables are in playground_demos.py, the wording of messages and errors in
playground_text.py.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtGui import QResizeEvent
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
    QSplitter,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gradbox.formatting import MISSING, fmt, number
from gradbox.graph import trace
from gradbox.port.protocol import SessionPort
from gradbox.teaching import lessons as names
from gradbox.teaching.expression import ExpressionError
from gradbox.teaching.playground import CHECK_TOLERANCE, PLAYGROUND_VARIANTS, Outcome, Playground
from gradbox.views.fitting_tabs import FittingTabs
from gradbox.views.graph.view import GraphView
from gradbox.views.named import named
from gradbox.views.palette import ERROR_BOX
from gradbox.views.panels.playground_demos import (
    RED,
    TOLERANCE_TEXT,
    WORST_OK,
    ForgetZeroGradPage,
    MicrobatchPage,
    NetworkCheckPage,
    bold,
    cell,
    left,
    mark,
)
from gradbox.views.panels.playground_text import (
    MESSAGE_STYLE,
    index_of,
    message_html,
    parse_error_html,
    plain,
)

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
_TABS = ("variables", "micro-batches", "forget zero_grad", "network check")

# Table columns
C_NAME, C_VALUE, C_GRAD, C_VARIANT, C_NUMERIC, C_ERROR = range(6)


class _OwnHeightLayout(QVBoxLayout):
    """The panel's column, fitted to the height it is given: the page scrolls only when
    even the panel's minimum does not fit. (With the wrapping labels' height-for-width,
    the scroll area asked for every part's preferred height: a syntax error's two lines
    added a scroll bar that cut the status box off at 1024 x 700.)"""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        return False


class PlaygroundPanel(QWidget):
    """Expression, variables table, graph, and the buttons that run (and break) backward."""

    expression_changed = Signal(str)
    outcome_shown = Signal(object)  # the Outcome now in the message area

    def __init__(self, controller: SessionPort | None = None,
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
        named(self.examples, names.PG_EXAMPLES, "Examples",
            "Put an example expression in the box and run its forward pass")
        self.examples.addItem("Examples…", "")
        # The items are long ("label:  expression"); the box itself stays narrow.
        self.examples.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.examples.setMinimumContentsLength(14)
        for label, text, _values in EXAMPLES:
            self.examples.addItem(f"{label}:  {text}", text)
        self.expression = QLineEdit(self.model.text)
        named(self.expression, names.PG_EXPRESSION, "Expression",
            "An expression of variables: + - * / **, tanh exp log relu sigmoid abs, as "
            "functions or methods. Name steps with ; as in a = 1; b = a + a; b * b. "
            "Press Enter to build its graph.")
        self.expression.setPlaceholderText("e.g. tanh(a*b + c)")
        self.forward_button = QPushButton("Forward")
        named(self.forward_button, names.PG_FORWARD, "Forward",
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
        self.error.setStyleSheet(MESSAGE_STYLE["error"] + " padding: 4px;")
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.hide()

        # --- backward row ---
        self.backward_button = QPushButton("Backward")
        named(self.backward_button, names.PG_BACKWARD, "Backward",
            "loss.backward(): send gradients from the output back to every variable, "
            "node by node in reverse topological order. Leaves add (+=) to what they hold.")
        self.backward_again_button = QPushButton("Backward again")
        named(self.backward_again_button, names.PG_BACKWARD_AGAIN, "Backward again",
            "Call backward a second time on the same graph, as PyTorch would")
        self.retain = QCheckBox("retain_graph")
        named(self.retain, names.PG_RETAIN, "retain_graph",
            "backward(retain_graph=True): keep the values ops saved for backward, so the "
            "graph can be gone through again. Tick it before Backward.")
        self.zero_button = QPushButton("Zero grads")
        named(self.zero_button, names.PG_ZERO, "Zero grads",
            "zero_grad(): set every gradient back to 0")
        self.check_button = QPushButton("Gradient check")
        named(self.check_button, names.PG_CHECK, "Gradient check",
            "Compare each gradient shown with a finite difference, "
            "(f(x+ε) − f(x−ε)) / 2ε; the worst relative error is highlighted")
        self.variant = QComboBox()
        named(self.variant, names.PG_VARIANT, "Backward variant",
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
        named(self.table, names.PG_TABLE, "Variables",
            "Each variable's value (double-click to edit) and gradient")
        headers = [("variable", "The leaves of the graph"),
                   ("value", "Double-click to change; the forward pass runs again"),
                   ("grad", "What .grad holds: the engine's gradient"),
                   ("variant grad", "The broken variant's gradient; red where it is wrong"),
                   ("finite\ndiff.", "(f(x+ε) − f(x−ε)) / 2ε with ε = 1e-6"),
                   ("rel.\nerror", "|grad − finite diff.| / max(|grad|, |finite diff.|, 1)")]
        for column, (text, what) in enumerate(headers):
            item = QTableWidgetItem(text)
            item.setToolTip(what)
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
        named(self.message, names.PG_MESSAGE, "Playground message",
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

        # Every section's tab on show at 1024 px (short names where the full ones do
        # not fit), never behind scroll arrows.
        self.extras = FittingTabs()
        named(self.extras, names.PG_EXTRAS, "Playground sections",
            "The variables of the expression, micro-batch accumulation, and the "
            "forget-zero_grad demo")
        self.extras.add(variables, "Variables")
        self.microbatches = MicrobatchPage()
        self.forget = ForgetZeroGradPage()
        self.forget.button.clicked.connect(self.forget_zero_grad_demo)
        self.network_check = NetworkCheckPage(controller)
        self.extras.add(self.microbatches, "Micro-batches", "Batches")
        self.extras.add(self.forget, "Forget zero_grad", "zero_grad")
        self.extras.add(self.network_check, "Network check", "Check")
        for index, what in enumerate((
                "Each variable's value and gradient, and the message about the last action",
                "k micro-batches with no zero_grad between them give the full batch's "
                "gradient",
                "Backward several times without zero_grad: the gradients pile up",
                "The gradient check on the training network's parameters")):
            self.extras.setTabToolTip(index, f"{self.extras.name_of(index)}: {what}")

        self.graph = GraphView()
        named(self.graph, names.PG_GRAPH, "Expression graph",
            "The graph of the expression: data and grad in every node. Backward lights "
            "the nodes up in the order they receive their gradient. F fits, N steps.")
        self.graph.set_level("operation")
        self.graph_caption = QLabel()
        self.graph_caption.setObjectName("playground_graph_caption")
        self.graph_caption.setAccessibleName("What the graph shows")
        self.graph_caption.setToolTip("Whose gradients the graph's boxes hold")
        self.graph_caption.setWordWrap(True)  # else its length sets the panel's width
        self.details = QPlainTextEdit()
        named(self.details, "playground_details", "Node details",
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

        self._graph_favoured = False
        self.splitter = splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.extras)
        splitter.addWidget(right)
        # Two fifths to the table, three to the graph: its six columns read at 400 px,
        # and half left tanh(a*b + c)'s four columns of nodes cut off at 1024 x 700.
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setChildrenCollapsible(False)
        splitter.setSizes([480, 720])

        layout = _OwnHeightLayout(self)
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
        self.microbatches.compute()

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
        return plain(self.message.text())

    def error_text(self) -> str:
        return plain(self.error.text()) if self.error.isVisibleTo(self) else ""

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
        stale = self.expression.text() != self.model.text and not self.set_expression(
            self.expression.text())
        self._run(self.model.backward, animate=self.model.variant == "engine")
        if stale:
            # The box says it still shows the last good expression: Backward runs on
            # that one, and says so (it did nothing, silently).
            self.message.setText(
                f"<p><b>Backward ran on the last good expression, "
                f"<code>{html.escape(self.model.text)}</code></b>: the field's text does "
                "not parse (see above).</p>" + self.message.text())

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
    def forget_zero_grad_demo(self) -> None:
        self.forget.show_result(self.model.forget_zero_grad(self.forget.passes.value()))
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

    def favour_graph(self, on: bool) -> None:
        """Two thirds of the width to the graph (teacher mode, when a step points at the
        graph and not the table: at 1024 x 700 half left a chain of four nodes cut off
        beside a status box of two lines); when off, the table what its headers need."""
        self._graph_favoured = on
        self._fit_split()

    def table_width(self) -> int:
        """The width the table's shown columns need for their headers' lines whole."""
        header = self.table.horizontalHeader()
        metrics = header.fontMetrics()
        pad = 2 * self.table.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin) + 12
        width = sum(max(metrics.horizontalAdvance(line) for line in
                        (self.table.horizontalHeaderItem(c).text() or " ").splitlines()) + pad
                    for c in range(self.table.columnCount()) if not self.table.isColumnHidden(c))
        return width + 2 * self.table.frameWidth() + 8

    def _fit_split(self) -> None:
        """The table as wide as its headers need and at least two fifths, at most half;
        the graph the rest (half each cut tanh(a*b + c) off at 1024 x 700; two fifths
        cut "correct grad" beside the lessons)."""
        total = sum(self.splitter.sizes()) or self.splitter.width()
        if total <= 0:
            return
        if self._graph_favoured:
            table = total // 3
        else:
            table = min(max(self.table_width(), 2 * total // 5), total // 2)
        if self.splitter.sizes()[0] != table:
            self.splitter.setSizes([table, total - table])

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_split()

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
            self._fit_split()  # a column more or fewer, other headers
            check = self.model.check
            failed = check is not None and not check.passed(CHECK_TOLERANCE)
            for r, row in enumerate(rows):
                self.table.setItem(r, C_NAME, left(cell(row.name, f"variable {row.name}")))
                self.table.setItem(r, C_VALUE, cell(
                    f"{row.value:g}", f"{row.name} = {row.value!r}; double-click to change",
                    editable=True))
                self.table.setItem(r, C_GRAD, cell(number(row.grad)))
                variant = cell(number(row.variant_grad))
                if row.wrong:
                    mark(variant, RED)
                    variant.setToolTip(f"Wrong: the correct gradient is {number(row.grad)}")
                    bold(variant)
                self.table.setItem(r, C_VARIANT, variant)
                self.table.setItem(r, C_NUMERIC, cell(number(row.numeric)))
                error = cell(MISSING if row.error is None else f"{row.error:.1e}")
                if row.worst:
                    mark(error, RED if failed else WORST_OK)
                    error.setToolTip("The worst relative error of the check" +
                                     (f": above {TOLERANCE_TEXT}, the check fails"
                                      if failed else f": below {TOLERANCE_TEXT}, it passes"))
                    bold(error)
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
        self.message.setText(message_html(outcome, self._previous))
        self.message.setStyleSheet(MESSAGE_STYLE.get(outcome.kind, "") + " padding: 6px;")
        self.message.setProperty("kind", outcome.kind)
        self.outcome_shown.emit(outcome)

    def _show_parse_error(self, text: str, error: ExpressionError) -> None:
        self.error.setText(parse_error_html(text, error, self.model.text))
        self.error.show()
        self.expression.setFocus()
        self.expression.setCursorPosition(index_of(text, error.line, error.position))

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
