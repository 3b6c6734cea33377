"""The network level: an MLP-shaped graph seen as units and weights.

Where each neuron lives among the operations (`neuron_nodes`), and the weights,
gradients, unit values and unit maps the network-level view draws.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from gradbox.autograd import features, ops
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import numpy_layers, parameter_name, parse_parameter_name
from gradbox.graph.core import Graph, at
from gradbox.graph.layout import LAYOUT_CACHE_SIZE


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
    params = graph.parameter_nodes
    bias = params.get(parameter_name(layer, index, None))
    nin = 0  # probe w.0, w.1, ...: scanning every name per neuron was quadratic
    while parameter_name(layer, index, nin) in params:
        nin += 1
    if bias is None or nin == 0:
        return None
    steps, muls, weights, inputs = [], [], [], []
    current = bias
    for _ in range(nin):
        nxt = next((c for c in graph.consumers[current]
                    if graph.ops[c] == "+" and graph.children[c][0] == current), None)
        if nxt is None:
            return None
        mul = graph.children[nxt][1]
        if graph.ops[mul] != "*":
            return None
        steps.append(nxt)
        muls.append(mul)
        weights.append(graph.children[mul][0])
        inputs.append(graph.children[mul][1])
        current = nxt
    uses = graph.consumers[current]
    if len(uses) == 1 and graph.ops[uses[0]] in ops.ACTIVATIONS:
        current = uses[0]
        steps.append(current)
    return NeuronNodes(layer, index, tuple(sorted(steps + muls)), (*weights, bias),
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
    # What each input is (x₁, x₁², sin x₂ ...), when the source knows its features.
    input_labels: tuple[str, ...] | None = None

    @property
    def structure_key(self) -> tuple[Any, ...]:
        # The activations too: the column titles name them ("hidden · tanh").
        return (*self.layer_sizes, *(self.input_labels or ()), *self.activations)

    def input_label(self, k: int) -> str:
        return self.input_labels[k] if self.input_labels else f"x{k}"


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
    ``layers.L.neurons.J.w.I`` / ``.b``, as `gradbox.autograd.nn.MLP` gives them) or a training
    snapshot with ``layer_sizes``, ``param_names``, ``params`` and ``grads`` arrays (its
    ``graph`` is used when no graph is given). With `extent` (xmin, xmax, ymin, ymax)
    each unit also gets a `resolution`² map of its output over the plane.
    """
    weights: list[np.ndarray]
    wgrads: list[np.ndarray]
    biases: list[np.ndarray]
    bgrads: list[np.ndarray]
    if hasattr(source, "named_parameters"):
        sizes = tuple(int(s) for s in source.layer_sizes())
        weights, wgrads, biases, bgrads = _zeros(sizes)
        for name, p in source.named_parameters():
            parsed = parse_parameter_name(name)
            if parsed is None:
                continue
            layer, unit, src = parsed
            if src is None:
                biases[layer][unit] = at(p.data, 0)
                bgrads[layer][unit] = at(p.grad, 0)
            else:
                weights[layer][unit, src] = at(p.data, 0)
                wgrads[layer][unit, src] = at(p.grad, 0)
    else:
        sizes = tuple(int(s) for s in source.layer_sizes)
        weights, wgrads, biases, bgrads = _zeros(sizes)
        params, grads = np.asarray(source.params), np.asarray(source.grads)
        # Where each parameter goes, found once per network (parsing every name took
        # most of a W1 refresh of the network level, at each shown step).
        for layer, (w_at, w_rows, w_cols, b_at, b_rows) in enumerate(
                _places(source.param_names, len(sizes) - 1)):
            weights[layer][w_rows, w_cols] = params[w_at]
            wgrads[layer][w_rows, w_cols] = grads[w_at]
            biases[layer][b_rows] = params[b_at]
            bgrads[layer][b_rows] = grads[b_at]
        if graph is None:
            graph = getattr(source, "graph", None)
    activations = tuple(_activations(source, len(weights)))
    units = unit_grads = None
    loss = None
    if graph is not None:
        units, unit_grads = _unit_values(graph, sizes, sample)
        loss = at(graph.data(graph.root), 0)
    config = getattr(source, "config", None)
    names = getattr(config, "effective_features", None)
    if names is not None and len(names) != sizes[0]:
        names = None
    maps = None
    if extent is not None:
        maps = tuple(unit_maps(weights, biases, activations, extent, resolution, names))
    labels = None if names is None else tuple(features.labels(names))
    return NetworkLevel(sizes, activations, tuple(weights), tuple(wgrads), tuple(biases),
                        tuple(bgrads), units, unit_grads, loss, sample, maps, labels)


