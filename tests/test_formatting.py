"""Numbers on screen: one formatter, and one dash for a number that is not there."""

from __future__ import annotations

import math

from gradbox.formatting import MISSING, fmt, number, percent


def test_a_missing_number_is_one_dash_everywhere() -> None:
    assert MISSING == "–"
    assert number(None) == number(math.nan) == percent(None) == percent(math.nan) == MISSING
    assert percent(math.inf) == MISSING  # a fraction is never infinite: not measured


def test_numbers_are_fmts_and_an_overflow_says_so() -> None:
    assert number(0.000123456) == fmt(0.000123456) == "0.0001235"
    assert number(2 / 3, digits=2) == "0.67"
    assert number(math.inf) == "inf" and number(-math.inf) == "-inf"
    assert percent(0.975) == "97.5%" and percent(1) == "100.0%"
