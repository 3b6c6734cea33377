"""Reading numbers people type: one rule for every box that takes one."""

from __future__ import annotations

import math


def parse_number(text: object) -> float:
    """The number a person typed in a box; ValueError says what is wrong with it.

    Python's own float syntax ("0.5", "-1.2e-3", " 2 "), plus the typographic minus that
    copying from a document brings. inf and nan parse as floats but are refused: no
    weight or rate is infinite.
    """
    typed = str(text).strip().replace("\u2212", "-")
    if not typed:
        raise ValueError("nothing was typed")
    try:
        value = float(typed)
    except ValueError:
        raise ValueError(f"'{typed}' is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"'{typed}' is not a finite number")
    return value
