"""A log axis whose labels never overlap, however little or much of a decade it shows.

pyqtgraph labels a log axis at whole decades, and when fewer than about three decades
show it adds the 2..9 multiples of each decade as one more level and labels them all:
on 1.2x to 3x of a range the labels pile up ("0.0008 0.0009 0.001" in 15 pixels), and on
less than a factor of two there may be no tick at all. Here the labels are chosen as a
person would: the finest of a list of nice sets (every k-th decade; 1, 2, 5 of each
decade; 1..9; then evenly spaced nice numbers inside one decade, 1.1, 1.2, ...) whose
labels, measured with the font they are drawn in, leave a label's height of space
between neighbours; the next finer set gives unlabelled minor ticks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QFont, QFontMetricsF

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_DECADE_STEPS = (1, 2, 3, 5, 10, 20, 50, 100)  # whole decades between two labels
_MANTISSAS = ((1, 3), (1, 2, 5), (1, 2, 3, 5), (1, 2, 3, 4, 5, 6, 7, 8, 9))
LINEAR_SPAN = math.log10(5)  # evenly spaced labels only on less than a factor of 5
_MAX_TICKS = 60  # a set with more ticks than this is never readable: not even built
COMFORT = 1.7  # labels' centres at least this many label sizes apart, when possible
MINIMUM = 1.15  # ... and never closer than this (a fifth of a label's height between)
MINOR_PIXELS = 4.0  # unlabelled ticks closer than this would read as a grey smear


def label(value: float, digits: int, power: bool = False) -> str:
    """`value` (> 0) rounded to `digits` significant digits: 0.0025, or with `power` as a
    power of ten, 2.5·10⁻⁵ or 10⁻⁵ (shorter than 2.5e-05 on a narrow axis)."""
    rounded = float(f"{value:.{digits}g}")
    if not power:
        return f"{rounded:.15f}".rstrip("0").rstrip(".")
    if rounded == 1:
        return "1"
    mantissa, exponent = f"{rounded:.{digits - 1}e}".split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    ten = "10" + str(int(exponent)).translate(_SUPERSCRIPT)
    return ten if mantissa == "1" else f"{mantissa}·{ten}"


def labels(values: Sequence[float]) -> list[str]:
    """The shortest labels (fewest significant digits) that tell every value apart and
    write each exactly, so 1.05 and 1.1 never both read "1.1". Powers of ten for all if
    one is below 0.001 or from 10⁴ on (10⁻⁶, 10⁻⁴, 10⁻², never 10⁻⁶, 0.0001, 0.01)."""
    power = any(not 1e-3 <= v < 1e4 for v in values)
    for digits in range(1, 16):
        rounded = [float(f"{v:.{digits}g}") for v in values]
        exact = all(math.isclose(r, v, rel_tol=1e-9) for r, v in zip(rounded, values))
        if exact and len(set(rounded)) == len(rounded):
            return [label(v, digits, power) for v in values]
    return [label(v, 15, power) for v in values]


def candidates(lo: float, hi: float) -> Iterator[np.ndarray]:
    """Sets of tick values between 10**lo and 10**hi, coarse to fine, each a nice set."""
    span = hi - lo
    for k in reversed(_DECADE_STEPS):
        if k <= max(span, 1.0):
            exponents = np.arange(math.ceil(lo / k), math.floor(hi / k) + 1) * k
            if len(exponents) <= _MAX_TICKS:
                yield 10.0 ** exponents.astype(np.float64)
    if span > 20:
        return
    decades = np.arange(math.floor(lo), math.ceil(hi) + 1, dtype=np.float64)
    for mantissas in _MANTISSAS:
        yield np.sort(np.outer(10.0 ** decades, mantissas).ravel())
    if span >= LINEAR_SPAN:  # over more, even steps crowd the top and leave the bottom bare
        return
    # Inside a decade or so: evenly spaced nice numbers, 5, 2 and 1 times a power of ten.
    low, high = 10.0 ** lo, 10.0 ** hi
    for exponent in range(math.floor(hi), math.floor(lo) - 4, -1):
        for m in (5, 2, 1):
            step = m * 10.0 ** exponent
            first, last = math.ceil(low / step), math.floor(high / step)
            if last - first + 1 > _MAX_TICKS:
                return
            # Multiples of the step, rounded to it so that 3 * 0.1 prints as 0.3.
            yield np.round(np.arange(first, last + 1) * step, 12 - exponent)


def _among(values: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Which of `values` are also in `others` (to rounding)."""
    if not len(others):
        return np.zeros(len(values), dtype=bool)
    return np.isclose(values[:, None], others[None, :], rtol=1e-9, atol=0).any(axis=1)


