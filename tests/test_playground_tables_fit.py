"""The playground's demonstration tables write their numbers to fit, never cut mid-digit:
at 1024x700 the micro-batch table showed '-0.12911…' for -0.129110432."""

from __future__ import annotations

import math

import pytest

from cell_text import shown_text
from gradbox.views.panels.parameter_cells import text_room
from gradbox.views.panels.parameter_table import NUMBER_ROLE
from gradbox.views.panels.playground_demos import MicrobatchPage
from qt_waits import settle


@pytest.mark.parametrize("width", [300, 420, 900])
def test_microbatch_numbers_fit_their_cells(qtbot, width: int) -> None:  # type: ignore[no-untyped-def]
    page = MicrobatchPage()
    qtbot.addWidget(page)
    page.resize(width, 400)
    page.show()
    qtbot.waitExposed(page)
    page.compute()
    settle()
    table = page.table
    checked = 0
    for row in range(table.rowCount()):
        for column in (1, 2, 3):
            index = table.model().index(row, column)
            text, option = shown_text(table, index)
            value = index.data(NUMBER_ROLE)
            assert "…" not in text, (width, text)
            room = text_room(option)
            # The shortest form (one digit, scientific) may still not fit a very narrow
            # column; every longer form that does not fit is dropped.
            if room >= option.fontMetrics.horizontalAdvance("-1e-05"):
                assert option.fontMetrics.horizontalAdvance(text) <= room, (width, text)
            assert math.isclose(float(text), value, rel_tol=0.05, abs_tol=1e-12), (text, value)
            assert repr(value) in table.item(row, column).toolTip()
            checked += 1
    assert checked == 3 * table.rowCount() > 0
    if width >= 900:  # room enough: the nine digits that show the columns agree
        assert len(table.item(0, 1).text().lstrip("-")) >= 10
