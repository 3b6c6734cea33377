"""Python's errors and wrong numbers, said in the article's words.

`explain_error(error, filename)` turns an exception raised by the learner's code into a
message, a mistake id (`gradbox.build.report.MISTAKES`) and the line of the learner's file
to look at: `unsupported operand type(s) for +: 'int' and 'Value'` becomes "`__radd__` is
missing", a RecursionError in `__radd__` says it calls itself, one in a walk says the walk
must not recurse.

`name_variant(...)` is (d) of the issue: the failing case's code is run again on gradbox's
engine with each broken variant of `gradbox.teaching.pitfalls` in place of `backward`;
when the learner's gradients equal a variant's (and not the right ones), the mistake is
that variant's rule.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gradbox.formatting import fmt

__all__ = ["Explained", "assign_variants", "close", "explain_error", "learner_frames",
           "number", "numbers", "variant_values"]

REFLECTED = {"+": "__radd__", "*": "__rmul__", "-": "__rsub__", "/": "__rtruediv__",
             "**": "__rpow__"}
FORWARD = {"+": "__add__", "*": "__mul__", "-": "__sub__", "/": "__truediv__",
           "** or pow()": "__pow__"}
FIELDS = ("data", "grad", "_prev", "_op", "_backward")


def number(x: float) -> str:
    """How a number is written in feedback (six significant digits)."""
    return fmt(x, digits=6)


def numbers(mine: float, expected: float) -> tuple[str, str]:
    """Two numbers written with as many digits as it takes to tell them apart (six at
    least): a one-sided difference gives 6.000003 where 6 is due, not '6' and '6'."""
    for digits in range(6, 18):
        a, b = fmt(mine, digits=digits), fmt(expected, digits=digits)
        if a != b or mine == expected:
            return a, b
    return repr(float(mine)), repr(float(expected))


def close(mine: float, expected: float, tol: float = 1e-6) -> bool:
    if math.isnan(mine) or math.isnan(expected):
        return math.isnan(mine) and math.isnan(expected)
    if math.isinf(expected) or math.isinf(mine):
        return mine == expected
    return abs(mine - expected) <= tol * max(1.0, abs(expected))


@dataclass(frozen=True)
class Explained:
    message: str
    mistake: str
    line: int | None


def learner_frames(error: BaseException, filename: str) -> list[traceback.FrameSummary]:
    """The traceback's frames in the learner's file, outermost first."""
    return [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]


def _where(frames: list[traceback.FrameSummary]) -> str:
    if not frames:
        return ""
    f = frames[-1]
    inside = "" if f.name == "<module>" else f" in `{f.name}`"
    return f" (line {f.lineno}{inside})"


def explain_error(error: BaseException, filename: str) -> Explained:
    """What the learner's exception means, in words, with a mistake id and a line."""
    frames = learner_frames(error, filename)
    line = frames[-1].lineno if frames else None
    where = _where(frames)
    text = str(error)
    kind = type(error).__name__
    if isinstance(error, RecursionError):
        names = [f.name for f in frames]
        if frames:  # the line that calls itself: the one most frames stand on
            lines = [f.lineno for f in frames]
            line = max(set(lines), key=lines.count)
            where = f" (line {line} in `{max(set(names), key=names.count)}`)"
        looping = [n for n in ("__radd__", "__rmul__", "__rsub__", "__rtruediv__",
                               "__add__", "__mul__") if names.count(n) > 20]
        if looping:
            op = looping[0]
            return Explained(f"RecursionError: `{op}` calls itself: written as `other + "
                             f"self`, Python turns it back into `{op}` forever. Wrap the "
                             f"number and call the method you already have{where}.",
                             "radd-recursion", line)
        deepest = max(set(names), key=names.count) if names else ""
        return Explained(
            "RecursionError: Python stops at about 1,000 nested calls, and "
            + (f"your `{deepest}` calls itself once per level of the graph"
               if deepest and deepest != "<module>" else "your code recursed too deep")
            + f"{where}. A chain 2,000 deep is an ordinary network's graph: walk it with "
            "an explicit stack (a list you push to and pop from) instead of recursion.",
            "recursion", line)
    if isinstance(error, MemoryError):
        return Explained(f"MemoryError: your code asked for more memory than the limit "
                         f"allows{where}.", "memory", line)
    if isinstance(error, TypeError):
        m = re.search(r"unsupported operand type\(s\) for (\S+?): '(\w+)' and '(\w+)'", text)
        if m:
            op, left, right = m.groups()
            if left in ("int", "float") and right not in ("int", "float"):
                method = REFLECTED.get(op, "a reflected operator")
                return Explained(f"TypeError: {text}. `{left} {op} Value` asks the number "
                                 f"first, then your Value's `{method}`: `{method}` is "
                                 f"missing{where}.", "missing-radd", line)
            if right in ("int", "float") and left not in ("int", "float"):
                return Explained(f"TypeError: {text}. A plain number reached an op that "
                                 f"expects a Value: wrap it at the door (`other if "
                                 f"isinstance(other, Value) else Value(other)`){where}.",
                                 "number-not-wrapped", line)
            if left == right and left not in ("list", "tuple", "NoneType", "str"):
                method = FORWARD.get(op, "the operator")
                return Explained(f"TypeError: {text}: your {left} has no `{method}` (or it "
                                 f"returns NotImplemented){where}.", "missing-name", line)
            return Explained(f"TypeError: {text}{where}.", "error", line)
        m = re.search(r"bad operand type for unary (\S+): '(\w+)'", text)
        if m:
            method = {"-": "__neg__", "+": "__pos__", "~": "__invert__"}.get(m.group(1), "")
            return Explained(f"TypeError: {text}: `-a` needs `{method}` (it can be "
                             f"`self * -1`){where}.", "missing-name", line)
        if "retain_graph" in text:
            return Explained(f"TypeError: {text}: `backward` must accept `retain_graph` "
                             f"(`def backward(self, retain_graph=False)`){where}.",
                             "retain-graph-ignored", line)
        if re.search(r"_backward\(\) (missing|takes)", text):
            return Explained(f"TypeError: {text}: in this API `_backward` takes no "
                             f"arguments; it reads `out.grad` itself{where}.", "contract",
                             line)
        if "unhashable type" in text:
            return Explained(f"TypeError: {text}: a Value goes into sets (`_prev`, the "
                             "walk's visited set) by identity; defining `__eq__` takes "
                             f"Python's `__hash__` away: remove `__eq__`{where}.", "contract",
                             line)
        if "object is not callable" in text or "not iterable" in text:
            return Explained(f"TypeError: {text}{where}.", "contract", line)
    if isinstance(error, AttributeError):
        m = re.search(r"'(\w+)' object has no attribute '(\w+)'", text)
        if m:
            owner, attr = m.groups()
            if owner == "NoneType":
                return Explained(f"AttributeError: {text}: something gave None where a "
                                 "Value was expected -- does each op end with `return out`?"
                                 f"{where}", "contract", line)
            if owner in ("int", "float") and attr in ("data", "grad", "_prev"):
                return Explained(f"AttributeError: {text}: a plain number reached an op "
                                 f"that reads `.{attr}`: wrap numbers as Values at the door "
                                 f"(`other if isinstance(other, Value) else Value(other)`)"
                                 f"{where}.", "number-not-wrapped", line)
            if attr in FIELDS:
                return Explained(f"AttributeError: {text}: every Value needs `{attr}` "
                                 f"(set in `__init__`){where}.", "contract", line)
            return Explained(f"AttributeError: {text}: this stage needs `{owner}.{attr}`"
                             f"{where}.", "missing-name", line)
    if isinstance(error, NameError):
        return Explained(f"NameError: {text}{where}.", "missing-name", line)
    if isinstance(error, SystemExit):
        return Explained(f"your code called sys.exit({error.code!r}){where}: a check "
                         "needs your functions to return.", "error", line)
    return Explained(f"{kind}: {text}{where}." if text else f"{kind}{where}.", "error",
                     line)


