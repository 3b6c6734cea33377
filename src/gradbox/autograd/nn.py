"""A small neural-network library on top of the engine, shaped like PyTorch's."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradbox.autograd.engine import Value

ACTIVATIONS = ("relu", "tanh", "sigmoid", "linear")


class Module:
    """Something with parameters: PyTorch's `nn.Module`, in miniature."""

    def named_parameters(self) -> list[tuple[str, Value]]:
        return []

    def parameters(self) -> list[Value]:
        return [p for _, p in self.named_parameters()]

    def zero_grad(self) -> None:
        # Gradients accumulate (+=) by design, so each step must start from zero.
        for p in self.parameters():
            p.grad = 0.0


def activate(x: Value, activation: str) -> Value:
    if activation == "linear":
        return x
    return getattr(x, activation)()


class Neuron(Module):
    """out = activation(w . x + b)."""

    def __init__(self, nin: int, activation: str = "relu",
                 rng: np.random.Generator | None = None,
                 weights: Sequence[float] | None = None) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"unknown activation {activation!r}; choose from {ACTIVATIONS}")
        if weights is None:
            rng = rng if rng is not None else np.random.default_rng()
            weights = rng.uniform(-1, 1, nin)
        self.w = [Value(float(w)) for w in weights]
        self.b = Value(0.0)
        self.activation = activation

    def __call__(self, x: Sequence[Value]) -> Value:
        # Same order as micrograd: b + w0*x0 + w1*x1 + ..., so graphs match node for node.
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return activate(act, self.activation)

    def named_parameters(self) -> list[tuple[str, Value]]:
        return [(f"w.{i}", w) for i, w in enumerate(self.w)] + [("b", self.b)]

    def __repr__(self) -> str:
        return f"{self.activation.capitalize()}Neuron({len(self.w)})"


class Layer(Module):
    def __init__(self, nin: int, nout: int, activation: str = "relu",
                 rng: np.random.Generator | None = None, init: str = "uniform",
                 init_scale: float = 1.0) -> None:
        rng = rng if rng is not None else np.random.default_rng()
        weights = initial_weights(init, init_scale, nin, nout, rng)
        self.neurons = [Neuron(nin, activation, weights=row) for row in weights]

    def __call__(self, x: Sequence[Value]) -> list[Value]:
        # A loop, not a list comprehension: the outputs made so far are a local of this
        # frame, which an exception's traceback keeps. A Pause that abandons a big
        # network's forward pass then frees the half-built graph after it has answered,
        # instead of in one deallocation of seconds while the exception unwinds.
        outputs: list[Value] = []
        for neuron in self.neurons:
            outputs.append(neuron(x))
        return outputs

    def named_parameters(self) -> list[tuple[str, Value]]:
        return [(f"neurons.{i}.{name}", p)
                for i, n in enumerate(self.neurons) for name, p in n.named_parameters()]

    def __repr__(self) -> str:
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


# --- initialization ------------------------------------------------------------------
# How a layer's weights start (biases always start at 0, as in micrograd and Playground).
# `scale` is the one knob: the bound a of uniform ±a, the σ of normal, the constant
# itself, or a gain on Xavier/Glorot's and He's sizes (1 = the paper's).
INITIALIZERS = ("uniform", "normal", "xavier", "he", "constant", "zeros")
INIT_LABELS = {"uniform": "uniform ±a", "normal": "normal σ", "xavier": "Xavier/Glorot",
               "he": "He (Kaiming)", "constant": "constant", "zeros": "zeros"}


def initial_weights(init: str, scale: float, fan_in: int, fan_out: int,
                    rng: np.random.Generator) -> np.ndarray:
    """A (fan_out, fan_in) weight matrix: row j holds neuron j's input weights.

    Drawn row by row from `rng`, so uniform with scale 1 gives exactly the weights
    gradbox always gave (micrograd's uniform(-1, 1)).
    """
    shape = (fan_out, fan_in)
    # -0.0 is a scale of 0, but numpy's uniform and normal refuse it ('high - low < 0',
    # 'scale < 0': they test the sign bit); adding 0.0 clears it and changes no other value.
    scale = scale + 0.0
    if init == "uniform":
        return rng.uniform(-scale, scale, shape)
    if init == "normal":
        return rng.normal(0.0, scale, shape)
    if init == "xavier":
        # Glorot & Bengio 2010: Var(w) = 2 / (fan_in + fan_out), as uniform ±sqrt(6/(in+out))
        # (PyTorch's xavier_uniform_): activations keep their size forward and backward.
        return rng.uniform(-1, 1, shape) * scale * math.sqrt(6.0 / (fan_in + fan_out))
    if init == "he":
        # He et al. 2015: Var(w) = 2 / fan_in (kaiming_normal_): for ReLU, which zeroes half.
        return rng.normal(0.0, scale * math.sqrt(2.0 / fan_in), shape)
    if init == "constant":
        return np.full(shape, float(scale))
    if init == "zeros":
        return np.zeros(shape)
    raise ValueError(f"unknown initialization {init!r}; choose from {', '.join(INITIALIZERS)}")


