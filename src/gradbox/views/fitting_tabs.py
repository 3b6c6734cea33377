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
from PySide6.QtWidgets import QTabWidget, QWidget


class FittingTabs(QTabWidget):
    """A QTabWidget whose tabs all stay on show at any width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setUsesScrollButtons(False)
        self.tabBar().setElideMode(Qt.TextElideMode.ElideRight)
        self.tabBar().setExpanding(False)
        # Tighter than the style's own padding (about 12 px a side): five tabs' short names
        # then fit the 370 px the docks leave at 1024 px.
        self.tabBar().setStyleSheet("QTabBar::tab { padding: 4px 7px; }")
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
