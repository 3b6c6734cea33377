"""The stage's text: what to build and why, hints one at a time, "predict it first".

Every string here comes from a stage file a teacher may have written: shown as plain
text, never rich text. Hints open one at a time on request ("Hint 1 of 3"); none gives
the answer away (the stage files promise that, their tests check it). A stage with a
`[predict]` question asks it before a check's answer is shown: the learner types the
number they expect, or skips; then the true number shows beside theirs.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from gradbox.build.stages import Stage
from gradbox.formatting import fmt
from gradbox.views.palette import NOTE_BOX
from gradbox.views.panels.typed import parse_number


def plain_label(text: str = "", *, wrap: bool = True, mono: bool = False) -> QLabel:
    """A label that shows its text exactly as written (a file's text is never markup)."""
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if mono:
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        label.setFont(font)
    return label


class StageText(QWidget):
    """Title, passage, hints and the predict box of one stage."""

    predicted = Signal()  # the learner answered (or skipped) the predict question

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.stage: Stage | None = None
        self.title = plain_label()
        bold = QFont(self.title.font())
        bold.setBold(True)
        bold.setPointSizeF(bold.pointSizeF() * 1.2)
        self.title.setFont(bold)
        self.passage = plain_label()
        self.passage.setSizePolicy(QSizePolicy.Policy.Preferred,
                                   QSizePolicy.Policy.Minimum)
        self.hints = QVBoxLayout()
        self.hint_button = QPushButton("Show a hint")
        self.hint_button.setToolTip("One hint at a time; none gives the answer away")
        self.hint_button.clicked.connect(self.show_next_hint)
        self.shown_hints = 0
        column = QVBoxLayout(self)
        column.setContentsMargins(6, 6, 6, 6)
        column.addWidget(self.title)
        column.addWidget(self.passage)
        column.addLayout(self.hints)
        row = QHBoxLayout()
        row.addWidget(self.hint_button)
        row.addStretch(1)
        column.addLayout(row)
        column.addWidget(self._make_predict())
        column.addStretch(1)

    def _make_predict(self) -> QFrame:
        box = QFrame()
        box.setObjectName("build_predict")
        box.setStyleSheet(f"QFrame#build_predict {{ background: {NOTE_BOX[0]}; "
                          f"border: 1px solid {NOTE_BOX[2]}; border-radius: 4px; }}")
        self.predict_question = plain_label()
        self.predict_code = plain_label(mono=True)
        self.predict_entry = QLineEdit()
        self.predict_entry.setPlaceholderText("your number")
        self.predict_entry.setAccessibleName("Your prediction")
        self.predict_entry.setMaximumWidth(140)
        self.predict_entry.returnPressed.connect(self.commit_prediction)
        self.predict_button = QPushButton("Predict")
        self.predict_button.clicked.connect(self.commit_prediction)
        self.skip_button = QPushButton("Skip")
        self.skip_button.setToolTip("Show the answer without predicting")
        self.skip_button.clicked.connect(self.skip_prediction)
        self.predict_answer = plain_label()
        row = QHBoxLayout()
        row.addWidget(self.predict_entry)
        row.addWidget(self.predict_button)
        row.addWidget(self.skip_button)
        row.addStretch(1)
        column = QVBoxLayout(box)
        column.addWidget(self.predict_question)
        column.addWidget(self.predict_code)
        column.addLayout(row)
        column.addWidget(self.predict_answer)
        self.predict_box = box
        self._predict_done = False
        return box

    def set_stage(self, stage: Stage) -> None:
        self.stage = stage
        self.title.setText(stage.title)
        self.passage.setText(stage.text)
        while self.hints.count():
            item = self.hints.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.shown_hints = 0
        self._update_hint_button()
        predict = stage.predict
        self.predict_box.setVisible(predict is not None)
        self._predict_done = predict is None
        if predict is not None:
            self.predict_question.setText(f"Predict it first: {predict.question}")
            self.predict_code.setText(predict.code)
            self.predict_entry.clear()
            self.predict_entry.setEnabled(True)
            self.predict_button.setEnabled(True)
            self.skip_button.setEnabled(True)
            self.predict_answer.setText("Type the number you expect, then Check shows "
                                        "what your engine does.")

    # --- hints -----------------------------------------------------------------------------
    def show_next_hint(self) -> None:
        if self.stage is None or self.shown_hints >= len(self.stage.hints):
            return
        hint = plain_label(f"Hint {self.shown_hints + 1}: {self.stage.hints[self.shown_hints]}")
        hint.setStyleSheet(f"background: {NOTE_BOX[0]}; color: {NOTE_BOX[1]}; "
                           "padding: 4px; border-radius: 3px;")
        self.hints.addWidget(hint)
        self.shown_hints += 1
        self._update_hint_button()

    def _update_hint_button(self) -> None:
        total = len(self.stage.hints) if self.stage is not None else 0
        left = total - self.shown_hints
        self.hint_button.setVisible(total > 0)
        self.hint_button.setEnabled(left > 0)
        self.hint_button.setText(f"Show hint {self.shown_hints + 1} of {total}" if left
                                 else f"All {total} hints shown")

    def hint_texts(self) -> list[str]:
        return [self.hints.itemAt(i).widget().text() for i in range(self.hints.count())]

    # --- predict first -------------------------------------------------------------------
    def prediction_pending(self) -> bool:
        """The stage asks for a prediction that has not been made (or skipped) yet."""
        return not self._predict_done

    def commit_prediction(self) -> None:
        predict = self.stage.predict if self.stage is not None else None
        if predict is None or self._predict_done:
            return
        try:
            guess = parse_number(self.predict_entry.text())
        except ValueError:
            self.predict_answer.setText("Type a number, such as 4 or -0.5 (or Skip).")
            return
        right = abs(guess - predict.answer) <= 1e-6 * max(1.0, abs(predict.answer))
        verdict = "Right." if right else "Not quite: see why in the passage above."
        self._finish(f"You said {fmt(guess)}; gradbox's engine gives "
                     f"{fmt(predict.answer)}. {verdict}")

    def skip_prediction(self) -> None:
        predict = self.stage.predict if self.stage is not None else None
        if predict is None or self._predict_done:
            return
        self._finish(f"gradbox's engine gives {fmt(predict.answer)}.")

    def _finish(self, text: str) -> None:
        self._predict_done = True
        self.predict_answer.setText(text)
        for widget in (self.predict_entry, self.predict_button, self.skip_button):
            widget.setEnabled(False)
        self.predicted.emit()
