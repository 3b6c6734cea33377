"""Text that fits its cell: numbers rounded to fit, never cut mid-digit; names shortened
from their shared prefix, never in the middle.

Qt elides a cell's text in the middle: '+0.2739' became '+0…39', which reads as another
number, and 'layers.0.neurons.0.w.0' lost its layer ('layers….s.0.w.0'). Here a number
loses digits (then goes scientific) until it fits, and the cell's tooltip keeps the full
value; a name drops the prefix every name shares, then takes its short form ('L0 n3 w1').
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from gradbox.autograd.nn import short_parameter_name
from gradbox.formatting import fmt

ELLIPSIS = "…"


def number_forms(x: float, signed: bool = False, digits: int = 4) -> list[str]:
    """`x` written ever shorter, most digits first: for each count of significant digits
    from `digits` down to one, the shorter of the plain and the scientific notation.
    Every form is the same number, rounded."""
    forms = []
    for d in range(digits, 0, -1):
        plain = fmt(x, signed=signed, digits=d)
        if math.isfinite(x) and x != 0:
            scientific = f"{x:+.{d - 1}e}" if signed else f"{x:.{d - 1}e}"
            plain = min(plain, scientific, key=len)
        if not forms or len(plain) < len(forms[-1]):  # fewer digits, but no shorter: no use
            forms.append(plain)
    return forms


def fitted_number(x: float, fits: Callable[[str], bool], signed: bool = False,
                  digits: int = 4, prefix: str = "") -> str:
    """The longest form of `x` (with `prefix`, e.g. '×') that `fits`; else the shortest."""
    forms = [prefix + form for form in number_forms(x, signed, digits)]
    return next((form for form in forms if fits(form)), forms[-1])


def shared_prefix(names: Sequence[str]) -> str:
    """The dotted prefix every name shares ('layers.'), whole parts only."""
    if len(names) < 2:
        return ""
    # What every name shares is what the first and last in sorted order share (min and
    # max run at C speed: splitting a million names took half a second of the UI thread),
    # cut back to whole parts, never a name's last part.
    first, last = min(names), max(names)
    shared = 0
    while shared < min(len(first), len(last)) and first[shared] == last[shared]:
        shared += 1
    return first[:first.rfind(".", 0, shared) + 1]


def name_forms(name: str, prefix: str = "") -> list[str]:
    """`name` ever shorter: whole; without the shared `prefix` ('…0.neurons.3.w.1');
    its short form ('L0 n3 w1'), which keeps what tells the parameters apart."""
    forms = [name]
    if prefix and name.startswith(prefix) and len(name) > len(prefix):
        forms.append(ELLIPSIS + name[len(prefix):])
    forms.append(short_parameter_name(name))
    return forms


def name_form(fits: Callable[[str], bool], widest: Sequence[str], prefix: str = "") -> int:
    """Which of `name_forms` a column of names is written in: the first in which its
    `widest` names all fit (else the last). One form for the whole column: chosen name
    by name, 'L0 n0 w0' stood under '…0.neurons.0.b' in the Graph workspace."""
    forms = [name_forms(name, prefix) for name in widest]
    levels = max((len(f) for f in forms), default=1)
    for level in range(levels):
        if all(fits(f[min(level, len(f) - 1)]) for f in forms):
            return level
    return levels - 1


def fitted_name(name: str, fits: Callable[[str], bool], prefix: str = "",
                widest: Sequence[str] = ()) -> str:
    """`name` in the form its column is written in (see `name_form`; the column is
    `name` alone when `widest` is empty)."""
    forms = name_forms(name, prefix)
    level = name_form(fits, [*widest, name], prefix)
    return forms[min(level, len(forms) - 1)]
