"""How numbers and counts are written on screen: one formatter, one ordinal, one count,
and one mark for a number that is not there."""

from __future__ import annotations

import math


def fmt(x: float, signed: bool = False, digits: int = 4) -> str:
    """Four significant digits: enough to follow a chain rule by hand, short enough to fit.

    `signed` always writes the sign (+0.5), for columns of numbers that go both ways;
    `digits` asks for fewer where room is short (a unit's value inside its square).
    nan and inf are written as Python writes them: a diverged run should say so.
    """
    x = float(x)
    if math.isnan(x) or math.isinf(x):
        return str(x)
    if x == 0:
        return "+0" if signed else "0"
    return f"{x:+.{digits}g}" if signed else f"{x:.{digits}g}"


# A number not measured (no test points, no run yet, no gradient flowed): one dash, everywhere.
MISSING = "–"


def number(x: float | None, digits: int = 4) -> str:
    """`fmt(x)`, or MISSING where there is no number (None or nan). Infinity is written
    'inf': an overflowed loss or gradient was measured, and says so."""
    if x is None or math.isnan(float(x)):
        return MISSING
    return fmt(x, digits=digits)


def percent(x: float | None) -> str:
    """0.975 -> '97.5%', or MISSING where there is no finite fraction."""
    if x is None or not math.isfinite(float(x)):
        return MISSING
    return f"{100 * float(x):.1f}%"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th ... 21st, 22nd, 101st, 111th."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def counted(n: int, word: str) -> str:
    """'1 step', '20 steps', '0 steps': a count and its noun (plural with an s)."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
