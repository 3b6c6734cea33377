"""A neuron's map at network level is drawn smooth, not in blocks (issue 32, cosmetic):
its 20x20 samples were drawn unsmoothed into a 48-unit square, blocks of 4-5 pixels at
QT_SCALE_FACTOR=2 (2560x1440); smoothed, one unit's map still takes nothing of its
neighbour's in the layer's shared image."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QStyleOptionGraphicsItem

from gradbox.views.graph.items import UNIT_R, Style, Unit

RES = 20
LEFT, RIGHT, NEIGHBOUR = QColor(240, 140, 20), QColor(20, 110, 200), QColor(0, 200, 0)


def _layer_image() -> QImage:
    """Two units' maps stacked: the first orange on its left half and blue on its right,
    the second all green."""
    image = QImage(RES, 2 * RES, QImage.Format.Format_ARGB32)
    for y in range(2 * RES):
        for x in range(RES):
            colour = NEIGHBOUR if y >= RES else LEFT if x < RES // 2 else RIGHT
            image.setPixelColor(x, y, colour)
    return image


def _painted(dpr: float) -> QImage:
    unit = Unit(1, 0, "", Style())
    unit.image, unit.source = _layer_image(), QRectF(0, 0, RES, RES)
    side = int(2 * UNIT_R)
    out = QImage(int(side * dpr), int(side * dpr), QImage.Format.Format_ARGB32)
    out.setDevicePixelRatio(dpr)
    out.fill(Qt.GlobalColor.white)
    painter = QPainter(out)
    painter.translate(UNIT_R, UNIT_R)
    unit.paint(painter, QStyleOptionGraphicsItem())
    painter.end()
    return out


def test_a_neurons_map_is_smooth_at_scale_two_and_keeps_to_its_own(qapp) -> None:  # type: ignore[no-untyped-def]
    out = _painted(2.0)
    middle = out.height() // 2
    # Across the edge between orange and blue, colours in between: not one jump.
    row = [out.pixelColor(x, middle) for x in range(8, out.width() - 8)]
    between = [c for c in row if c not in (LEFT, RIGHT)
               and min(LEFT.blue(), RIGHT.blue()) < c.blue() < max(LEFT.blue(), RIGHT.blue())]
    assert len(between) >= 4, [c.name() for c in row]
    # No green from the map stacked under it, at its bottom edge either.
    column = [out.pixelColor(out.width() // 4, y) for y in range(4, out.height() - 4)]
    assert not any(c.green() > c.red() + 40 and c.green() > c.blue() + 40 for c in column)
