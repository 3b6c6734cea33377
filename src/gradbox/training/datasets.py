"""Toy 2-D datasets people know, seeded, editable point by point (CSV in/out: files/points_csv).

Labels are class indices 0..k-1 (int64) everywhere in gradbox; two-class losses
that want -1/+1 convert with `gradbox.autograd.losses.signed`. Points are float64 (n, 2).
The formulas for circle, xor, gaussians and spiral are TensorFlow Playground's;
moons follows scikit-learn's make_moons; noise lies in [0, NOISE_MAX = 0.5].
Coordinates lie within ±MAX_COORDINATE.

Regression datasets carry a float `target` per point instead of a class: plane and
multi_gaussian are Playground's two (a target over the plane, in [-1, 1]); sine, abs
and step are 1-D functions y = f(x), whose points are drawn at (x, y) and whose target
is that y -- the network sees x alone. Their `labels` hold the sign of the target
(class 1 where it is positive), so anything that only knows classes still shows sense.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

CLASSIFICATION_KINDS = ("moons", "circle", "xor", "gaussians", "spiral", "blobs")
ONE_D_KINDS = ("sine", "abs", "step")
REGRESSION_KINDS = ("plane", "multi_gaussian", *ONE_D_KINDS)
KINDS = CLASSIFICATION_KINDS + REGRESSION_KINDS
MAX_CLASSES = 6
# The Playground's range: gaussians' variance is defined as 0.5 -> 4 over noise 0 -> 0.5.
NOISE_MAX = 0.5
# Far beyond any toy plane, yet small enough that extents, grids and squares stay finite.
MAX_COORDINATE = 1e6
# The most points a session holds (and so the most a CSV import accepts).
MAX_POINTS = 1_000_000


class DatasetError(ValueError):
    """A dataset file or edit that cannot be used; the message says where and why."""


@dataclass
class Dataset:
    """Points, labels and which points are held out for testing."""

    points: np.ndarray
    labels: np.ndarray
    is_test: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    classes: int = 2
    # One float per point for a regression dataset; None for classification.
    targets: np.ndarray | None = None
    # A 1-D regression dataset: the target is the point's y, the input its x alone.
    one_dimensional: bool = False

    def __post_init__(self) -> None:
        points = np.asarray(self.points, dtype=np.float64)
        if points.size == 0:
            points = points.reshape(0, 2)
        # A blind reshape(-1, 2) would turn two 3-D points into three 2-D ones.
        if points.ndim != 2 or points.shape[1] != 2:
            raise DatasetError(f"points must have shape (n, 2), got {points.shape}")
        self.points = points
        self.labels = np.asarray(self.labels, dtype=np.int64).reshape(-1)
        if len(self.points) != len(self.labels):
            raise DatasetError(f"{len(self.points)} points but {len(self.labels)} labels")
        is_test = np.asarray(self.is_test, dtype=bool).reshape(-1)
        if len(is_test) == 0:
            is_test = np.zeros(len(self.labels), dtype=bool)  # the default: all training
        elif len(is_test) != len(self.labels):
            raise DatasetError(f"{len(self.labels)} points but a test mask of {len(is_test)}")
        self.is_test = is_test
        if not 2 <= self.classes <= MAX_CLASSES:
            raise DatasetError(f"classes must be between 2 and {MAX_CLASSES}, got {self.classes}")
        if not np.all(np.isfinite(self.points)):
            raise DatasetError("every point must have finite coordinates")
        if len(self.points) and np.abs(self.points).max() > MAX_COORDINATE:
            raise DatasetError(f"coordinates must lie within ±{MAX_COORDINATE:g}, got "
                               f"{np.abs(self.points).max():g}")
        # A label outside 0..classes-1 would silently never match any network output.
        if len(self.labels) and not (self.labels.min() >= 0 and self.labels.max() < self.classes):
            raise DatasetError(f"labels must be class numbers 0..{self.classes - 1}, got "
                               f"{self.labels.min()}..{self.labels.max()}")
        if self.targets is not None:
            self.targets = np.asarray(self.targets, dtype=np.float64).reshape(-1)
            if len(self.targets) != len(self.labels):
                raise DatasetError(f"{len(self.labels)} points but {len(self.targets)} targets")
            if not np.all(np.isfinite(self.targets)):
                raise DatasetError("every target must be a finite number")
        elif self.one_dimensional:
            raise DatasetError("a 1-D dataset is a regression dataset: it needs targets")

    @property
    def is_regression(self) -> bool:
        return self.targets is not None

    @property
    def truth(self) -> np.ndarray:
        """What the network is trained to output: the targets, or else the class labels."""
        return self.targets if self.targets is not None else self.labels

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def train(self) -> tuple[np.ndarray, np.ndarray]:
        keep = ~self.is_test
        return self.points[keep], self.labels[keep]

    @property
    def test(self) -> tuple[np.ndarray, np.ndarray]:
        return self.points[self.is_test], self.labels[self.is_test]

    def copy(self) -> Dataset:
        return Dataset(self.points.copy(), self.labels.copy(), self.is_test.copy(), self.classes,
                       None if self.targets is None else self.targets.copy(),
                       self.one_dimensional)

    def add_point(self, x: float, y: float, label: int, test: bool = False,
                  target: float | None = None) -> None:
        """Add a point. A regression point needs its target; a 1-D one takes y as target."""
        if not 0 <= label < self.classes:
            raise DatasetError(f"class {label} does not exist; this dataset has {self.classes}")
        if not (math.isfinite(x) and math.isfinite(y)):
            raise DatasetError(f"point ({x}, {y}) is not finite")
        if max(abs(x), abs(y)) > MAX_COORDINATE:
            raise DatasetError(f"point ({x:g}, {y:g}) lies beyond ±{MAX_COORDINATE:g}")
        if self.targets is not None:
            target = y if self.one_dimensional else target
            if target is None or not math.isfinite(target):
                raise DatasetError(f"a regression point needs a finite target, got {target}")
            self.targets = np.append(self.targets, float(target))
            label = int(target > 0)
        self.points = np.vstack([self.points, [[x, y]]])
        self.labels = np.append(self.labels, np.int64(label))
        self.is_test = np.append(self.is_test, test)

    def nearest(self, x: float, y: float) -> int:
        """Index of the point closest to (x, y), or -1 if there are none."""
        if len(self) == 0:
            return -1
        return int(np.argmin(np.sum((self.points - [x, y]) ** 2, axis=1)))

    def remove_nearest(self, x: float, y: float) -> int:
        index = self.nearest(x, y)
        if index >= 0:
            keep = np.arange(len(self)) != index
            self.points, self.labels, self.is_test = (
                self.points[keep], self.labels[keep], self.is_test[keep])
            if self.targets is not None:
                self.targets = self.targets[keep]
        return index


def same_points(old: Dataset, new: Dataset, indices: np.ndarray) -> np.ndarray:
    """Where the points `old[indices]` sit in `new` (same place, label and split), in the
    same order; those no longer in `new` are left out. After a point is removed the
    indices of the points behind it shift by one: a step's batch must follow its points."""
    where: dict[tuple[float, float, int, bool], list[int]] = {}
    for j in range(len(new)):
        key = (*new.points[j].tolist(), int(new.labels[j]), bool(new.is_test[j]))
        where.setdefault(key, []).append(j)  # type: ignore[arg-type]
    found = []
    for i in np.asarray(indices, dtype=np.int64):
        if not 0 <= i < len(old):
            continue
        key = (*old.points[i].tolist(), int(old.labels[i]), bool(old.is_test[i]))
        places = where.get(key)  # type: ignore[arg-type]
        if places:
            found.append(places.pop(0))  # a duplicate point is matched once
    return np.array(found, dtype=np.int64)


