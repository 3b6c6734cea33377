"""A label whose text changes every frame without laying out the window again.

`QLabel.setText` calls `updateGeometry()`, and Qt then lays out the label's parent, and
(`QLayout::activate` calls `updateGeometry()` of the widget it laid out, whatever
changed) every ancestor up to the main window: measured during a W1 Run, 2.2 main-window
layouts per frame and an extra repaint pass of the dock separators, from the loss
curve's readout and the toolbar's step counter alone. Only a widget of fixed size stops
that climb -- or a parent without a layout, which is what `LabelHolder` is: the layout
around it sizes the holder (from the label's size hints when it is laid out for another
reason), and the holder gives the label its whole rectangle.

A text that needs more room than the holder has asks for one layout, once per new
width (the toolbar's "step 9090 · 382 steps/s" was cut to "step 9090 · 382 step" at
1400 px: its room had been set from "step 0"). A shorter text never does.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize
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
        self._asked = QSize(0, 0)  # the largest room asked of the layout so far

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return self.label.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return self.label.minimumSizeHint()

    def event(self, event: QEvent) -> bool:
        # The label's setText posts this to its parent (the holder has no layout).
        if event.type() == QEvent.Type.LayoutRequest:
            wanted = self.label.sizeHint()
            if (wanted.width() > max(self.width(), self._asked.width())
                    or wanted.height() > max(self.height(), self._asked.height())):
                self._asked = self._asked.expandedTo(wanted)
                self.updateGeometry()  # one layout of the window, for more room
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.label.setGeometry(self.rect())
