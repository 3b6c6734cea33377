"""What a check found, said so a learner can act on it.

Only the first failing case, in stage order (Exercism's rule: one thing to fix at a
time), shown as the code that ran; what it found in words; the mistake named in the
article's terms, with "Open in Playground" where a broken variant of gradbox's engine
shows the same numbers; yours vs expected at every node of its graph; the learner's
prints apart, capped. Everything the learner's code or a file wrote is plain text.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gradbox.build.report import CaseResult, CheckReport, StageResult, describe_mistake
from gradbox.formatting import counted, fmt
from gradbox.views.build.case_graph import expected_line
from gradbox.views.build.stage_text import plain_label
from gradbox.views.palette import ERROR_BOX, NOTE_BOX

SHOWN_OUTPUT = 4000  # characters of the learner's prints shown (the sandbox caps too)
PASSED_BACK = "#e3f3e5"
PASSED_TEXT = "#1e5a26"

# The broken variants of gradbox's engine the Playground runs beside the correct one.
BROKEN_VARIANTS = ("assign", "wrong order")


def _mono() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def _box(name: str, colours: tuple[str, str, str]) -> QFrame:
    frame = QFrame()
    frame.setObjectName(name)
    frame.setStyleSheet(f"QFrame#{name} {{ background: {colours[0]}; border: 1px solid "
                        f"{colours[2]}; border-radius: 4px; }} QLabel {{ color: {colours[1]}; }}")
    return frame


def mistake_text(mistake: str | None) -> str:
    """The mistake in the article's words ('' when unnamed or unknown)."""
    if not mistake:
        return ""
    try:
        known = describe_mistake(mistake)
    except KeyError:
        return ""
    rule = f" — see “{known.rule}”" if known.rule else ""
    return f"{known.description}{rule}."


