"""A kept graph's neurons computed a layer at a time: the same nodes, the same numbers.

A neuron is a chain of engine nodes, as micrograd writes it: `b + w₀·x₀ + w₁·x₁ + ...` is
a product node `w·x` and a sum node per input. A 64 x 64 layer over 1,000 points is 8,192
such nodes, and each step ran every node's `_forward` and `_backward` one by one: one
numpy call of 1,000 numbers and a Python call around it, per node -- W2's step was ~100
numpy calls per ms. `Plan` does the same arithmetic for all the neurons of a layer at
once, in (inputs x neurons x samples) arrays (`LayerSums`), and leaves every node in the
graph: it writes their values and gradients into them, so the graph the learner sees holds
the very numbers, node for node. Everything else (activations, the loss, the penalties)
still runs node by node, through the engine's own closures.

Why the numbers are the same to the last bit: each product and each sum is the same IEEE
operation on the same two numbers, only many at once (`w·x` and `s + p`, elementwise: no
fused multiply-add, no reordering); the sum of a neuron's inputs runs input after input
as the chain does; a parameter's gradient is `np.add.reduce` over the samples of one
contiguous row, as the engine's `_accumulate` reduces it (numpy sums a contiguous row
pairwise whether the row stands alone or in a matrix: `tests/test_fused.py` checks it
over every batch size up to 2,100); and every node receives its gradients in the order
the kept topological order hands them over -- the `Plan` checks that order, node by node,
before it uses a layer, and keeps the engine's own walk for any layer it cannot prove.
"""

from __future__ import annotations

import itertools
import operator
from collections import Counter
from collections.abc import Sequence

import numpy as np

from gradbox.autograd import ops
from gradbox.autograd.engine import (
    FREED_GRAPH_MESSAGE,
    Value,
    _freed_backward,
    accumulate_floats,
    recompute,
)

_DATA = operator.attrgetter("data")
# A time in a schedule: (place in the walk, order among the layers put after that place).
Time = tuple[int, int]


class Chain:
    """One neuron's weighted sum: sums[0] = b + products[0], sums[k] = sums[k-1] +
    products[k], products[k] = weights[k] * inputs[k] (the engine's nodes)."""

    __slots__ = ("activation", "bias", "inputs", "products", "sums", "weights")

    def __init__(self, last: Value) -> None:
        self.activation: Value | None = None  # relu(sums[-1]) ..., if the layer has one
        sums = [last]
        while sums[-1]._prev[0]._prev:  # back to the first sum, b + w₀x₀
            sums.append(sums[-1]._prev[0])
        sums.reverse()
        self.sums = sums
        self.bias = sums[0]._prev[0]
        self.products = [s._prev[1] for s in sums]
        self.weights = [p._prev[0] for p in self.products]
        self.inputs = [p._prev[1] for p in self.products]


