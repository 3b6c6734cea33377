"""A network being trained, and what the data says of it.

`ModelAndOptimizer` is the live model, its optimizer and its parameters (the trainer holds
one for the run and one for the ghost; `ModelState` is its frozen copy). The functions
below read a configuration and a dataset and nothing else: which points a step trains on
(`batch_indices`), the engine's forward pass with its penalties (`forward`), the loss
without them (`data_loss`), and the loss and accuracy on held-out points (`evaluate`).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.collector import cyclic_gc_paused
from gradbox.autograd.engine import Value, recording, take_apart
from gradbox.autograd.nn import MLP, numpy_forward
from gradbox.autograd.optim import Optimizer, make_optimizer
from gradbox.autograd.order import KeptGraph, OrderCache
from gradbox.training.config import TrainingConfig
from gradbox.training.datasets import Dataset
from gradbox.training.state import ModelState, frozen, frozen_optimizer


@dataclass
class ModelAndOptimizer:
    """The model, its optimizer and its parameters (in `model.parameters()` order)."""

    model: MLP
    optimizer: Optimizer
    params: list[Value] = field(default_factory=list)
    kept: KeptGraph | None = None  # its last step's graph, for the next (see `forward`)
    inputs: tuple[Any, ...] | None = None  # its last batch's inputs (`batch_inputs`)

    def __post_init__(self) -> None:
        self.params = self.model.parameters()

    def values(self) -> np.ndarray:
        return np.fromiter((p.data for p in self.params), np.float64, len(self.params))

    def grads(self) -> np.ndarray:
        return np.fromiter((float(p.grad) for p in self.params), np.float64, len(self.params))

    def set_values(self, values: np.ndarray) -> None:
        for p, v in zip(self.params, values.tolist()):
            p.data = v

    def set_grads(self, grads: np.ndarray) -> None:
        for p, g in zip(self.params, grads.tolist()):
            p.grad = g

    def state(self, params: np.ndarray | None = None, grads: np.ndarray | None = None,
              ) -> ModelState:
        """Its frozen copy (`params`, `grads`: read-only arrays of what the parameters
        hold now, read already)."""
        return ModelState(frozen(self.values()) if params is None else params,
                          frozen(self.grads()) if grads is None else grads,
                          frozen_optimizer(self.optimizer.state_dict()))

    def load(self, state: ModelState, weights: bool = True) -> None:
        """Put `state` back (`weights=False`: all but the weights, which are as they
        were: a 1000x1000 network's take 0.1 s to set)."""
        if weights:
            self.set_values(state.params)
        self.set_grads(state.grads)
        self.optimizer.load_state_dict(dict(state.optimizer))


def build(config: TrainingConfig, values: np.ndarray) -> ModelAndOptimizer:
    """`config`'s network with the weights `values`, and its optimizer at the base rate."""
    model = config.make_model(seed=0)
    model.set_flat(values)
    return ModelAndOptimizer(model, make_optimizer(config.optimizer, model.parameters(),
                                                   config.lr, config.momentum))


def batch_indices(config: TrainingConfig, dataset: Dataset, step: int) -> np.ndarray:
    """The training points step `step + 1` uses (all of them, or a seeded batch)."""
    train = np.flatnonzero(~dataset.is_test)
    size = config.batch_size
    if size is None or size >= len(train):
        return train
    # Seeded by the step number, so replaying from a checkpoint sees the same batches.
    rng = np.random.default_rng([config.seed, step])
    return np.sort(rng.choice(train, size, replace=False))


def batch_inputs(config: TrainingConfig, dataset: Dataset, run: ModelAndOptimizer,
                 batch: np.ndarray) -> np.ndarray:
    """The network's inputs for the batch's points (read-only): the same array while the
    points, the features and the batch stay, so that steps' layer statistics are measured
    together (`LayerStats.measure_all`)."""
    key = (id(dataset), config.effective_features, batch.tobytes())
    if run.inputs is None or run.inputs[0] != key:  # (the dataset held: its id stays its)
        run.inputs = (key, frozen(config.inputs(dataset.points[batch])), dataset)
    return run.inputs[1]


def data_loss(config: TrainingConfig, output: Value | list[Value], truth: np.ndarray) -> Value:
    """The loss (without penalties) of network output against the data's truth:
    targets for regression, class labels otherwise."""
    if config.is_regression:
        return losses.compute_regression_loss(config.effective_loss, output, truth)
    return losses.compute_loss(config.effective_loss, output, truth)


def forward(config: TrainingConfig, dataset: Dataset, run: ModelAndOptimizer,
            batch: np.ndarray, orders: OrderCache | None = None,
            ) -> tuple[Value, Value | list[Value], Sequence[Value] | None]:
    """The engine's forward pass of `run` on `batch`: (the loss with its penalties, the
    network's output, the graph's topological order for `backward`).

    With `orders` (a trainer's steps), the order is sorted once per shape (`shape_key`),
    and the graph is kept for the next step: if that step is on the same points with the
    same settings, the kept graph's values are computed again on the new weights instead
    of building it anew (`KeptGraph`; W1: 0.6 ms for 1.4). Its backward must then keep
    it too (`retain_graph=True`). Without `orders`, a new graph and no order.
    """
    # What a graph is built from: its shape, the penalties' weights (constants in it),
    # the points (their labels are constants in it too).
    token = (shape_key(config, batch), config.l2, config.l1, id(dataset), batch.tobytes())
    kept = run.kept
    if orders is not None and kept is not None and kept.token == token:
        root, output, order = kept.serve()
        return root, output, order  # type: ignore[return-value]
    points, truth = dataset.points[batch], dataset.truth[batch]
    with recording() as made:
        # The inputs are engine nodes too (x₁² is x₁ * x₁), so the graph shows them.
        output = run.model(features.input_nodes(points, config.effective_features))
        loss = data_loss(config, output, truth)
        if config.l2:
            loss = loss + config.l2 * losses.l2_penalty(run.params)
        if config.l1:
            loss = loss + config.l1 * losses.l1_penalty(run.params)
    if orders is None:
        return loss, output, None
    order = orders.order(token[0], loss, made)
    if not losses.lookup(config.effective_loss, config.is_regression).reads_scores:
        run.kept = KeptGraph(token, loss, output, order, run.params, held=dataset)
    return loss, output, order


def backward(run: ModelAndOptimizer, root: Value, order: Sequence[Value] | None) -> None:
    """`root.backward(retain_graph=True, order=order)` for a graph `forward` gave for
    `run`: the kept graph's own (a layer at a time, the same numbers) if it is that one."""
    if run.kept is not None and run.kept.root is root:
        run.kept.backward()
    else:
        root.backward(retain_graph=True, order=order)


def train_step(config: TrainingConfig, dataset: Dataset, run: ModelAndOptimizer,
               batch: np.ndarray, lr: float, orders: OrderCache | None = None,
               zero_grad: bool = True) -> float:
    """One step of `run` on `batch` with nothing around it (a ghost's, a replayed one):
    the forward pass, zero_grad (unless not `zero_grad`), backward, the update at rate
    `lr`. Its loss."""
    root, _, order = forward(config, dataset, run, batch, orders)
    if zero_grad:
        run.optimizer.zero_grad()
    backward(run, root, order)
    run.optimizer.lr = float(lr)
    run.optimizer.step()
    loss = float(root.data)
    release(root, order, run)
    return loss


# A graph of more op nodes than this is taken apart a node at a time (`take_apart`), so
# that a Pause is answered meanwhile; a smaller one dies at once (W1's 647 nodes: 0.3 ms
# of a step less than taking it apart).
RELEASE_IN_SLICES_ABOVE = 50_000


def forget_kept_graphs(*runs: ModelAndOptimizer | None) -> None:
    """Build the next step's graphs anew: a rewind, and Pause, which abandons a step by an
    exception -- the step's frames hold the kept graph's nodes, and what they held is
    taken apart after the answer (`gradbox.runner.leftovers`), even mid-forward, where a
    rewind has nothing else to undo."""
    for run in runs:
        if run is not None:
            run.kept = None


def release(root: Value, order: Sequence[Value] | None, run: ModelAndOptimizer) -> None:
    """Let go of the graph that ends in `root` (`order`: its topological order, if known):
    a big one in slices (`take_apart`), a small one at once; not `run`'s kept graph."""
    if run.kept is not None and run.kept.root is root:
        return
    if order is None or len(order) > RELEASE_IN_SLICES_ABOVE:
        take_apart(root)


def training_loss(config: TrainingConfig, dataset: Dataset, run: ModelAndOptimizer
                  ) -> float:
    """The loss backward would differentiate at `run`'s weights, on the whole training
    set (penalties included), computed by the engine."""
    train = np.flatnonzero(~dataset.is_test)
    if len(train) == 0:
        return math.nan
    with np.errstate(all="ignore"), cyclic_gc_paused():
        return float(forward(config, dataset, run, train)[0].data)


def shape_key(config: TrainingConfig, batch: np.ndarray) -> Hashable:
    """What the shape of a step's graph depends on: the network, the features, the loss,
    the penalties and the batch size (a change of any is a new graph to sort)."""
    return (tuple(config.layer_sizes), config.activation, config.effective_features,
            config.is_regression, config.effective_loss, config.l2 != 0, config.l1 != 0,
            len(batch))


def accuracy(config: TrainingConfig, dataset: Dataset, output: Any,
             indices: np.ndarray) -> float:
    """Fraction classified right (`output`: the network's output, its Values or their
    data); NaN for regression, where nothing is a class."""
    if config.is_regression:
        return math.nan
    if isinstance(output, Value):
        output = output.data
    elif isinstance(output, list) and output and isinstance(output[0], Value):
        output = [o.data for o in output]
    return losses.accuracy(output, dataset.labels[indices])


def evaluate(config: TrainingConfig, dataset: Dataset, weights: np.ndarray,
             mask: np.ndarray) -> tuple[float, float]:
    """Loss (without penalties) and accuracy on the masked points, by plain numpy."""
    if not mask.any():
        return math.nan, math.nan
    points, truth = dataset.points[mask], dataset.truth[mask]
    out = numpy_forward(weights, config.layer_sizes, config.activation, config.inputs(points))
    outputs = [out[:, k] for k in range(out.shape[1])]
    scores = [Value(o) for o in outputs]
    loss = data_loss(config, scores if len(scores) > 1 else scores[0], truth)
    return float(loss.data), accuracy(config, dataset, outputs if len(outputs) > 1
                                      else outputs[0], np.flatnonzero(mask))
