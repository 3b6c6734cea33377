"""What a pyqtgraph axis writes: each tick label's rectangle (in the axis's coordinates)
and its text, as the axis would paint them now."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter


def tick_labels(axis: pg.AxisItem) -> list[tuple[QRectF, str]]:
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    assert specs is not None
    return [(QRectF(rect), text) for rect, _flags, text in specs[2]]
