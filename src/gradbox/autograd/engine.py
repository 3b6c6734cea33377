"""The scalar autograd engine.

A `Value` holds a number, the gradient that has reached it, and a closure that
passes that gradient on to the inputs it was built from. Operator overloading
builds the graph as a by-product of ordinary arithmetic; `backward()` walks it
from the output back to the leaves in topological order.

One extension to the classic scalar engine: `data` may also be a 1-D numpy
array with one entry per sample. The graph is then the graph of *one* sample,
and every node computes all samples at once. A parameter (float data) that is
shared by every sample receives the sum of the per-sample gradients -- which is
nothing new, it is the accumulation rule again (see `_accumulate`).
"""

from __future__ import annotations

import contextlib
import math
import operator
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from gradbox.autograd import ops

Data = float | np.ndarray
_GRAD = operator.attrgetter("grad")

# PyTorch's own words, so the lesson on `retain_graph` reads the same here and there.
FREED_GRAPH_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)
NON_SCALAR_MESSAGE = "grad can be implicitly created only for scalar outputs"

# Ops whose backward needs no saved value: d(a+b)/da = 1, d(-a)/da = -1, and a sum
# hands its gradient back unchanged. PyTorch saves nothing for them, so a second
# backward through them works -- and silently accumulates the gradient again.
# Which ops these are is written in the op table (`gradbox.autograd.ops`), with the rest of
# what the app says about each op.
SAVES_NOTHING = ops.SAVES_NOTHING


def _freed_backward(grad: Data) -> None:
    raise RuntimeError(FREED_GRAPH_MESSAGE)


def _no_backward(grad: Data) -> None:
    """A leaf has no inputs to pass its gradient on to."""


# While a `recording()` block runs, every Value its thread makes is appended here, in the
# order made; None (the usual case) costs one test per Value.
_made: list[Value] | None = None
_made_by: int | None = None


@contextlib.contextmanager
def recording() -> Iterator[list[Value]]:
    """Every Value made by this thread inside the block, in the order made.

    A graph of one shape is made in the same order every time, so a node's place in this
    list names it from one step's graph to the next (`gradbox.autograd.order` keeps a
    topological order that way, as places rather than nodes)."""
    global _made, _made_by
    outer = _made, _made_by
    made: list[Value] = []
    _made, _made_by = made, threading.get_ident()
    try:
        yield made
    finally:
        _made, _made_by = outer


def _as_data(data: Any) -> Data:
    """Validate what a user hands to `Value(...)`: a number or a 1-D array of numbers."""
    if isinstance(data, (bool, str, bytes)):
        raise TypeError(f"Value data must be a number or a 1-D array of numbers, got {data!r}")
    if isinstance(data, (int, float, np.integer, np.floating)):
        return float(data)
    if isinstance(data, (np.ndarray, list, tuple)):
        try:
            array = np.array(data, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"Value data must be a number or a 1-D array of numbers, got {data!r}"
            ) from None
        if array.ndim == 0:
            return float(array)
        if array.ndim != 1:
            raise ValueError(
                f"Value data must be a float or a 1-D array (one entry per sample), "
                f"got an array of shape {array.shape}"
            )
        return array
    raise TypeError(
        f"Value data must be a number or a 1-D array of numbers, got {type(data).__name__}"
    )


def _elementwise(x: Data, scalar_fn: Callable[[float], float], array_fn: Callable) -> Data:
    """Apply a function to one float (math, fast) or to every sample (numpy)."""
    return array_fn(x) if type(x) is np.ndarray else scalar_fn(x)


