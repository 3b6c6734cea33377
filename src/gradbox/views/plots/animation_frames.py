"""One frame of a recorded run: the decision boundary beside the loss curve so far.

Drawn with numpy and Pillow, not Qt (this module imports none), so frames are made in the
export's own process while the window stays usable. The heat map is the decision boundary
view's own (views.plots.heatmap): the same colours (`heatmap_colours`: hue the predicted
class, tint the confidence; a regression's predicted number) over the same padded frame
around the data. A `FrameLayout` is fixed
for a whole recording (the plane's extent, the loss axis), so nothing jumps between
frames; `render_frame(snapshot, layout)` is a pure function of the two. `recording` is
what the export's own process draws (gradbox.runner.worker).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from gradbox.files.animation import snapshots_at
from gradbox.formatting import fmt
from gradbox.training.history import History
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.views.palette import CLASS_COLOURS, TEST, TRAIN, rgb
from gradbox.views.plots.heatmap import (
    PADDING,
    heatmap_colours,
    heatmap_resolution,
    value_colours,
    value_scale,
)

BACKGROUND = (255, 255, 255)
INK = (30, 30, 30)
GRID = (225, 225, 225)
TRAIN_LINE, TEST_LINE = rgb(TRAIN), rgb(TEST)  # the loss curve's colours
FUTURE_LINE = (205, 205, 205)  # the steps still to come, faint


PALETTE = [rgb(c) for c in CLASS_COLOURS]


@dataclass(frozen=True)
class FrameLayout:
    """What stays the same in every frame of a recording."""

    width: int
    height: int
    plane: tuple[float, float, float, float]  # x0, x1, y0, y1 of the boundary plot
    last_step: int  # the loss axis runs 0..last_step
    loss_top: float  # and 0..loss_top
    history: History  # the whole run's record: the curve up to each frame's step

    @classmethod
    def for_run(cls, width: int, height: int, points: np.ndarray, history: History,
                last_step: int) -> FrameLayout:
        lo, hi = points.min(axis=0), points.max(axis=0)
        span = np.maximum(hi - lo, 1.0)
        lo, hi = lo - PADDING * span, hi + PADDING * span
        losses = np.asarray(history.column("loss")[:last_step], dtype=np.float64)
        test = np.asarray(history.column("test_loss")[:last_step], dtype=np.float64)
        seen = np.concatenate([losses, test])
        seen = seen[np.isfinite(seen)]
        top = float(np.percentile(seen, 99)) if len(seen) else 1.0
        return cls(int(width), int(height), (float(lo[0]), float(hi[0]), float(lo[1]),
                                             float(hi[1])), int(last_step),
                   nice_ceiling(top), history)


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten at or above `value` (> 0)."""
    if not math.isfinite(value) or value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for factor in (1.0, 2.0, 2.5, 5.0, 10.0):
        if factor * power >= value * (1 - 1e-12):
            return factor * power
    return 10.0 * power


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size)


def _boxes(layout: FrameLayout) -> tuple[int, tuple[int, int, int, int],
                                         tuple[int, int, int, int]]:
    """(title height, boundary box, loss box) as (left, top, right, bottom)."""
    w, h = layout.width, layout.height
    title = max(14, round(h * 0.07))
    margin = max(4, round(min(w, h) * 0.02))
    body = h - title - margin
    side = max(min(body, round(w * 0.55)), 16)
    boundary = (margin, title, margin + side, title + side)
    loss = (boundary[2] + 3 * margin, title, w - margin, title + body - margin)
    return title, boundary, loss


def recording(state: TrainingState, steps: Sequence[int], width: int, height: int,
              ) -> Iterator[np.ndarray]:
    """The frames of `state` at `steps` (replayed, exact), `width` x `height`; the loss
    axis runs to the last of `steps`."""
    layout = FrameLayout.for_run(width, height, np.asarray(state.dataset.points),
                                 state.history, steps[-1])
    return (render_frame(s, layout) for s in snapshots_at(state, steps))


