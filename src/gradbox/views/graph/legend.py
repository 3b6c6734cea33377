"""The graph view's colour key: a child widget floating over the drawing.

A widget rather than text painted in `drawForeground`: Qt scrolls the viewport's pixels
when the view pans, and a key painted at a fixed window position smeared across the
top of the graph while panning or replaying. A child widget of the view (not of its
viewport, whose children scroll too) is composed by Qt on top and never smears.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QPoint, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QRegion,
)
from PySide6.QtWidgets import QLabel, QWidget

from gradbox.graph import Graph
from gradbox.views.graph.items import NEG, POS, WEIGHT_NEG, WEIGHT_POS, ZERO
from gradbox.views.palette import ON_HIGHLIGHT

Line = tuple[str, QColor | None]  # a text, with a colour swatch or without


class GraphLegend(QWidget):
    """Colour swatches and hints; folds to one line ("▸ key") on a click.

    Drawn from a picture made when its text changes: it sits over the graph, so Qt
    repaints it with every frame of the graph under it, and a rich-text label laid out
    afresh each time cost a step's refresh of the demo graph a third of its time.
    """

    toggled = Signal(bool)  # folded

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("What the colours and lines mean; click to fold or open")
        self.setAccessibleName("Graph key")
        self._label = QLabel()  # never shown: it lays the text out for the picture
        self._label.setTextFormat(Qt.TextFormat.RichText)
        # Dark text on the key's white box, whatever the theme (a dark theme's light
        # text left the box empty).
        self._label.setStyleSheet(f"background: transparent; color: {ON_HIGHLIGHT};")
        self._picture = QPixmap()
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

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._picture)
        painter.end()

    def _render(self) -> None:
        if self._folded:
            rows = ["<tr><td>▸ key</td></tr>"]
        else:
            rows = []
            for text, colour in self._lines:
                # one column: a two-column table spread the swatch rows' text apart
                swatch = (f'<span style="background-color:{colour.name()}; '
                          f'border: 1px solid #555555">&nbsp;&nbsp;&nbsp;&nbsp;</span>&nbsp; '
                          if colour is not None else "")
                rows.append(f"<tr><td>{swatch}{html.escape(text)}</td></tr>")
        self._label.setText('<table cellspacing="0" cellpadding="1">' + "".join(rows)
                            + "</table>")
        self._label.adjustSize()
        text = self._label.size()
        size = QSize(text.width() + 16, text.height() + 10)
        ratio = self.devicePixelRatioF()
        picture = QPixmap(size * ratio)
        picture.setDevicePixelRatio(ratio)
        picture.fill(Qt.GlobalColor.transparent)
        painter = QPainter(picture)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor("#cccccc")))
        painter.setBrush(QColor(255, 255, 255, 230))
        painter.drawRoundedRect(QRectF(0.5, 0.5, size.width() - 1, size.height() - 1), 5, 5)
        painter.end()
        self._label.render(picture, QPoint(8, 5), QRegion(),
                           QWidget.RenderFlag.DrawChildren)
        self._picture = picture
        self.resize(size)
        self.update()


def legend_lines(level: str, show_grads: bool, sample_label: str, has_maps: bool,
                 has_values: bool, shown: Graph | None, graph: Graph | None,
                 expanded: tuple[int, int] | None, path: bool = False) -> list[Line]:
    """What the key says at each level, for what is drawn."""
    if level == "network":
        what = "gradient" if show_grads else "weight"
        lines: list[Line] = [(f"{what} > 0", WEIGHT_POS), (f"{what} < 0", WEIGHT_NEG),
                             (f"line width ∝ |{what}|", None)]
        if has_values and not show_grads:
            lines.append((f"faint: carried little of {sample_label} (|weight × input|)",
                          None))
        if has_maps:
            lines.append(("in a unit's square: its output over the plane", None))
        if has_values:
            lines.append((f"at its bottom: its {'gradient' if show_grads else 'output'} "
                          f"for {sample_label}", None))
        lines.append(("click a unit: its story · double-click: its operations", None))
        return lines
    lines = [("gradient > 0", POS[3]), ("gradient < 0", NEG[3]), ("no gradient", ZERO),
             ("data flows left → right, gradients back", None)]
    if path:
        lines.append((f"dark edges: {sample_label}'s biggest weight × input", None))
    if shown is None:
        return lines
    total = len(graph) if graph is not None else len(shown)
    if shown.members is not None:
        boxes = sum(1 for i in range(len(shown)) if shown.is_group(i))
        lines.append((f"{boxes} boxes stand for {total:,} nodes · double-click one: "
                      "its operations", None))
    elif shown is not graph:
        where = f"neuron {expanded[1]} of layer {expanded[0]}" if expanded else "part"
        lines.append((f"{where}: {len(shown):,} of {total:,} nodes", None))
    else:
        lines.append((f"{total:,} nodes · double border: used twice or more", None))
    lines.append(("wheel: zoom · drag: pan · F: fit · B: step backward", None))
    return lines