class Value:
    """A node of the computation graph: a number (or one number per sample) and its gradient."""

    __slots__ = ("_backward", "_forward", "_op", "_prev", "data", "grad", "label")
    # Make numpy hand `array * value` over to Value.__rmul__ instead of looping over the array.
    __array_ufunc__ = None

    def __init__(self, data: Any, _children: tuple[Value, ...] = (), _op: str = "",
                 label: str = "") -> None:
        # Results of ops are already valid; only what a user passes in needs checking.
        self.data: Data = data if _children else _as_data(data)
        self.grad: Data = 0.0
        self._prev: tuple[Value, ...] = _children
        self._op = _op
        # How to pass a gradient on to the inputs. It receives `out`'s gradient as an
        # argument rather than reading `out.grad`: reaching back for `out` would make
        # out -> _backward -> out a reference cycle, and every graph would then wait for
        # Python's slow cyclic garbage collector instead of dying by reference counting.
        self._backward: Callable[[Data], None] = _no_backward
        # How to compute `data` again from the inputs' (None for a leaf): see `recompute`.
        self._forward: Callable[[], Data] | None = None
        self.label = label
        if _made is not None and _made_by == threading.get_ident():
            _made.append(self)

    # --- reading the graph ---------------------------------------------------------
    # The fields keep micrograd's names (`_prev`, `_op`, `_backward`), as the article
    # writes them; other modules read the graph, and run one node's backward step,
    # through these.
    @property
    def inputs(self) -> tuple[Value, ...]:
        """The values this one was computed from (micrograd's `_prev`); () for a leaf."""
        return self._prev

    @property
    def op(self) -> str:
        """The op that made this value ('' for a leaf)."""
        return self._op

    def pass_gradient(self) -> None:
        """Hand this node's gradient on to its inputs once: one run of its `_backward`.

        `backward()` does it for every node, consumers before inputs; the broken variants
        in `teaching.pitfalls` do it in other orders, or twice.
        """
        self._backward(self.grad)

    # --- the accumulation rule -------------------------------------------------
    def _accumulate(self, grad: Data) -> None:
        """Add an arriving gradient to this node's total (`+=`, never `=`).

        A value used in several places collects the sum of the gradients from each
        use. A float node -- a parameter shared by every sample -- used by an array
        computation is exactly such a value, used once per sample: it takes the sum.
        """
        if type(grad) is np.ndarray and type(self.data) is not np.ndarray:
            # add.reduce is what ndarray.sum calls, minus a Python-level wrapper that
            # costs as much as summing 100 samples; this line runs once per parameter use.
            grad = float(np.add.reduce(grad))
        total = self.grad
        # The first arrival is kept as it is: 0 + g is g, and copying it would cost a
        # numpy call per array node. So an array may be shared with the node that sent
        # it, and the total is rebound (total + grad), never updated in place.
        self.grad = grad if type(total) is float and total == 0.0 else total + grad

    def _other(self, other: Any) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        a, b = self.data, other.data
        if type(a) is np.ndarray and type(b) is np.ndarray and a.shape != b.shape:
            raise ValueError(
                f"mismatched sample counts: {a.shape[0]} and {b.shape[0]} samples"
            )
        return other

    # --- basic ops: forward and backward side by side ---------------------------------
    # Each op is two closures over its inputs: `_forward` computes the output's value,
    # `_backward` passes a gradient back. `_node` makes the output from them (calling
    # `_forward` once). A training step whose graph has the same shape every time keeps
    # its nodes and calls each `_forward` again on new weights (`recompute`).
    def __add__(self, other: Any) -> Value:
        other = self._other(other)

        def _forward() -> Data:
            return self.data + other.data

        def _backward(grad: Data) -> None:
            self._accumulate(grad)  # d(a+b)/da = 1
            other._accumulate(grad)  # d(a+b)/db = 1

        return _node(_forward, _backward, (self, other), "+")

    def __mul__(self, other: Any) -> Value:
        other = self._other(other)

        def _forward() -> Data:
            return self.data * other.data

        def _backward(grad: Data) -> None:
            self._accumulate(other.data * grad)  # d(ab)/da = b
            other._accumulate(self.data * grad)  # d(ab)/db = a

        return _node(_forward, _backward, (self, other), "*")

    def __pow__(self, exponent: float) -> Value:
        if not isinstance(exponent, (int, float)) or isinstance(exponent, bool):
            raise TypeError(f"only int or float exponents are supported, got {exponent!r}")

        def _forward() -> Data:
            # Python answers (-8.0) ** 0.5 with a complex number, which would then spread
            # through the graph; refuse it here, as log refuses its domain.
            if not float(exponent).is_integer() and np.any(np.asarray(self.data) < 0):
                raise ValueError(
                    f"a negative number to the power {exponent:g} is not a real number"
                )
            return self.data**exponent

        def _backward(grad: Data) -> None:
            self._accumulate(exponent * self.data ** (exponent - 1) * grad)  # d(x^k)/dx = k x^(k-1)

        return _node(_forward, _backward, (self,), ops.power_name(exponent))

    def __neg__(self) -> Value:
        def _forward() -> Data:
            return -self.data

        def _backward(grad: Data) -> None:
            self._accumulate(-grad)  # d(-a)/da = -1

        return _node(_forward, _backward, (self,), "neg")

    def __abs__(self) -> Value:
        def _forward() -> Data:
            return abs(self.data)

        def _backward(grad: Data) -> None:
            sign = _elementwise(self.data, _scalar_sign, np.sign)  # a float stays a float
            self._accumulate(sign * grad)  # d|a|/da = sign(a), and 0 at the kink

        return _node(_forward, _backward, (self,), "abs")

    def tanh(self) -> Value:
        t: Data = 0.0  # the output: its slope is read off it

        def _forward() -> Data:
            nonlocal t
            t = _elementwise(self.data, math.tanh, np.tanh)
            return t

        def _backward(grad: Data) -> None:
            self._accumulate((1 - t * t) * grad)  # d tanh(x)/dx = 1 - tanh(x)^2

        return _node(_forward, _backward, (self,), "tanh")

    def exp(self) -> Value:
        e: Data = 0.0  # the output, which is also its slope

        def _forward() -> Data:
            nonlocal e
            e = _elementwise(self.data, _scalar_exp, np.exp)
            return e

        def _backward(grad: Data) -> None:
            self._accumulate(e * grad)  # d(e^x)/dx = e^x: the output is the slope

        return _node(_forward, _backward, (self,), "exp")

    def log(self) -> Value:
        def _forward() -> Data:
            # A clear error rather than numpy's silent nan/-inf: log of a non-positive
            # number is almost always a bug in the expression, not a value to train on.
            if np.any(np.asarray(self.data) <= 0):
                raise ValueError(f"log of a non-positive number ({np.min(self.data):g}): "
                                 "log is defined for x > 0")
            return _elementwise(self.data, math.log, np.log)

        def _backward(grad: Data) -> None:
            self._accumulate(grad / self.data)  # d(ln x)/dx = 1/x

        return _node(_forward, _backward, (self,), "log")

    def sin(self) -> Value:
        def _forward() -> Data:
            return _elementwise(self.data, math.sin, np.sin)

        def _backward(grad: Data) -> None:
            cos = _elementwise(self.data, math.cos, np.cos)
            self._accumulate(cos * grad)  # d(sin x)/dx = cos x

        return _node(_forward, _backward, (self,), "sin")

    def relu(self) -> Value:
        r: Data = 0.0  # the output: the unit is on where it is positive

        def _forward() -> Data:
            nonlocal r
            r = _elementwise(self.data, _scalar_relu, _array_relu)
            return r

        def _backward(grad: Data) -> None:
            self._accumulate((r > 0) * grad)  # slope 1 where the unit is on, 0 where off

        return _node(_forward, _backward, (self,), "relu")

    def sigmoid(self) -> Value:
        s: Data = 0.0  # the output: its slope is read off it, like tanh's

        def _forward() -> Data:
            nonlocal s
            # sigma(x) = (1 + tanh(x/2)) / 2: the same curve, without overflow for large |x|.
            s = 0.5 * (1 + _elementwise(0.5 * self.data, math.tanh, np.tanh))
            return s

        def _backward(grad: Data) -> None:
            self._accumulate(s * (1 - s) * grad)  # d sigma(x)/dx = sigma(x)(1 - sigma(x))

        return _node(_forward, _backward, (self,), "sigmoid")

    def sum(self) -> Value:
        """Sum over samples: one number per sample -> one number."""
        def _forward() -> Data:
            return float(np.sum(self.data))

        def _backward(grad: Data) -> None:
            self._accumulate(_spread(self.data, grad))  # every sample gets the whole gradient

        return _node(_forward, _backward, (self,), "sum")

    def mean(self) -> Value:
        """Mean over samples: one number per sample -> one number."""
        def _forward() -> Data:
            return float(np.mean(self.data))

        def _backward(grad: Data) -> None:
            n = self.data.shape[0] if type(self.data) is np.ndarray else 1
            self._accumulate(_spread(self.data, grad / n))  # each sample gets 1/n of it

        return _node(_forward, _backward, (self,), "mean")

    # --- penalties: one node over many values -----------------------------------
    # micrograd's demo writes its L2 penalty as `sum(p * p for p in params)`: a chain of
    # two nodes per parameter (674 of the demo's 1,663), and as many boxes in the graph.
    # These ops are that same sum as one node whose inputs are the parameters. They add
    # in the chain's order (left to right, from 0) and pass each input the chain's two
    # contributions, so the loss and every gradient are the chain's to the last bit.
    @staticmethod
    def sum_of_squares(values: Iterable[Value]) -> Value:
        """L2 = w₀² + w₁² + ... : one node, one input per value."""
        values = tuple(values)

        def _forward() -> Data:
            total: Data = 0.0
            for v in values:
                total = total + v.data * v.data
            return total

        def _backward(grad: Data) -> None:
            # The chain ran its last term first, and its `w * w` passed w·grad to each
            # side of the product: twice to the same w. d(w²)/dw = 2w, added as it did.
            for v in reversed(values):
                v._accumulate(v.data * grad)
                v._accumulate(v.data * grad)

        return _node(_forward, _backward, values, "l2")

    @staticmethod
    def sum_of_sizes(values: Iterable[Value]) -> Value:
        """L1 = |w₀| + |w₁| + ... : one node, one input per value."""
        values = tuple(values)

        def _forward() -> Data:
            total: Data = 0.0
            for v in values:
                total = total + abs(v.data)
            return total

        def _backward(grad: Data) -> None:
            for v in reversed(values):  # as the chain of abs(w) terms did, last first
                sign = _elementwise(v.data, _scalar_sign, np.sign)
                v._accumulate(sign * grad)  # d|w|/dw = sign(w), and 0 at the kink

        return _node(_forward, _backward, values, "l1")

    # --- derived ops: built from the basic ones, so they need no backward of their own
    def __sub__(self, other: Any) -> Value:
        return self + (-self._other(other))

    def __truediv__(self, other: Any) -> Value:
        return self * self._other(other) ** -1

    def __radd__(self, other: Any) -> Value:
        return self._other(other) + self

    def __rmul__(self, other: Any) -> Value:
        return self._other(other) * self

    def __rsub__(self, other: Any) -> Value:
        return self._other(other) + (-self)

    def __rtruediv__(self, other: Any) -> Value:
        return self._other(other) * self**-1

    # --- backward ----------------------------------------------------------------
    def topological_order(self) -> list[Value]:
        """Every node this value depends on, each after all of its inputs.

        Iterative, so a 100,000-step chain does not hit Python's recursion limit.
        """
        order: list[Value] = []
        visited = {self}
        # Each stack entry is a node and an iterator over the inputs still to visit;
        # a node joins `order` once that iterator is exhausted.
        stack = [(self, iter(self._prev))]
        while stack:
            node, inputs = stack[-1]
            for child in inputs:
                if child not in visited:
                    visited.add(child)
                    if child._prev:
                        stack.append((child, iter(child._prev)))
                        break
                    order.append(child)  # a leaf has no inputs to wait for
            else:
                stack.pop()
                order.append(node)
        return order

    def backward(self, retain_graph: bool = False,
                 order: Sequence[Value] | None = None) -> None:
        """Pass d(self)/d(node) to every node, in reverse topological order.

        `order`: this graph's `topological_order()` if it is already known, its leaves
        left out or not (they have nothing to pass on): a training step whose graph has
        the same shape every time need not sort it again (`gradbox.autograd.order`).
        """
        if type(self.data) is np.ndarray:
            raise RuntimeError(NON_SCALAR_MESSAGE)
        topo = self.topological_order() if order is None else order
        # Refuse before touching any gradient, so a failed call changes nothing.
        if any(node._backward is _freed_backward for node in topo):
            raise RuntimeError(FREED_GRAPH_MESSAGE)
        # Each pass is a fresh flow, as in PyTorch: leaves (parameters, inputs) keep
        # accumulating across passes, intermediate nodes show this pass's gradient.
        for node in topo:
            if node._prev:
                node.grad = 0.0
        self.grad += 1.0  # d(self)/d(self)
        for node in reversed(topo):
            # A node runs only after every consumer has added its share to node.grad.
            node._backward(node.grad)
        if not retain_graph:
            free_saved(topo)

    # --- display -----------------------------------------------------------------
    def __repr__(self) -> str:
        return f"Value(data={_short(self.data)}, grad={_short(self.grad)})"