def render_frame(snapshot: Snapshot, layout: FrameLayout) -> np.ndarray:
    """The (height, width, 3) uint8 picture of `snapshot` in `layout`."""
    image = Image.new("RGB", (layout.width, layout.height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    title, boundary, loss = _boxes(layout)
    _draw_boundary(image, draw, snapshot, layout, boundary)
    _draw_loss(draw, snapshot.step, layout, loss)
    record = layout.history[snapshot.step - 1] if snapshot.step > 0 else None
    text = f"step {snapshot.step}"
    if record is not None:
        text += f"   ·   loss {fmt(record.loss)}"
        if not math.isnan(record.accuracy):
            text += f"   ·   accuracy {record.accuracy:.0%}"
    draw.text((boundary[0], title // 2), text, fill=INK, font=_font(max(10, title * 6 // 10)),
              anchor="lm")
    return np.asarray(image, dtype=np.uint8)


def _draw_boundary(image: Image.Image, draw: ImageDraw.ImageDraw, snapshot: Snapshot,
                   layout: FrameLayout, box: tuple[int, int, int, int]) -> None:
    left, top, right, bottom = box
    x0, x1, y0, y1 = layout.plane
    n = heatmap_resolution(len(snapshot.params))
    # Cell centres, row by row from y0 (the view's grid); the image's first row is the top.
    xs = x0 + (np.arange(n) + 0.5) * (x1 - x0) / n
    ys = y0 + (np.arange(n) + 0.5) * (y1 - y0) / n
    gx, gy = np.meshgrid(xs, ys)
    colours = heatmap_colours(snapshot, np.column_stack([gx.ravel(), gy.ravel()]))
    cells = Image.fromarray(colours.reshape(n, n, 3)[::-1].copy(), "RGB")
    image.paste(cells.resize((right - left, bottom - top), Image.Resampling.BILINEAR),
                (left, top))
    draw.rectangle(box, outline=INK)
    points = np.asarray(snapshot.points)
    px = left + (points[:, 0] - x0) / (x1 - x0) * (right - left)
    py = bottom - (points[:, 1] - y0) / (y1 - y0) * (bottom - top)
    radius = max(2.0, (right - left) / 110)
    if snapshot.targets is not None:
        fills = [tuple(c) for c in value_colours(snapshot.targets, tint=1.0,
                                                 scale=value_scale(snapshot.targets)).tolist()]
    else:
        fills = [PALETTE[int(c) % len(PALETTE)] for c in snapshot.labels]
    for x, y, fill, test in zip(px.tolist(), py.tolist(), fills, snapshot.is_test.tolist()):
        if not (left <= x <= right and top <= y <= bottom):
            continue
        shape = (x - radius, y - radius, x + radius, y + radius)
        if test:  # held out: a ring, as the view draws it
            draw.ellipse(shape, fill=BACKGROUND, outline=fill, width=max(1, round(radius / 2)))
        else:
            draw.ellipse(shape, fill=fill, outline=(51, 51, 51))


def _draw_loss(draw: ImageDraw.ImageDraw, step: int, layout: FrameLayout,
               box: tuple[int, int, int, int]) -> None:
    left, top, right, bottom = box
    if right - left < 40 or bottom - top < 40:
        return
    size = max(9, min(layout.width, layout.height) // 30)
    font = _font(size)
    # room on the left for the widest label, above for the key, below for the step axis
    label = max(draw.textlength(fmt(layout.loss_top * k / 4), font=font) for k in range(5))
    plot = (left + round(label) + 6, top + 2 * size, right - size // 2, bottom - 2 * size)
    pl, pt, pr, pb = plot
    for k in range(5):  # a light grid, labelled on the left
        value = layout.loss_top * k / 4
        y = pb - (pb - pt) * k / 4
        draw.line((pl, y, pr, y), fill=GRID)
        draw.text((pl - 4, y), fmt(value), fill=INK, font=font, anchor="rm")
    draw.rectangle(plot, outline=INK)
    draw.text((pl, pb + 3), "0", fill=INK, font=font, anchor="lt")
    draw.text((pr, pb + 3), str(layout.last_step), fill=INK, font=font, anchor="rt")
    draw.text(((pl + pr) / 2, pb + 3), "step", fill=INK, font=font, anchor="mt")
    last = max(layout.last_step, 1)
    history = layout.history

    def line(column: str, upto: int, start: int, colour: tuple[int, int, int]) -> None:
        values = np.asarray(history.column(column)[start:upto], dtype=np.float64)
        steps = np.arange(start + 1, upto + 1)
        ok = np.isfinite(values)
        if ok.sum() < 1:
            return
        xs = pl + steps[ok] / last * (pr - pl)
        ys = pb - np.clip(values[ok] / layout.loss_top, 0, 1) * (pb - pt)
        coords = list(zip(xs.tolist(), ys.tolist()))
        if len(coords) == 1:
            x, y = coords[0]
            draw.ellipse((x - 1, y - 1, x + 1, y + 1), fill=colour)
        else:
            draw.line(coords, fill=colour, width=2)

    line("loss", layout.last_step, step, FUTURE_LINE)
    line("test_loss", step, 0, TEST_LINE)
    line("loss", step, 0, TRAIN_LINE)
    x = pl + step / last * (pr - pl)
    draw.line((x, pt, x, pb), fill=(120, 120, 120))
    # The key, above the plot.
    key_y = top + size // 2
    draw.text((pl, key_y), "training loss", fill=TRAIN_LINE, font=font, anchor="lm")
    if np.isfinite(np.asarray(history.column("test_loss"), dtype=np.float64)).any():
        x_test = pl + draw.textlength("training loss", font=font) + size
        draw.text((x_test, key_y), "test loss", fill=TEST_LINE, font=font, anchor="lm")
