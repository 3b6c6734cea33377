# Another learner's engine that completes every stage, written differently from
# correct.py: - and / and negation are ops of their own with their own _backward, relu
# reads its input, the walk is Kahn's algorithm (counting consumers), a freed node's
# _backward is None and backward refuses before touching any gradient, parameters()
# is built with extend, and numbers are floats from the start.
import itertools
import math
import random


def numerical_derivative(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (h + h)


class Value:
    def __init__(self, data, _children=(), _op=''):
        self.data = float(data)
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    @staticmethod
    def wrap(x):
        return x if isinstance(x, Value) else Value(x)

    def _make(self, data, children, op, local):
        out = Value(data, children, op)
        def _backward():
            for child, d in zip(children, local()):
                child.grad += d * out.grad
        out._backward = _backward
        return out

    def __add__(self, other):
        other = Value.wrap(other)
        return self._make(self.data + other.data, (self, other), '+', lambda: (1.0, 1.0))

    def __mul__(self, other):
        other = Value.wrap(other)
        return self._make(self.data * other.data, (self, other), '*',
                          lambda: (other.data, self.data))

    def __sub__(self, other):
        other = Value.wrap(other)
        return self._make(self.data - other.data, (self, other), '-', lambda: (1.0, -1.0))

    def __truediv__(self, other):
        other = Value.wrap(other)
        return self._make(self.data / other.data, (self, other), '/',
                          lambda: (1 / other.data, -self.data / other.data ** 2))

    def __neg__(self):
        return self._make(-self.data, (self,), 'neg', lambda: (-1.0,))

    def __pow__(self, k):
        return self._make(self.data ** k, (self,), f'^{k}', lambda: (k * self.data ** (k - 1),))

    def tanh(self):
        t = math.tanh(self.data)
        return self._make(t, (self,), 'tanh', lambda: (1 - t ** 2,))

    def exp(self):
        e = math.exp(self.data)
        return self._make(e, (self,), 'exp', lambda: (e,))

    def relu(self):
        return self._make(max(self.data, 0.0), (self,), 'relu',
                          lambda: (1.0 if self.data > 0 else 0.0,))

    def __radd__(self, other):
        return Value.wrap(other) + self

    def __rmul__(self, other):
        return Value.wrap(other) * self

    def __rsub__(self, other):
        return Value.wrap(other) - self

    def __rtruediv__(self, other):
        return Value.wrap(other) / self

    def backward(self, retain_graph=False):
        # Kahn: a node is ready once every consumer has passed its gradient on.
        consumers, seen, stack = {}, {self}, [self]
        while stack:
            node = stack.pop()
            for child in node._prev:
                consumers[child] = consumers.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        if any(node._backward is None for node in seen):
            raise RuntimeError("Trying to backward through the graph a second time; "
                               "use retain_graph=True")
        self.grad = 1.0
        ready, order = [self], []
        while ready:
            node = ready.pop()
            order.append(node)
            node._backward()
            for child in node._prev:
                consumers[child] -= 1
                if consumers[child] == 0:
                    ready.append(child)
        if not retain_graph:
            for node in order:
                if node._prev and node._op not in ('+', '-', 'neg'):
                    node._backward = None


def zero_grad(values):
    for value in list(values):
        value.grad = 0


class Module:
    def zero_grad(self):
        zero_grad(self.parameters())

    def parameters(self):
        return []


class Neuron(Module):
    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.gauss(0, 1)) for _ in range(nin)]
        self.b = Value(random.gauss(0, 1))
        self.nonlin = nonlin

    def __call__(self, x):
        act = self.b
        for wi, xi in zip(self.w, x):
            act = act + wi * xi
        return act.relu() if self.nonlin else act

    def parameters(self):
        params = list(self.w)
        params.append(self.b)
        return params


class Layer(Module):
    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        outs = [n(x) for n in self.neurons]
        return outs if len(outs) > 1 else outs[0]

    def parameters(self):
        params = []
        for n in self.neurons:
            params.extend(n.parameters())
        return params


class MLP(Module):
    def __init__(self, nin, nouts):
        sizes = [nin, *nouts]
        self.layers = [Layer(a, b, nonlin=k < len(nouts) - 1)
                       for k, (a, b) in enumerate(itertools.pairwise(sizes))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]