def _node(forward: Callable[[], Data], backward: Callable[[Data], None],
          inputs: tuple[Value, ...], op: str) -> Value:
    """An op's output: its value computed by `forward`, and both closures kept."""
    out = Value(forward(), inputs, op)
    out._forward = forward
    out._backward = backward
    return out


def accumulate_floats(nodes: Sequence[Value], grads: np.ndarray) -> None:
    """Hand each of `nodes` (float nodes: parameters) its gradient `grads[i]` by the
    accumulation rule, all at once: what `_accumulate` does one node at a time, for a
    caller that computed many gradients in one array (`gradbox.autograd.fused`)."""
    totals = list(map(_GRAD, nodes))
    if set(map(type, totals)) <= {float}:
        held = np.array(totals, dtype=np.float64)
        # `_accumulate`'s rule, elementwise: a total of 0 takes the arrival as it is.
        totals = np.where(held == 0.0, grads, held + grads).tolist()
        for node, total in zip(nodes, totals):
            node.grad = total
    else:
        for node, grad in zip(nodes, grads.tolist()):
            node._accumulate(grad)


def recompute(order: Iterable[Value]) -> None:
    """Compute each op node's value again from its inputs', in topological `order` (op
    nodes only), and set its gradient back to 0: a graph kept from one training step to
    the next -- the same nodes, new weights in its leaves -- instead of thousands of new
    nodes built each step. The very expressions of the first build: the same numbers."""
    for node in order:
        node.data = node._forward()  # type: ignore[misc]
        node.grad = 0.0  # as a new node's: no gradient has reached it yet


