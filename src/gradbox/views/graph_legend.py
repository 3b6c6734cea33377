"""The graph view's colour key: a child widget floating over the drawing.

A widget rather than text painted in `drawForeground`: Qt scrolls the viewport's pixels
when the view pans, and a key painted at a fixed window position smeared across the
top of the graph while panning or replaying. A child widget of the view (not of its
viewport, whose children scroll too) is composed by Qt on top and never smears.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QMouseEvent
from PySide6.QtWidgets import QFrame, QLabel, QVBoxLayout, QWidget

Line = tuple[str, QColor | None]  # a text, with a colour swatch or without


class GraphLegend(QFrame):
    """Colour swatches and hints; folds to one line ("▸ key") on a click."""

    toggled = Signal(bool)  # folded

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphLegend")
        self.setStyleSheet("#graphLegend { background: rgba(255, 255, 255, 230); "
                           "border: 1px solid #cccccc; border-radius: 5px; }")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Click to fold or open the key")
        self.setAccessibleName("Graph key")
        self._label = QLabel(self)
        self._label.setTextFormat(Qt.TextFormat.RichText)
        self._label.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self._label.setAccessibleName("Graph key text")
        self._label.setToolTip("What the colours and lines mean; click to fold or open")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 5, 8, 5)
        layout.addWidget(self._label)
        self._lines: list[Line] = []
        self._folded = False
        self._points = 8.5

    def set_lines(self, lines: list[Line]) -> None:
        if lines == self._lines:
            return
        self._lines = list(lines)
        self._render()

    def lines(self) -> list[str]:
        """The texts shown (the folded line only, when folded)."""
        return ["▸ key"] if self._folded else [t for t, _ in self._lines]

    def set_folded(self, folded: bool) -> None:
        if folded != self._folded:
            self._folded = folded
            self._render()

    def folded(self) -> bool:
        return self._folded

    def set_point_size(self, points: float) -> None:
        self._points = points
        font = QFont(self.font())
        font.setPointSizeF(points)
        self._label.setFont(font)
        self._render()

    def rect_in(self, widget: QWidget) -> QRectF:
        """Where the key is, in `widget`'s coordinates (e.g. the view's viewport)."""
        if not self.isVisible():
            return QRectF()
        # a sibling of the viewport, not its child: map through the screen
        top_left = widget.mapFromGlobal(self.mapToGlobal(self.rect().topLeft()))
        return QRectF(top_left.x(), top_left.y(), self.width(), self.height())

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self.toggled.emit(not self._folded)
            event.accept()
            return
        super().mousePressEvent(event)

    def _render(self) -> None:
        if self._folded:
            rows = ["<tr><td>▸ key</td></tr>"]
        else:
            side = int(self._points * 1.3)
            rows = []
            for text, colour in self._lines:
                swatch = (f'<td width="{side + 6}"><table cellspacing="0" '
                          f'style="border: 1px solid #555555"><tr><td width="{side}" '
                          f'height="{int(side * 0.7)}" bgcolor="{colour.name()}"></td></tr>'
                          f'</table></td>') if colour is not None else ""
                span = "" if colour is not None else ' colspan="2"'
                rows.append(f"<tr>{swatch}<td{span}>{html.escape(text)}</td></tr>")
        self._label.setText('<table cellspacing="0" cellpadding="1">' + "".join(rows)
                            + "</table>")
        self._label.adjustSize()
        self.adjustSize()