class MLP(Module):
    """A multi-layer perceptron; the last layer is linear (raw scores) by default."""

    def __init__(self, nin: int, nouts: Sequence[int], activation: str = "relu",
                 output_activation: str = "linear", seed: int | None = None,
                 init: str = "uniform", init_scale: float = 1.0) -> None:
        if nin < 1 or any(int(n) < 1 for n in nouts) or not nouts:
            raise ValueError(f"layer sizes must be at least 1, got {nin} inputs and {list(nouts)}")
        rng = np.random.default_rng(seed)
        sizes = [nin, *nouts]
        self.nin = nin
        self.activation = activation
        self.layers = [
            Layer(sizes[i], sizes[i + 1],
                  activation if i < len(nouts) - 1 else output_activation, rng,
                  init, init_scale)
            for i in range(len(nouts))
        ]
        # The structure never changes after construction, so list the parameters once:
        # training asks for them several times per step.
        params = [p for layer in self.layers for _, p in layer.named_parameters()]
        self._named = list(zip(parameter_names(sizes), params, strict=True))
        self._params = [p for _, p in self._named]

    def __call__(self, x: Sequence[Any]) -> Value | list[Value]:
        if len(x) != self.nin:
            raise ValueError(f"this network takes {self.nin} inputs, got {len(x)}")
        # Wrap raw inputs once, so every neuron of the first layer shares the same leaves.
        h: list[Value] = [xi if isinstance(xi, Value) else Value(xi, label=f"x{i}")
                          for i, xi in enumerate(x)]
        for layer in self.layers:
            h = layer(h)
        return h[0] if len(h) == 1 else h

    def named_parameters(self) -> list[tuple[str, Value]]:
        return list(self._named)

    def parameters(self) -> list[Value]:
        return list(self._params)

    def layer_sizes(self) -> list[int]:
        return [self.nin] + [len(layer.neurons) for layer in self.layers]

    def get_flat(self) -> np.ndarray:
        """All parameter values as one array, in `parameters()` order."""
        return np.array([p.data for p in self.parameters()], dtype=np.float64)

    def set_flat(self, values: np.ndarray) -> None:
        params = self.parameters()
        if len(values) != len(params):
            raise ValueError(f"expected {len(params)} parameter values, got {len(values)}")
        for p, v in zip(params, values):
            p.data = float(v)

    def __repr__(self) -> str:
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def numpy_forward(params: np.ndarray, layer_sizes: Sequence[int], activation: str,
                  points: np.ndarray, output_activation: str = "linear",
                  dtype: type = np.float64) -> np.ndarray:
    """The same network as `MLP`, evaluated with matrix products from a flat parameter array.

    Used where only numbers are needed (decision boundary, test loss, loss landscape): one
    matmul per layer instead of a graph. `params` is in `MLP.parameters()` order, shape
    (P,) or (..., P) for many networks at once. Returns (n, nout), or (..., n, nout).
    `dtype=np.float32` is 3x faster, for pictures (the heat map) rather than numbers.
    """
    return numpy_layer_outputs(params, layer_sizes, activation, points, output_activation,
                               dtype)[-1]


def numpy_layer_outputs(params: np.ndarray, layer_sizes: Sequence[int], activation: str,
                        points: np.ndarray, output_activation: str = "linear",
                        dtype: type = np.float64) -> list[np.ndarray]:
    """Every layer's output (after its activation), as `numpy_forward` computes them."""
    weights, biases = unflatten(params, layer_sizes)
    activations = [activation] * (len(weights) - 1) + [output_activation]
    return numpy_layers(weights, biases, activations, points, dtype)[1:]


def unflatten(params: np.ndarray, layer_sizes: Sequence[int]
              ) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per layer, W of shape (..., nout, nin) and b of shape (..., nout), from
    `parameters()` order ((P,) or (..., P) for many networks)."""
    params = np.asarray(params, dtype=np.float64)
    batch = params.shape[:-1]
    weights, biases = [], []
    for (nin, nout), where in zip(itertools.pairwise(layer_sizes), layer_slices(layer_sizes)):
        # Each neuron stores nin weights then its bias: a (nout, nin + 1) block.
        block = params[..., where].reshape(*batch, nout, nin + 1)
        weights.append(block[..., :nin])
        biases.append(block[..., nin])
    return weights, biases


def layer_slices(layer_sizes: Sequence[int]) -> list[slice]:
    """Where each layer's parameters sit in the flat `MLP.parameters()` order."""
    slices, offset = [], 0
    for nin, nout in itertools.pairwise(layer_sizes):
        slices.append(slice(offset, offset + nout * (nin + 1)))
        offset += nout * (nin + 1)
    return slices