def free_saved(nodes: Iterable[Value]) -> None:
    """Release what each op saved for its backward, as PyTorch does after backward().

    Dropping the closures also drops the arrays they captured, so a trained step's
    memory goes back at once instead of when the next graph replaces this one.
    """
    for node in nodes:
        if node._prev and node._op not in SAVES_NOTHING:
            node._backward = _freed_backward


def take_apart(root: Value) -> None:
    """Take apart the graph that ends in `root`, one node at a time.

    Dropping the last reference to a graph frees it all inside one call, during which no
    other thread runs: a 1000x1000 network's millions of nodes froze the window for a
    second. Here each node lets go of its inputs in a Python loop, which the interpreter
    may interrupt, so the same work comes in slices. Only for a graph nobody will walk
    again: its nodes keep their numbers but lose their inputs.
    """
    stack = [root]
    while stack:
        node = stack.pop()
        inputs = node._prev
        if inputs:
            # Its closures hold the inputs too: they go with them.
            node._prev, node._forward, node._backward = (), None, _freed_backward
            stack.extend(inputs)


def cut_inputs(node: Value) -> tuple[Value, ...]:
    """Cut `node` off the values it was computed from, and return them: its inputs and
    its backward closure (which holds them too) are dropped, so when `node` dies it frees
    itself alone, not the graph behind it. For taking apart a graph nobody will walk
    again a node at a time (`gradbox.runner.leftovers`: the graph of a step that Pause
    abandoned), keeping each input alive until it is let go in turn. (A node that Pause
    caught half made may have no inputs yet.)"""
    inputs = getattr(node, "_prev", ())
    if inputs:
        node._prev, node._forward, node._backward = (), None, _freed_backward
    return inputs


def _spread(data: Data, grad: Data) -> Data:
    return np.full(data.shape, grad) if type(data) is np.ndarray else grad


def _scalar_exp(x: float) -> float:
    return math.exp(x) if x < 709.78 else math.inf  # numpy's overflow: inf, not an exception


def _scalar_sign(x: float) -> float:
    return float((x > 0) - (x < 0))


def _scalar_relu(x: float) -> float:
    return x if x > 0 else 0.0


def _array_relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _short(x: Data) -> str:
    if type(x) is np.ndarray:
        return np.array2string(x, precision=4, threshold=6, separator=", ")
    return f"{x:.6g}"
