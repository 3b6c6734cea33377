"""The tabs' names are drawn whole in their tight room: Fusion drew a tab that is not the
current one 2 px lower, and 'zero_grad' lost its underscore to the tab's bottom edge (seen
in the Playground's sections, with the tight padding that keeps every main view's tab on
show at 1024 px)."""

from __future__ import annotations

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QWidget

from gradbox.views.fitting_tabs import FittingTabs


def _lowest_stroke(image: QImage, left: int, right: int) -> int:
    """The lowest row holding a horizontal run of 4 dark pixels between `left` and
    `right` (letters' bottoms at the baseline; an underscore lies below it)."""
    lowest = -1
    for y in range(image.height()):
        run = 0
        for x in range(left, right):
            run = run + 1 if image.pixelColor(x, y).lightness() < 110 else 0
            if run >= 4:
                lowest = y
                break
    return lowest


def test_an_underscore_in_a_tabs_name_is_drawn(qtbot) -> None:  # type: ignore[no-untyped-def]
    tabs = FittingTabs()
    qtbot.addWidget(tabs)
    for name in ("Variables", "Batches", "zero_grad"):
        tabs.add(QWidget(), name)
    tabs.resize(400, 100)
    tabs.show()
    qtbot.waitExposed(tabs)
    bar = tabs.tabBar()
    image = bar.grab().toImage()
    batches, underscored = bar.tabRect(1), bar.tabRect(2)
    inset = 6  # off the tabs' side edges
    assert (_lowest_stroke(image, underscored.left() + inset, underscored.right() - inset)
            > _lowest_stroke(image, batches.left() + inset, batches.right() - inset))