def _zeros(sizes: Sequence[int]) -> tuple[list[np.ndarray], list[np.ndarray],
                                          list[np.ndarray], list[np.ndarray]]:
    """Weights, their gradients, biases and theirs of a network of `sizes`, all 0."""
    weights = [np.zeros((sizes[i + 1], sizes[i])) for i in range(len(sizes) - 1)]
    biases = [np.zeros(sizes[i + 1]) for i in range(len(sizes) - 1)]
    return (weights, [np.zeros_like(w) for w in weights], biases,
            [np.zeros_like(b) for b in biases])


_PLACES: tuple[Sequence[str], int, list[tuple[np.ndarray, ...]]] | None = None


def _places(names: Sequence[str], n_layers: int) -> list[tuple[np.ndarray, ...]]:
    """Per layer: (positions in `names` of its weights, their rows, their columns,
    positions of its biases, their rows). The last network's, kept while its names
    are the same object (a snapshot hands on the same names while the network stays)."""
    global _PLACES
    if _PLACES is not None and _PLACES[0] is names and _PLACES[1] == n_layers:
        return _PLACES[2]
    found: list[tuple[list[int], ...]] = [([], [], [], [], []) for _ in range(n_layers)]
    for k, name in enumerate(names):
        parsed = parse_parameter_name(name)
        if parsed is None or not 0 <= parsed[0] < n_layers:
            continue
        layer, unit, src = parsed
        w_at, w_rows, w_cols, b_at, b_rows = found[layer]
        if src is None:
            b_at.append(k)
            b_rows.append(unit)
        else:
            w_at.append(k)
            w_rows.append(unit)
            w_cols.append(src)
    places = [tuple(np.asarray(column, dtype=np.intp) for column in layer)
              for layer in found]
    _PLACES = (names, n_layers, places)
    return places


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
    values = tuple(np.array([at(graph.data(i), sample) if i is not None else np.nan
                             for i in ids]) for ids in outputs)
    grads = tuple(np.array([at(graph.grad(i), sample) if i is not None else np.nan
                            for i in ids]) for ids in outputs)
    return values, grads


def unit_maps(weights: Sequence[np.ndarray], biases: Sequence[np.ndarray],
              activations: Sequence[str], extent: tuple[float, float, float, float],
              resolution: int = 20, names: Sequence[str] | None = None) -> list[np.ndarray]:
    """Each unit's output over a grid of the plane: (units, res, res) per layer, row 0 at the top.

    `nn.numpy_layers`: the very numpy forward pass the decision boundary uses. With input
    feature `names` the inputs' own maps are the features over the plane (x₁² a bowl,
    sin x₁ stripes), as TensorFlow Playground draws them.
    """
    xmin, xmax, ymin, ymax = extent
    xs = np.linspace(xmin, xmax, resolution)
    ys = np.linspace(ymax, ymin, resolution)
    gx, gy = np.meshgrid(xs, ys)
    points = np.column_stack([gx.ravel(), gy.ravel()])
    if names is not None:
        points = features.transform(points, names)
    if weights and weights[0].shape[1] != points.shape[1]:
        points = np.zeros((gx.size, weights[0].shape[1]))
    return [h.T.reshape(-1, resolution, resolution)
            for h in numpy_layers(weights, biases, activations, points)]


# --- the selected sample's path -----------------------------------------------------------
def weight_flows(net: NetworkLevel) -> np.ndarray | None:
    """What each weight passed on in the selected sample's forward pass: weight × the
    value of the unit it comes from, flat in the order of `net.weights` (layer by layer,
    each W row by row). None without the sample's unit values."""
    if net.units is None or len(net.units) < len(net.weights):
        return None
    flows = [np.asarray(w, dtype=np.float64) * np.asarray(a, dtype=np.float64)[None, :]
             for w, a in zip(net.weights, net.units)]
    flat = np.concatenate([f.ravel() for f in flows]) if flows else np.zeros(0)
    return None if np.isnan(flat).any() else flat