class LayerSums:
    """The weighted sums of the neurons that share their inputs (a layer), computed at
    once: P[k, j] = w_jk · x_k and S[k, j] = S[k-1, j] + P[k, j] over (inputs, neurons,
    samples) arrays, and backward's gradients of all of them.

    The products' and the inner sums' values live in two arrays kept from step to step
    (each node's `data` is its row, written again in place: a view of the graph is a copy,
    `Graph.snapshot`); the last sums -- the neurons' outputs, which the rest of the graph
    reads -- are new arrays each step, as a node's value always was."""

    def __init__(self, chains: Sequence[Chain]) -> None:
        self.chains = list(chains)  # in the order backward hands their inputs gradients
        first = self.chains[0]
        self.inputs = first.inputs
        self.nin, self.nout = len(first.inputs), len(self.chains)
        self.weights = [w for c in self.chains for w in c.weights]  # (neuron, input)
        self.biases = [c.bias for c in self.chains]
        self.lasts = [c.sums[-1] for c in self.chains]
        # The activation nodes, one per neuron, of one op (else None: the sums are the
        # layer's outputs). Their values come from their own `_forward` (each keeps the
        # output its backward reads), their backward from the op table's derivative.
        ops_ = {c.activation._op if c.activation is not None else None for c in self.chains}
        self.activation = ops_.pop() if len(ops_) == 1 else None
        self.acts = [c.activation for c in self.chains] if self.activation else []
        self.outputs = self.acts or self.lasts
        # Every node the layer computes; the products' and inner sums' values are kept.
        self.nodes = [n for c in self.chains for n in (*c.products, *c.sums)] + self.acts
        self._inner = [n for c in self.chains for n in (*c.products, *c.sums[:-1])]
        outputs = set(self.outputs)
        self._below = [n for n in self.nodes if n not in outputs]  # all but the outputs
        self._products: np.ndarray | None = None
        self._sums: np.ndarray | None = None
        self.walk: list[Value] = []  # its nodes in the kept backward order (Plan sets it)

    # --- forward ------------------------------------------------------------------
    def forward(self) -> None:
        x = np.stack([_DATA(x) for x in self.inputs])  # (nin, n)
        w = np.array(list(map(_DATA, self.weights))).reshape(self.nout, self.nin)
        b = np.array(list(map(_DATA, self.biases)))
        n = x.shape[1]
        if self._products is None or self._products.shape[2] != n:
            self._bind(n)
        products, sums, wt = self._products, self._sums, w.T
        # Input after input (one numpy call of neurons x samples numbers each, so that a
        # Pause, a signal answered between two bytecodes, waits for one of them at most):
        # the products w·x of the engine's `*`, and the chain's sums b + p₀, then
        # (...) + p_k, of its `+`.
        previous = b[:, None]
        for k in range(self.nin - 1):
            np.multiply(wt[k][:, None], x[k], out=products[k])
            previous = np.add(previous, products[k], out=sums[k])
        last = self.nin - 1
        np.multiply(wt[last][:, None], x[last], out=products[last])
        outputs = np.add(previous, products[last])
        for node, row in zip(self.lasts, outputs):
            node.data = row
        for node in self.acts:
            node.data = node._forward()  # type: ignore[misc]
        for node in self.nodes:
            node.grad = 0.0  # as `recompute` leaves every op node

    def _bind(self, n: int) -> None:
        """Give the inner nodes their rows of the kept arrays (once per graph). Their old
        values go first: a big layer's would double its memory for a moment."""
        for node in self._inner:
            node.data = 0.0
        self._products = self._sums = None
        self._products = np.empty((self.nin, self.nout, n))
        self._sums = np.empty((max(self.nin - 1, 0), self.nout, n))
        for j, chain in enumerate(self.chains):
            for k, node in enumerate(chain.products):
                node.data = self._products[k, j]
            for k, node in enumerate(chain.sums[:-1]):
                node.data = self._sums[k, j]

    # --- backward -----------------------------------------------------------------
    def backward(self) -> None:
        """Backward through every neuron's sum chain. Run when the last gradient has
        reached the neurons' outputs, and before any other reaches the inputs (the
        `Plan` proves both)."""
        grads = [node.grad for node in self.outputs]
        if not all(type(g) is np.ndarray for g in grads):
            self._node_by_node()
            return
        g = np.stack(grads)  # (nout, n)
        if self.acts:  # through the activations: slope · grad, as each one's `_backward`
            out = np.stack([_DATA(a) for a in self.acts])
            g = ops.local_derivative(self.activation, (), out, 0) * g
            grads = list(g)
            for node, grad in zip(self.lasts, grads):
                node.grad = grad
        # What each neuron's sum chain hands on, unchanged
        for chain, grad in zip(self.chains, grads):
            for node in chain.products:
                node.grad = grad  # d(a+b)/db = 1 down the chain: the same array
            for node in chain.sums[:-1]:
                node.grad = grad
        x = np.stack([_DATA(x) for x in self.inputs])
        w = np.array(list(map(_DATA, self.weights))).reshape(self.nout, self.nin)
        # The weights: w_jk gets x_k·g_j summed over the samples (`*`'s backward, then
        # `_accumulate`'s reduction of a per-sample gradient for a float node).
        dw = np.empty((self.nout, self.nin))
        term = np.empty_like(x)
        for j in range(self.nout):
            np.multiply(x, g[j], out=term)
            np.add.reduce(term, axis=1, out=dw[j])
        accumulate_floats(self.weights, dw.ravel())
        # The biases: b_j gets g_j summed (`+`'s backward, reduced the same way).
        accumulate_floats(self.biases, np.add.reduce(g, axis=1))
        # The inputs: x_k gets w_jk·g_j from each neuron in turn, the first kept as it is
        # and each next one added to the total (`_accumulate`'s rule for an array).
        total = np.multiply(w[0][:, None], g[0])
        part = np.empty_like(total)
        for j in range(1, self.nout):
            np.multiply(w[j][:, None], g[j], out=part)
            np.add(total, part, out=total)
        for node, row in zip(self.inputs, total):
            node.grad = row

    def _node_by_node(self) -> None:
        """The engine's own walk over the layer's nodes, from gradients 0 as its walk
        starts (for a neuron's output that holds no array of gradients: a float 0, which
        passes floats on; every op of the engine hands an array node an array)."""
        for node in self._below:
            node.grad = 0.0
        for node in self.walk:
            node._backward(node.grad)


