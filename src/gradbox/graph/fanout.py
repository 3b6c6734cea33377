"""Fan-out calculus: what each use of a node sent back, and how the parts add up.

The sum of the parts equals the node's gradient: that is the accumulation rule
(``+=``). Local derivatives come from the op table (`gradbox.autograd.ops`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradbox.autograd import ops
from gradbox.graph.core import Graph, at


def local_derivative(graph: Graph, consumer: int, slot: int) -> Any:
    """d(consumer)/d(operand `slot`), from the data on both ends (`gradbox.autograd.ops`)."""
    inputs = [graph.data(c) for c in graph.children[consumer]]
    return ops.local_derivative(graph.ops[consumer], inputs, graph.data(consumer), slot)


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
        amount = float(np.sum(product)) if shared else at(product, sample)
        local_i, upstream_i = at(local, sample), at(upstream, sample)
        parts.append(Contribution(consumer, slot, local_i, upstream_i, amount,
                                  local_i * upstream_i, type(product) is np.ndarray))
    total = math.fsum(p.amount for p in parts)
    return FanOut(node, sample, tuple(parts), total, at(graph.grad(node), sample))