class Feedback(QWidget):
    """The first failing case of a report, or what passed."""

    open_playground = Signal(str, object, str, bool, str)  # expression, values, variant,
    # retain_graph, tab: as the Playground's setup takes them
    line_found = Signal(int)  # the line of the learner's code to mark (0: none)
    next_stage = Signal()  # "Go on to the next stage"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = plain_label()
        bold = QFont(self.status.font())
        bold.setBold(True)
        self.status.setFont(bold)
        self.status.setObjectName("build_status")
        self.case_title = plain_label()
        self.code = QPlainTextEdit()
        self.code.setReadOnly(True)
        self.code.setFont(_mono())
        self.code.setAccessibleName("The case that ran")
        self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.message = plain_label()
        # what the case found and the rule it breaks, together in one red box
        self.mistake_box = _box("build_mistake", ERROR_BOX)
        self.mistake = plain_label()
        self.mistake.setObjectName("build_mistake_rule")
        self.playground_button = QPushButton("Open in Playground")
        self.playground_button.setToolTip("See gradbox's engine make the same mistake, "
                                          "beside the correct one")
        self.playground_button.clicked.connect(self._open_playground)
        inside = QVBoxLayout(self.mistake_box)
        inside.addWidget(self.message)
        inside.addWidget(self.mistake)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.playground_button)
        inside.addLayout(row)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["node", "your data", "expected", "your grad",
                                              "expected"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setAccessibleName("Yours vs expected, per node")
        self.output_title = plain_label("What your code printed:")
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setFont(_mono())
        self.output.setMaximumHeight(90)
        self.output.setAccessibleName("What your code printed")
        self.next_button = QPushButton()
        self.next_button.clicked.connect(self.next_stage)
        next_row = QHBoxLayout()
        next_row.addWidget(self.next_button)
        next_row.addStretch(1)
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.status)
        column.addLayout(next_row)
        for widget in (self.case_title, self.code, self.mistake_box, self.table,
                       self.output_title, self.output):
            column.addWidget(widget)
        column.addStretch(1)
        self.case: CaseResult | None = None
        self.show_nothing("Press Check (Ctrl+Enter) to run this stage's cases on your code.")

    # --- what is shown --------------------------------------------------------------------
    def show_nothing(self, text: str) -> None:
        self.case = None
        self._set_status(text, None)
        for widget in (self.case_title, self.code, self.mistake_box, self.table,
                       self.output_title, self.output, self.next_button):
            widget.hide()

    def show_busy(self, text: str) -> None:
        self._set_status(text, None)

    def show_report(self, report: CheckReport, stage: int) -> None:
        """The first failing case in stage order; or, all passed, what passed."""
        self.show_nothing("")
        if report.error is not None and not report.stages:
            self._set_status("Your code could not be checked", False)
            self._show_mistake(report.error, report.mistake)
            self.line_found.emit(report.line or 0)
            return
        failure = report.first_failure
        if failure is None:
            ran = [s for s in report.stages if s.stage <= stage]
            cases = sum(len(s.cases) for s in ran)
            before = f" (with the {counted(len(ran) - 1, 'stage')} before it)" \
                if len(ran) > 1 else ""
            self._set_status(f"Stage {stage} passes: all {counted(cases, 'case')} right"
                             f"{before}.", True)
            self.line_found.emit(0)
            return
        self.show_case(*failure, current=stage)

    def show_case(self, stage: StageResult, case: CaseResult, current: int | None = None
                  ) -> None:
        self.case = case
        earlier = current is not None and stage.stage < current
        self._set_status(f"Stage {stage.stage}, before this one, no longer passes" if earlier
                         else f"Stage {stage.stage} does not pass yet", False)
        self.case_title.setText(f"Case “{case.name}”, the code that ran:")
        self.case_title.show()
        if case.code:
            self.code.setPlainText(case.code)
            # as tall as the case, up to ten lines (then it scrolls)
            lines = min(case.code.count("\n") + 1, 10)
            self.code.setFixedHeight(lines * self.code.fontMetrics().lineSpacing()
                                     + 2 * self.code.frameWidth() + 10)
            self.code.show()
        self._show_mistake(case.message, case.mistake)
        # where gradbox's own engine, broken the same way, gives the learner's numbers
        self.playground_button.setVisible(bool(case.playground) and case.mistake is not None
                                          and case.playground_variant in BROKEN_VARIANTS)
        self._fill_table(case)
        if case.output:
            text = case.output
            if len(text) > SHOWN_OUTPUT:
                text = text[:SHOWN_OUTPUT] + f"\n… ({len(case.output) - SHOWN_OUTPUT:,} more " \
                                             "characters not shown)"
            self.output.setPlainText(text)
            self.output_title.show()
            self.output.show()
        self.line_found.emit(case.line or 0)

    def offer_next(self, number: int, title: str) -> None:
        """A button to the stage the pass opened (its title, long, in the tooltip)."""
        self.next_button.setText(f"Go on to stage {number}  ▸")
        self.next_button.setToolTip(f"<p>{html.escape(title)}</p>")
        self.next_button.show()

    def _show_mistake(self, message: str, mistake: str | None) -> None:
        """The case's words, and the mistake's rule unless they already name it."""
        self.message.setText(message)
        self.message.setVisible(bool(message))
        text = mistake_text(mistake)
        known = describe_mistake(mistake) if text and mistake else None
        # the case's words already say it: the rule named in them, or no rule to name
        # (a timeout's, a memory blow-up's message is the whole story)
        said = known is not None and (not known.rule or known.rule in message)
        self.mistake.setText(f"The mistake: {text}" if text and not said else "")
        self.mistake.setVisible(bool(text) and not said)
        self.mistake_box.setVisible(bool(message or text))
        self.playground_button.hide()

    def _fill_table(self, case: CaseResult) -> None:
        graph = case.graph
        self.table.setRowCount(0)
        if graph is None or not graph.nodes:
            return
        wrong_brush = QBrush(QColor(ERROR_BOX[0]))
        first_brush = QBrush(QColor(NOTE_BOX[0]))
        nodes = graph.nodes
        self.table.setRowCount(len(nodes))
        for row, node in enumerate(reversed(nodes)):  # backward order: the output first
            k = len(nodes) - 1 - row
            title = node.label or node.op or "leaf"
            if node.op and node.label:
                title = f"{node.label} ({node.op})"
            if k == graph.first_wrong:
                title += "  ← look here"
            cells = [title, fmt(node.data)]
            data_text, data_wrong = expected_line(node.data, node.expected_data)
            grad_text, grad_wrong = expected_line(node.grad, node.expected_grad)
            cells += [data_text or "—", fmt(node.grad), grad_text or "—"]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)  # a table cell is plain text
                if (column in (1, 2) and data_wrong) or (column in (3, 4) and grad_wrong):
                    item.setBackground(wrong_brush)
                if column == 0 and k == graph.first_wrong:
                    item.setBackground(first_brush)
                self.table.setItem(row, column, item)
        self.table.setMaximumHeight(self.table.horizontalHeader().height()
                                    + sum(self.table.rowHeight(r)
                                          for r in range(min(len(nodes), 8))) + 4)
        self.table.show()

    def _set_status(self, text: str, passed: bool | None) -> None:
        self.status.setText(text)
        if passed is None:
            self.status.setStyleSheet("")
        else:
            back, fore = (PASSED_BACK, PASSED_TEXT) if passed else (ERROR_BOX[0], ERROR_BOX[1])
            self.status.setStyleSheet(f"background: {back}; color: {fore}; padding: 4px;")

    def _open_playground(self) -> None:
        case = self.case
        if case is not None and case.playground and case.playground_variant:
            # the Playground's one line names its steps with ';'
            text = "; ".join(line.strip() for line in case.playground.splitlines()
                             if line.strip())
            self.open_playground.emit(text, {}, case.playground_variant, False, "variables")

    # --- for tests and screen readers ------------------------------------------------------
    def mistake_shown(self) -> str:
        """What the red box says: the case's words and the rule."""
        if not self.mistake_box.isVisibleTo(self):
            return ""
        return "\n".join(w.text() for w in (self.message, self.mistake)
                         if w.isVisibleTo(self))
