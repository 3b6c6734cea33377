"""Where "fit" puts the drawing: the zoom and centre that show it whole beside the key.

Plain geometry in window pixels and scene units, apart from the view that applies it.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView


def framing(rect: QRectF, port: QRect, left: float, top: float,
            hanging: list[tuple[float, float]], legend: QRectF | None,
            bottom: float) -> tuple[float, float, float, float]:
    """(scale, left, top, right): the zoom that fits `rect` in `port` with `left` and
    `top` pixels kept free, room for the `hanging` labels (width in pixels, start in
    scene units from the drawing's left edge), `bottom` pixels below, and, if given,
    the drawing beside or below the `legend` -- whichever lets it be bigger (in a short,
    wide window the legend's band was half of it)."""

    def framed(left: float, top: float) -> tuple[float, float]:
        height = max(port.height() - 12 - top - bottom, 10)
        room = max(port.width() - 24 - left, 10)
        scale = min(room / rect.width(), height / rect.height(), 2.0)
        # A label hanging off a node d scene units right of the drawing's left edge
        # ends at d*scale + its width: keep that inside the room too. (One wider
        # than the room whatever the scale is left to hang over the edge.)
        for width, d in hanging:
            if d > 0 and room - width > 0:
                scale = min(scale, (room - width) / d)
        right = max([0.0] + [w - rect.width() * scale + d * scale for w, d in hanging])
        return scale, right

    below = (left, top + legend.bottom() + 12) if legend is not None else (left, top)
    scale, right = framed(*below)
    if legend is not None:
        beside = (max(left, legend.right() + 12), top)
        scale_beside, right_beside = framed(*beside)
        if scale_beside > scale * 1.02:
            return scale_beside, beside[0], beside[1], right_beside
    return scale, below[0], below[1], right


def apply(view: QGraphicsView, scene: QGraphicsScene, rect: QRectF, scale: float,
          shift: QPointF) -> None:
    """Zoom `view` to `scale` with `rect`'s centre `shift` pixels up and left of the
    window's."""
    # The scene must reach past the window on every side at this zoom: a scene
    # smaller than the window is centred in it, whatever centerOn asks, and the
    # drawing sat under the legend.
    port = view.viewport().rect()
    reach = rect.adjusted(-port.width() / scale, -port.height() / scale,
                          port.width() / scale, port.height() / scale)
    if not scene.sceneRect().contains(reach):
        scene.setSceneRect(scene.sceneRect().united(reach))
    view.resetTransform()
    view.scale(scale, scale)
    centre = rect.center()
    view.centerOn(QPointF(centre.x() - shift.x() / scale, centre.y() - shift.y() / scale))


def covers(view: QGraphicsView, overlays: list[QRectF], occupied: list[QRectF]) -> bool:
    """Whether any overlay (window pixels) covers any occupied rect (scene units)."""
    for cover in overlays:
        if cover.isEmpty():
            continue
        area = view.mapToScene(cover.adjusted(-4, -4, 4, 4).toRect()).boundingRect()
        if any(area.intersects(rect) for rect in occupied):
            return True
    return False
