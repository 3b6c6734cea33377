"""How numbers and counts are written on screen: one formatter, one ordinal, one count."""

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


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th ... 21st, 22nd, 101st, 111th."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def counted(n: int, word: str) -> str:
    """'1 step', '20 steps', '0 steps': a count and its noun (plural with an s)."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