def layer_shares(values: np.ndarray, layers: np.ndarray) -> np.ndarray:
    """|value| relative to the largest |value| of the same layer (0 where all are 0)."""
    magnitude = np.abs(np.asarray(values, dtype=np.float64))
    layers = np.asarray(layers, dtype=np.intp)
    if not magnitude.size:
        return magnitude
    top = np.zeros(int(layers.max()) + 1)
    np.maximum.at(top, layers, magnitude)
    scale = top[layers]
    return np.divide(magnitude, scale, out=np.zeros_like(magnitude), where=scale > 0)


def path_shares(net: NetworkLevel) -> np.ndarray | None:
    """How much of the selected sample's signal each weight carried into its layer:
    |weight × input| over the largest in the layer, 1 for the weight that carried the
    most, 0 for one that carried nothing (its input was 0). None without unit values."""
    flows = weight_flows(net)
    if flows is None:
        return None
    layers = np.concatenate([np.full(w.size, k) for k, w in enumerate(net.weights)])
    return layer_shares(flows, layers)


def edge_products(shown: Graph, original: Graph) -> tuple[np.ndarray, np.ndarray]:
    """For each edge of `shown` (in `shown.edges` order): the id in `original` of the
    weight × input product it carries, or -1; and that weight's layer (or -1).

    The edges into a product (x → w·x, w → w·x), out of it (w·x → the neuron's sum),
    and, drawn collapsed, from the box holding the input into the neuron's box all
    carry it. Looks only at the shown edges' ends: made once per drawn structure.
    """
    layer_of: dict[int, int] = {}  # product id -> its weight's layer, once decided

    def product_layer(m: int) -> int:
        if m not in layer_of:
            layer_of[m] = -1
            children = original.children[m]
            # w · x, as `Neuron.__call__` builds it: not the penalty's w · w
            if original.ops[m] == "*" and len(children) == 2 \
                    and original.names[children[1]] is None and original.names[children[0]]:
                parsed = parse_parameter_name(original.names[children[0]] or "")
                if parsed is not None and parsed[2] is not None:
                    layer_of[m] = parsed[0]
        return layer_of[m]

    def members(k: int) -> tuple[int, ...]:
        if shown.members is not None:
            return shown.members[k]
        return (shown.original_ids[k],) if shown.original_ids is not None else (k,)

    by_input: dict[int, dict[int, int]] = {}  # box -> {input id: product id} inside it

    def products_in(box: int) -> dict[int, int]:
        if box not in by_input:
            by_input[box] = {original.children[m][1]: m for m in members(box)
                             if product_layer(m) >= 0}
        return by_input[box]

    ids = np.full(len(shown.edges), -1, dtype=np.int64)
    layers = np.full(len(shown.edges), -1, dtype=np.int64)
    for e, (c, p) in enumerate(shown.edges):
        into, out_of = members(p), members(c)
        found = -1
        if len(into) == 1 and product_layer(into[0]) >= 0:
            found = into[0]
        elif len(out_of) == 1 and product_layer(out_of[0]) >= 0:
            found = out_of[0]
        elif len(into) > 1:
            inside = products_in(p)
            found = next((inside[x] for x in out_of if x in inside), -1)
        if found >= 0:
            ids[e], layers[e] = found, layer_of[found]
    return ids, layers


def edge_shares(original: Graph, products: np.ndarray, layers: np.ndarray,
                sample: int) -> np.ndarray:
    """Per edge, the `sample`'s |weight × input| over the largest of the same layer
    (see `edge_products`); 0 for an edge that carries no product."""
    carries = products >= 0
    unique = np.unique(products[carries])
    values = np.fromiter((at(original.data(m), sample) for m in unique.tolist()),
                         np.float64, len(unique))
    shares = np.zeros(len(products))
    if len(unique):
        per_edge = values[np.searchsorted(unique, products[carries])]
        shares[carries] = layer_shares(per_edge, layers[carries])
    return shares
