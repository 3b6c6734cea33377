"""A graph's topological order, sorted once per shape and kept as places.

A training step builds a new graph every time, but of the same shape while the network,
the features, the loss, the penalties and the batch size stay: the same nodes, made in
the same order, joined the same way. Sorting it again each step (`Value.topological_order`,
a walk over every node) finds the same order each time. `OrderCache` sorts the first
graph of a shape and keeps where each node of the order stood in the making
(`engine.recording`), not the nodes themselves; the next graph of that shape gives its
order by looking those places up -- the very order a fresh sort gives, so the gradients
are the same to the last bit. (Backward in the order the nodes were made is also a
topological order, but another one: gradients arrive at a node in another order and
their sum moves by ~1e-16, which breaks the exact replay of stored runs.)

Places, not nodes, so one cache serves every graph of the shape: the next step's, a
ghost run's, a replay's. A new shape (the `key` changes) is sorted afresh.

`KeptGraph` goes one further for a step on the same points: the graph itself is kept,
and only its values computed again.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Sequence

from gradbox.autograd.engine import Value
from gradbox.autograd.fused import Plan


class OrderCache:
    """The topological order of the last shape seen, as places in its making."""

    def __init__(self) -> None:
        self._key: Hashable | None = None
        self._made = -1  # how many nodes that graph's making made
        self._places: operator.itemgetter | None = None
        self.sorts = 0  # fresh sorts so far (tests and benchmarks read it)

    def invalidate(self) -> None:
        """Forget the kept order: the next graph is sorted afresh."""
        self._key, self._made, self._places = None, -1, None

    def order(self, key: Hashable, root: Value, made: Sequence[Value]) -> Sequence[Value]:
        """The op nodes of the graph ending in `root`, in `root.topological_order()`'s
        order (its leaves left out: they pass nothing on). `made`: every node made while
        the graph was built, in order (`engine.recording`); `key`: what the graph's shape
        depends on -- a different key is a different shape."""
        if self._places is not None and key == self._key and len(made) == self._made:
            kept = self._places(made)
            # A graph of another shape under the same key would be a bug in the key; the
            # root, made last of what the order holds, is checked as a guard.
            if kept[-1] is root:
                return kept
        self.invalidate()
        self.sorts += 1
        fresh = [node for node in root.topological_order() if node.inputs]
        where = {id(node): i for i, node in enumerate(made)}
        places = [where.get(id(node)) for node in fresh]
        if fresh and None not in places:  # every op node was made inside the recording
            self._key, self._made = key, len(made)
            # itemgetter of two or more places returns a tuple; of one, the node alone.
            self._places = operator.itemgetter(*places) if len(places) > 1 else (
                lambda nodes, i=places[0]: (nodes[i],))
        return fresh


class KeptGraph:
    """A step's graph, kept to serve the next step of the same shape on the same points:
    its nodes' values are computed again on the new weights (`engine.recompute`) in the
    kept order, instead of building the graph anew. `token` says what it was built
    from; a step whose token differs builds its own."""

    def __init__(self, token: Hashable, root: Value, output: object,
                 order: Sequence[Value], weights: Sequence[Value], held: object = None,
                 ) -> None:
        self.token = token
        self._held = held  # what the token names by id(), held so the id stays its own
        self.root, self.output, self.order = root, output, order
        # The leaves that are not weights (the inputs, constants) start each step with no
        # gradient, as a new graph's do; the weights' are zero_grad's to set.
        ops, kept = {id(node) for node in order}, {id(w) for w in weights}
        self._leaves = list({id(leaf): leaf for node in order for leaf in node.inputs
                             if id(leaf) not in ops and id(leaf) not in kept}.values())
        self._plan: Plan | None = None  # made at the first serve: a graph served again

    def serve(self) -> tuple[Value, object, Sequence[Value]]:
        """The graph on the weights now: (root, output, order). Its layers' weighted sums
        are computed a layer at a time (`gradbox.autograd.fused`): the same numbers."""
        for leaf in self._leaves:
            leaf.grad = 0.0
        if self._plan is None:
            self._plan = Plan(self.root, self.order)
        self._plan.forward()
        return self.root, self.output, self.order

    def backward(self) -> None:
        """`root.backward(retain_graph=True, order=order)` on the graph `serve` gave,
        a layer at a time; the same gradients to the last bit."""
        if self._plan is None:
            self.root.backward(retain_graph=True, order=self.order)
        else:
            self._plan.backward()
