"""A graph seen at a glance: each neuron one box, a long penalty sum one box.

The demo network's graph has 519 operations; at a size where every one fits, none is
legible. `overview_groups` finds the parts a person names -- a neuron, a penalty --
and `collapse` draws each such part as one node of a smaller graph (a quotient: an
edge between two boxes for every edge between their members), while the parts the
user opened stay as their operations, in place. A box shows its part's output: its
value and the gradient that arrived at it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass

from gradbox.autograd.nn import parse_parameter_name
from gradbox.graph.core import Graph, consumers_of, structure_key
from gradbox.graph.layout import spines
from gradbox.graph.network import neuron_nodes

# A penalty sum shorter than this is left as its additions: small enough to read.
PENALTY_MIN_TERMS = 8


@dataclass(frozen=True)
class Group:
    """Part of a graph drawn as one box."""

    key: str                 # what identifies it across steps: "layers.0.neurons.3", "L2"
    title: str               # what its box says
    members: tuple[int, ...]  # node ids, ascending
    output: int              # the member whose value and gradient the box shows
    kind: str                # "neuron" or "penalty"


def neuron_groups(graph: Graph) -> list[Group]:
    """One group per neuron found from its parameter names (weights, bias, ops)."""
    units: dict[int, int] = {}
    for name in graph.parameter_nodes:
        parsed = parse_parameter_name(name)
        if parsed is not None and parsed[2] is None:
            units[parsed[0]] = max(units.get(parsed[0], 0), parsed[1] + 1)
    groups = []
    for layer in sorted(units):
        for index in range(units[layer]):
            found = neuron_nodes(graph, layer, index)
            if found is None:
                continue
            members = tuple(sorted({*found.ops, *found.weights}))
            groups.append(Group(f"layers.{layer}.neurons.{index}",
                                f"neuron {index} of layers.{layer}", members, found.output,
                                "neuron"))
    return groups


def penalty_groups(graph: Graph) -> list[Group]:
    """Sums of a parameter's square (L2) or size (L1), one term per parameter: Python's
    ``sum(p * p for p in params)`` is a chain of additions, one per parameter. (The
    Trainer's penalties are one node each, `Value.sum_of_squares`; a learner's own
    expression may still be written as a chain.)"""
    groups = []
    for chain in spines(graph.ops, graph.children, graph.consumers):
        members, kinds, terms, penalty = set(chain), set(), 0, True
        for k, node in enumerate(chain):
            for term in graph.children[node] if k == 0 else graph.children[node][1:]:
                kind = _penalty_term(graph, term)
                if kind is not None:
                    kinds.add(kind)
                    members.add(term)
                    terms += 1
                elif not graph.children[term] and graph.names[term] is None:
                    members.add(term)  # the 0 that sum() starts from
                else:
                    penalty = False  # a term that is something else
        if penalty and len(kinds) == 1 and terms >= PENALTY_MIN_TERMS:
            which = kinds.pop()
            groups.append(Group(which, f"{which} penalty, {terms} terms",
                                tuple(sorted(members)), chain[-1], "penalty"))
    return groups


def _penalty_term(graph: Graph, node: int) -> str | None:
    """'L2' for p*p or p**2 of a parameter p, 'L1' for abs(p), else None."""
    ch = graph.children[node]
    if not ch or any(graph.names[c] is None for c in ch):
        return None
    op = graph.ops[node]
    if (op == "*" and len(ch) == 2 and ch[0] == ch[1]) or op == "**2":
        return "L2"
    if op == "abs":
        return "L1"
    return None


def overview_groups(graph: Graph) -> list[Group]:
    """Every neuron and every penalty: what the operation level opens collapsed."""
    return neuron_groups(graph) + penalty_groups(graph)


def collapse(graph: Graph, groups: Sequence[Group]) -> Graph:
    """`graph` with each group drawn as one node (see the module docstring).

    The result's `members[i]` lists the ids of `graph` node i stands for, and
    `original_ids[i]` the one whose numbers it shows (a group's output).
    """
    if not groups:
        return graph
    owner: dict[int, int] = {}
    for g, group in enumerate(groups):
        for m in group.members:
            owner[m] = g
    n = len(graph)
    # Quotient nodes: ("n", id) for a node outside every group, ("g", index) for a group.
    keys: list[tuple[str, int]] = [("n", i) for i in range(n) if i not in owner]
    keys += [("g", g) for g in range(len(groups))]
    where = {k: q for q, k in enumerate(keys)}

    def node_of(i: int) -> int:
        return where[("g", owner[i])] if i in owner else where[("n", i)]

    children: list[list[int]] = [[] for _ in keys]
    for q, (kind, x) in enumerate(keys):
        inside = set(groups[x].members) if kind == "g" else {x}
        for m in sorted(inside):
            for c in graph.children[m]:
                if c in inside:
                    continue
                cq = node_of(c)
                # A node's operands stay one per slot (a + a lists a twice), but a box
                # is drawn once per node that uses it: the L2 penalty takes every weight,
                # 17 of them from one neuron's box.
                if (kind == "n" and c not in owner) or cq not in children[q]:
                    children[q].append(cq)
    # Topological order, the original order as far as it allows (a group sits where
    # its output was): ids must stay topological numbers.
    rank = [x if kind == "n" else groups[x].output for kind, x in keys]
    order = _toposort(children, rank)
    new = {old: k for k, old in enumerate(order)}
    kids = tuple(tuple(new[c] for c in children[old]) for old in order)
    ops_, labels, names, source, originals, members = [], [], [], [], [], []
    for old in order:
        kind, x = keys[old]
        if kind == "n":
            ops_.append(graph.ops[x])
            labels.append(graph.labels[x])
            names.append(graph.names[x])
            originals.append(x)
            members.append((x,))
        else:
            group = groups[x]
            ops_.append(group.kind)
            labels.append(group.title)
            names.append(None)
            originals.append(group.output)
            members.append(group.members)
        source.append(graph.source_of(originals[-1]))
    ops_t = tuple(ops_)
    return Graph(ops=ops_t, labels=tuple(labels), names=tuple(names), children=kids,
                 consumers=consumers_of(kids), structure_key=structure_key(ops_t, kids),
                 _source=tuple(source), original_ids=tuple(originals),
                 members=tuple(members))


def _toposort(children: Sequence[Sequence[int]], rank: Sequence[int]) -> list[int]:
    parents: list[list[int]] = [[] for _ in children]
    waiting = [len(set(ch)) for ch in children]
    for p, ch in enumerate(children):
        for c in set(ch):
            parents[c].append(p)
    ready = [(rank[i], i) for i in range(len(children)) if waiting[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for p in parents[i]:
            waiting[p] -= 1
            if waiting[p] == 0:
                heapq.heappush(ready, (rank[p], p))
    if len(order) != len(children):
        raise ValueError("grouping made a cycle: these groups cannot be drawn as boxes")
    return order


def with_numbers_of(collapsed: Graph, graph: Graph) -> Graph:
    """A collapsed graph's structure with the numbers of `graph`, a later step's graph of
    the same shape: collapsing again every step would redo the work for nothing."""
    assert collapsed.original_ids is not None
    source = tuple(graph.source_of(o) for o in collapsed.original_ids)
    return Graph(collapsed.ops, collapsed.labels, collapsed.names, collapsed.children,
                 collapsed.consumers, collapsed.structure_key, source,
                 collapsed.original_ids, collapsed.boundary, collapsed.members)