class Plan:
    """A kept graph's forward and backward with its layers' weighted sums at once
    (`LayerSums`), everything else node by node, in an order proven to give every node
    the numbers the kept topological order gives it."""

    def __init__(self, root: Value, order: Sequence[Value]) -> None:
        self.root = root
        self.order = list(order)
        graph = _Graph(self.order)
        self.layers = find_layers(self.order, graph)
        self.forward_parts: list[list[Value] | LayerSums] = []
        self.backward_parts: list[Value | LayerSums] = []
        self._schedule(graph)
        inner = {n for layer in self.layers for n in layer.nodes}
        # What backward sets to 0 first: every op node the layers do not write whole.
        self._reset = [n for n in self.order if n not in inner] + [
            n for layer in self.layers for n in layer.outputs]
        self._leaves = [x for layer in self.layers for x in layer.inputs if not x._prev]

    def forward(self) -> None:
        # A local, so that a step Pause abandons here hands its frames' leftovers the
        # graph's nodes to take apart in pieces (`gradbox.runner.leftovers`), not a plan
        # they cannot read, freed whole at the end.
        nodes = self.order  # noqa: F841
        for part in self.forward_parts:
            if type(part) is list:
                recompute(part)
            else:
                part.forward()

    def backward(self) -> None:
        """`root.backward(retain_graph=True, order=order)`, a layer at a time."""
        root, nodes = self.root, self.order  # noqa: F841 (for leftovers: see forward)
        if any(node._backward is _freed_backward for node in self._reset):
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        if not all(type(x.grad) is float and x.grad == 0.0 for x in self._leaves):
            # an input that holds a gradient already (a second pass): the engine's walk
            root.backward(retain_graph=True, order=self.order)
            return
        for node in self._reset:
            node.grad = 0.0
        root.grad += 1.0
        for part in self.backward_parts:
            if type(part) is Value:
                part._backward(part.grad)
            else:
                part.backward()

    # --- the schedule ---------------------------------------------------------------
    def _schedule(self, graph: _Graph) -> None:
        """Where each layer runs, forward and backward, and the proof that the order of
        every node's arrivals is the kept order's; a layer without it runs node by node."""
        graph.near({n for layer in self.layers
                    for n in (*layer.inputs, *layer.weights, *layer.biases, *layer.outputs)})
        while True:
            forward, backward = _times(graph, self.layers)
            bad = _unproven(graph, self.layers, forward, backward)
            if not bad:
                break
            self.layers = [layer for layer in self.layers if layer not in bad]
        inner = {n for layer in self.layers for n in layer.nodes}
        for layer in self.layers:
            layer.walk = sorted(layer.nodes, key=lambda n: -graph.position[n])
        # Each part in the kept order, a layer in one piece after the node of its time.
        self.forward_parts = []
        after = _by_place(forward, self.layers)
        for i, node in enumerate((None, *self.order), start=-1):
            if node is not None and node not in inner:
                if not self.forward_parts or type(self.forward_parts[-1]) is not list:
                    self.forward_parts.append([])
                self.forward_parts[-1].append(node)
            self.forward_parts.extend(after.get(i, ()))
        self.backward_parts = []
        after = _by_place(backward, self.layers)
        for i, node in enumerate((None, *reversed(self.order)), start=-1):
            if node is not None and node not in inner:
                self.backward_parts.append(node)
            self.backward_parts.extend(after.get(i, ()))


