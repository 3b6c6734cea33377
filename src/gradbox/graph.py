"""The computation graph as data: traced from a `Value`, laid out, explained, exported.

`trace(root)` freezes the *structure* of the graph the engine built (which node
feeds which, in topological order) and keeps the live `Value`s beside it, so the
numbers shown are always the engine's own. Everything here is plain Python and
numpy; the Qt view (`gradbox.views.graph_view`) only draws what this module says.

Node ids are topological numbers: every node's inputs have smaller ids, the root
(usually the loss) has the largest. A training step builds a new graph of the same
shape, which traces to the same ids and the same `structure_key`, so a layout is
computed once and reused (`layered_layout`).
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from gradbox.engine import Value

ACTIVATION_OPS = frozenset({"relu", "tanh", "sigmoid"})
_POW_OP = re.compile(r"^\*\*(.+)$")
_PARAM_NAME = re.compile(r"^layers\.(\d+)\.neurons\.(\d+)\.(w\.(\d+)|b)$")


class _Frozen:
    """A node's data and gradient captured at one moment (see `Graph.snapshot`)."""

    __slots__ = ("data", "grad")

    def __init__(self, data: Any, grad: Any) -> None:
        self.data = data
        self.grad = grad


class NamedParameters(Protocol):
    def named_parameters(self) -> list[tuple[str, Value]]: ...


