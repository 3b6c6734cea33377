"""The loss landscape: the training loss over a 2-D slice of weight space, and the path
the optimizer took, drawn on it.

Pure numpy, no Qt, and a pure function of its request, so the app computes it in a
thread of its own (never the UI thread, never the training process). The slice goes
through the current weights θ:

    L(α, β) = loss(θ + α·d₁ + β·d₂)

with the same loss backward differentiates: the mean over every training point, plus the
L1/L2 penalties. At (0, 0) it is the current training loss (a test checks it against the
engine). Three choices of d₁, d₂:

    "pca"         the two principal directions of the path so far (Li et al. 2018, §7):
                  random directions in a space of hundreds of dimensions are nearly
                  orthogonal to the path, which then shows as a dot; these hold most of it.
    "random"      two random directions, filter-normalised (Li et al. 2018, §4): each
                  neuron's part of the direction is scaled to the norm of that neuron's
                  weights, biases are left out, so every layer's scale is respected.
    "parameters"  two chosen weights: the axes are their own values.

The path is each step's weights projected onto the plane (least squares); its points lie
off the plane by whatever the two directions miss, which `Landscape.captured` reports.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import layer_slices, numpy_forward, parameter_count

MODES = ("pca", "random", "parameters")
# Multiply-adds per landscape: the grid side shrinks for big networks and datasets so one
# landscape takes a fraction of a second (see benchmarks/bench_dynamics.py).
WORK_BUDGET = 1.5e8
MAX_RESOLUTION, MIN_RESOLUTION = 60, 9
# One layer's activations for a chunk of grid points: a few MB stays in cache (measured
# on W1: 0.3 s at 4 MB, 0.7 s at 256 kB, 0.6-1.4 s at 32 MB).
CHUNK_BYTES = 4 * 2**20
MARGIN = 0.3  # room around the path, as a fraction of its extent


class LandscapeError(ValueError):
    """A landscape that cannot be computed; the message says why in the user's words."""