def _by_place(times: dict[LayerSums, Time], layers: list[LayerSums]
              ) -> dict[int, list[LayerSums]]:
    """The layers to run after each place of a walk, in their order there."""
    after: dict[int, list[LayerSums]] = {}
    for layer in sorted(layers, key=times.__getitem__):
        after.setdefault(times[layer][0], []).append(layer)
    return after


class _Graph:
    """What the plan reads of a graph (its op nodes in topological order): where each
    node stands, how many times each node is used, and who uses the nodes next to the
    layers (`near`), in the kept order, once per use."""

    def __init__(self, order: Sequence[Value]) -> None:
        self.order = order
        self.size = len(order)
        self.position = {n: i for i, n in enumerate(order)}
        self.uses = Counter(child for node in order for child in node._prev)
        self.consumers: dict[Value, list[Value]] = {}

    def near(self, nodes: set[Value]) -> None:
        found: dict[Value, list[Value]] = {n: [] for n in nodes}
        for node in self.order:
            for child in node._prev:
                if child in found:
                    found[child].append(node)
        self.consumers = found


def find_layers(order: Sequence[Value], graph: _Graph | None = None) -> list[LayerSums]:
    """The neurons' sum chains in a graph (op nodes in topological order), grouped by the
    inputs they share: each group a layer, in the graph's order."""
    graph = graph or _Graph(order)
    uses = graph.uses
    linked: set[Value] = set()  # sum nodes of a chain
    for node in order:
        if node._op != "+" or len(node._prev) != 2:
            continue
        head, product = node._prev
        if not (product._op == "*" and uses[product] == 1 and len(product._prev) == 2):
            continue
        w, x = product._prev
        if w._prev or type(w.data) is not float or type(x.data) is not np.ndarray:
            continue
        starts = not head._prev and type(head.data) is float
        if starts or (head in linked and uses[head] == 1):
            linked.add(node)
    # A chain ends at a linked sum that no linked sum continues.
    continued = {n._prev[0] for n in order if n in linked}
    groups: dict[tuple[int, ...], list[Chain]] = {}
    for node in order:
        if node in linked and node not in continued:
            chain = Chain(node)
            groups.setdefault(tuple(map(id, chain.inputs)), []).append(chain)
    # A neuron's activation: the one node that reads its sum, an activation of it alone.
    ends = {chain.sums[-1]: chain for chains in groups.values() for chain in chains}
    for node in order:
        if node._op in ops.ACTIVATIONS and len(node._prev) == 1:
            chain = ends.get(node._prev[0])
            if chain is not None and uses[node._prev[0]] == 1:
                chain.activation = node
    position = graph.position
    layers = []
    for chains in groups.values():
        # the neurons in the order the kept walk (backward) reaches their products
        chains.sort(key=lambda c: -position[c.products[0]])
        leaves = [c.bias for c in chains] + [w for c in chains for w in c.weights]
        inputs = chains[0].inputs
        if (len(set(leaves)) == len(leaves) and len(set(inputs)) == len(inputs)
                and len({x.data.shape for x in inputs}) == 1):
            layers.append(LayerSums(chains))
    return layers