@dataclass(frozen=True, eq=False)
class Graph:
    """The frozen structure of one computation graph plus its live values.

    ``children[i]`` lists node i's operands in order (``a + a`` lists ``a`` twice);
    ``consumers[i]`` lists, once per use, the nodes that take node i as an operand,
    so ``len(consumers[i]) > 1`` is exactly the fan-out where ``+=`` matters.
    """

    ops: tuple[str, ...]
    labels: tuple[str, ...]
    names: tuple[str | None, ...]
    children: tuple[tuple[int, ...], ...]
    consumers: tuple[tuple[int, ...], ...]
    structure_key: tuple[int, int, str]
    # Values (or frozen copies) in id order; read, never written.
    _source: tuple[Any, ...] = field(repr=False)
    # For a subgraph: the id each node has in the graph it was cut from.
    original_ids: tuple[int, ...] | None = field(default=None, repr=False)
    # Subgraph nodes that stand in for inputs from outside the cut.
    boundary: frozenset[int] = field(default=frozenset(), repr=False)

    # --- structure ---------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ops)

    @property
    def root(self) -> int:
        return len(self.ops) - 1

    @cached_property
    def edges(self) -> tuple[tuple[int, int], ...]:
        """(child, parent) pairs, one per operand: the direction data flows."""
        return tuple((c, p) for p, ch in enumerate(self.children) for c in ch)

    def topological_number(self, node: int) -> int:
        """Ids are assigned in topological order, so a node's id is its number."""
        return node

    def is_leaf(self, node: int) -> bool:
        return not self.children[node]

    def is_fanout(self, node: int) -> bool:
        return len(self.consumers[node]) > 1

    @cached_property
    def depth(self) -> tuple[int, ...]:
        """Longest path from any leaf: leaves 0, an op one more than its deepest input."""
        depth = [0] * len(self.ops)
        for i, ch in enumerate(self.children):
            if ch:
                depth[i] = 1 + max(depth[c] for c in ch)
        return tuple(depth)

    @cached_property
    def parameter_nodes(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.names) if name is not None}

    def find_parameter(self, name: str) -> int | None:
        return self.parameter_nodes.get(name)

    def node_of(self, value: Value) -> int | None:
        """The id of a live `Value` in this graph, if it is one of its nodes."""
        return self._index.get(id(value))

    @cached_property
    def _index(self) -> dict[int, int]:
        return {id(v): i for i, v in enumerate(self._source)}

    @cached_property
    def n_samples(self) -> int:
        """How many samples the array nodes hold (1 for an all-float graph)."""
        for v in self._source:
            if type(v.data) is np.ndarray:
                return int(v.data.shape[0])
        return 1

    def display_name(self, node: int) -> str:
        """What to call a node on screen: its parameter name, its label, or its op."""
        name = self.names[node]
        if name:
            return name
        if self.labels[node]:
            return self.labels[node]
        if not self.children[node]:
            return "input" if node in self.boundary else "const"
        return self.ops[node]

    # --- numbers -----------------------------------------------------------------
    def data(self, node: int) -> Any:
        """The node's raw data: a float, or the array of every sample."""
        return self._source[node].data

    def grad(self, node: int) -> Any:
        return self._source[node].grad

    def values(self, sample: int = 0) -> np.ndarray:
        """Every node's value for one sample (float nodes are shared by all samples)."""
        return np.fromiter((_at(v.data, sample) for v in self._source), np.float64,
                           len(self._source))

    def grads(self, sample: int = 0) -> np.ndarray:
        """Every node's gradient for one sample; 0.0 where no gradient has arrived."""
        return np.fromiter((_at(v.grad, sample) for v in self._source), np.float64,
                           len(self._source))

    def snapshot(self) -> Graph:
        """The same graph with today's numbers frozen (later steps will not change it).

        Useful for handing a graph to another thread or keeping it for a replay: the
        optimizer and `zero_grad` rebind `.data` and `.grad` on the very Values the live
        graph reads. Gradient arrays are copied too, so no later engine change that
        updated them in place could reach back into a snapshot.
        """
        frozen = tuple(_Frozen(v.data, np.array(v.grad) if type(v.grad) is np.ndarray
                               else v.grad) for v in self._source)
        return _replace_source(self, frozen)

    # --- cutting -----------------------------------------------------------------
    def subgraph(self, keep: Iterable[int]) -> Graph:
        """The nodes in `keep` plus, as boundary leaves, the inputs they take from outside.

        Ids are renumbered 0..k-1 in the original topological order, so a subgraph is
        a graph like any other (`original_ids` maps back).
        """
        kept = set(keep)
        boundary = {c for i in kept for c in self.children[i] if c not in kept}
        nodes = sorted(kept | boundary)
        new = {old: k for k, old in enumerate(nodes)}
        children = tuple(() if old in boundary else tuple(new[c] for c in self.children[old])
                         for old in nodes)
        ops = tuple("" if old in boundary else self.ops[old] for old in nodes)
        return Graph(
            ops=ops,
            labels=tuple(self.labels[old] or (self.display_name(old) if old in boundary else "")
                         for old in nodes),
            names=tuple(self.names[old] for old in nodes),
            children=children,
            consumers=_consumers(children),
            structure_key=_structure_key(ops, children),
            _source=tuple(self._source[old] for old in nodes),
            original_ids=tuple(nodes),
            boundary=frozenset(new[b] for b in boundary),
        )


def _replace_source(graph: Graph, source: tuple[Any, ...]) -> Graph:
    return Graph(graph.ops, graph.labels, graph.names, graph.children, graph.consumers,
                 graph.structure_key, source, graph.original_ids, graph.boundary)


def _at(x: Any, sample: int) -> float:
    return float(x[sample]) if type(x) is np.ndarray else float(x)


