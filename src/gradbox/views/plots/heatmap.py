"""The decision boundary's colours, Qt-free: the heat map of a network's output over the
plane (hue the predicted class, tint the confidence; a regression's predicted number,
orange below zero, blue above) and the points' colours for a regression's targets.

The boundary view paints them with pyqtgraph; an animation export draws them with Pillow
in a process of its own (views.plots.animation_frames), which so imports no Qt.
"""

from __future__ import annotations

import math

import numpy as np

from gradbox.training.snapshots import Snapshot
from gradbox.views.palette import CLASS_COLOURS, rgb

# Heatmap cells per side: 100 for the usual small networks, fewer for big ones, so the
# forward pass over the grid stays near HEATMAP_WORK multiply-adds (a few ms) per frame.
MAX_GRID, MIN_GRID = 100, 32
HEATMAP_WORK = 10_000_000
# The heatmap never reaches the full class colour, so the points on top stay readable.
MAX_TINT = 0.6
# A regression's heat map goes further: its points have dark rims, and the prediction's
# size is all the picture says (at 0.6 the gaussians' bumps were pale).
VALUE_TINT = 0.85
PADDING = 0.15  # margin around the data, as a fraction of its span


_PALETTE = np.array([rgb(c) for c in CLASS_COLOURS], dtype=np.float64)
_WHITE = np.array([255.0, 255.0, 255.0])


def output_colours(output: np.ndarray, loss: str) -> np.ndarray:
    """RGB (n, 3) uint8 for network outputs (n, k): hue = predicted class, tint = confidence.

    One output: the sign picks the class (positive = class 1, as in `losses.predictions`)
    and the confidence is tanh of the score (of half the score for the logistic loss,
    i.e. 2*sigmoid - 1), so |score| >= ~2 is fully tinted. Several outputs: argmax picks
    the class and the softmax probability above chance (1/k) gives the confidence.
    """
    output = np.nan_to_num(np.asarray(output, dtype=np.float64), nan=0.0)
    if output.shape[1] == 1:
        score = output[:, 0]
        cls = (score > 0).astype(np.int64)
        confidence = np.abs(np.tanh(score / 2 if loss == "logistic" else score))
    else:
        k = output.shape[1]
        shifted = output - output.max(axis=1, keepdims=True)
        prob = np.exp(shifted)
        prob /= prob.sum(axis=1, keepdims=True)
        cls = np.argmax(prob, axis=1)
        confidence = (prob.max(axis=1) - 1 / k) / (1 - 1 / k)
    tint = (MAX_TINT * confidence)[:, None]
    rgb = _WHITE + (_PALETTE[cls % len(_PALETTE)] - _WHITE) * tint
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def value_scale(targets: np.ndarray | None) -> float:
    """The size of the largest target (1 without any): where a regression's colours are
    full. Playground's multiple gaussians stay within about ±0.9 and half their targets
    are 0, so at a fixed ±1 their picture was pale; this uses the data's own range."""
    if targets is None:
        return 1.0
    finite = np.abs(np.asarray(targets, dtype=np.float64))
    finite = finite[np.isfinite(finite)]
    largest = float(finite.max()) if len(finite) else 0.0
    return largest if largest > 0 else 1.0


def value_colours(values: np.ndarray, tint: float = VALUE_TINT,
                  scale: float = 1.0) -> np.ndarray:
    """RGB (n, 3) uint8 for regression numbers: orange below 0, blue above, white at 0,
    full strength (times `tint`) at |value| >= `scale` (see `value_scale`)."""
    values = np.nan_to_num(np.asarray(values, dtype=np.float64).reshape(-1), nan=0.0)
    strength = (tint * np.clip(np.abs(values) / scale, 0.0, 1.0))[:, None]
    rgb = _WHITE + (_PALETTE[(values > 0).astype(np.int64)] - _WHITE) * strength
    return np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


def heatmap_resolution(parameters: int) -> int:
    """Cells per side for a network with this many parameters (~ multiply-adds per point)."""
    return int(np.clip(math.isqrt(HEATMAP_WORK // max(parameters, 1)), MIN_GRID, MAX_GRID))


def heatmap_colours(snapshot: Snapshot, grid: np.ndarray) -> np.ndarray:
    """RGB (n*n, 3) for the grid's points: one numpy forward pass, then the colours."""
    with np.errstate(all="ignore"):  # a diverged network paints white, not warnings
        # Single precision: a colour needs 3 digits, and it takes a third of the time.
        output = snapshot.predict(grid, dtype=np.float32)
    if snapshot.targets is not None:  # regression over the plane: the predicted number
        return value_colours(output[:, 0], scale=value_scale(snapshot.targets))
    return output_colours(output, snapshot.config.effective_loss)