# --- (d): the broken variants ------------------------------------------------------------
@contextlib.contextmanager
def _engine_backward(variant: Callable[[Any], None]) -> Iterator[None]:
    """gradbox's engine with `variant` in place of `Value.backward`, for this block."""
    from gradbox.autograd.engine import Value
    saved = Value.backward

    def backward(self: Any, retain_graph: bool = False) -> None:
        variant(self)
    Value.backward = backward  # type: ignore[method-assign]
    try:
        yield
    finally:
        Value.backward = saved  # type: ignore[method-assign]


def variant_values(code: str, expressions: tuple[str, ...],
                   extra: dict[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """Each broken backward of `gradbox.teaching.pitfalls` (and the right one), run on
    `code` with gradbox's engine: {mistake id or 'right': {expression: value}}. A variant
    that cannot run the code (an op it does not know) is left out."""
    from gradbox.autograd.engine import Value
    from gradbox.teaching import pitfalls

    variants: dict[str, Callable[[Any], None] | None] = {
        "right": None,
        "assign-not-accumulate": pitfalls.backward_assign,
        "not-topological": pitfalls.backward_wrong_order,
    }
    out: dict[str, dict[str, float]] = {}
    for name, variant in variants.items():
        ns: dict[str, Any] = {"Value": Value, **(extra or {})}
        try:
            if variant is None:
                exec(compile(code, "<variant>", "exec"), ns)  # our own case code
            else:
                with _engine_backward(variant):
                    exec(compile(code, "<variant>", "exec"), ns)
            out[name] = {e: float(eval(e, ns)) for e in expressions}
        except Exception:  # a variant that cannot run names nothing
            continue
    return out


# --- `=` for `+=` in some of the closures, fired in any order ------------------------------
Slot = tuple[str, int]  # (an op, which input: 0 for self, 1 for other)
MAX_SLOTS = 6           # 63 sets of slots at most ...
MAX_ORDERS = 24         # ... times this many firing orders: a few thousand tiny runs at most


def _firing_orders(root: Any, cap: int = MAX_ORDERS) -> list[list[int]]:
    """Every order (up to `cap`) in which a correct backward may fire the op nodes of
    `root`'s graph: each node after all of its consumers. Nodes are given by their index
    in gradbox's `topological_order()`, the same from one run of the same code to the
    next. A learner's walk over a set (`_prev`) picks one of these by chance."""
    topo = root.topological_order()
    index = {id(n): i for i, n in enumerate(topo)}
    waiting = [0] * len(topo)  # consumers not fired yet
    for node in topo:
        for child in node.inputs:
            waiting[index[id(child)]] += 1
    ops = [i for i, n in enumerate(topo) if n.inputs]
    orders: list[list[int]] = []

    def extend(order: list[int]) -> None:
        if len(orders) >= cap:
            return
        if len(order) == len(ops):
            orders.append(list(order))
            return
        fired = set(order)
        for i in ops:
            if i in fired or waiting[i]:
                continue
            for child in topo[i].inputs:
                waiting[index[id(child)]] -= 1
            order.append(i)
            extend(order)
            order.pop()
            for child in topo[i].inputs:
                waiting[index[id(child)]] += 1

    extend([])
    return orders


def _backward_assigning(slots: frozenset[Slot], order: list[int]) -> Callable[[Any], None]:
    """A backward firing the nodes in `order` whose closures assign in `slots`."""
    from gradbox.teaching.pitfalls import contributions

    def backward(root: Any) -> None:
        topo = root.topological_order()
        root.grad = 1.0
        for i in order:
            node = topo[i]
            for slot, (child, share) in enumerate(contributions(node)):
                if (node.op, slot) in slots:
                    child.grad = share  # the mistake: `=` where the engine has `+=`
                else:
                    child.grad = child.grad + share
    return backward


def assign_variants(code: str, expressions: tuple[str, ...],
                    extra: dict[str, Any] | None = None
                    ) -> list[tuple[frozenset[Slot], dict[str, float]]]:
    """What `code` gives on gradbox's engine when the closures of some ops assign (`=`)
    to some of their inputs instead of adding: for every set of (op, input) slots and
    every order a backward may fire the nodes in, [(slots, {expression: value})],
    fewest slots first. A learner who wrote `self.grad = ...` in `*` alone gets one of
    these, whichever order their walk over `_prev` happened to fire the nodes in."""
    from gradbox.autograd.engine import Value

    roots: list[Any] = []
    ns: dict[str, Any] = {"Value": Value, **(extra or {})}
    try:
        with _engine_backward(roots.append):
            exec(compile(code, "<variant>", "exec"), ns)  # our own case code
    except Exception:
        return []
    if len({id(r) for r in roots}) != 1:
        return []  # no backward, or two graphs: not this kind of mistake
    orders = _firing_orders(roots[0])
    present = sorted({(n.op, s) for n in roots[0].topological_order()
                      for s in range(len(n.inputs))})
    if len(present) > MAX_SLOTS:
        return []
    sets = [frozenset(c) for k in range(1, len(present) + 1)
            for c in itertools.combinations(present, k)]
    out: list[tuple[frozenset[Slot], dict[str, float]]] = []
    for slots in sets:
        for order in orders:
            ns = {"Value": Value, **(extra or {})}
            try:
                with _engine_backward(_backward_assigning(slots, order)):
                    exec(compile(code, "<variant>", "exec"), ns)
                out.append((slots, {e: float(eval(e, ns)) for e in expressions}))
            except Exception:  # a variant that cannot run names nothing
                continue
    return out
