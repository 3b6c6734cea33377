"""A tab bar that keeps every tab on show, never behind scroll arrows: the main views'
and the Playground's sections.

At 1024 px the docks leave the main views about 370 px, and "Decision boundary,
Computation graph, Layers, Landscape, Playground" need about 520: Qt then hid the last two
behind arrows, where a learner never finds them. Each tab has a full name and a short one
("Boundary", "Graph"); the short names are shown when the full ones do not fit, and past
that the names elide (the full name is always the tooltip). Lessons and settings speak of
a tab by its full name (`name_of`, `index_named`).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOption, QTabWidget, QWidget

# Each tab's room around its name: 7 px a side, 4 above and below (the style's own is about
# 12 px a side: five tabs' short names then fit the 370 px the docks leave at 1024 px).
TAB_H_PADDING = 7
TAB_V_PADDING = 4


class _TightTabs(QProxyStyle):
    """The application's style with tighter tabs. (A style sheet on the tab bar did the
    same, and cut the tab widget's pages off from the window's font: Qt marks the tab
    widget as styled and then hands a font change to it only through a style-sheet style
    it does not have, so teacher mode's large type stopped at the main views.)"""

    def pixelMetric(self, metric: QStyle.PixelMetric, option: QStyleOption | None = None,  # noqa: N802
                    widget: QWidget | None = None) -> int:
        if metric == QStyle.PixelMetric.PM_TabBarTabHSpace:
            return 2 * TAB_H_PADDING
        if metric == QStyle.PixelMetric.PM_TabBarTabVSpace:
            return 2 * TAB_V_PADDING
        if metric == QStyle.PixelMetric.PM_TabBarTabShiftVertical:
            return 0  # shifted down in the tight room, 'zero_grad' lost its underscore
        return super().pixelMetric(metric, option, widget)


class FittingTabs(QTabWidget):
    """A QTabWidget whose tabs all stay on show at any width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setUsesScrollButtons(False)
        self.tabBar().setElideMode(Qt.TextElideMode.ElideRight)
        self.tabBar().setExpanding(False)
        self._tab_style = _TightTabs()  # kept: a widget does not own its style
        self.tabBar().setStyle(self._tab_style)
        self._names: dict[int, tuple[str, str]] = {}  # id(page) -> (full, short)

    def add(self, page: QWidget, name: str, short: str = "") -> int:
        """Add `page` as a tab called `name` (`short` where room is scarce)."""
        index = self.addTab(page, name)
        self.rename(page, name, short)
        return index

    def rename(self, page: QWidget, name: str, short: str = "") -> None:
        """Call `page`'s tab `name` (`short` where room is scarce)."""
        self._names[id(page)] = (name, short or name)
        index = self.indexOf(page)
        self.setTabToolTip(index, name)
        self._fit()

    def name_of(self, index: int) -> str:
        """The full name of the tab at `index`, whichever name it shows."""
        page = self.widget(index)
        return self._names.get(id(page), (self.tabText(index), ""))[0]

    def index_named(self, name: str) -> int:
        """The index of the tab whose full or short name is `name`, or -1."""
        for index in range(self.count()):
            if name in self._names.get(id(self.widget(index)), (self.tabText(index),) * 2):
                return index
        return -1

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        # The bar's own size hint measures each tab as the style draws it, text unelided.
        for short in (False, True):
            for index in range(self.count()):
                label = self._label(index, short)
                if self.tabText(index) != label:
                    self.setTabText(index, label)
            if self.tabBar().sizeHint().width() <= self.width():
                break

    def _label(self, index: int, short: bool) -> str:
        full, brief = self._names.get(id(self.widget(index)), (self.tabText(index),) * 2)
        return brief if short else full