class LogAxis(pg.AxisItem):
    """An axis that, in log mode, draws labels chosen by `choose` (linear mode unchanged)."""

    def __init__(self, orientation: str, **kwargs: object) -> None:
        super().__init__(orientation, **kwargs)
        self.setStyle(maxTextLevel=0)  # only the chosen set is labelled; minor ticks are not
        # The last choice: an axis asks again at every repaint of an unchanged range.
        self._chosen_for: tuple[object, ...] | None = None
        self._chosen: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))

    def _font(self) -> QFont:
        # The font the labels are painted with: the tick font if one is set, else the
        # application's (what a QPicture's painter starts with).
        return self.style["tickFont"] or QFont()

    def label_sizes(self, texts: Sequence[str]) -> np.ndarray:
        """How much room each label takes along the axis, in pixels."""
        metrics = QFontMetricsF(self._font())
        if self.orientation in ("left", "right"):
            return np.full(len(texts), metrics.height())
        return np.array([metrics.horizontalAdvance(t) for t in texts])

    def choose(self, lo: float, hi: float, size: float) -> tuple[np.ndarray, np.ndarray]:
        """(labelled, minor) tick values for the log10 range lo..hi drawn over `size` px."""
        lo, hi = sorted((lo, hi))
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo <= 0 or size <= 0:
            return np.zeros(0), np.zeros(0)
        key = (lo, hi, size, self.width(), self._font().key())
        if key == self._chosen_for:
            return self._chosen
        sets = []  # every nice set, only its values inside the range
        for values in candidates(lo, hi):
            where = np.log10(values)  # all > 0: nice numbers and powers of ten
            sets.append(values[(where >= lo) & (where <= hi)])
        # Each set's values whose label fits, and how far apart those are (label sizes).
        # A set with more labels than the axis could hold even packed is not measured.
        most = size / (MINIMUM * QFontMetricsF(self._font()).height()) + 3
        fitting = []
        for i, values in enumerate(sets):
            if len(values) > 0 and (self.orientation not in ("left", "right")
                                    or len(values) <= most):
                shown, room = self._fit_in(values, lo, hi, size)
                if len(shown):
                    fitting.append((i, shown, room))
        best = minor = np.zeros(0)
        if fitting:
            # The most labels at a comfortable spacing (two at least), else the most that
            # can be read at all; on a tie the nicer set, i.e. the earlier one.
            comfortable = [f for f in fitting if len(f[1]) >= 2 and f[2] >= COMFORT]
            readable = [f for f in fitting if f[2] >= MINIMUM] or fitting[:1]
            chosen, best, _ = max(comfortable or readable, key=lambda f: (len(f[1]), -f[0]))
            minor = self._minor(sets, chosen, best, lo, hi, size)
        self._chosen_for, self._chosen = key, (best, minor)
        return best, minor

    @staticmethod
    def _minor(sets: list[np.ndarray], chosen: int, best: np.ndarray, lo: float, hi: float,
               size: float) -> np.ndarray:
        """Unlabelled ticks: the next finer set that holds the chosen one, if its ticks
        stand apart (none otherwise)."""
        coarse = sets[chosen]
        for values in sets[chosen + 1:]:
            if len(values) <= len(coarse) or not _among(coarse, values).all():
                continue
            where = (np.log10(values) - lo) / (hi - lo) * size
            if np.min(np.diff(np.sort(where))) >= MINOR_PIXELS:
                return values[~_among(values, best)]
            break
        return np.zeros(0)

    def text_room(self) -> float:
        """How wide a label may be on a left or right axis (pyqtgraph drops wider ones)."""
        return self.width() - max(0, self.style["tickLength"]) - self.style["tickTextOffset"][0]

    def width_for(self, text: str) -> int:
        """The axis width that holds `text` as a label: for a fixed width that does not
        jump as the range (and so the labels) change."""
        width = QFontMetricsF(self._font()).horizontalAdvance(text)
        return math.ceil(width + max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0])

    def _fit_in(self, values: np.ndarray, lo: float, hi: float,
                size: float) -> tuple[np.ndarray, float]:
        """The values whose label lies whole inside the axis (pyqtgraph drops the others),
        and the closest two labels' distance in labels' sizes (inf for one)."""
        where = (np.log10(values) - lo) / (hi - lo) * size
        texts = labels(values.tolist())
        sizes = self.label_sizes(texts)
        if self.orientation in ("left", "right") and self.width() > 0:
            metrics = QFontMetricsF(self._font())
            if any(metrics.horizontalAdvance(t) > self.text_room() for t in texts):
                return values[:0], math.inf  # a set with a label cut off: none of it
        keep = (where - sizes / 2 >= 0) & (where + sizes / 2 <= size)
        where, sizes = where[keep], sizes[keep]
        if len(where) < 2:
            return values[keep], math.inf
        need = (sizes[1:] + sizes[:-1]) / 2
        return values[keep], float(np.min(np.diff(where) / need))

    def tickValues(self, minVal: float, maxVal: float, size: float  # noqa: N802, N803
                   ) -> list[tuple[float | None, list[float]]]:
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        best, minor = self.choose(minVal, maxVal, size)
        return [(None, np.log10(best).tolist()), (None, np.log10(minor).tolist())]

    def logTickStrings(self, values: list[float], scale: float,  # noqa: N802
                       spacing: float) -> list[str]:
        return labels((10.0 ** np.asarray(values, dtype=np.float64)).tolist())
