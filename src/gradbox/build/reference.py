"""gradbox's own answer to the stages, written to the learner's API.

The cases run their code twice: with the learner's names and with these. So this module
is what "expected" means in every comparison and every graph's expected numbers, and it
decomposes the derived ops as the article (and micrograd) do -- `-b` is `b * -1`, `a - b`
is `a + (-b)`, `a / b` is `a * b**-1` -- so a learner's graph lines up with it node for
node. tests/test_build_reference.py checks it against `gradbox.autograd.engine` (values
and gradients on random expressions, the freed-graph rule) so the two cannot drift.

The learner's API (docs/build-it-yourself.md): `numerical_derivative(f, x, h=1e-6)`;
`Value(data, _children=(), _op='')` with `data`, `grad`, `_prev` (a set), `_op`,
`_backward` (no arguments), `+ - * / **` and their reflected forms, `tanh()`, `exp()`,
`relu()`, `backward(retain_graph=False)`; `zero_grad(values)`; `Neuron(nin, nonlin=True)`,
`Layer(nin, nout, **kwargs)`, `MLP(nin, nouts)`, `parameters()`, `Module.zero_grad()`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from typing import Any

from gradbox.autograd.engine import FREED_GRAPH_MESSAGE

# The ops whose backward needs no saved value (PyTorch saves nothing for them), so a
# second backward through them works: here only +, as the learner writes it.
SAVES_NOTHING = frozenset({"+"})


def numerical_derivative(f: Callable[[float], float], x: float, h: float = 1e-6) -> float:
    """The central difference: (f(x + h) - f(x - h)) / 2h."""
    return (f(x + h) - f(x - h)) / (2 * h)


def _freed() -> None:
    raise RuntimeError(FREED_GRAPH_MESSAGE)


class Value:
    """A number, the gradient that reached it, and how to pass that gradient on."""

    def __init__(self, data: float, _children: tuple[Value, ...] = (), _op: str = "") -> None:
        self.data = data
        self.grad = 0.0
        self._backward: Callable[[], None] = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other: Any) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def _backward() -> None:
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other: Any) -> Value:
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def _backward() -> None:
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

    def __pow__(self, k: float) -> Value:
        assert isinstance(k, int | float), "only a number exponent"
        out = Value(self.data ** k, (self,), f"**{k}")

        def _backward() -> None:
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = _backward
        return out

    def tanh(self) -> Value:
        t = math.tanh(self.data)
        out = Value(t, (self,), "tanh")

        def _backward() -> None:
            self.grad += (1 - t * t) * out.grad
        out._backward = _backward
        return out

    def exp(self) -> Value:
        e = math.exp(self.data)
        out = Value(e, (self,), "exp")

        def _backward() -> None:
            self.grad += e * out.grad
        out._backward = _backward
        return out

    def relu(self) -> Value:
        out = Value(self.data if self.data > 0 else 0.0, (self,), "relu")

        def _backward() -> None:
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward
        return out

    def __neg__(self) -> Value:
        return self * -1

    def __sub__(self, other: Any) -> Value:
        return self + (-other)

    def __truediv__(self, other: Any) -> Value:
        return self * other ** -1

    def __radd__(self, other: Any) -> Value:
        return self + other

    def __rmul__(self, other: Any) -> Value:
        return self * other

    def __rsub__(self, other: Any) -> Value:
        return other + (-self)

    def __rtruediv__(self, other: Any) -> Value:
        return other * self ** -1

    def topological_order(self) -> list[Value]:
        """Every node before the nodes built from it; iterative (no recursion limit)."""
        topo: list[Value] = []
        visited: set[Value] = set()
        stack: list[tuple[Value, bool]] = [(self, False)]
        while stack:
            node, parents_done = stack.pop()
            if parents_done:
                topo.append(node)  # every parent of node is already in topo
                continue
            if node in visited:  # pushed twice; in a graph without cycles, done already
                continue
            visited.add(node)
            stack.append((node, True))
            stack.extend((child, False) for child in node._prev if child not in visited)
        return topo

    def backward(self, retain_graph: bool = False) -> None:
        topo = self.topological_order()
        for node in topo:  # a fresh flow through the intermediate nodes, as in PyTorch
            if node._prev:
                node.grad = 0.0
        self.grad = 1.0
        for node in reversed(topo):
            node._backward()
        if not retain_graph:
            for node in topo:
                if node._prev and node._op not in SAVES_NOTHING:
                    node._backward = _freed

    def __repr__(self) -> str:
        return f"Value(data={self.data}, grad={self.grad})"


def zero_grad(values: Iterable[Value]) -> None:
    for v in values:
        v.grad = 0.0


class Module:
    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self) -> list[Value]:
        return []


class Neuron(Module):
    def __init__(self, nin: int, nonlin: bool = True) -> None:
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0.0)
        self.nonlin = nonlin

    def __call__(self, x: list[Any]) -> Value:
        act = sum((wi * xi for wi, xi in zip(self.w, x, strict=True)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self) -> list[Value]:
        return [*self.w, self.b]


class Layer(Module):
    def __init__(self, nin: int, nout: int, **kwargs: Any) -> None:
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x: list[Any]) -> Value | list[Value]:
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self) -> list[Value]:
        return [p for n in self.neurons for p in n.parameters()]


class MLP(Module):
    def __init__(self, nin: int, nouts: list[int]) -> None:
        sizes = [nin, *nouts]
        self.layers = [Layer(sizes[i], sizes[i + 1], nonlin=i != len(nouts) - 1)
                       for i in range(len(nouts))]

    def __call__(self, x: list[Any]) -> Any:
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self) -> list[Value]:
        return [p for layer in self.layers for p in layer.parameters()]


NAMES = ("numerical_derivative", "Value", "zero_grad", "Module", "Neuron", "Layer", "MLP")


class _BiasFirstNeuron(Neuron):
    """A known mistake, for naming it: each neuron's bias listed before its weights."""

    def parameters(self) -> list[Value]:
        return [self.b, *self.w]


class _BiasFirstLayer(Layer):
    def __init__(self, nin: int, nout: int, **kwargs: Any) -> None:
        self.neurons = [_BiasFirstNeuron(nin, **kwargs) for _ in range(nout)]


class _BiasFirstMLP(MLP):
    def __init__(self, nin: int, nouts: list[int]) -> None:
        sizes = [nin, *nouts]
        self.layers = [_BiasFirstLayer(sizes[i], sizes[i + 1], nonlin=i != len(nouts) - 1)
                       for i in range(len(nouts))]


def namespace(*, bias_first: bool = False) -> dict[str, Any]:
    """The reference's names, as a learner's file defines them (`bias_first`: with the
    parameters-order mistake, to recognise it)."""
    names = {name: globals()[name] for name in NAMES}
    if bias_first:
        names.update(Neuron=_BiasFirstNeuron, Layer=_BiasFirstLayer, MLP=_BiasFirstMLP)
    return names
