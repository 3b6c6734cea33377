"""Where the graph view looks: "fit" shows the drawing whole beside the key, a level
opens readable, and each level keeps the frame the user gave it.

`framing`, `apply` and `covers` are plain geometry in window pixels and scene units;
`Framer` keeps each level's frame for one graph view: it is given the Qt view it zooms,
the levels (`Levels`) and the overlays whose room it keeps free, never the `GraphView`.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRect, QRectF
from PySide6.QtGui import QTransform
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView

from gradbox.views.graph.items import TEXT_LOD, UNIT
from gradbox.views.graph.levels import LEVELS, Levels
from gradbox.views.graph.overlays import GraphOverlays

# The smallest text an operation graph opens with, in points on screen (the node's
# font size times the zoom): a graph "fit" would draw smaller opens at the zoom that
# makes it this size, on its loss end, and pans (the mini-map shows the rest).
READABLE_PT = 9.0
# The network level opens with its units at least this many pixels wide: smaller, the
# heat maps are specks and their values do not fit (a wide layer scrolls instead, with
# the mini-map showing where the window is).
MIN_UNIT_PX = 40.0


def readable_zoom(text_pt: float) -> float:
    """The zoom at which text of `text_pt` points (at 100 %) is READABLE_PT on screen."""
    return READABLE_PT / max(text_pt, 1e-6)


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


class Framer:
    """Each level's frame in one graph view: fitted, opened readable, or the user's.

    A level stays "auto" -- framed again when the window or the drawing changes --
    until the user zooms or pans it; F makes it fit everything from then on.
    """

    def __init__(self, view: QGraphicsView, levels: Levels, overlays: GraphOverlays) -> None:
        self.view = view
        self.levels = levels
        self.overlays = overlays
        self.fitted = dict.fromkeys(LEVELS, False)
        # whether the level is still framed as fit() left it (then a resize refits)
        self.auto = dict.fromkeys(LEVELS, True)
        # how a level frames itself while auto: "open" (readable, see reframe) or "fit"
        self.mode = dict.fromkeys(LEVELS, "open")
        self.frames: dict[str, tuple[QTransform, QPointF]] = {}  # a level's own frame

    # --- what happened ------------------------------------------------------------------
    def user_framed(self) -> None:
        """The user zoomed or panned: keep their frame."""
        self.auto[self.levels.shown] = False

    def leave(self, level: str) -> None:
        """Remember `level`'s frame: one view shows both scenes with one transform (the
        network came back at the operation level's zoom, a speck)."""
        view = self.view
        self.frames[level] = (view.transform(),
                              view.mapToScene(view.viewport().rect().center()))

    def enter(self, level: str) -> None:
        """Frame `level` as it opens, or as the user left it."""
        if not self.fitted[level] or self.auto[level] or level not in self.frames:
            self.reframe()  # the window may have changed while the other level showed
        else:
            transform, centre = self.frames[level]
            self.view.setTransform(transform)
            self.view.centerOn(centre)

    def drawing_changed(self, level: str | None = None) -> None:
        """New items (sizes, a structure): frame `level` (all, if None) anew when shown."""
        for name in (LEVELS if level is None else (level,)):
            self.fitted[name] = False
        if level is None or level == self.levels.shown:
            self.reframe()

    def keep_framed(self) -> None:
        """Frame the level again unless the user zoomed or panned since it was framed."""
        if self.auto.get(self.levels.shown):
            self.reframe()

    def fit_everything(self) -> None:
        """Fit, the user's choice: from now on a resize keeps everything in view too."""
        self.mode[self.levels.shown] = "fit"
        self.fit()

    # --- framing --------------------------------------------------------------------------
    def _scale(self) -> float:
        return float(self.view.transform().m11())

    def fit(self) -> None:
        """Zoom so the whole level fits in the window.

        The key and the replay bar float over the drawing: first the drawing gets the
        whole window, and only if one of them would then cover part of it is it framed
        beside or below them (a network's corners are mostly empty: keeping a band free
        for the key cost its units a fifth of their size).
        """
        view = self.view
        level = self.levels.shown
        scene = self.levels.scene()
        if view.scene() is not scene:
            view.setScene(scene)
        rect, left, top, hanging = self._fit_frame()
        if rect.isEmpty():
            return
        self._frame(rect, left, top, hanging, overlays=False)
        if self._overlays_cover_drawing():
            self._frame(rect, left, top, hanging, overlays=True)
            if (level == "network" and self.overlays.may_fold_for_room()
                    and UNIT * self._scale() < MIN_UNIT_PX):
                # The open key would cost the units their readable size: it folds to
                # one line ("▸ key", a click opens it) and the units get the room.
                self.overlays.folded = True
                self.overlays.update()
                self._frame(rect, left, top, hanging, overlays=False)
                if self._overlays_cover_drawing():
                    self._frame(rect, left, top, hanging, overlays=True)
        self.fitted[level] = True
        self.auto[level] = True

    def reframe(self) -> None:
        """Frame the level as it opens: everything, unless at that size its text would be
        too small to read -- then at a readable zoom, with the mini-map showing the rest:
        an operation graph on its loss end, where backward starts; a network with its
        units MIN_UNIT_PX wide, on the middle of its columns from the inputs on."""
        self.fit()
        view = self.view
        level = self.levels.shown
        if self.mode[level] != "open":
            return
        if level == "network":
            self._open_network()
            return
        ops_scene = self.levels.operations
        nodes, shown = ops_scene.nodes, ops_scene.shown
        readable = readable_zoom(ops_scene.style.text_pt)
        if not nodes or shown is None or self._scale() >= readable - 1e-9:
            return  # whole, and its text readable: a small graph is best seen whole
        view.resetTransform()
        view.scale(readable, readable)
        port = view.viewport().rect()
        drawing = ops_scene.whole_rect()
        if drawing.width() * readable <= port.width() - 8 \
                and drawing.height() * readable <= port.height() - 8:
            # Whole at the readable zoom, only not with fit's margins: centred, whole.
            view.centerOn(drawing.center())
        elif (focus := ops_scene.focus_point()) is not None:
            # A neuron opened by a double-click: its operations, not the loss end (they
            # showed only after Fit).
            view.centerOn(focus)
        else:
            root = nodes[shown.root].pos()
            right = root.x() + ops_scene.style.node_w / 2 + 24 / readable
            view.centerOn(QPointF(right - port.width() / 2 / readable, root.y()))
        self.fitted["operation"] = True
        self._fold_key_if_covering()

    def _fold_key_if_covering(self) -> None:
        """Opened at a readable zoom, part of the drawing runs under the key: unless the
        user opened it, the key folds to one line ("▸ key") rather than hide it."""
        overlays = self.overlays
        if overlays.may_fold_for_room() and self._overlays_cover_drawing(key_only=True):
            overlays.folded = True
            overlays.update()

    def _open_network(self) -> None:
        """Units at least MIN_UNIT_PX wide, when fitting everything made them smaller."""
        view, network = self.view, self.levels.network
        if network.weights is None:
            return
        scale = MIN_UNIT_PX / UNIT
        if self._scale() >= scale:
            return
        drawing = network.drawing_rect()
        port = view.viewport().rect()
        half_w = port.width() / 2 / scale
        view.resetTransform()
        view.scale(scale, scale)
        # the inputs at the left edge (past the key), unless the width fits whole
        left = drawing.left() - (self.overlays.legend_rect().right() + 16) / scale
        x = drawing.center().x() if drawing.width() <= 2 * half_w - 24 / scale \
            else left + half_w
        view.centerOn(QPointF(x, drawing.center().y()))
        self.fitted["network"] = True
        self._fold_key_if_covering()

    def _frame(self, rect: QRectF, left: float, top: float,
               hanging: list[tuple[float, float]], overlays: bool) -> None:
        view = self.view
        marks = self.levels.shown == "operation" and bool(self.levels.operations.landmarks)
        # The landmarks show only below readable zoom: a drawing that fits at a readable
        # zoom without them (a small graph) needs no room for them.
        scale, left_, top_, right = self._framing(
            rect, *((0.0, 0.0, []) if marks else (left, top, hanging)), overlays=overlays)
        if marks and scale < TEXT_LOD:
            scale, left_, top_, right = self._framing(rect, left, top, hanging,
                                                      overlays=overlays)
        bottom = self.overlays.bottom_room() if overlays else 0.0
        apply(view, view.scene(), rect, scale,
              QPointF((left_ - right) / 2, (top_ - bottom) / 2))

    def _framing(self, rect: QRectF, left: float, top: float,
                 hanging: list[tuple[float, float]], overlays: bool = True
                 ) -> tuple[float, float, float, float]:
        keyed = self.overlays.legend_wanted and overlays
        return framing(rect, self.view.viewport().rect(), left, top, hanging,
                       self.overlays.legend_rect() if keyed else None,
                       self.overlays.bottom_room() if overlays else 0.0)

    def _overlays_cover_drawing(self, key_only: bool = False) -> bool:
        """Whether the key (or the replay bar) covers a unit, a node or a header."""
        view = self.view
        cover = [self.overlays.legend_rect()]
        bar = self.overlays.replay_bar
        if bar.isVisibleTo(view) and not key_only:
            port = view.viewport().geometry()
            cover.append(QRectF(bar.geometry().translated(-port.topLeft())))
        if self.levels.shown == "network":
            occupied = self.levels.network.occupied(max(self._scale(), 1e-9))
        else:
            occupied = self.levels.operations.occupied()
        return covers(view, cover, occupied)

    def _fit_frame(self) -> tuple[QRectF, float, float, list[tuple[float, float]]]:
        """What fit() frames: the drawing (scene units), the pixels its constant-size
        labels need on the left and top, and the labels that may hang over its right
        edge as (width in pixels, start in scene units from the drawing's left edge).

        The scene's own bounding rect would not do: a label that ignores the zoom
        counts there as if drawn at scale 1, so at "fit" it hung over the window's edge.
        """
        view = self.view
        level, ops_scene, network = (self.levels.shown, self.levels.operations,
                                     self.levels.network)
        if level == "operation" and ops_scene.edges is not None and ops_scene.nodes:
            rect = ops_scene.whole_rect()
            left = top = 0.0
            hanging: list[tuple[float, float]] = []
            for item, beside in zip(ops_scene.landmarks, ops_scene.landmark_beside):
                box = item.boundingRect()
                if beside:
                    left = max(left, box.width() + 14)
                else:
                    top = max(top, box.height() + 4)
                    hanging.append((box.width(), item.pos().x() - rect.left()))
            return rect, left, top, hanging
        if level == "network" and network.weights is not None:
            return network.drawing_rect(), 0.0, network.header_height(), []
        return view.scene().itemsBoundingRect(), 0.0, 0.0, []
