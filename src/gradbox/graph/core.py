"""The computation graph as data: `trace(root)` freezes the structure the engine built.

`trace(root)` freezes the *structure* of the graph the engine built (which node
feeds which, in topological order) and keeps the live `Value`s beside it, so the
numbers shown are always the engine's own.

Node ids are topological numbers: every node's inputs have smaller ids, the root
(usually the loss) has the largest. A training step builds a new graph of the same
shape, which traces to the same ids and the same `structure_key`, so a layout is
computed once and reused (`gradbox.graph.layout`).
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from gradbox.autograd.engine import Value


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
    _source: Sequence[Any] = field(repr=False)
    # For a subgraph: the id each node has in the graph it was cut from.
    original_ids: tuple[int, ...] | None = field(default=None, repr=False)
    # Subgraph nodes that stand in for inputs from outside the cut.
    boundary: frozenset[int] = field(default=frozenset(), repr=False)
    # For a collapsed graph (`groups.collapse`): the ids each node stands for.
    members: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)

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

    def source_of(self, node: int) -> Any:
        """The live `Value` (or frozen copy) node reads its numbers from."""
        return self._source[node]

    def is_group(self, node: int) -> bool:
        """Whether node stands for several nodes of the graph it was collapsed from."""
        return self.members is not None and len(self.members[node]) > 1

    def values(self, sample: int = 0) -> np.ndarray:
        """Every node's value for one sample (float nodes are shared by all samples)."""
        return np.fromiter((at(v.data, sample) for v in self._source), np.float64,
                           len(self._source))

    def grads(self, sample: int = 0) -> np.ndarray:
        """Every node's gradient for one sample; 0.0 where no gradient has arrived."""
        return np.fromiter((at(v.grad, sample) for v in self._source), np.float64,
                           len(self._source))

    def snapshot(self) -> Graph:
        """The same graph with today's numbers frozen (later steps will not change it).

        Useful for handing a graph to another thread or keeping it for a replay: the
        optimizer and `zero_grad` rebind `.data` and `.grad` on the very Values the live
        graph reads. Arrays are copied too: a kept graph writes its inner nodes' values
        again in place each step (`gradbox.autograd.fused`).
        """
        # Frozen as `numbers()`'s matrices, copied in one pass: the form a graph crosses
        # to the window in, which the training process then writes as they are (W1's 989
        # nodes: 0.8 ms, against 1.2 ms for a copy per node and 0.8 ms more to make the
        # matrices from the copies at each publish).
        data, grad, data_per_sample, grad_per_sample = self.numbers()
        for matrix in (data, grad, data_per_sample, grad_per_sample):
            matrix.flags.writeable = False
        return self.with_numbers(data, grad, data_per_sample, grad_per_sample)

    # --- numbers as matrices: how a graph crosses to another process ------------------
    def numbers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every node's data and gradient as (nodes, samples) matrices, and per node
        whether it holds one number per sample (a float otherwise, in every column).
        `with_numbers` reads them back; gradbox.runner sends them through shared memory,
        since pickling a W1 step's 1,663 nodes took 60 ms and 21 ms to read back."""
        if isinstance(self._source, _MatrixSource):
            return self._source.matrices()  # (a snapshot's, or a graph made of them)
        samples = self.n_samples
        nodes = len(self._source)
        data = np.empty((nodes, samples))
        grad = np.empty((nodes, samples))
        data_per_sample = np.zeros(nodes, np.bool_)
        grad_per_sample = np.zeros(nodes, np.bool_)
        for i, v in enumerate(self._source):
            data[i] = v.data
            grad[i] = v.grad
            data_per_sample[i] = type(v.data) is np.ndarray
            grad_per_sample[i] = type(v.grad) is np.ndarray
        return data, grad, data_per_sample, grad_per_sample

    def without_numbers(self) -> Graph:
        """The structure alone (no numbers): what is sent once per network shape."""
        return _replace_source(self, ())

    def with_numbers(self, data: np.ndarray, grad: np.ndarray, data_per_sample: np.ndarray,
                     grad_per_sample: np.ndarray) -> Graph:
        """This structure reading its numbers from `numbers()`'s matrices (not copied)."""
        return _replace_source(self, _MatrixSource(data, grad, data_per_sample,
                                                   grad_per_sample))

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
            consumers=consumers_of(children),
            structure_key=structure_key(ops, children),
            _source=tuple(self._source[old] for old in nodes),
            original_ids=tuple(nodes),
            boundary=frozenset(new[b] for b in boundary),
        )


class _MatrixSource(Sequence[_Frozen]):
    """A graph's numbers read from matrices (see `Graph.numbers`), one node at a time."""

    __slots__ = ("_data", "_data_per_sample", "_grad", "_grad_per_sample")

    def __init__(self, data: np.ndarray, grad: np.ndarray, data_per_sample: np.ndarray,
                 grad_per_sample: np.ndarray) -> None:
        self._data, self._grad = data, grad
        self._data_per_sample, self._grad_per_sample = data_per_sample, grad_per_sample

    def __len__(self) -> int:
        return len(self._data)

    def matrices(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The matrices the numbers are read from (as `Graph.numbers` gives them)."""
        return self._data, self._grad, self._data_per_sample, self._grad_per_sample

    def __getitem__(self, node: Any) -> Any:
        if isinstance(node, slice):
            return tuple(self[i] for i in range(*node.indices(len(self))))
        data = self._data[node] if self._data_per_sample[node] else float(self._data[node, 0])
        grad = self._grad[node] if self._grad_per_sample[node] else float(self._grad[node, 0])
        return _Frozen(data, grad)


def _replace_source(graph: Graph, source: Sequence[Any]) -> Graph:
    return Graph(graph.ops, graph.labels, graph.names, graph.children, graph.consumers,
                 graph.structure_key, source, graph.original_ids, graph.boundary,
                 graph.members)


def at(x: Any, sample: int) -> float:
    """One sample's number of a float or per-sample array."""
    return float(x[sample]) if type(x) is np.ndarray else float(x)


def consumers_of(children: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """Per node, the nodes that take it as an operand (once per use)."""
    uses: list[list[int]] = [[] for _ in children]
    for parent, ch in enumerate(children):
        for c in ch:
            uses[c].append(parent)
    return tuple(tuple(u) for u in uses)


def structure_key(ops: Sequence[str], children: Sequence[Sequence[int]]) -> tuple[int, int, str]:
    """A digest of the shape: equal for two steps' graphs of the same network."""
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
    children = tuple(tuple(index[id(c)] for c in v.inputs) for v in order)
    ops = tuple(v.op for v in order)
    if lookup:
        param_names = tuple(
            None if v.inputs else (lookup.get(v) or lookup.get(id(v))) for v in order)
    else:
        param_names = (None,) * len(order)
    return Graph(
        ops=ops,
        labels=tuple(v.label for v in order),
        names=param_names,
        children=children,
        consumers=consumers_of(children),
        structure_key=structure_key(ops, children),
        _source=tuple(order),
    )


def backward_order(graph: Graph) -> list[int]:
    """The order nodes receive their complete gradient: reverse topological.

    It is the engine's own order (`Value.backward` walks ``reversed(topological_order())``):
    a node is passed on only after every consumer has added its share.
    """
    return list(range(len(graph) - 1, -1, -1))
