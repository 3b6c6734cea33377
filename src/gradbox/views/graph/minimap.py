"""The operation graph's overview: every node a dot, the part in the window a frame.

Shown in a corner while the operation level is zoomed in past the whole graph: a
graph read at a legible zoom does not fit, and without an overview a learner loses
where in it they are. A click or a drag moves the window there.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QResizeEvent,
)
from PySide6.QtWidgets import QWidget

_FRAME = QPen(QColor("#d81b60"), 1.5)
_BORDER = QPen(QColor("#bbbbbb"), 1.0)
_BACK = QBrush(QColor(255, 255, 255, 230))


class MiniMap(QWidget):
    """A small picture of the whole drawing with the window's part framed."""

    moved = Signal(QPointF)  # the scene point the user wants in the middle of the window

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Graph overview")
        self.setToolTip("The whole graph; the frame is the part in the window. "
                        "Click or drag to go elsewhere.")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._scene = QRectF()  # what the map shows (scene units)
        self._boxes: list[tuple[QBrush, list[QRectF]]] = []
        self._view = QRectF()  # the window's part (scene units)
        # The drawing rendered once per change: the map is repainted with every frame of
        # the graph under it, and 1,663 boxes each time cost a refresh a third of its time.
        self._picture: QPixmap | None = None

    def set_drawing(self, area: QRectF, boxes: list[tuple[QBrush, list[QRectF]]]) -> None:
        """The drawing's extent and its nodes, grouped by fill (scene units)."""
        self._scene = QRectF(area)
        self._boxes = boxes
        self._picture = None
        self.update()

    def set_view(self, rect: QRectF) -> None:
        if rect != self._view:
            self._view = QRectF(rect)
            self.update()

    def _scale(self) -> tuple[float, float, float]:
        """(scale, dx, dy): scene -> widget pixels, the drawing centred in the widget."""
        area = self._scene
        if area.isEmpty():
            return 1.0, 0.0, 0.0
        scale = min((self.width() - 8) / area.width(), (self.height() - 8) / area.height())
        dx = (self.width() - area.width() * scale) / 2 - area.left() * scale
        dy = (self.height() - area.height() * scale) / 2 - area.top() * scale
        return scale, dx, dy

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        self._picture = None
        super().resizeEvent(event)

    def _render(self) -> QPixmap:
        picture = QPixmap(self.size())
        picture.fill(Qt.GlobalColor.transparent)
        painter = QPainter(picture)
        painter.setPen(_BORDER)
        painter.setBrush(_BACK)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5), 4, 4)
        scale, dx, dy = self._scale()
        painter.translate(dx, dy)
        painter.scale(scale, scale)
        painter.setPen(Qt.PenStyle.NoPen)
        for brush, rects in self._boxes:
            painter.setBrush(brush)
            painter.drawRects(rects)
        painter.end()
        return picture

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if self._picture is None or self._picture.size() != self.size():
            self._picture = self._render()
        painter = QPainter(self)
        painter.drawPixmap(0, 0, self._picture)
        scale, dx, dy = self._scale()
        painter.translate(dx, dy)
        painter.scale(scale, scale)
        pen = QPen(_FRAME)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self._view.intersected(self._scene.adjusted(
            -self._scene.width(), -self._scene.height(), self._scene.width(),
            self._scene.height())))
        painter.end()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self._go(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event.position())
        event.accept()

    def _go(self, pos: QPointF) -> None:
        scale, dx, dy = self._scale()
        self.moved.emit(QPointF((pos.x() - dx) / scale, (pos.y() - dy) / scale))
