"""Numbers are never elided: written to fit (fewer digits, then scientific), the full value
in the tooltip; names lose only their shared prefix, then take their short form."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cell_text import shown_text
from gradbox.autograd.nn import parameter_names, widest_parameter_names
from gradbox.views.fit_text import fitted_name, fitted_number, number_forms, shared_prefix
from gradbox.views.panels.parameter_cells import text_room
from gradbox.views.panels.parameter_table import GHOST, GRAD, HELD, NAME, NUMBER_ROLE, VALUE
from qt_waits import settle

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@given(finite, st.booleans())
def test_every_form_is_the_same_number_rounded(x: float, signed: bool) -> None:
    forms = number_forms(x, signed)
    assert forms
    rounded = {float(f"{x:.{d}g}") for d in range(1, 5)} | {float(f"{x:.{d}e}")
                                                            for d in range(4)}
    for form in forms:
        assert "…" not in form
        assert float(form) in rounded  # x rounded to 1-4 significant digits, nothing else
        if signed and x != 0:
            assert form[0] in "+-"
    assert [len(f) for f in forms] == sorted((len(f) for f in forms), reverse=True)


def test_a_number_loses_digits_to_fit_never_its_middle() -> None:
    assert fitted_number(0.2739, lambda t: len(t) <= 7, signed=True) == "+0.2739"
    assert fitted_number(0.2739, lambda t: len(t) <= 5, signed=True) == "+0.27"
    assert fitted_number(-1.234e-5, lambda t: len(t) <= 8) == "-1.2e-05"
    assert fitted_number(4.0, lambda t: len(t) <= 2, prefix="×", digits=3) == "×4"


def test_a_name_drops_its_shared_prefix_then_takes_its_short_form() -> None:
    names = ["layers.0.neurons.0.w.0", "layers.1.neurons.3.b"]
    prefix = shared_prefix(names)
    assert prefix == "layers."
    assert fitted_name(names[0], lambda t: len(t) <= 30, prefix) == names[0]
    assert fitted_name(names[0], lambda t: len(t) <= 16, prefix) == "…0.neurons.0.w.0"
    assert fitted_name(names[0], lambda t: len(t) <= 10, prefix) == "L0 n0 w0"
    assert fitted_name(names[1], lambda t: len(t) <= 10, prefix) == "L1 n3 b"


def test_a_column_of_names_is_written_in_one_form() -> None:
    sizes = (2, 16, 1)
    names = parameter_names(sizes)
    widest = widest_parameter_names(sizes)
    assert set(widest) <= set(names)
    prefix = shared_prefix(names)
    for room in range(6, 30):
        def fits(text: str, room: int = room) -> bool:
            return len(text) <= room
        shown = [fitted_name(n, fits, prefix, widest) for n in names]
        kinds = {("…" in t, t.startswith("L")) for t in shown}
        # one form ('…0.neurons.0.b' stood beside 'L0 n0 w0' before)
        assert len(kinds) == 1, (room, shown[:3], shown[-3:])
        # the widest names stand for all: what fits them fits every name
        assert all(fits(t) for t in shown) or shown[0].startswith("L")


@pytest.mark.parametrize(("width", "height"), [(1024, 700), (1366, 768), (1920, 1080)])
def test_no_parameter_cell_is_narrower_than_its_text(qtbot, open_window, step_session,  # type: ignore[no-untyped-def]
                                                     width: int, height: int) -> None:
    win = open_window((width, height), hidden=(8, 8))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height))
    win.lessons.apply_key("zero-grad")  # the ghost and the × true columns too
    settle()
    for _ in range(4):
        step_session(win.controller)
    settle()  # the columns' queued refits
    table = win.parameters.table
    model = table.model()
    checked = 0
    for row in range(min(model.rowCount(), 12)):
        for column in (NAME, VALUE, GRAD, GHOST, HELD):
            if table.isColumnHidden(column):
                continue
            index = model.index(row, column)
            text, option = shown_text(table, index)
            if not text or column in (GRAD, GHOST):  # the bars' own delegate paints: below
                continue
            assert "…" not in text[1:], (column, text)  # never elided in the middle
            assert option.fontMetrics.horizontalAdvance(text) <= text_room(option), (column, text)
            if column in (VALUE, HELD):
                value = index.data(NUMBER_ROLE)
                shown = float(text.lstrip("×"))
                assert math.isclose(shown, value, rel_tol=0.5, abs_tol=1e-12), (text, value)
                if column == VALUE:
                    assert repr(value) in index.data(3)  # the tooltip has it whole
            checked += 1
    assert checked >= 12


def _shared_parts(names: list[str]) -> str:
    """The definition: the leading dotted parts every name has (never its last part)."""
    common: list[str] = []
    for parts in zip(*(name.split(".")[:-1] for name in names), strict=False):
        if any(part != parts[0] for part in parts):
            break
        common.append(parts[0])
    return "".join(f"{part}." for part in common)


@given(st.lists(st.lists(st.sampled_from(["a", "b", "ab", "0", "1", "10", ""]), min_size=1,
                         max_size=5).map(".".join), min_size=2, max_size=8))
def test_the_shared_prefix_is_whole_parts_every_name_shares(names: list[str]) -> None:
    assert shared_prefix(names) == _shared_parts(names)