def _consumers(children: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    uses: list[list[int]] = [[] for _ in children]
    for parent, ch in enumerate(children):
        for c in ch:
            uses[c].append(parent)
    return tuple(tuple(u) for u in uses)


def _structure_key(ops: Sequence[str], children: Sequence[Sequence[int]]) -> tuple[int, int, str]:
    # A digest rather than the tuples themselves: comparing two keys must cost nothing
    # on every training step, and a 1,700-node tuple would be hashed each time.
    flat = array("i")
    for ch in children:
        flat.append(len(ch))
        flat.extend(ch)
    digest = hashlib.blake2b("\x1f".join(ops).encode(), digest_size=16)
    digest.update(flat.tobytes())
    return (len(ops), len(flat) - len(ops), digest.hexdigest())


def _name_lookup(names: Any) -> Mapping[Any, str]:
    if names is None:
        return {}
    if hasattr(names, "named_parameters"):
        return {p: n for n, p in names.named_parameters()}
    return names


def trace(root: Value, names: Mapping[int | Value, str] | NamedParameters | None = None
          ) -> Graph:
    """Freeze the structure of the graph that ends in `root`.

    `names` gives parameters their names, keyed by the `Value` or by ``id(value)``;
    a model (anything with ``named_parameters()``) is accepted as well.
    """
    order = root.topological_order()
    index = {id(v): i for i, v in enumerate(order)}
    lookup = _name_lookup(names)
    children = tuple(tuple(index[id(c)] for c in v._prev) for v in order)
    ops = tuple(v._op for v in order)
    if lookup:
        param_names = tuple(
            None if v._prev else (lookup.get(v) or lookup.get(id(v))) for v in order)
    else:
        param_names = (None,) * len(order)
    return Graph(
        ops=ops,
        labels=tuple(v.label for v in order),
        names=param_names,
        children=children,
        consumers=_consumers(children),
        structure_key=_structure_key(ops, children),
        _source=tuple(order),
    )


def backward_order(graph: Graph) -> list[int]:
    """The order nodes receive their complete gradient: reverse topological.

    It is the engine's own order (`Value.backward` walks ``reversed(topological_order())``):
    a node is passed on only after every consumer has added its share.
    """
    return list(range(len(graph) - 1, -1, -1))


# --- local derivatives and fan-out ---------------------------------------------------
def pow_exponent(op: str) -> float | None:
    """The k of a ``**k`` op label (the engine writes it as ``**{k:g}``)."""
    match = _POW_OP.match(op)
    return float(match.group(1)) if match else None


def local_derivative(graph: Graph, consumer: int, slot: int) -> Any:
    """d(consumer)/d(operand `slot`), from the data on both ends of the edge.

    Computed from `.data` rather than from what the op saved for its backward,
    because those saved values are freed after `backward()`; the data stays.
    """
    op = graph.ops[consumer]
    ch = graph.children[consumer]
    x = graph.data(ch[slot])
    out = graph.data(consumer)
    if op == "+":
        return 1.0
    if op == "*":
        return graph.data(ch[1 - slot])
    if op == "neg":
        return -1.0
    if op == "abs":
        return np.sign(x)
    if op == "tanh":
        return 1 - out * out
    if op == "exp":
        return out
    if op == "log":
        return 1 / x
    if op == "sin":
        return np.cos(x)
    if op == "relu":
        return (np.asarray(out) > 0).astype(np.float64) if type(out) is np.ndarray \
            else float(out > 0)
    if op == "sigmoid":
        return out * (1 - out)
    if op == "sum":
        return 1.0
    if op == "mean":
        return 1.0 / (x.shape[0] if type(x) is np.ndarray else 1)
    k = pow_exponent(op)
    if k is not None:
        return k * x ** (k - 1)
    raise ValueError(f"no local derivative known for op {op!r}")


LOCAL_DERIVATIVE_FORMULAS = {
    "+": "∂(a + b)/∂a = 1,  ∂(a + b)/∂b = 1",
    "*": "∂(a · b)/∂a = b,  ∂(a · b)/∂b = a",
    "neg": "∂(−a)/∂a = −1",
    "abs": "∂|a|/∂a = sign(a)",
    "tanh": "∂tanh(a)/∂a = 1 − tanh(a)² = 1 − out²",
    "exp": "∂eᵃ/∂a = eᵃ = out",
    "log": "∂ln(a)/∂a = 1/a",
    "sin": "∂sin(a)/∂a = cos(a)",
    "relu": "∂relu(a)/∂a = 1 if out > 0 else 0",
    "sigmoid": "∂σ(a)/∂a = σ(a)(1 − σ(a)) = out(1 − out)",
    "sum": "∂(Σ aᵢ)/∂aᵢ = 1 for every sample",
    "mean": "∂(mean aᵢ)/∂aᵢ = 1/n for every sample",
    "": "a leaf: no inputs, so backward stops here",
}


def derivative_formula(op: str) -> str:
    k = pow_exponent(op)
    if k is not None:
        return f"∂(a^{k:g})/∂a = {k:g} · a^{k - 1:g}"
    return LOCAL_DERIVATIVE_FORMULAS.get(op, f"(no formula for {op!r})")


@dataclass(frozen=True)
class Contribution:
    """One use of a node: what that consumer added to the node's gradient."""

    consumer: int
    slot: int
    local: float       # d(consumer)/d(node) for the sample
    upstream: float    # the consumer's gradient for the sample
    amount: float      # what this use added to node.grad as shown (see FanOut)
    sample_amount: float  # local × upstream for the sample alone
    per_sample: bool = False  # the consumer differs per sample (its product was an array)


@dataclass(frozen=True)
class FanOut:
    """Each consumer's contribution to a node's gradient, and their sum.

    For a node with one number per sample, everything is for the chosen sample.
    A float node (a parameter) is shared by every sample, so its gradient is the sum
    over samples: each `amount` is then that use's sum over samples too, while
    `local` and `upstream` are still shown for the chosen sample.
    """

    node: int
    sample: int
    contributions: tuple[Contribution, ...]
    total: float
    grad: float

    @property
    def matches(self) -> bool:
        """False when the node kept gradient from an earlier pass (no `zero_grad`)."""
        return math.isclose(self.total, self.grad, rel_tol=1e-9, abs_tol=1e-12)


def fanout_contributions(graph: Graph, node: int, sample: int = 0) -> FanOut:
    """Split a node's gradient into what each of its uses sent back.

    The sum equals the node's gradient: that is the accumulation rule (``+=``).
    The root has no consumers, so its total is 0 while its gradient is the seed 1.
    """
    shared = type(graph.data(node)) is not np.ndarray
    parts = []
    seen: dict[int, int] = {}
    for consumer in graph.consumers[node]:
        # `a + a` lists the consumer twice: the k-th use is the k-th operand slot.
        k = seen.get(consumer, 0)
        seen[consumer] = k + 1
        slot = [s for s, c in enumerate(graph.children[consumer]) if c == node][k]
        local = local_derivative(graph, consumer, slot)
        upstream = graph.grad(consumer)
        product = local * upstream
        # A float node is shared by every sample, and the engine sums what they send.
        amount = float(np.sum(product)) if shared else _at(product, sample)
        local_i, upstream_i = _at(local, sample), _at(upstream, sample)
        parts.append(Contribution(consumer, slot, local_i, upstream_i, amount,
                                  local_i * upstream_i, type(product) is np.ndarray))
    total = math.fsum(p.amount for p in parts)
    return FanOut(node, sample, tuple(parts), total, _at(graph.grad(node), sample))


# --- text -----------------------------------------------------------------------------
def fmt(x: float) -> str:
    """Four significant digits: enough to follow a chain rule by hand, short enough to fit."""
    if x == 0:
        return "0"
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return f"{x:.4g}"


def details(graph: Graph, node: int, sample: int = 0, sample_label: str | None = None) -> str:
    """Everything about one node, as plain text for the details pane.

    `sample_label` names the sample in the text ("point 17") when its index in the
    graph's arrays is not what the user knows it by (a mini-batch's position 3).
    """
    op = graph.ops[node]
    called = sample_label or f"sample {sample}"
    name = graph.names[node]
    shared = type(graph.data(node)) is not np.ndarray
    lines = [f"Node #{node} — {graph.display_name(node)}",
             f"topological number {node} of {len(graph)}; receives its gradient "
             f"{len(graph) - node}{_ordinal(len(graph) - node)} in backward"]
    if node in graph.boundary:
        lines.append("an input from outside the expanded neuron")
    lines.append(f"op: {op or 'leaf'}")
    lines.append(f"local derivative: {derivative_formula(op)}")
    if graph.children[node]:
        lines.append("inputs:")
        for slot, c in enumerate(graph.children[node]):
            lines.append(f"  {slot}: #{c} {graph.display_name(c)} = "
                         f"{fmt(_at(graph.data(c), sample))}")
    which = "every sample" if shared and graph.n_samples > 1 else called
    lines.append(f"value ({which}): {fmt(_at(graph.data(node), sample))}")
    if shared and graph.n_samples > 1:
        lines.append(f"grad (sum over {graph.n_samples} samples): "
                     f"{fmt(_at(graph.grad(node), sample))}")
    else:
        lines.append(f"grad ({called}): {fmt(_at(graph.grad(node), sample))}")
    if name:
        lines.append(f"parameter: {name}")
    if graph.consumers[node]:
        fan = fanout_contributions(graph, node, sample)
        uses = len(fan.contributions)
        lines.append(f"used {uses} time{'s' if uses > 1 else ''}"
                     + (" (fan-out: the gradients add up, +=)" if uses > 1 else "") + ":")
        for part in fan.contributions:
            step = (f"local {fmt(part.local)} × upstream {fmt(part.upstream)} = "
                    f"{fmt(part.sample_amount)}")
            if shared and part.per_sample:
                step = f"{called}: {step}; over all samples {fmt(part.amount)}"
            lines.append(f"  via #{part.consumer} ({graph.ops[part.consumer]}), "
                         f"operand {part.slot}: {step}")
        lines.append(f"  sum = {fmt(fan.total)}"
                     + (" = grad" if fan.matches else
                        f" ≠ grad {fmt(fan.grad)}: gradient left over from an earlier "
                        f"backward (was zero_grad skipped?)"))
    return "\n".join(lines)


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def gradient_bins(grads: np.ndarray, levels: int = 6) -> np.ndarray:
    """Colour classes for gradients: sign times a log-magnitude level in 1..levels, 0 = none.

    The scale is relative to the largest gradient in view (its 98th percentile, so one
    outlier does not wash everything out); each level is a factor 10^(1/2) smaller.
    """
    # nan/inf (a diverged run) get no colour rather than breaking the scale
    grads = np.nan_to_num(np.asarray(grads, dtype=np.float64), nan=0.0, posinf=0.0,
                          neginf=0.0)
    magnitude = np.abs(grads)
    nonzero = magnitude[magnitude > 0]
    if nonzero.size == 0:
        return np.zeros(len(grads), dtype=np.int64)
    top = float(np.percentile(nonzero, 98))
    with np.errstate(divide="ignore"):
        steps = np.floor(-2 * np.log10(magnitude / top))
    level = np.clip(levels - steps, 1, levels)
    level[magnitude == 0] = 0
    return (np.sign(grads) * level).astype(np.int64)


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
    if not blocks:
        return _layered(ops, children, consumers, sweeps)
    folded = {i for chain, sides in blocks for i in chain + [s for ss in sides for s in ss]}
    main = [i for i in range(len(children)) if i not in folded]
    new = {old: k for k, old in enumerate(main)}
    sub_children = [tuple(new[c] for c in children[i] if c in new) for i in main]
    layout = {main[k]: xy for k, xy in
              _layered([ops[i] for i in main], sub_children, _consumers(sub_children),
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
    return layout


def folded_sums(graph: Graph) -> list[list[int]]:
    """The sum chains `layered_layout` draws folded into rows (ids in chain order)."""
    return [chain for chain in _long_chains(graph.ops, graph.children, graph.consumers)
            if _fold_block(chain, graph.children, graph.consumers)]


def _spines(ops: Sequence[str], children: Sequence[Sequence[int]],
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
    return [c for c in _spines(ops, children, consumers) if len(c) > FOLD_LONGER_THAN]


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
    spines = _spines(ops, children, consumers)
    on_spine = {i for chain in spines for i in chain}

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
    for chain in spines:
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


# --- neurons in the op graph ------------------------------------------------------------
@dataclass(frozen=True)
class NeuronNodes:
    """Where one neuron of an MLP lives in the op graph."""

    layer: int
    index: int
    ops: tuple[int, ...]        # its multiplications, additions and activation
    weights: tuple[int, ...]    # its weight leaves, then its bias
    inputs: tuple[int, ...]     # what it multiplies its weights with
    output: int                 # its activation (or last addition for a linear unit)


def neuron_nodes(graph: Graph, layer: int, index: int) -> NeuronNodes | None:
    """Find neuron (layer, index) from its parameter names, following b + w0·x0 + w1·x1 ...

    The order is the one `Neuron.__call__` builds (b first, then each product added),
    so the chain starts at the bias and has one addition per weight.
    """
    prefix = f"layers.{layer}.neurons.{index}."
    params = graph.parameter_nodes
    bias = params.get(prefix + "b")
    nin = 0  # probe w.0, w.1, ...: scanning every name per neuron was quadratic
    while prefix + f"w.{nin}" in params:
        nin += 1
    if bias is None or nin == 0:
        return None
    ops, muls, weights, inputs = [], [], [], []
    current = bias
    for _ in range(nin):
        nxt = next((c for c in graph.consumers[current]
                    if graph.ops[c] == "+" and graph.children[c][0] == current), None)
        if nxt is None:
            return None
        mul = graph.children[nxt][1]
        if graph.ops[mul] != "*":
            return None
        ops.append(nxt)
        muls.append(mul)
        weights.append(graph.children[mul][0])
        inputs.append(graph.children[mul][1])
        current = nxt
    uses = graph.consumers[current]
    if len(uses) == 1 and graph.ops[uses[0]] in ACTIVATION_OPS:
        current = uses[0]
        ops.append(current)
    return NeuronNodes(layer, index, tuple(sorted(ops + muls)), (*weights, bias),
                       tuple(inputs), current)


def neuron_subgraph(graph: Graph, layer: int, index: int) -> Graph | None:
    """One neuron's operations and parameters, with its inputs as boundary leaves."""
    found = neuron_nodes(graph, layer, index)
    if found is None:
        return None
    return graph.subgraph([*found.ops, *found.weights])


# --- network level --------------------------------------------------------------------
class ModelLike(Protocol):
    def named_parameters(self) -> list[tuple[str, Value]]: ...
    def layer_sizes(self) -> list[int]: ...


@dataclass(frozen=True)
class NetworkLevel:
    """The network drawn as units and weights: what the network-level view shows.

    `weights[l]` has shape (outputs of layer l, inputs of layer l), as `W` in
    ``h_next = act(W h + b)``; `units[l]` / `unit_grads[l]` hold each unit's value and
    gradient for the selected sample (layer 0 = the inputs), when a graph was given.
    """

    layer_sizes: tuple[int, ...]
    activations: tuple[str, ...]
    weights: tuple[np.ndarray, ...]
    weight_grads: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    bias_grads: tuple[np.ndarray, ...]
    units: tuple[np.ndarray, ...] | None = None
    unit_grads: tuple[np.ndarray, ...] | None = None
    loss: float | None = None
    sample: int = 0
    # per layer (including inputs), an array (units, res, res) of each unit's output over
    # the plane, for the little maps inside the neurons
    maps: tuple[np.ndarray, ...] | None = None

    @property
    def structure_key(self) -> tuple[int, ...]:
        return self.layer_sizes

    @staticmethod
    def weight_name(layer: int, unit: int, source: int) -> str:
        return f"layers.{layer}.neurons.{unit}.w.{source}"

    @staticmethod
    def bias_name(layer: int, unit: int) -> str:
        return f"layers.{layer}.neurons.{unit}.b"

    @staticmethod
    def parse_name(name: str) -> tuple[int, int, int | None] | None:
        """(layer, unit, input index or None for the bias) of a parameter name."""
        match = _PARAM_NAME.match(name)
        if not match:
            return None
        source = match.group(4)
        return int(match.group(1)), int(match.group(2)), None if source is None else int(source)


class SnapshotLike(Protocol):
    layer_sizes: Sequence[int]
    param_names: Sequence[str]
    params: np.ndarray
    grads: np.ndarray


def network_level(source: ModelLike | SnapshotLike, graph: Graph | None = None,
                  sample: int = 0, extent: tuple[float, float, float, float] | None = None,
                  resolution: int = 20) -> NetworkLevel:
    """Weights, gradients and (with a graph) unit values of an MLP-shaped network.

    `source` is a model with ``named_parameters()`` and ``layer_sizes()`` (names like
    ``layers.L.neurons.J.w.I`` / ``.b``, as `gradbox.nn.MLP` gives them) or a training
    snapshot with ``layer_sizes``, ``param_names``, ``params`` and ``grads`` arrays (its
    ``graph`` is used when no graph is given). With `extent` (xmin, xmax, ymin, ymax)
    each unit also gets a `resolution`² map of its output over the plane.
    """
    if hasattr(source, "named_parameters"):
        sizes = tuple(int(s) for s in source.layer_sizes())
        entries = [(name, p.data, p.grad) for name, p in source.named_parameters()]
    else:
        sizes = tuple(int(s) for s in source.layer_sizes)
        entries = list(zip(source.param_names, np.asarray(source.params).tolist(),
                           np.asarray(source.grads).tolist()))
        if graph is None:
            graph = getattr(source, "graph", None)
    weights = [np.zeros((sizes[i + 1], sizes[i])) for i in range(len(sizes) - 1)]
    wgrads = [np.zeros_like(w) for w in weights]
    biases = [np.zeros(sizes[i + 1]) for i in range(len(sizes) - 1)]
    bgrads = [np.zeros_like(b) for b in biases]
    for name, value, grad in entries:
        parsed = NetworkLevel.parse_name(name)
        if parsed is None:
            continue
        layer, unit, src = parsed
        if src is None:
            biases[layer][unit] = _at(value, 0)
            bgrads[layer][unit] = _at(grad, 0)
        else:
            weights[layer][unit, src] = _at(value, 0)
            wgrads[layer][unit, src] = _at(grad, 0)
    activations = tuple(_activations(source, len(weights)))
    units = unit_grads = None
    loss = None
    if graph is not None:
        units, unit_grads = _unit_values(graph, sizes, sample)
        loss = _at(graph.data(graph.root), 0)
    maps = None
    if extent is not None:
        maps = tuple(unit_maps(weights, biases, activations, extent, resolution))
    return NetworkLevel(sizes, activations, tuple(weights), tuple(wgrads), tuple(biases),
                        tuple(bgrads), units, unit_grads, loss, sample, maps)


def _activations(model: Any, n_layers: int) -> list[str]:
    layers = getattr(model, "layers", None)
    if layers is not None:
        try:
            return [layer.neurons[0].activation for layer in layers]
        except (AttributeError, IndexError):
            pass
    config = getattr(model, "config", None)
    hidden = getattr(model, "activation", None) or getattr(config, "activation", "relu")
    return [hidden] * (n_layers - 1) + ["linear"]


_NEURON_CACHE: OrderedDict[tuple[int, int, str], list[list[int | None]]] = OrderedDict()


def _unit_values(graph: Graph, sizes: Sequence[int], sample: int
                 ) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    outputs = _NEURON_CACHE.get(graph.structure_key)
    if outputs is None:
        outputs = []
        inputs = neuron_nodes(graph, 0, 0)
        outputs.append(list(inputs.inputs) if inputs else [None] * sizes[0])
        for layer in range(len(sizes) - 1):
            found = [neuron_nodes(graph, layer, j) for j in range(sizes[layer + 1])]
            outputs.append([f.output if f else None for f in found])
        _NEURON_CACHE[graph.structure_key] = outputs
        if len(_NEURON_CACHE) > LAYOUT_CACHE_SIZE:
            _NEURON_CACHE.popitem(last=False)
    values = tuple(np.array([_at(graph.data(i), sample) if i is not None else np.nan
                             for i in ids]) for ids in outputs)
    grads = tuple(np.array([_at(graph.grad(i), sample) if i is not None else np.nan
                            for i in ids]) for ids in outputs)
    return values, grads


_NUMPY_ACTIVATIONS = {
    "relu": lambda z: np.maximum(z, 0.0),
    "tanh": np.tanh,
    "sigmoid": lambda z: 0.5 * (1 + np.tanh(0.5 * z)),
    "linear": lambda z: z,
}


def unit_maps(weights: Sequence[np.ndarray], biases: Sequence[np.ndarray],
              activations: Sequence[str], extent: tuple[float, float, float, float],
              resolution: int = 20) -> list[np.ndarray]:
    """Each unit's output over a grid of the plane: (units, res, res) per layer, row 0 at the top.

    A plain numpy forward pass from the weights -- the same function as the model's.
    """
    xmin, xmax, ymin, ymax = extent
    xs = np.linspace(xmin, xmax, resolution)
    ys = np.linspace(ymax, ymin, resolution)
    gx, gy = np.meshgrid(xs, ys)
    h = np.stack([gx.ravel(), gy.ravel()])
    if weights and weights[0].shape[1] != 2:
        h = np.zeros((weights[0].shape[1], gx.size))
    maps = [h.reshape(-1, resolution, resolution)]
    for w, b, act in zip(weights, biases, activations):
        h = _NUMPY_ACTIVATIONS.get(act, _NUMPY_ACTIVATIONS["linear"])(w @ h + b[:, None])
        maps.append(h.reshape(-1, resolution, resolution))
    return maps


# --- Graphviz -------------------------------------------------------------------------
def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: Graph, sample: int = 0) -> str:
    """Graphviz DOT text: one box per node (name/op, value, grad), one arrow per operand."""
    values = graph.values(sample)
    grads = graph.grads(sample)
    lines = ["digraph gradbox {", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fillcolor=white, '
             'fontname="Helvetica", fontsize=10];']
    for i in range(len(graph)):
        title = graph.display_name(i) if graph.is_leaf(i) else graph.ops[i]
        if not graph.is_leaf(i) and graph.labels[i]:
            title = f"{graph.labels[i]} = {title}"  # b = + : tells two additions apart
        parts = (f"#{i} {title}", f"data {fmt(values[i])}", f"grad {fmt(grads[i])}")
        label = "\\n".join(_dot_escape(part) for part in parts)
        extra = ", peripheries=2" if graph.is_fanout(i) else ""
        if graph.names[i]:
            extra += ", fillcolor=lightyellow"
        lines.append(f'  n{i} [label="{label}"{extra}];')
    lines.extend(f"  n{c} -> n{p};" for c, p in graph.edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


_DOT_NODE = re.compile(r"^\s*(n\d+)\s*\[", re.MULTILINE)
_DOT_EDGE = re.compile(r"^\s*n\d+\s*->\s*n\d+", re.MULTILINE)


def parse_dot_counts(text: str) -> tuple[int, int]:
    """(nodes, edges) declared in DOT text written by `to_dot`."""
    return len(set(_DOT_NODE.findall(text))), len(_DOT_EDGE.findall(text))
