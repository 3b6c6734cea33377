"""The current numbers in big type above the plot, as TensorFlow Playground shows them:
training and test loss, training and test accuracy."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QFont, QFontMetrics, QResizeEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from gradbox.formatting import MISSING, number, percent
from gradbox.training.snapshots import Snapshot
from gradbox.views.controller import SessionController
from gradbox.views.label_holder import LabelHolder
from gradbox.views.plots.plotting import TEST, TRAIN, penalty_text

# (key, caption, colour): the curves' colours, so a number and its curve read as one.
FIGURES = (("loss", "Train loss", TRAIN), ("test_loss", "Test loss", TEST),
           ("accuracy", "Train accuracy", TRAIN), ("test_accuracy", "Test accuracy", TEST))
# The captions where the full ones do not fit (their tooltips say them whole): beside the
# Designer in teacher mode at 1024 x 700 "Train accuracy" was cut to "Train accurac".
SHORT = {"loss": "Train", "test_loss": "Test", "accuracy": "Train acc.",
         "test_accuracy": "Test acc."}


def figure_text(key: str, value: float, digits: int = 4) -> str:
    return percent(value) if "accuracy" in key else number(value, digits)


class Headline(QWidget):
    """Four captions over four big numbers, for the step on screen."""

    def __init__(self, controller: SessionController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Current loss and accuracy")
        layout = QGridLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setHorizontalSpacing(8)
        layout.setVerticalSpacing(0)
        big = QFont(self.font())
        big.setPointSizeF(big.pointSizeF() * 1.4)
        big.setBold(True)
        self.values: dict[str, QLabel] = {}
        self.captions: dict[str, QLabel] = {}
        for column, (key, caption, colour) in enumerate(FIGURES):
            label = QLabel(caption)
            label.setStyleSheet("color: #555;")
            value = QLabel(MISSING)
            value.setFont(big)
            # A fixed size: a number's new width must not lay the window out again (and
            # make the plot below it recompute its heat map) at every step.
            # Room for a loss to two digits however small ("0.00012"); more digits where
            # the column has them (see `_fitting_text`).
            metrics = QFontMetrics(big)
            value.setMinimumWidth(metrics.horizontalAdvance(
                "100.0%" if "accuracy" in key else "0.00012"))
            value.setFixedHeight(metrics.height())
            value.setStyleSheet(f"color: {colour};")
            value.setAccessibleName(caption)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(label, 0, column)
            layout.addWidget(LabelHolder(value), 1, column)  # (see views.label_holder)
            self.values[key], self.captions[key] = value, label
        layout.setColumnStretch(len(FIGURES), 1)
        self._full = {key: caption for key, caption, _colour in FIGURES}
        controller.snapshot_changed.connect(self._on_snapshot)
        self._on_snapshot(controller.snapshot)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_captions()

    def _fit_captions(self) -> None:
        """The full captions where the row holds them, else the short ones (never a
        caption cut off: the row's width is given, teacher mode does not grow it)."""
        layout = self.layout()
        margins = layout.contentsMargins()
        shown = [key for key, _c, _colour in FIGURES if not self.captions[key].isHidden()]

        def needed(texts: dict[str, str]) -> int:
            return sum(max(self.values[k].minimumWidth(),
                           self.captions[k].fontMetrics().horizontalAdvance(texts[k]))
                       for k in shown) + layout.horizontalSpacing() * max(len(shown) - 1, 0)

        room = self.width() - margins.left() - margins.right()
        texts = self._full if needed(self._full) <= room else {**self._full, **{
            k: (SHORT[k] + self._full[k][len("Train loss"):] if k == "loss" else SHORT[k])
            for k in SHORT}}
        for key in shown:
            if self.captions[key].text() != texts[key]:
                self.captions[key].setText(texts[key])

    def _fitting_text(self, key: str, value: float) -> str:
        """The figure with as many significant digits (4 down to 2) as its column surely
        shows: a clipped digit would be a wrong number ("0.005368" read "0.00536" at
        1024 px). A column is at least as wide as the figure's minimum and its caption."""
        label = self.values[key]
        room = max(label.minimumWidth(),
                   self.captions[key].fontMetrics().horizontalAdvance(self.captions[key].text()))
        for digits in (4, 3):
            text = figure_text(key, value, digits)
            if label.fontMetrics().horizontalAdvance(text) <= room:
                return text
        return figure_text(key, value, 2)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        last = snapshot.history[-1] if len(snapshot.history) else None
        penalty = penalty_text(snapshot.config)
        for key, caption, _colour in FIGURES:
            value = getattr(last, key) if last is not None else math.nan
            self.values[key].setText(self._fitting_text(key, value))
            # A step's loss and accuracy are measured by its forward pass, before its update.
            tip = (f"{caption} of step {last.step}'s forward pass (before its update)"
                   if last else f"{caption}: no step yet")
            if last is not None and math.isfinite(value) and "accuracy" not in key:
                tip += f": {value!r}"
            if key == "loss" and penalty:
                tip += f" (includes the {penalty} penalty, which the test loss does not)"
            self.values[key].setToolTip(tip)
            self.captions[key].setToolTip(tip)
        self._full["loss"] = "Train loss" + (f" (+{penalty})" if penalty else "")
        # A regression has no classes to get right: no accuracy, not a "–" that says
        # one is missing.
        for key in ("accuracy", "test_accuracy"):
            self.values[key].parentWidget().setVisible(not snapshot.config.is_regression)
            self.captions[key].setVisible(not snapshot.config.is_regression)
        self._fit_captions()