@dataclass(frozen=True)
class Problem:
    """Everything the training loss depends on except the weights."""

    layer_sizes: tuple[int, ...]
    activation: str
    loss: str
    l1: float
    l2: float
    points: np.ndarray  # the training points' network inputs (n, inputs)
    labels: np.ndarray  # class indices, or float targets with `regression`
    regression: bool = False

    @property
    def parameters(self) -> int:
        return parameter_count(self.layer_sizes)

    def losses(self, weights: np.ndarray) -> np.ndarray:
        """The training loss for each row of `weights` (G, P), in chunks: (G,)."""
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        per_row = 8 * len(self.points) * max(self.layer_sizes)
        chunk = max(1, CHUNK_BYTES // max(per_row, 1))
        out = np.empty(len(weights))
        with np.errstate(all="ignore"):  # a diverging corner of the slice is inf, not noise
            for start in range(0, len(weights), chunk):
                w = weights[start: start + chunk]
                scores = numpy_forward(w, self.layer_sizes, self.activation, self.points)
                out[start: start + chunk] = self._loss(scores, w)
        return out

    def _loss(self, scores: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Mean per-sample loss of scores (G, n, k), plus the penalties of weights (G, P)."""
        terms = losses.sample_losses(self.loss, scores, self.labels, self.regression)
        data = np.mean(terms, axis=-1)
        # The penalties as the engine adds them, one parameter at a time (each parameter
        # a Value holding its number in every network of the grid).
        if self.l2 or self.l1:
            params = [Value(column) for column in weights.T]
        if self.l2:
            data = data + self.l2 * losses.l2_penalty(params).data
        if self.l1:
            data = data + self.l1 * losses.l1_penalty(params).data
        return data


@dataclass(frozen=True)
class Request:
    problem: Problem
    center: np.ndarray  # the current weights (P,)
    steps: np.ndarray  # the step numbers of the path's points
    path: np.ndarray  # the weights at those steps (k, P)
    mode: str = "pca"
    axes: tuple[int, int] = (0, 1)  # parameter indices, for mode "parameters"
    seed: int = 0  # for mode "random"
    resolution: int | None = None  # grid side; None: from WORK_BUDGET


@dataclass(frozen=True)
class Landscape:
    alphas: np.ndarray  # grid coordinates along d₁ (n,)
    betas: np.ndarray  # along d₂ (n,)
    loss: np.ndarray  # (n, n): loss[j, i] at (alphas[i], betas[j])
    directions: np.ndarray  # (2, P)
    path_steps: np.ndarray
    path_xy: np.ndarray  # (k, 2) the path projected onto the plane
    path_loss: np.ndarray  # (k,) the loss at the path's true weights
    center_loss: float  # the loss at the current weights: L(0, 0)
    captured: float  # share of the path's movement (variance) that lies in the plane
    mode: str
    seconds: float = 0.0

    @property
    def resolution(self) -> int:
        return len(self.alphas)

    def loss_at(self, alpha: float, beta: float) -> float:
        """The grid value nearest to (alpha, beta)."""
        i = int(np.argmin(np.abs(self.alphas - alpha)))
        j = int(np.argmin(np.abs(self.betas - beta)))
        return float(self.loss[j, i])


def resolution_for(problem: Problem) -> int:
    """The grid side that keeps one landscape near WORK_BUDGET multiply-adds."""
    per_point = max(problem.parameters * max(len(problem.points), 1), 1)
    side = math.isqrt(int(WORK_BUDGET // per_point))
    return int(np.clip(side, MIN_RESOLUTION, MAX_RESOLUTION))


def filter_normalised(center: np.ndarray, layer_sizes: Sequence[int],
                      rng: np.random.Generator) -> np.ndarray:
    """A random direction scaled neuron by neuron to the norm of the neuron's weights."""
    direction = rng.standard_normal(len(center))
    for (nin, nout), where in zip(itertools.pairwise(layer_sizes), layer_slices(layer_sizes)):
        d = direction[where].reshape(nout, nin + 1)
        w = center[where].reshape(nout, nin + 1)
        norms = np.linalg.norm(d[:, :nin], axis=1, keepdims=True)
        d[:, :nin] *= np.linalg.norm(w[:, :nin], axis=1, keepdims=True) / np.maximum(
            norms, 1e-12)
        d[:, nin] = 0.0  # biases: not perturbed (Li et al.)
        direction[where] = d.ravel()
    return direction


def path_directions(offsets: np.ndarray, fallback: np.ndarray) -> tuple[np.ndarray, float]:
    """The two principal directions of the path's offsets from the current weights, and
    the share of the path's variance they hold. With fewer than two independent moves,
    the missing directions come from `fallback` (2, P), made orthogonal."""
    basis: list[np.ndarray] = []
    captured = 1.0
    data = offsets - offsets.mean(axis=0) if len(offsets) > 2 else offsets
    total = float(np.sum(data**2))
    if total > 0:
        q = principal_pair(data, fallback.T)
        variance = np.sum((data @ q) ** 2, axis=0)
        keep = [k for k in range(2) if variance[k] > 1e-12 * total]
        basis = [q[:, k] for k in keep]
        captured = float(np.sum(variance[keep]) / total)
    for candidate in fallback:
        if len(basis) == 2:
            break
        for b in basis:
            candidate = candidate - (candidate @ b) * b
        norm = np.linalg.norm(candidate)
        if norm > 1e-12:
            basis.append(candidate / norm)
    # A principal direction's sign is arbitrary; point d₁ from the start towards now, so
    # the path reads left to right.
    if len(offsets) and offsets[0] @ basis[0] > 0:
        basis[0] = -basis[0]
    # Unit length: the axes read as distances in weight space, so a longer path is a
    # wider picture (what comparing SGD with momentum is about).
    return np.stack(basis), captured


def principal_pair(data: np.ndarray, start: np.ndarray, iterations: int = 200,
                   ) -> np.ndarray:
    """The top two right singular vectors of `data` (k, P) as columns (P, 2), by subspace
    iteration from `start` (P, 2).

    Not np.linalg.svd: on the shared, loaded machine LAPACK's threaded SVD of a 101×337
    path took 1.7-4 s (threads waiting for cores), this takes ~50 ms with the same
    result to 1e-15 when the top two directions are well separated -- and when they are
    not, any pair in their span holds the same share of the path.
    """
    q = np.array(start, dtype=np.float64)
    for _ in range(iterations):
        z = data.T @ (data @ q)
        a = z[:, 0] / max(float(np.linalg.norm(z[:, 0])), 1e-300)
        b = z[:, 1] - (a @ z[:, 1]) * a
        norm = float(np.linalg.norm(b))
        if norm < 1e-12 * max(float(np.linalg.norm(z[:, 1])), 1e-300):
            b = start[:, 1] - (a @ start[:, 1]) * a  # rank one: any orthogonal direction
            norm = float(np.linalg.norm(b))
        q = np.column_stack([a, b / max(norm, 1e-300)])
    return q


def directions_for(request: Request) -> tuple[np.ndarray, float]:
    center, sizes = request.center, request.problem.layer_sizes
    if request.mode == "parameters":
        i, j = request.axes
        if i == j or not (0 <= i < len(center) and 0 <= j < len(center)):
            raise LandscapeError("choose two different weights for the axes")
        d = np.zeros((2, len(center)))
        d[0, i] = d[1, j] = 1.0
        return d, math.nan
    rng = np.random.default_rng(request.seed)
    random = np.stack([filter_normalised(center, sizes, rng) for _ in range(2)])
    if request.mode == "random":
        if not np.all(np.linalg.norm(random, axis=1) > 0):
            raise LandscapeError("every weight is 0, so a filter-normalised direction is "
                                 "0 too; use the path's directions or two weights")
        return random, math.nan
    if request.mode != "pca":
        raise LandscapeError(f"mode must be one of {', '.join(MODES)}, got {request.mode!r}")
    return path_directions(request.path - center, random)


def project(offsets: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """Least-squares coordinates (k, 2) of offsets (k, P) in the plane of two directions."""
    if len(offsets) == 0:
        return np.zeros((0, 2))
    # The normal equations of a 2-column least-squares problem: a 2×2 solve.
    gram = directions @ directions.T
    return np.linalg.solve(gram, directions @ offsets.T).T


def extent(path_xy: np.ndarray, mode: str) -> tuple[tuple[float, float], tuple[float, float]]:
    """The (alpha, beta) ranges: the path and the current weights with a margin; at least
    ±1 for random directions (Li et al.'s plots) and ±0.5 otherwise."""
    least = 1.0 if mode == "random" else 0.5
    ranges = []
    for k in range(2):
        values = np.append(path_xy[:, k] if len(path_xy) else [], 0.0)
        lo, hi = float(values.min()), float(values.max())
        pad = MARGIN * max(hi - lo, 1e-9)
        ranges.append((min(lo - pad, -least), max(hi + pad, least)))
    return ranges[0], ranges[1]


def compute(request: Request) -> Landscape:
    """The landscape for a request (runs anywhere; takes well under a second)."""
    started = time.perf_counter()
    problem = request.problem
    if len(problem.points) == 0:
        raise LandscapeError("there are no training points, so there is no loss to draw")
    directions, captured = directions_for(request)
    offsets = request.path - request.center
    path_xy = project(offsets, directions)
    (a0, a1), (b0, b1) = extent(path_xy, request.mode)
    n = request.resolution or resolution_for(problem)
    alphas, betas = np.linspace(a0, a1, n), np.linspace(b0, b1, n)
    # Exactly 0 on a grid line when 0 is inside, so the grid holds the current loss.
    alphas[np.argmin(np.abs(alphas))] = 0.0
    betas[np.argmin(np.abs(betas))] = 0.0
    ga, gb = np.meshgrid(alphas, betas)
    weights = (request.center + ga.reshape(-1, 1) * directions[0]
               + gb.reshape(-1, 1) * directions[1])
    grid = problem.losses(weights).reshape(n, n)
    path_loss = problem.losses(request.path) if len(request.path) else np.zeros(0)
    center_loss = float(problem.losses(request.center[None, :])[0])
    return Landscape(alphas, betas, grid, directions, np.asarray(request.steps), path_xy,
                     path_loss, center_loss, captured, request.mode,
                     time.perf_counter() - started)
