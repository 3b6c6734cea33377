"""The learner's graph as plain records, with gradbox's numbers beside the learner's.

Runs in the sandbox's child, on the learner's own objects: everything read from them is
read defensively (a `_prev` that is not a set, a `data` that is not a number) and turned
into floats, so only `GraphNode` records leave the process.

The expected numbers come from the same case code run on gradbox's reference
(`gradbox.build.reference`). The two graphs are matched from the output back: the
learner's and the reference's node for a variable of the case (`a`, `b`, `L`) are the same
node; otherwise two matched nodes with the same number of parents have their parents
matched, the pairing chosen by the closest values. Where the shapes part (an op the
learner built from other ops) nothing further is matched and the expected numbers are
None: the graph is still drawn, without a comparison there.
"""

from __future__ import annotations

import math
from typing import Any

from gradbox.build.report import CaseGraph, GraphNode

__all__ = ["MAX_NODES", "as_number", "case_graph", "parents_of", "topological"]

MAX_NODES = 300  # a failing case's graph worth drawing; past it the graph is not sent


def as_number(x: Any) -> float:
    """The learner's number as a float; nan for anything else (a Value in `grad`...)."""
    if isinstance(x, bool):
        return float(x)
    try:
        return float(x)
    except (TypeError, ValueError, OverflowError):
        return math.nan


def parents_of(node: Any) -> list[Any]:
    """The learner's `_prev` as a list of distinct objects (by identity); [] if unreadable."""
    try:
        prev = node._prev
        items = list(prev) if prev is not None else []
    except Exception:  # the learner's object may raise anything
        return []
    seen: set[int] = set()
    out = []
    for item in items:
        if id(item) not in seen and hasattr(item, "data"):
            seen.add(id(item))
            out.append(item)
    return out


def topological(root: Any, limit: int = MAX_NODES) -> list[Any] | None:
    """The nodes `root` was built from, each after its parents, root last (iterative);
    None when there are more than `limit`."""
    order: list[Any] = []
    visited: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)  # every parent of node is already in order
            continue
        if id(node) in visited:  # pushed twice; in a graph without cycles, done already
            continue
        visited.add(id(node))
        if len(visited) > limit:
            return None
        stack.append((node, True))
        stack.extend((p, False) for p in parents_of(node) if id(p) not in visited)
    return order


def _match(mine: Any, ref: Any, names: dict[str, tuple[Any, Any]]) -> dict[int, Any]:
    """id(learner node) -> reference node, from the output back (see the module's note)."""
    pairs: dict[int, Any] = {}
    for m, r in names.values():
        pairs[id(m)] = r
    pairs[id(mine)] = ref
    stack = [(mine, ref)]
    seen = {id(mine)}
    while stack:
        m, r = stack.pop()
        mp, rp = parents_of(m), parents_of(r)
        if len(mp) != len(rp) or not mp:
            continue
        if len(mp) == 2:
            straight = _gap(mp[0], rp[0]) + _gap(mp[1], rp[1])
            crossed = _gap(mp[0], rp[1]) + _gap(mp[1], rp[0])
            # A named parent is paired with its own name's node, whatever the values.
            if pairs.get(id(mp[0])) is rp[1] or pairs.get(id(mp[1])) is rp[0]:
                crossed = -1.0
            if crossed < straight:
                rp = [rp[1], rp[0]]
        else:
            mp = sorted(mp, key=lambda n: as_number(getattr(n, "data", math.nan)))
            rp = sorted(rp, key=lambda n: as_number(n.data))
        for a, b in zip(mp, rp, strict=True):
            pairs.setdefault(id(a), b)
            if id(a) not in seen:
                seen.add(id(a))
                stack.append((a, pairs[id(a)]))
    return pairs


def _gap(m: Any, r: Any) -> float:
    gap = abs(as_number(getattr(m, "data", math.nan)) - as_number(r.data))
    return gap if math.isfinite(gap) else 1e300


def case_graph(mine_root: Any, ref_root: Any | None, mine_ns: dict[str, Any],
               ref_ns: dict[str, Any] | None, *, leaves_only: bool = False
               ) -> CaseGraph | None:
    """The learner's graph ending in `mine_root`, with the expected numbers beside it;
    None when it is too big to draw or not a graph at all. `leaves_only`: expect a
    gradient of the leaves alone -- after two backward calls an engine may or may not
    have reset its intermediate nodes, and neither is wrong."""
    if mine_root is None or not hasattr(mine_root, "data"):
        return None
    nodes = topological(mine_root)
    if nodes is None:
        return None
    names: dict[str, tuple[Any, Any]] = {}
    labels: dict[int, str] = {}
    for name, obj in mine_ns.items():
        if name.startswith("_") or id(obj) in labels:
            continue
        if any(obj is n for n in nodes):
            labels[id(obj)] = name
            if ref_ns is not None and name in ref_ns:
                names[name] = (obj, ref_ns[name])
    pairs = _match(mine_root, ref_root, names) if ref_root is not None else {}
    index = {id(n): i for i, n in enumerate(nodes)}
    records = []
    for i, node in enumerate(nodes):
        ref = pairs.get(id(node))
        op = getattr(node, "_op", "")
        records.append(GraphNode(
            id=i, op=op if isinstance(op, str) else repr(op)[:20],
            label=labels.get(id(node), ""),
            parents=tuple(index[id(p)] for p in parents_of(node) if id(p) in index),
            data=as_number(getattr(node, "data", math.nan)),
            grad=as_number(getattr(node, "grad", math.nan)),
            expected_data=None if ref is None else as_number(ref.data),
            expected_grad=None if ref is None or (leaves_only and parents_of(node))
            else as_number(ref.grad)))
    first_wrong = next((r.id for r in reversed(records) if r.wrong), None)
    return CaseGraph(tuple(records), first_wrong)
