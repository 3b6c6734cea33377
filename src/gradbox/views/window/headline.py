"""The current numbers in big type above the plot, as TensorFlow Playground shows them:
training and test loss, training and test accuracy."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPalette, QResizeEvent
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from gradbox.formatting import MISSING, number, percent
from gradbox.port.protocol import SessionPort
from gradbox.training.snapshots import Snapshot
from gradbox.views.label_holder import LabelHolder
from gradbox.views.palette import NEXT_ON_DARK
from gradbox.views.plots.plotting import TEST, TRAIN, penalty_text

# (key, caption, colour): the curves' colours, so a number and its curve read as one.
FIGURES = (("loss", "Train loss", TRAIN), ("test_loss", "Test loss", TEST),
           ("accuracy", "Train accuracy", TRAIN), ("test_accuracy", "Test accuracy", TEST))
# The captions where the full ones do not fit (their tooltips say them whole): beside the
# Designer in teacher mode at 1024 x 700 "Train accuracy" was cut to "Train accurac".
SHORT = {"loss": "Train", "test_loss": "Test", "accuracy": "Train acc.",
         "test_accuracy": "Test acc."}


BIG = 1.4  # the numbers' type, in the window's own
# Room kept for a figure however small ("0.00012"), so most steps lay nothing out again.
RESERVE = {"loss": "0.00012", "test_loss": "0.00012", "accuracy": "100.0%",
           "test_accuracy": "100.0%"}


def figure_text(key: str, value: float) -> str:
    """A figure as the loss curve's caption writes it (formatting.number: 4 digits)."""
    return percent(value) if "accuracy" in key else number(value)


def _reserve(key: str, text: str) -> str:
    return max(RESERVE[key], text, key=len)


class Headline(QWidget):
    """Four captions over four big numbers, for the step on screen."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Current loss and accuracy")
        layout = QGridLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.setHorizontalSpacing(8)
        layout.setVerticalSpacing(0)
        self.values: dict[str, QLabel] = {}
        self.captions: dict[str, QLabel] = {}
        for column, (key, caption, _colour) in enumerate(FIGURES):
            label = QLabel(caption)
            # Colours by the palette, not a style sheet: a styled label keeps a font of
            # its own, and the numbers' size is this widget's to set (see _fit_values).
            label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
            value = QLabel(MISSING)
            value.setAccessibleName(caption)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            layout.addWidget(label, 0, column)
            layout.addWidget(LabelHolder(value), 1, column)  # (see views.label_holder)
            self.values[key], self.captions[key] = value, label
        layout.setColumnStretch(len(FIGURES), 1)
        self._full = {key: caption for key, caption, _colour in FIGURES}
        self._colour_values()
        controller.snapshot_changed.connect(self._on_snapshot)
        self._on_snapshot(controller.snapshot)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit_captions()
        self._fit_values()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # teacher mode on or off
            self._fit_values()
            self._fit_captions()
        if event.type() == QEvent.Type.PaletteChange:  # a light or dark theme
            self._colour_values()

    def _colour_values(self) -> None:
        """Each number in its curve's colour; the train figures' blue is too dark to read
        on a dark theme's window (contrast 2.2), where they take the light blue of the
        phase line."""
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        for key, _caption, colour in FIGURES:
            value = self.values[key]
            palette = value.palette()
            shown = NEXT_ON_DARK if dark and colour == TRAIN else colour
            palette.setColor(QPalette.ColorRole.WindowText, QColor(shown))
            value.setPalette(palette)

    def _fit_values(self) -> None:
        """The numbers in big type, every digit the loss curve's caption shows: where
        the row is short of room (teacher mode beside the Designer) the type gets
        smaller, never the number shorter ("0.046" above a caption's "0.04598")."""
        big = QFont(self.font())
        big.setPointSizeF(self.font().pointSizeF() * BIG)
        big.setBold(True)
        shown = [key for key, _c, _colour in FIGURES if not self.captions[key].isHidden()]
        layout = self.layout()
        margins = layout.contentsMargins()
        room = (self.width() - margins.left() - margins.right()
                - layout.horizontalSpacing() * max(len(shown) - 1, 0))
        metrics = QFontMetrics(big)

        def widths(m: QFontMetrics) -> int:
            return sum(max(m.horizontalAdvance(_reserve(key, self.values[key].text())),
                           self.captions[key].fontMetrics().horizontalAdvance(
                               self.captions[key].text()))
                       for key in shown)
        needed = widths(metrics)
        if needed > room > 0:
            # the numbers' share of what does not fit; never below the window's own type
            big.setPointSizeF(max(self.font().pointSizeF(),
                                  big.pointSizeF() * room / needed))
            metrics = QFontMetrics(big)
        for key, label in self.values.items():
            if label.font() != big:
                label.setFont(big)
            width = metrics.horizontalAdvance(_reserve(key, label.text()))
            if label.minimumWidth() != width or label.height() != metrics.height():
                # A fixed size: a number's new width must not lay the window out again
                # (and make the plot below recompute its heat map) at every step.
                label.setMinimumWidth(width)
                label.setFixedHeight(metrics.height())
                holder = label.parentWidget()
                holder.setMinimumSize(label.minimumSize())
                holder.setMaximumHeight(metrics.height())
                holder.updateGeometry()

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

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        last = snapshot.history[-1] if len(snapshot.history) else None
        penalty = penalty_text(snapshot.config)
        for key, caption, _colour in FIGURES:
            value = getattr(last, key) if last is not None else math.nan
            self.values[key].setText(figure_text(key, value))
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
        self._fit_values()
