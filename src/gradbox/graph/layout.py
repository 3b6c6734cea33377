"""Layered layout of an operation graph: inputs on the left, the root on the right.

Cached by `structure_key`: a training step's graph of the same shape reuses its layout.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import numpy as np

from gradbox.autograd.ops import PENALTIES
from gradbox.graph.core import Graph, consumers_of

# --- layout ---------------------------------------------------------------------------
_LAYOUT_CACHE: OrderedDict[tuple[int, int, str], dict[int, tuple[float, float]]] = OrderedDict()
LAYOUT_CACHE_SIZE = 8


def layered_layout(graph: Graph, sweeps: int = 4) -> dict[int, tuple[float, float]]:
    """Node id -> (layer, row): inputs on the left, the root on the right.

    Cached by `structure_key`: a new step's graph of the same shape gets the very same
    dict back (treat it as read-only).
    """
    key = graph.structure_key
    cached = _LAYOUT_CACHE.get(key)
    if cached is not None:
        _LAYOUT_CACHE.move_to_end(key)
        return cached
    layout = _compute_layout(graph.ops, graph.children, graph.consumers, sweeps)
    _LAYOUT_CACHE[key] = layout
    if len(_LAYOUT_CACHE) > LAYOUT_CACHE_SIZE:
        _LAYOUT_CACHE.popitem(last=False)
    return layout


def clear_layout_cache() -> None:
    _LAYOUT_CACHE.clear()


def assign_layers(children: Sequence[Sequence[int]],
                  consumers: Sequence[Sequence[int]]) -> list[int]:
    """Topological depth, then leaves and single-use ops moved next to their use.

    Pure depth piles every leaf into column 0 and, in micrograd's demo, all 256
    products w·h of the second layer into one 256-row column, although each feeds a
    different step of its neuron's sum. Moving a node next to its only consumer keeps
    total edge length the same as long as at most one of its inputs is an op (leaf
    inputs move along with it), and spreads such columns out.
    """
    n = len(children)
    layer = [0] * n
    for i, ch in enumerate(children):
        if ch:
            layer[i] = 1 + max(layer[c] for c in ch)
    for i in range(n - 1, -1, -1):
        uses = consumers[i]
        if not uses:
            continue
        ch = children[i]
        if not ch:
            layer[i] = min(layer[c] for c in uses) - 1
        elif len(set(uses)) == 1 and sum(1 for c in set(ch) if children[c]) <= 1:
            layer[i] = layer[uses[0]] - 1
    low = min(layer) if layer else 0
    return [x - low for x in layer]


def _spread(desired: list[float], gap: float = 1.0,
            weights: list[float] | None = None) -> list[float]:
    """Positions closest to `desired` (weighted least squares), in order, `gap` apart.

    With z_i = y_i - i*gap this is isotonic regression, solved exactly by pooling
    adjacent violators in one pass.
    """
    weights = weights or [1.0] * len(desired)
    blocks: list[list[float]] = []  # [weighted sum, total weight, count]
    for i, (d, w) in enumerate(zip(desired, weights)):
        blocks.append([(d - i * gap) * w, w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
            s, w_, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += w_
            blocks[-1][2] += c
    out: list[float] = []
    for s, w_, c in blocks:
        out.extend([s / w_] * int(c))
    return [z + i * gap for i, z in enumerate(out)]


# A sum chain longer than this (Python's sum() over every parameter, as in the L2
# penalty: 337 additions in the demo) is drawn folded into rows of FOLD_WIDTH under
# the rest. Unfolded it made the demo graph 341 columns wide and ~300 rows tall, with
# the whole network squeezed into the first 50 columns: at "fit" the network was a
# smear at the left edge of a long wedge.
FOLD_LONGER_THAN = 96
FOLD_WIDTH = 32
STRAIGHTEN = 8
PINNED = 100.0
TERM_PULL = 4.0


def _compute_layout(ops: Sequence[str], children: Sequence[Sequence[int]],
                    consumers: Sequence[Sequence[int]], sweeps: int
                    ) -> dict[int, tuple[float, float]]:
    blocks = [b for b in (_fold_block(chain, children, consumers)
                          for chain in _long_chains(ops, children, consumers)) if b]
    apart = penalty_nodes(ops, children)
    if not blocks and not apart:
        return _layered(ops, children, consumers, sweeps)
    folded = {i for chain, sides in blocks for i in chain + [s for ss in sides for s in ss]}
    folded.update(apart)
    main = [i for i in range(len(children)) if i not in folded]
    new = {old: k for k, old in enumerate(main)}
    sub_children = [tuple(new[c] for c in children[i] if c in new) for i in main]
    layout = {main[k]: xy for k, xy in
              _layered([ops[i] for i in main], sub_children, consumers_of(sub_children),
                       sweeps).items()}
    bottom = max((y for _, y in layout.values()), default=-2.0) + 2.5
    for chain, sides in blocks:
        rows = max(len(ss) for ss in sides)
        band = rows + 2.0
        # Rows of at least FOLD_WIDTH, wider for huge sums so the block stays roughly
        # square on screen (a column is 150 px wide, a row of terms ~170 px tall).
        width = max(FOLD_WIDTH, round(math.sqrt(len(chain) * 1.1)))
        users = [layout[c][0] for c in consumers[chain[-1]] if c in layout]
        x0 = max(0.0, (min(users) if users else width) - width)
        for k, node in enumerate(chain):
            x = x0 + k % width
            y = bottom + (k // width) * band + rows
            layout[node] = (x, y)
            for j, side in enumerate(sides[k]):
                layout[side] = (x, y - 1 - j)  # right above the addition that uses it
        bottom += ((len(chain) - 1) // width + 1) * band + 1.0
    for node in apart:
        # A penalty's inputs are the weights, all over the network: drawn in the middle
        # its hundreds of faint edges crossed the loss's last steps. Below the rest, a
        # column before its use, they fan out under the network instead.
        users = [layout[c][0] for c in consumers[node] if c in layout]
        layout[node] = ((min(users) if users else 1.0) - 1.0, bottom)
        bottom += 1.0
    return layout


def penalty_nodes(ops: Sequence[str], children: Sequence[Sequence[int]]) -> list[int]:
    """The penalty nodes (`Σ w²`, `Σ |w|`) whose inputs are all leaves: drawn apart."""
    return [i for i, op in enumerate(ops)
            if op in PENALTIES and all(not children[c] for c in children[i])]


def folded_sums(graph: Graph) -> list[list[int]]:
    """The sum chains `layered_layout` draws folded into rows (ids in chain order)."""
    return [chain for chain in _long_chains(graph.ops, graph.children, graph.consumers)
            if _fold_block(chain, graph.children, graph.consumers)]


def spines(ops: Sequence[str], children: Sequence[Sequence[int]],
           consumers: Sequence[Sequence[int]]) -> list[list[int]]:
    """Runs of additions, each the first operand and only use of the previous one."""
    following: dict[int, int] = {}
    for p, ch in enumerate(children):
        if ops[p] == "+" and ch and ops[ch[0]] == "+" and len(consumers[ch[0]]) == 1:
            following[ch[0]] = p
    has_previous = set(following.values())
    chains = []
    for start in following:
        if start in has_previous:
            continue
        chain = [start]
        while chain[-1] in following:
            chain.append(following[chain[-1]])
        chains.append(chain)
    return chains


def _long_chains(ops: Sequence[str], children: Sequence[Sequence[int]],
                 consumers: Sequence[Sequence[int]]) -> list[list[int]]:
    """The running sums long enough to fold."""
    return [c for c in spines(ops, children, consumers) if len(c) > FOLD_LONGER_THAN]


def _fold_block(chain: list[int], children: Sequence[Sequence[int]],
                consumers: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]] | None:
    """The chain and, per addition, the few nodes only it uses (the terms it adds)."""
    sides: list[list[int]] = []
    for k, node in enumerate(chain):
        mine: list[int] = []
        stack = [c for slot, c in enumerate(children[node]) if k == 0 or slot > 0]
        while stack:
            c = stack.pop(0)
            if c not in mine and set(consumers[c]) <= {node, *mine}:
                mine.append(c)
                stack.extend(children[c])
        if len(mine) > 3:
            return None  # big terms: folding would hide their structure, leave them be
        sides.append(mine)
    return chain, sides


def _layered(ops: Sequence[str], children: Sequence[Sequence[int]],
             consumers: Sequence[Sequence[int]], sweeps: int
             ) -> dict[int, tuple[float, float]]:
    # Hand-rolled barycenter sweeps rather than grandalf's Sugiyama layout: measured on
    # micrograd's demo graph (1,663 nodes) grandalf took 1.4 s to build its graph and
    # 8.4 s for one drawing pass, because the L2 penalty's 337-long sum chain gives
    # ~63,000 layer crossings of long edges, each a dummy node. Here long edges pull
    # on their ends directly, which costs nothing extra.
    n = len(children)
    if n == 0:
        return {}
    layer = assign_layers(children, consumers)
    layers: list[list[int]] = [[] for _ in range(max(layer) + 1)]
    for i in range(n):  # ids are depth-first from the root, so neighbours start close
        layers[layer[i]].append(i)
    y = [0.0] * n
    for nodes in layers:
        for rank, i in zip(_spread([0.0] * len(nodes)), nodes):
            y[i] = rank
    # Each neighbour pulls with weight 1/span²: a short edge should be straight, a long
    # one (a weight used again by the L2 penalty hundreds of columns away) barely matters.
    # A term hangs off the running sum that adds it: without the extra pull toward the
    # sum, a 64-term neuron's terms slid away from it, two thirds of a row per term.
    runs = spines(ops, children, consumers)
    on_spine = {i for chain in runs for i in chain}

    def pull(child: int, parent: int) -> float:
        return (TERM_PULL if parent in on_spine else 1.0) / (layer[parent] - layer[child]) ** 2

    below = [[(c, pull(c, i)) for c in sorted(set(ch))] for i, ch in enumerate(children)]
    above = [[(p, pull(i, p)) for p in sorted(set(us))] for i, us in enumerate(consumers)]

    def place(nodes: list[int], neighbours: list[list[tuple[int, float]]],
              reorder: bool, pinned: dict[int, float] | None = None) -> None:
        desired = []
        for i in nodes:
            nb = neighbours[i]
            if pinned and i in pinned:
                desired.append(pinned[i])
            elif nb:
                total = sum(w for _, w in nb)
                desired.append(sum(y[j] * w for j, w in nb) / total)
            else:
                desired.append(y[i])
        if reorder:
            pairs = sorted(zip(desired, [y[i] for i in nodes], nodes))
            desired = [d for d, _, _ in pairs]
            nodes[:] = [i for _, _, i in pairs]
        weights = [PINNED if pinned and i in pinned else 1.0 for i in nodes]
        for i, pos in zip(nodes, _spread(desired, 1.0, weights)):
            y[i] = pos

    both = [below[i] + above[i] for i in range(n)]
    for _ in range(sweeps):
        for nodes in layers[1:]:
            place(nodes, below, True)
        for nodes in reversed(layers[:-1]):
            place(nodes, above, True)
    # Final straightening with the order fixed: each node toward all its neighbours,
    # and every running sum held on one row (its median), its terms arranged around it.
    pinned = {}
    for chain in runs:
        row = sorted(y[i] for i in chain)[len(chain) // 2]
        pinned.update((i, row) for i in chain)
    for _ in range(STRAIGHTEN):
        for nodes in layers:
            place(nodes, both, False, pinned)
    top = min(y)
    return {i: (float(layer[i]), y[i] - top) for i in range(n)}


# Edges longer than this (in layout units) from a node used several times are drawn
# faint: a weight reused by the L2 penalty far away would otherwise cover the picture.
FAINT_EDGE_LENGTH = 4.0


def is_faint_edge(graph: Graph, layout: Mapping[int, tuple[float, float]], child: int,
                  parent: int) -> bool:
    """Long, and not the only use of its child (a single use is part of a chain: keep it)."""
    return (len(graph.consumers[child]) > 1
            and math.dist(layout[child], layout[parent]) > FAINT_EDGE_LENGTH)


def count_crossings(graph: Graph, layout: Mapping[int, tuple[float, float]],
                    solid_only: bool = False) -> int:
    """Pairs of edges that cross in the drawing (straight lines), for judging a layout.

    `solid_only` leaves out the faint edges (`is_faint_edge`).
    """
    edges = [(c, p) for c, p in set(graph.edges)
             if not solid_only or not is_faint_edge(graph, layout, c, p)]
    if len(edges) < 2:
        return 0
    pts = np.array([[*layout[c], *layout[p]] for c, p in edges])
    x1, y1, x2, y2 = pts.T
    total = 0
    for k in range(len(edges) - 1):
        ax, ay, bx, by = x1[k], y1[k], x2[k], y2[k]
        cx, cy, dx, dy = x1[k + 1:], y1[k + 1:], x2[k + 1:], y2[k + 1:]
        d1 = (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
        d2 = (bx - ax) * (dy - ay) - (by - ay) * (dx - ax)
        d3 = (dx - cx) * (ay - cy) - (dy - cy) * (ax - cx)
        d4 = (dx - cx) * (by - cy) - (dy - cy) * (bx - cx)
        total += int(np.count_nonzero((d1 * d2 < 0) & (d3 * d4 < 0)))
    return total

