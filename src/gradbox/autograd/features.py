"""Input features, as TensorFlow Playground has them: x₁, x₂, x₁², x₂², x₁x₂, sin x₁, sin x₂.

A feature is a small engine expression of the two coordinates, so the network's inputs
are nodes of the same graph as everything else: `x₁²` is `x₁ * x₁` and `sin x₁` is
`x₁.sin()`, and their gradients show in the graph like any other node's. The numbers
used where no graph is needed (decision boundary, test loss) come from the very same
expressions evaluated on whole arrays (`transform`), so there is one definition of each
feature; the PyTorch export writes each feature's `torch` expression, which a test
checks against the engine's.

Feature names are canonical and ordered: a configuration lists them in FEATURES order,
and the network's input j is the j-th feature of that list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from gradbox.autograd.engine import Value

# What the two coordinate leaves are called in the graph.
X1_LABEL, X2_LABEL = "x₁", "x₂"


@dataclass(frozen=True)
class Feature:
    label: str  # as the designer and the graph show it
    build: Callable[[Value, Value], Value]  # from the two coordinate nodes
    torch: str  # the same thing in the exported script, from tensors x1 and x2
    uses_x2: bool  # a 1-D dataset (y = f(x)) has only x₁


FEATURES: dict[str, Feature] = {
    "x1": Feature(X1_LABEL, lambda x1, x2: x1, "x1", False),
    "x2": Feature(X2_LABEL, lambda x1, x2: x2, "x2", True),
    "x1^2": Feature("x₁²", lambda x1, x2: x1 * x1, "x1 * x1", False),
    "x2^2": Feature("x₂²", lambda x1, x2: x2 * x2, "x2 * x2", True),
    "x1*x2": Feature("x₁x₂", lambda x1, x2: x1 * x2, "x1 * x2", True),
    "sin x1": Feature("sin x₁", lambda x1, x2: x1.sin(), "torch.sin(x1)", False),
    "sin x2": Feature("sin x₂", lambda x1, x2: x2.sin(), "torch.sin(x2)", True),
}
NAMES: tuple[str, ...] = tuple(FEATURES)
DEFAULT: tuple[str, ...] = ("x1", "x2")


def problems(names: Sequence[str]) -> list[str]:
    """What is wrong with a feature list, in words ([] if nothing)."""
    if isinstance(names, str):
        return [f"features must be a list of names, got the text {names!r}"]
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        return [f"unknown feature {', '.join(map(repr, unknown))}; choose from "
                f"{', '.join(NAMES)}"]
    if not names:
        return ["choose at least one input feature"]
    return []


def canonical(names: Iterable[str]) -> tuple[str, ...]:
    """Known names in FEATURES order, each once (the order of the network's inputs)."""
    chosen = set(names)
    return tuple(n for n in NAMES if n in chosen)


def for_one_dimension(names: Sequence[str]) -> tuple[str, ...]:
    """The features a 1-D dataset can use: those of x₁ alone (x₁ if none is left)."""
    kept = tuple(n for n in names if not FEATURES[n].uses_x2)
    return kept or ("x1",)


def input_nodes(points: np.ndarray, names: Sequence[str]) -> list[Value]:
    """The network's inputs as engine nodes: two coordinate leaves and each feature of them.

    Every feature that is not a coordinate is a labelled op node (`x₁²` is `x₁ * x₁`),
    so the graph draws how it was computed and backward reaches the coordinates.
    """
    points = np.asarray(points, dtype=np.float64)
    x1 = Value(points[:, 0], label=X1_LABEL)
    x2 = Value(points[:, 1], label=X2_LABEL)
    nodes = []
    for name in names:
        node = FEATURES[name].build(x1, x2)
        if node is not x1 and node is not x2:
            node.label = FEATURES[name].label
        nodes.append(node)
    return nodes


def transform(points: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """(n, 2) points -> (n, len(names)) feature values, by the engine's own expressions."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(points) == 0:
        return np.zeros((0, len(names)))
    columns = [np.broadcast_to(node.data, (len(points),)) for node in input_nodes(points, names)]
    return np.column_stack(columns)


def labels(names: Sequence[str]) -> list[str]:
    return [FEATURES[n].label for n in names]