def split(n: int, test_ratio: float, seed: int) -> np.ndarray:
    """A boolean mask choosing round(n * test_ratio) points for the test set."""
    if not 0 <= test_ratio < 1:
        raise DatasetError(f"test ratio must be in [0, 1), got {test_ratio}")
    mask = np.zeros(n, dtype=bool)
    # At least one point stays for training: n=2 at ratio 0.9 would otherwise hold out both.
    n_test = min(round(n * test_ratio), max(n - 1, 0))
    mask[np.random.default_rng(seed + 1).permutation(n)[:n_test]] = True
    return mask


def _balanced(n: int, classes: int) -> np.ndarray:
    return np.arange(n) % classes


def moons(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaving half circles (scikit-learn's make_moons)."""
    n_out = n // 2
    n_in = n - n_out
    t_out = np.linspace(0, math.pi, n_out)
    t_in = np.linspace(0, math.pi, n_in)
    points = np.vstack([
        np.column_stack([np.cos(t_out), np.sin(t_out)]),
        np.column_stack([1 - np.cos(t_in), 1 - np.sin(t_in) - 0.5]),
    ])
    labels = np.concatenate([np.zeros(n_out, np.int64), np.ones(n_in, np.int64)])
    points += rng.normal(scale=noise, size=points.shape)
    return points, labels


def circle(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Half the points inside radius 2.5, half in the ring 3.5..5; class 1 is inside.

    As in the Playground, noise does not move a point: the label is that of a jittered
    copy of it, so noise shows up as wrongly coloured points near the gap.
    """
    radius = 5.0
    inside = (1 - _balanced(n, 2)).astype(bool)
    r = np.where(inside, rng.uniform(0, radius * 0.5, n), rng.uniform(radius * 0.7, radius, n))
    angle = rng.uniform(0, 2 * math.pi, n)
    points = np.column_stack([r * np.sin(angle), r * np.cos(angle)])
    jittered = points + rng.uniform(-radius, radius, (n, 2)) * noise
    labels = (np.hypot(jittered[:, 0], jittered[:, 1]) < radius * 0.5).astype(np.int64)
    return points, labels


def xor(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Class 1 where x and y have the same sign; points kept 0.3 away from the axes.

    As in the Playground, the label is that of a jittered copy of the point (the point
    itself stays put), so noise flips labels near the axes.
    """
    padding = 0.3
    points = rng.uniform(-5, 5, (n, 2))
    points += np.where(points > 0, padding, -padding)
    jittered = points + rng.uniform(-5, 5, (n, 2)) * noise
    labels = (jittered[:, 0] * jittered[:, 1] >= 0).astype(np.int64)
    return points, labels


def gaussians(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    variance = 0.5 + noise / 0.5 * (4.0 - 0.5)  # 0.5 -> 4 as noise 0 -> 0.5
    labels = _balanced(n, 2)
    centres = np.where(labels[:, None] == 1, 2.0, -2.0)
    return centres + rng.normal(scale=math.sqrt(variance), size=(n, 2)), labels


def spiral(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    half = n // 2
    parts, labels = [], []
    for label, (count, delta) in enumerate([(n - half, 0.0), (half, math.pi)]):
        i = np.arange(count)
        r = i / max(count, 1) * 5
        t = 1.75 * i / max(count, 1) * 2 * math.pi + delta
        xy = np.column_stack([r * np.sin(t), r * np.cos(t)])
        parts.append(xy + rng.uniform(-1, 1, (count, 2)) * noise)
        labels.append(np.full(count, 1 - label, np.int64))
    return np.vstack(parts), np.concatenate(labels)


def blobs(n: int, noise: float, rng: np.random.Generator,
          classes: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """k round clusters on a circle of radius 3, spread growing with noise."""
    labels = _balanced(n, classes)
    angle = 2 * math.pi * labels / classes + math.pi / 2
    centres = 3.0 * np.column_stack([np.cos(angle), np.sin(angle)])
    return centres + rng.normal(scale=0.4 + 2 * noise, size=(n, 2)), labels


# --- regression -------------------------------------------------------------------------
def plane(n: int, noise: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Playground's regress-plane: target (x + y) / 10 of a jittered copy, points in ±6."""
    radius = 6.0
    points = rng.uniform(-radius, radius, (n, 2))
    jittered = points + rng.uniform(-radius, radius, (n, 2)) * noise
    return points, (jittered[:, 0] + jittered[:, 1]) / 10.0


# Playground's six bumps: centre x, centre y, sign.
BUMPS = ((-4.0, 2.5, 1.0), (0.0, 2.5, -1.0), (4.0, 2.5, 1.0),
         (-4.0, -2.5, -1.0), (0.0, -2.5, 1.0), (4.0, -2.5, -1.0))


def bumps_target(points: np.ndarray) -> np.ndarray:
    """Playground's multiple gaussians: of the six signed bumps (height falling linearly
    from 1 at the centre to 0 at distance 2), the one largest in size."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    heights = np.stack([sign * np.clip(1 - np.hypot(points[:, 0] - cx, points[:, 1] - cy) / 2,
                                       0, 1) for cx, cy, sign in BUMPS])
    return heights[np.argmax(np.abs(heights), axis=0), np.arange(len(points))]


def multi_gaussian(n: int, noise: float,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    radius = 6.0
    points = rng.uniform(-radius, radius, (n, 2))
    jittered = points + rng.uniform(-radius, radius, (n, 2)) * noise
    return points, bumps_target(jittered)


# The 1-D functions, on x in ±FUNCTION_RANGE, targets within [-1, 1] before noise.
FUNCTION_RANGE = 5.0
FUNCTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sine": np.sin,
    "abs": lambda x: np.abs(x) / (FUNCTION_RANGE / 2) - 1,
    "step": lambda x: np.where(x >= 0, 1.0, -1.0),
}


def function_points(kind: str, n: int, noise: float,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """y = f(x) + N(0, noise²) at n x's drawn uniformly: points (x, y), targets y."""
    x = rng.uniform(-FUNCTION_RANGE, FUNCTION_RANGE, n)
    y = FUNCTIONS[kind](x) + rng.normal(0.0, noise, n)
    return np.column_stack([x, y]), y


GENERATORS: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "moons": moons, "circle": circle, "xor": xor, "gaussians": gaussians,
    "spiral": spiral, "blobs": blobs,
}


def make(kind: str, n: int = 100, noise: float = 0.1, seed: int = 0,
         test_ratio: float = 0.0, classes: int = 2) -> Dataset:
    """Generate a dataset; only blobs takes `classes` (2..6), the others are two-class."""
    if kind not in KINDS:
        raise DatasetError(f"unknown dataset {kind!r}; choose from {', '.join(KINDS)}")
    if n < 2:
        raise DatasetError(f"a dataset needs at least 2 points, got {n}")
    if not 0 <= noise <= NOISE_MAX:
        raise DatasetError(f"noise must be between 0 and {NOISE_MAX}, got {noise}")
    rng = np.random.default_rng(seed)
    if kind in REGRESSION_KINDS:
        if kind in ONE_D_KINDS:
            points, targets = function_points(kind, n, noise, rng)
        else:
            points, targets = (plane if kind == "plane" else multi_gaussian)(n, noise, rng)
        return Dataset(points, (targets > 0).astype(np.int64), split(n, test_ratio, seed), 2,
                       targets, kind in ONE_D_KINDS)
    if kind == "blobs":
        if not 2 <= classes <= MAX_CLASSES:
            raise DatasetError(f"blobs takes 2 to {MAX_CLASSES} classes, got {classes}")
        points, labels = blobs(n, noise, rng, classes)
    else:
        points, labels = GENERATORS[kind](n, noise, rng)
        classes = 2
    return Dataset(points, labels, split(n, test_ratio, seed), classes)
