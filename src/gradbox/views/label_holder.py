"""A label whose text changes every frame without laying out the window again.

`QLabel.setText` calls `updateGeometry()`, and Qt then lays out the label's parent, and
(`QLayout::activate` calls `updateGeometry()` of the widget it laid out, whatever
changed) every ancestor up to the main window: measured during a W1 Run, 2.2 main-window
layouts per frame and an extra repaint pass of the dock separators, from the loss
curve's readout and the toolbar's step counter alone. Only a widget of fixed size stops
that climb -- or a parent without a layout, which is what `LabelHolder` is: the layout
around it sizes the holder (from the label's size hints when it is laid out for another
reason), and the holder gives the label its whole rectangle.

Use it for labels whose size does not follow their text (a fixed height, a width set by
the layout or a minimum): a longer text is not given more room until the next layout.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget


class LabelHolder(QWidget):
    """Holds one label, sized by the layout the holder is in (see the module)."""

    def __init__(self, label: QLabel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = label
        label.setParent(self)
        self.setSizePolicy(label.sizePolicy())
        self.setMinimumSize(label.minimumSize())
        self.setMaximumSize(label.maximumSize())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.label.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.label.minimumSizeHint()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
