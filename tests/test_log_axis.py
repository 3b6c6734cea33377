"""The Layers tab's log axis: its labels never overlap, are never cut off, and each says
the value where it stands -- on gradients that span 1.2x, 3x, 10x or a million times."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QFont, QFontMetricsF

from axis_labels import tick_labels
from gradbox.training.history import COLUMNS, RECORD_FIELDS, History
from gradbox.views.plots.layer_stats_view import LayerStatsView
from gradbox.views.plots.log_axis import label, labels

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _value(text: str) -> float:
    """A label back to its number: "0.0011", "10⁻⁵", "8.5·10⁻⁵"."""
    match = re.fullmatch(r"(?:([\d.]+)·)?10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", text)
    if match is None:
        return float(text)
    mantissa = float(match.group(1) or 1.0)
    return mantissa * 10.0 ** int(match.group(2).translate(_SUPERSCRIPT))


def _history(low: float, factor: float, steps: int = 12, layers: int = 3) -> History:
    """Every layer's mean |gradient| between `low` and `low * factor`, both reached."""
    table = np.full((steps, layers, COLUMNS), 0.5)
    ramp = low * factor ** np.linspace(0, 1, steps)
    for k in range(layers):
        table[:, k, 0] = np.roll(ramp, k)
    columns = {name: np.ones(steps) for name in RECORD_FIELDS}  # any value: only layers count
    columns["step"] = np.arange(1, steps + 1)
    return History(columns, layers=table)


def _drawn_labels(axis: pg.AxisItem) -> list[tuple[QRectF, str]]:
    """What the axis paints: each label's text and its rectangle at the font's full
    height (pyqtgraph's own rectangles are 0.8 of it)."""
    metrics = QFontMetricsF(QFont())
    drawn = []
    for rect, text in tick_labels(axis):
        width, height = metrics.horizontalAdvance(text), metrics.height()
        drawn.append((QRectF(rect.right() - width, rect.center().y() - height / 2,
                             width, height), text))
    return drawn


@pytest.mark.parametrize("size", [(700, 500), (420, 330)])
@pytest.mark.parametrize("low, factor", [(3.3e-3, 1.2), (2.1e-4, 3.0), (1e-3, 10.0),
                                         (4e-8, 1e6), (0.0123, 1.2), (7e-6, 3.0)])
def test_gradient_axis_labels_never_overlap_and_say_where_they_stand(  # type: ignore[no-untyped-def]
        controller, show_widget, qtbot, low: float, factor: float,
        size: tuple[int, int]) -> None:
    view = show_widget(LayerStatsView(controller), *size)
    snapshot = dataclasses.replace(controller.snapshot, history=_history(low, factor))
    controller.snapshot_changed.emit(snapshot)
    axis = view.grad_axis
    # The plot ranges itself to the data when it next paints.
    qtbot.waitUntil(lambda: axis.range[0] <= math.log10(low) <= math.log10(low * factor)
                    <= axis.range[1] and axis.range[1] - axis.range[0] < 1.5 * math.log10(
                        factor) + 0.1)
    lo, hi = axis.range
    drawn = _drawn_labels(axis)
    texts = [text for _, text in drawn]
    assert len(drawn) >= 2, f"{texts} on {factor}x"
    assert len(set(texts)) == len(texts)
    for (a, text_a), (b, text_b) in itertools.pairwise(drawn):
        assert not a.intersects(b), f"{text_a!r} overlaps {text_b!r} ({factor}x): {texts}"
    bounds = axis.mapRectFromParent(axis.geometry())
    height = bounds.height()
    for rect, text in drawn:
        assert rect.left() >= bounds.left() - 0.5, f"{text!r} is cut off on the left"
        assert bounds.top() - 0.5 <= rect.top() and rect.bottom() <= bounds.bottom() + 0.5
        # Where a label stands is where its value lies on the axis.
        where = bounds.bottom() - (math.log10(_value(text)) - lo) / (hi - lo) * height
        assert rect.center().y() == pytest.approx(where, abs=1.0), (text, texts)


def test_pyqtgraphs_own_log_axis_did_overlap_here(controller, show_widget) -> None:  # type: ignore[no-untyped-def]
    """The case the Layers tab showed: the stock axis on 3x piles its labels up."""
    plot = pg.PlotWidget()
    show_widget(plot, 420, 250)
    plot.setLogMode(y=True)
    ramp = 2.1e-4 * 3.0 ** np.linspace(0, 1, 12)
    plot.plot(np.arange(12), ramp)
    axis = plot.getPlotItem().getAxis("left")
    drawn = _drawn_labels(axis)  # the same measuring, on pyqtgraph's choice of labels
    overlaps = sum(a.intersects(b) for (a, _), (b, _) in itertools.pairwise(drawn))
    assert overlaps > 0, [t for _, t in drawn]


def test_labels_are_the_shortest_that_tell_values_apart() -> None:
    assert labels([0.001, 0.002, 0.005]) == ["0.001", "0.002", "0.005"]
    assert labels([1.05e-3, 1.1e-3, 1.15e-3]) == ["0.00105", "0.0011", "0.00115"]
    # One style per axis: powers of ten for all once one needs it.
    assert labels([1e-6, 1e-4, 1e-2]) == ["10⁻⁶", "10⁻⁴", "10⁻²"]
    assert labels([7.5e-5, 8e-5, 1e-4]) == ["7.5·10⁻⁵", "8·10⁻⁵", "10⁻⁴"]
    assert labels([0.1, 1.0, 10.0]) == ["0.1", "1", "10"]
    assert label(1.0, 1, power=True) == "1" and label(2e12, 1, power=True) == "2·10¹²"
    for text, value in zip(labels([3e-9, 4.5e-9]), [3e-9, 4.5e-9]):
        assert _value(text) == pytest.approx(value)
