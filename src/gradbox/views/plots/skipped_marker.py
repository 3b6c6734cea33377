"""Where Forget zero_grad skipped `optimizer.zero_grad()`: a shaded band on the loss plot
over each run of skipped steps, from the step it began to the step it ended (or on to
the plot's edge while it goes on), with a legend entry and a tooltip.

The loss curve owns it and hands it each new history. It reads only the steps it has not
read yet, and touches its bands only when a run begins, ends, or is rewound away: while
the switch stays on (or off), a step costs it nothing on screen.
"""

from __future__ import annotations

import pyqtgraph as pg

from gradbox.training.history import History, extend_flag_runs, flag_runs
from gradbox.views.palette import ALARM

LABEL = "zero_grad skipped"


def _colour(alpha: int) -> pg.QtGui.QColor:
    colour = pg.mkColor(ALARM)  # the skipped zero_grad's colour, as in the loop panel
    colour.setAlpha(alpha)
    return colour


class SkippedZeroGradMarker:
    def __init__(self, plot: pg.PlotItem) -> None:
        self.plot = plot
        self.bands: list[pg.LinearRegionItem] = []
        # Runs as shown: (first step, last step), the last None while it is still going on.
        self.shown: list[tuple[int, int | None]] = []
        self._runs: list[tuple[int, int]] = []
        self._read = History.empty()  # the history whose flags `_runs` holds
        # The legend's entry (a stand-in: the legend draws an item's fill as a box).
        self.sample = pg.PlotDataItem(pen=None, fillLevel=0, fillBrush=_colour(60))
        self.sample.visibleChanged.connect(self._on_sample_toggled)
        plot.getViewBox().sigXRangeChanged.connect(self._stretch_open_run)

    def update(self, history: History) -> None:
        if history is self._read:
            return
        steps, flags = history.column("step"), history.column("zero_grad_skipped")
        n = len(self._read)
        if n and history.extends(self._read):
            self._runs = extend_flag_runs(self._runs, steps[n:], flags[n:])
        else:  # another run, or the timeline moved: read it whole, once
            self._runs = flag_runs(steps, flags)
        self._read = history
        last = int(steps[-1]) if len(steps) else 0
        shown = [(a, None if b == last else b) for a, b in self._runs]
        if shown != self.shown:
            self._show(shown)

    def _show(self, shown: list[tuple[int, int | None]]) -> None:
        self.shown = shown
        while len(self.bands) > len(shown):
            self.plot.removeItem(self.bands.pop())
        while len(self.bands) < len(shown):
            band = pg.LinearRegionItem(movable=False, brush=_colour(40),
                                       pen=pg.mkPen(_colour(160), width=1))
            band.setZValue(-20)  # under the curves and the grid's text
            band.setVisible(self.sample.isVisible())
            # Not counted in the plot's range: the loss curve ranges its plots itself.
            self.plot.addItem(band, ignoreBounds=True)
            self.bands.append(band)
        right = self.plot.getViewBox().viewRange()[0][1]
        for band, (first, last) in zip(self.bands, shown):
            # Half a step either side: the band holds the points of its first and last step.
            band.setRegion((first - 0.5, (right if last is None else last) + 0.5))
            band.setToolTip(self._tip(first, last))

    @staticmethod
    def _tip(first: int, last: int | None) -> str:
        which = (f"From step {first} on" if last is None else
                 f"Step {first}" if first == last else f"Steps {first}–{last}")
        return (f"{which}: optimizer.zero_grad() was skipped (Forget zero_grad), so each "
                "backward pass added its gradient to the ones before instead of replacing "
                "them")

    def _stretch_open_run(self) -> None:
        """A run still going on reaches the plot's right edge, wherever that moves."""
        if self.shown and self.shown[-1][1] is None:
            right = self.plot.getViewBox().viewRange()[0][1]
            self.bands[-1].setRegion((self.shown[-1][0] - 0.5, right + 0.5))

    def _on_sample_toggled(self) -> None:
        for band in self.bands:
            band.setVisible(self.sample.isVisible())
