"""Per-layer statistics of one training step: how big each layer's gradients are, and how
its activations are spread -- what shows vanishing gradients and saturated units.

Pure numpy, no Qt. The trainer measures them in every step's update phase (from the
weights the forward pass used and the gradients backward left) and keeps them in the
step's record, so they are plotted over time, rewound and saved with the rest.

For each layer, input side first (the last is the output layer):

    grad      mean |∂L/∂θ| over the layer's parameters (weights and biases)
    saturated the fraction of the layer's outputs (units × samples of the batch) that sit
              where the activation is flat, its slope under 2 % of its peak: |tanh| > 0.99,
              sigmoid within 0.005 of 0 or 1, relu exactly 0 (a unit that passes no
              gradient for that sample); NaN for linear
    quantiles the 0, 10, 25, 50, 75, 90 and 100th percentiles of those outputs
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gradbox.autograd.nn import layer_slices, numpy_layer_outputs

QUANTILES = (0, 10, 25, 50, 75, 90, 100)
# Columns of a LayerStats table.
GRAD, SATURATED, FIRST_QUANTILE = 0, 1, 2
COLUMNS = 2 + len(QUANTILES)
SATURATION = 0.99  # |tanh| or |2·sigmoid − 1| above this: the slope is < 2 % of its peak


class LayerStats:
    """An immutable (layers, COLUMNS) table: grad, saturated, then the quantiles."""

    __slots__ = ("table",)

    def __init__(self, table: np.ndarray) -> None:
        table = np.array(table, dtype=np.float64, copy=True)
        if table.ndim != 2 or table.shape[1] != COLUMNS:
            raise ValueError(f"a LayerStats table is (layers, {COLUMNS}), got {table.shape}")
        table.flags.writeable = False
        self.table = table

    @property
    def layers(self) -> int:
        return self.table.shape[0]

    @property
    def grad(self) -> np.ndarray:
        return self.table[:, GRAD]

    @property
    def saturated(self) -> np.ndarray:
        return self.table[:, SATURATED]

    @property
    def quantiles(self) -> np.ndarray:
        """(layers, len(QUANTILES)) percentiles of each layer's outputs."""
        return self.table[:, FIRST_QUANTILE:]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LayerStats):
            return NotImplemented
        return bool(np.array_equal(self.table, other.table, equal_nan=True))

    __hash__ = None  # type: ignore[assignment]  # equal tables, not identity

    def __repr__(self) -> str:
        return f"LayerStats(grad={np.round(self.grad, 6).tolist()})"


def saturated_fraction(outputs: np.ndarray, activation: str) -> float:
    """The share of outputs where `activation` is flat (see the module docstring)."""
    if outputs.size == 0 or activation == "linear":
        return float("nan")
    if activation == "tanh":
        flat = np.abs(outputs) > SATURATION
    elif activation == "sigmoid":
        flat = np.abs(2 * outputs - 1) > SATURATION
    else:  # relu
        flat = outputs <= 0
    return float(np.mean(flat))


def measure(params: np.ndarray, grads: np.ndarray, layer_sizes: Sequence[int],
            activation: str, points: np.ndarray) -> LayerStats:
    """The statistics of a network with these weights and gradients, on these points."""
    outputs = numpy_layer_outputs(params, layer_sizes, activation, points)
    last = len(outputs) - 1
    table = np.empty((len(outputs), COLUMNS))
    for i, (where, out) in enumerate(zip(layer_slices(layer_sizes), outputs)):
        table[i, GRAD] = np.mean(np.abs(grads[where]))
        table[i, SATURATED] = saturated_fraction(out, "linear" if i == last else activation)
        table[i, FIRST_QUANTILE:] = (np.percentile(out, QUANTILES) if out.size
                                     else np.nan)
    return LayerStats(table)


def layer_names(layer_sizes: Sequence[int]) -> list[str]:
    """'hidden 1 (8)', ..., 'output (1)': how the views name the layers."""
    hidden = [f"hidden {i + 1} ({n})" for i, n in enumerate(layer_sizes[1:-1])]
    return [*hidden, f"output ({layer_sizes[-1]})"]