def _times(graph: _Graph, layers: list[LayerSums]
           ) -> tuple[dict[LayerSums, Time], dict[LayerSums, Time]]:
    """When each layer runs: forward, after its last input is computed; backward, after
    the last gradient reaches one of its neurons' outputs. `layers` come in the order of
    the graph (`find_layers`): a layer's inputs are computed by the ones before it, its
    outputs' gradients come from the ones after it. (Loops, not functions calling each
    other: those would be a reference cycle holding the graph, which only the cyclic
    collector frees, and a training step pauses it.)"""
    position, size = graph.position, graph.size
    owner = {n: layer for layer in layers for n in layer.nodes}
    consumers = graph.consumers
    never = (size, 0)  # a time not yet known: after everything, which no proof passes
    taken: set[Time] = set()  # two layers after the same node: one, then the other

    def free(at: Time) -> Time:
        at = (at[0], at[1] + 1)
        while at in taken:
            at = (at[0], at[1] + 1)
        taken.add(at)
        return at

    forward: dict[LayerSums, Time] = {}
    for layer in layers:
        latest = (-1, 0)
        for x in layer.inputs:
            mine = owner.get(x)
            at = (forward.get(mine, never) if mine is not None
                  else (position[x], 0) if x._prev else (-1, 0))
            latest = max(latest, at)
        forward[layer] = free(latest)
    taken.clear()
    backward: dict[LayerSums, Time] = {}
    for layer in reversed(layers):
        latest = (-1, 0)
        for last in layer.outputs:
            for node in consumers[last]:
                mine = owner.get(node)
                at = (backward.get(mine, never) if mine is not None
                      else (size - 1 - position[node], 0))
                latest = max(latest, at)
        backward[layer] = free(latest)
    return forward, backward


def _unproven(graph: _Graph, layers: list[LayerSums], forward: dict[LayerSums, Time],
              backward: dict[LayerSums, Time]) -> set[LayerSums]:
    """The layers under which some node would not get its gradients (or compute its
    value) as the kept order has it: none when the schedule is proven. Only the nodes next
    to a layer can be out of place: the others keep their order among themselves."""
    position, size, consumers = graph.position, graph.size, graph.consumers
    owner = {n: layer for layer in layers for n in layer.nodes}
    bad: set[LayerSums] = set()
    # Forward: what reads a layer's outputs runs after the layer (its inputs, before it,
    # by construction).
    for layer in layers:
        for last in layer.outputs:
            for node in consumers[last]:
                mine = owner.get(node)
                at = forward[mine] if mine is not None else (position[node], 0)
                if at <= forward[layer]:
                    bad.add(layer)
    # Backward: each node next to a layer gets its gradients from the same sources in
    # the same order (a layer hands its inputs theirs neuron after neuron, its chains'
    # order), all of them before it passes its own on: the sources, in the kept order,
    # come at times that only grow, and end before the node's own time.
    index = {p: j for layer in layers for j, c in enumerate(layer.chains) for p in c.products}
    near = {n for layer in layers
            for n in (*layer.inputs, *layer.weights, *layer.biases, *layer.outputs)}
    for node in near:
        sources = list(dict.fromkeys(reversed(consumers[node])))  # the kept order
        mine = owner.get(node)
        ends = (backward[mine] if mine is not None  # when it passes its gradient on
                else (size - 1 - position[node], 0) if node._prev else (size, 0), -1)
        times = []
        for source in sources:
            layer = owner.get(source)
            times.append((backward[layer], index.get(source, 0)) if layer is not None
                         else ((size - 1 - position[source], 0), 0))
        times.append(ends)
        if any(a >= b for a, b in itertools.pairwise(times)):
            bad.update(owner[s] for s in sources if s in owner)
            if mine is not None:
                bad.add(mine)
    # A layer gives its inputs their first gradient (they hold none when it runs).
    for layer in layers:
        for x in layer.inputs:
            first = consumers[x][-1]  # the last use in the kept order passes on first
            if owner.get(first) is not layer:
                bad.add(layer)
    return bad
