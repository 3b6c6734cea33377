"""The graph view's drawing written to a file: PNG or SVG, drawn afresh at its own scale."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene

from gradbox.views.graph.items import Style
from gradbox.views.graph.op_scene import OperationScene


def export_png(scene: QGraphicsScene, style: Style, path: str | Path,
               max_side: int = 8000) -> None:
    """The whole scene as a PNG, scaled down if its long side exceeds `max_side`."""
    rect = scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
    scale = min(2.0, max_side / max(rect.width(), rect.height(), 1.0))
    size = QSize(max(1, int(rect.width() * scale)), max(1, int(rect.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(QColor("#ffffff"))
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing
                           | QPainter.RenderHint.TextAntialiasing)
    _render_uncached(scene, style, painter, QRectF(0, 0, size.width(), size.height()), rect)
    if not image.save(str(path), "PNG"):
        raise OSError(f"could not write {path}")


def export_svg(scene: QGraphicsScene, style: Style, path: str | Path) -> None:
    rect = scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(int(rect.width()), int(rect.height())))
    generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    generator.setTitle("gradbox computation graph")
    painter = QPainter(generator)
    if not painter.isActive():  # the file could not be opened: Qt says nothing of it
        raise OSError(f"could not write {path}")
    _render_uncached(scene, style, painter, QRectF(0, 0, rect.width(), rect.height()), rect)


def _render_uncached(scene: QGraphicsScene, style: Style, painter: QPainter, target: QRectF,
                     source: QRectF) -> None:
    # Cached items would be pasted in as the view's bitmaps (blurred, or without text
    # when the view is zoomed out): draw them afresh at the export's own scale, and
    # as nodes, not as the zoomed-out view's boxes.
    cached = [item for item in scene.items()
              if item.cacheMode() != QGraphicsItem.CacheMode.NoCache]
    overview = isinstance(scene, OperationScene) and scene.boxes_shown
    for item in cached:
        item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
    if overview:
        scene.show_boxes(False)
    view_lod = style.lod
    style.lod = target.width() / max(source.width(), 1e-9)  # the export's zoom
    try:
        scene.render(painter, target, source)
    finally:
        style.lod = view_lod
        painter.end()
        for item in cached:
            item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        if overview:
            scene.show_boxes(True)