def numpy_layers(weights: Sequence[np.ndarray], biases: Sequence[np.ndarray],
                 activations: Sequence[str], points: np.ndarray,
                 dtype: type = np.float64) -> list[np.ndarray]:
    """Every layer's output for a batch of points (n, nin): [points, h1, ..., output].

    Weights (..., nout, nin) and biases (..., nout) with leading axes give outputs
    (..., n, nout): many networks on the same points.
    """
    h = np.asarray(points, dtype=dtype)
    outputs = [h]
    for w, b, act in zip(weights, biases, activations):
        # W transposed into a contiguous (nin, nout) block: the product then runs in
        # BLAS at full speed (a strided view of the flat parameters took 1.5x as long).
        wt = np.ascontiguousarray(np.swapaxes(np.asarray(w), -1, -2), dtype=dtype)
        h = h @ wt
        h += np.asarray(b, dtype=dtype)[..., None, :]
        h = _numpy_activation(h, act)
        outputs.append(h)
    return outputs


def _numpy_activation(h: np.ndarray, activation: str) -> np.ndarray:
    """`activation` of a layer's own new sums, in their array (the same numbers as into a
    new one: a batch of layer statistics makes ~1 MB of arrays less, which stays cached)."""
    if activation == "relu":
        return np.maximum(h, 0.0, out=h)
    if activation == "tanh":
        return np.tanh(h, out=h)
    if activation == "sigmoid":  # 0.5 (1 + tanh(h / 2))
        h *= 0.5
        np.tanh(h, out=h)
        h += 1
        h *= 0.5
    return h


# --- parameter names: built and read here only ---------------------------------------
def parameter_name(layer: int, unit: int, source: int | None) -> str:
    """'layers.L.neurons.J.w.I' for weight I of neuron J in layer L, '...b' for its bias."""
    return f"layers.{layer}.neurons.{unit}.{'b' if source is None else f'w.{source}'}"


def parse_parameter_name(name: str) -> tuple[int, int, int | None] | None:
    """(layer, unit, input index or None for the bias) of a parameter name, else None.
    Only a name `parameter_name` writes is one: read, written again and compared, so a
    trailing newline, a leading zero ('layers.00') or another script's digits (which a
    pattern's \\d and int() take) are not a parameter's name."""
    parts = name.split(".") if len(name) < 80 else []
    if len(parts) not in (5, 6) or parts[0] != "layers" or parts[2] != "neurons":
        return None
    if not all(p.isascii() and p.isdigit() for p in (parts[1], parts[3], *parts[5:])):
        return None
    layer, unit = int(parts[1]), int(parts[3])
    source = int(parts[5]) if len(parts) == 6 else None
    if parameter_name(layer, unit, source) != name:
        return None
    return layer, unit, source


def short_parameter_name(name: str) -> str:
    """'layers.0.neurons.3.w.1' -> 'L0 n3 w1', '...b' -> 'L0 n3 b': the part that tells
    parameters apart, for a narrow column. Other names are kept as they are."""
    parsed = parse_parameter_name(name)
    if parsed is None:
        return name
    layer, unit, source = parsed
    return f"L{layer} n{unit} " + ("b" if source is None else f"w{source}")


def parameter_names(layer_sizes: Sequence[int]) -> list[str]:
    """The names `MLP.named_parameters()` gives a network of these sizes, in its order."""
    return [parameter_name(layer, j, i if i < nin else None)
            for layer, (nin, nout) in enumerate(itertools.pairwise(layer_sizes))
            for j in range(nout) for i in range(nin + 1)]


def widest_parameter_names(layer_sizes: Sequence[int]) -> list[str]:
    """The names that are longest in every form (full, short): each layer's last
    neuron's last weight and its bias, the ones with the most digits. A column fitted
    to these fits every name of the network, without measuring each of them."""
    return [parameter_name(layer, nout - 1, source)
            for layer, (nin, nout) in enumerate(itertools.pairwise(layer_sizes))
            for source in (nin - 1, None)]


def parameter_count(layer_sizes: Sequence[int]) -> int:
    return sum((nin + 1) * nout for nin, nout in itertools.pairwise(layer_sizes))
