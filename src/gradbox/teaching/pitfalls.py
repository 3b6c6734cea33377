"""The deliberately wrong variants: what breaks, and how, when a rule of the engine is dropped.

Each variant is a short function beside a comment saying what is wrong with it. The
correct engine has no switches for these mistakes; they live here, apart, so the
lesson can run the broken code beside the real one and show both columns.

    backward_wrong_order   fires nodes as a naive recursion reaches them, not in
                           reverse topological order
    backward_assign        writes `grad = ...` instead of `grad += ...`
    backward_twice         a second backward through a freed graph (PyTorch's error)
    forget_zero_grad_demo  steps without zero_grad: gradients pile up
    microbatch_accumulation  the same accumulation, used on purpose

`local_gradients(node)` gives the local derivatives the assign variant needs (the
engine's closures always add), read from the op table `gradbox.autograd.ops`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gradbox.autograd import ops
from gradbox.autograd.engine import NON_SCALAR_MESSAGE, SAVES_NOTHING, Data, Value
from gradbox.autograd.gradcheck import GradCheck, gradient_check, network_gradient_check
from gradbox.autograd.losses import compute_loss
from gradbox.autograd.nn import MLP
from gradbox.training import datasets

__all__ = [
    "MAX_FIRINGS",
    "VARIANTS",
    "BackwardTwice",
    "BrokenBesideCorrect",
    "ForgetZeroGrad",
    "MicrobatchAccumulation",
    "VariantCheck",
    "backward_assign",
    "backward_twice",
    "backward_twice_retained",
    "backward_wrong_order",
    "beside_correct",
    "check_variants",
    "contributions",
    "explain_backward_twice",
    "forget_zero_grad_demo",
    "local_gradients",
    "microbatch_accumulation",
    "microbatch_demo",
    "network_gradient_check",
    "saving_ops",
    "wrong_order_firings",
]

Backward = Callable[[Value], None]

# The naive recursion fires a node once per path from the output, and the number of
# paths doubles with every reused node along a chain (`b = b + b` thirty times is a
# billion paths). Refuse up front rather than hang the app.
MAX_FIRINGS = 1_000_000


class TooManyPathsError(ValueError):
    """The naive recursion would visit more nodes than `MAX_FIRINGS`: not demonstrable."""


# --- local derivatives, one entry per use of an input -------------------------------
def local_gradients(node: Value) -> list[tuple[Value, Data]]:
    """d(node)/d(child) for each input of `node`, in `node.inputs` order.

    An input used twice (`a * a`) appears twice, once per use: that is exactly what
    the accumulation rule sums. A leaf has no inputs and gets an empty list.
    """
    inputs = node.inputs
    data = [x.data for x in inputs]
    try:
        return [(x, _number(ops.local_derivative(node.op, data, node.data, slot)))
                for slot, x in enumerate(inputs)]
    except KeyError:
        raise ValueError(f"no local derivative is known for the op {node.op!r}") from None


def contributions(node: Value) -> list[tuple[Value, Data]]:
    """What `node` hands each input: local derivative × node.grad, one entry per use.

    A float input (a parameter shared by every sample) receives the sum over samples,
    the same reduction `Value._accumulate` makes.
    """
    return [(child, _fit(child, local * node.grad)) for child, local in local_gradients(node)]


# --- variant 1: the wrong order ------------------------------------------------------
def backward_wrong_order(root: Value) -> None:
    """Backward as a naive recursion: fire a node, then recurse into each of its inputs.

    Written the way it first comes to mind:

        def backward(node):
            node.pass_gradient()
            for child in node.inputs:
                backward(child)

    WRONG: a node fires as soon as the recursion reaches it, before every consumer has
    reported -- and again each time another path reaches it, passing on everything it
    has collected so far once more. On a tree (each value used once) every node is
    reached once, after its only consumer, and the result happens to be right; as soon
    as an intermediate value is reused, its inputs get the wrong gradient, silently.
    (A reused *leaf* is harmless: a leaf has nothing to pass on.)
    """
    _require_scalar(root)
    topo = root.topological_order()
    _refuse_too_many_firings(root, topo)
    for node in topo:
        if node.inputs:
            node.grad = 0.0
    root.grad += 1.0
    # The recursion above, with an explicit stack so a deep chain does not hit Python's
    # recursion limit. Firing happens on arrival, so the order is the same.
    stack = [root]
    while stack:
        node = stack.pop()
        node.pass_gradient()
        stack.extend(reversed(node.inputs))


def wrong_order_firings(root: Value) -> list[Value]:
    """The nodes `backward_wrong_order` fires, in its order, repeats included (leaves too).

    What the app lists beside the wrong numbers: on `b = a + a; c = b + b` it is
    c, b, a, a, b, a, a -- b fires twice, and the first time only one of c's two
    contributions has reached it.
    """
    topo = root.topological_order()
    _refuse_too_many_firings(root, topo)
    fired: list[Value] = []
    stack = [root]
    while stack:  # the same walk as backward_wrong_order, without the arithmetic
        node = stack.pop()
        fired.append(node)
        stack.extend(reversed(node.inputs))
    return fired


def _refuse_too_many_firings(root: Value, topo: list[Value]) -> None:
    firings = sum(_path_counts(root, topo).values())
    if firings > MAX_FIRINGS:
        raise TooManyPathsError(
            f"the naive recursion would visit {firings:,} nodes here (once per path from "
            f"the output); refusing past {MAX_FIRINGS:,}"
        )


# --- variant 2: assign instead of accumulate ------------------------------------------
def backward_assign(root: Value) -> None:
    """Backward in the right order, but each input's gradient is *assigned*, not added.

    WRONG: `child.grad = contribution` keeps only the last consumer's share. Right on a
    tree, where every value has one consumer; wrong as soon as a value is used twice:
    `a + a` leaves a.grad at 1 instead of 2.
    """
    _require_scalar(root)
    root.grad = 1.0
    for node in reversed(root.topological_order()):
        for child, contribution in contributions(node):
            child.grad = contribution  # the bug: `=` where the engine has `+=`


# --- variant 3: backward twice --------------------------------------------------------
@dataclass(frozen=True)
class BackwardTwice:
    """The leaves' gradients after each of two backward calls, or the second call's error."""

    names: tuple[str, ...]
    after_first: tuple[Data, ...]
    after_second: tuple[Data, ...] | None  # None when the second call raised
    error: str | None
    retain_graph: bool
    saving_ops: tuple[str, ...]  # ops in the graph that keep values for their backward
    explanation: str

    @property
    def raised(self) -> bool:
        return self.error is not None


def backward_twice(root: Value, retain_graph: bool = False,
                   leaves: Sequence[Value] | None = None) -> BackwardTwice:
    """Call `root.backward(retain_graph)` twice and report what happened, as PyTorch would.

    The leaves' gradients are zeroed first so the numbers after each call read plainly.
    `leaves` defaults to every leaf of the graph, in topological order.
    """
    topo = root.topological_order()
    leaves = list(leaves) if leaves is not None else [n for n in topo if not n.inputs]
    names = tuple(leaf.label or f"leaf {i}" for i, leaf in enumerate(leaves))
    saving = saving_ops(root)
    for leaf in leaves:
        leaf.grad = 0.0
    root.backward(retain_graph=retain_graph)
    first = tuple(_copy(leaf.grad) for leaf in leaves)
    try:
        root.backward(retain_graph=retain_graph)
    except RuntimeError as exc:
        return BackwardTwice(names, first, None, str(exc), retain_graph, saving,
                             explain_backward_twice(saving, retain_graph, raised=True))
    second = tuple(_copy(leaf.grad) for leaf in leaves)
    return BackwardTwice(names, first, second, None, retain_graph, saving,
                         explain_backward_twice(saving, retain_graph, raised=False))


_OP_NAMES = {"*": "×"}


def saving_ops(root: Value) -> tuple[str, ...]:
    """The ops in the graph that keep a value for their backward (and so get freed)."""
    return tuple(sorted({n.op for n in root.topological_order()
                         if n.inputs and n.op not in SAVES_NOTHING}))


def explain_backward_twice(saving: tuple[str, ...], retain_graph: bool, raised: bool) -> str:
    """Why a second backward raised, or why it ran and doubled every gradient."""
    # "×", not "*": the sentence names nodes as the graph draws them.
    ops = " and ".join(", ".join(_OP_NAMES.get(op, op) for op in saving).rsplit(", ", 1))
    if raised:
        return (
            f"The first backward freed the values that {ops} saved for their backward "
            "(PyTorch frees saved tensors the same way), so the second backward has "
            "nothing to compute with and raises. Pass retain_graph=True to keep them."
        )
    if retain_graph:
        return (
            "retain_graph=True kept every saved value, so the second backward runs. "
            "Gradients accumulate (+=), so each leaf's gradient grew by this pass's "
            "gradient once more (twice the true one if it started from zero); zero the "
            "gradients between passes to get it once."
        )
    return (
        "Nothing in this graph saves a value for its backward: the slope of a + b is 1 "
        "whatever a and b are, and negation and sums need no saved values either. So "
        "backward has nothing to free and a second call runs -- silently adding every "
        "gradient again: the leaves now hold twice their gradient. PyTorch does the "
        "same. Ops such as ×, tanh and relu do save values, and there it raises."
    )


def backward_twice_retained(root: Value) -> None:
    """Backward twice with retain_graph=True, as a variant for the gradient check.

    WRONG as a way to get the gradient: the second pass adds it again, doubling it.
    """
    root.backward(retain_graph=True)
    root.backward()


# --- variant 4: forgetting zero_grad --------------------------------------------------
@dataclass(frozen=True)
class ForgetZeroGrad:
    """Gradients after each step, with and without zero_grad, on a loss that never changes."""

    names: tuple[str, ...]
    true_gradient: np.ndarray  # (n,)
    with_zero_grad: np.ndarray  # (steps, n): every row is the true gradient
    without_zero_grad: np.ndarray  # (steps, n): row k is (k + 1) × the true gradient


def forget_zero_grad_demo(build: Callable[[], Value], params: Sequence[Value], steps: int = 3,
                          names: Sequence[str] | None = None) -> ForgetZeroGrad:
    """Take `steps` training steps on the same loss with learning rate 0, with and without
    zero_grad.

    With the learning rate at 0 the parameters never move, so the loss and its true
    gradient are the same at every step; whatever changes in the gradients is
    accumulation alone. Parameter grads are left as they were found.
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    names = _names(names, params)
    saved = [p.grad for p in params]
    rows_with, rows_without = [], []
    for zero_grad, rows in ((True, rows_with), (False, rows_without)):
        _zero(params)
        for _ in range(steps):
            loss = build()  # forward
            if zero_grad:
                _zero(params)
            loss.backward()
            rows.append(_grads(params))
            # update: p.data -= 0 * p.grad -- nothing moves, by design
    for p, g in zip(params, saved):
        p.grad = g
    with_zero = np.array(rows_with)
    return ForgetZeroGrad(names, with_zero[0].copy(), with_zero, np.array(rows_without))


# --- accumulation on purpose: micro-batches ------------------------------------------
@dataclass(frozen=True)
class MicrobatchAccumulation:
    """One full-batch gradient beside the sum of k weighted micro-batch gradients."""

    names: tuple[str, ...]
    full_batch: np.ndarray
    accumulated: np.ndarray
    batch_sizes: tuple[int, ...]
    full_loss: float
    accumulated_loss: float  # the weighted micro-batch losses, summed

    @property
    def max_difference(self) -> float:
        return float(np.max(np.abs(self.full_batch - self.accumulated), initial=0.0))


LossFunction = Callable[[Value | list[Value], np.ndarray], Value]


def _loss_function(loss: str | LossFunction) -> LossFunction:
    """A loss by name (`losses.compute_loss`) or a function of (output, targets) as is."""
    if callable(loss):
        return loss
    return lambda out, labels: compute_loss(loss, out, labels)


def microbatch_accumulation(
    model: MLP, x: np.ndarray, y: np.ndarray, k: int,
    loss: str | LossFunction = "mse",
) -> MicrobatchAccumulation:
    """The "forget zero_grad" accumulation used on purpose: gradient accumulation.

    Split the batch into k micro-batches, back-propagate each one's loss without zeroing
    in between, and the gradients add up to the full batch's. The loss must be a mean
    over samples (every loss in `gradbox.autograd.losses` is), and each micro-batch's loss is
    weighted by its share of the samples, n_i / n -- the familiar "divide by k" when the
    micro-batches are the same size. The model's grads are left as they were found.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    n = len(x)
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of samples ({n}), got {k}")
    loss_fn = _loss_function(loss)
    params = model.parameters()
    saved = [p.grad for p in params]

    def batch_loss(rows: np.ndarray) -> Value:
        return loss_fn(model([x[rows, j] for j in range(x.shape[1])]), y[rows])

    _zero(params)
    full = batch_loss(np.arange(n))
    full.backward()
    full_grads = _grads(params)

    _zero(params)
    chunks = np.array_split(np.arange(n), k)
    total = 0.0
    for rows in chunks:
        part = batch_loss(rows) * (len(rows) / n)
        total += part.data
        part.backward()  # no zero_grad between micro-batches: that is the point
    accumulated = _grads(params)

    for p, g in zip(params, saved):
        p.grad = g
    return MicrobatchAccumulation(
        tuple(name for name, _ in model.named_parameters()), full_grads, accumulated,
        tuple(len(rows) for rows in chunks), float(full.data), float(total))


# The playground's demo: small enough that every number fits on screen, tanh so no
# unit is switched off and every gradient is non-zero.
MICROBATCH_LAYERS = (4, 1)


def microbatch_demo(k: int, n: int = 12, seed: int = 0,
                    loss: str = "mse") -> MicrobatchAccumulation:
    """`microbatch_accumulation` on an MLP(2, [4, 1]) and `n` points of the moons data."""
    data = datasets.make("moons", n=n, noise=0.1, seed=seed)
    model = MLP(2, list(MICROBATCH_LAYERS), activation="tanh", seed=seed)
    return microbatch_accumulation(model, data.points, data.labels, k, loss)


# --- broken beside correct -------------------------------------------------------------
def _engine_backward(root: Value) -> None:
    root.backward()


# name -> (backward function, what is wrong with it); the engine first, as the reference.
VARIANTS: dict[str, tuple[Backward, str]] = {
    "engine": (_engine_backward, "reverse topological order, gradients accumulate (+=)"),
    "wrong order": (backward_wrong_order,
                    "naive recursion: a node fires before all its consumers have reported"),
    "assign": (backward_assign,
               "writes grad = ... instead of grad += ...: only the last use counts"),
    "backward twice": (backward_twice_retained,
                       "backward twice with retain_graph=True: every gradient doubled"),
}


@dataclass(frozen=True)
class BrokenBesideCorrect:
    """One gradient per parameter from the engine and from a broken variant."""

    names: tuple[str, ...]
    correct: np.ndarray
    broken: np.ndarray

    @property
    def differs(self) -> np.ndarray:
        """Which rows the variant got wrong."""
        return ~np.isclose(self.broken, self.correct, rtol=1e-9, atol=1e-12)


def beside_correct(build: Callable[[], Value], params: Sequence[Value], variant: Backward,
                   names: Sequence[str] | None = None) -> BrokenBesideCorrect:
    """Run the engine's backward and `variant` on fresh graphs from `build`, side by side.

    Parameter grads are left as they were found.
    """
    saved = [p.grad for p in params]
    columns = []
    for backward in (_engine_backward, variant):
        _zero(params)
        backward(build())
        columns.append(_grads(params))
    for p, g in zip(params, saved):
        p.grad = g
    return BrokenBesideCorrect(_names(names, params), columns[0], columns[1])


@dataclass(frozen=True)
class VariantCheck:
    name: str
    description: str
    check: GradCheck

    @property
    def passed(self) -> bool:
        return self.check.passed()


def check_variants(build: Callable[[], Value], params: Sequence[Value],
                   names: Sequence[str] | None = None,
                   variants: Sequence[str] | None = None) -> tuple[VariantCheck, ...]:
    """The gradient check, run with the engine's backward and with each broken variant.

    On a graph that reuses an intermediate value the broken variants fail the check
    (worst relative error above 1e-6) while the engine passes it.
    """
    chosen = list(VARIANTS) if variants is None else list(variants)
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variants {unknown}; choose from {list(VARIANTS)}")
    return tuple(
        VariantCheck(name, VARIANTS[name][1],
                     gradient_check(build, params, names, backward=VARIANTS[name][0]))
        for name in chosen
    )


# --- helpers -----------------------------------------------------------------------
def _require_scalar(root: Value) -> None:
    if type(root.data) is np.ndarray:
        raise RuntimeError(NON_SCALAR_MESSAGE)


def _path_counts(root: Value, topo: list[Value]) -> dict[Value, int]:
    """How many paths lead from root to each node: how often the naive recursion visits it."""
    counts = dict.fromkeys(topo, 0)
    counts[root] = 1
    for node in reversed(topo):  # every consumer before its inputs
        for child in node.inputs:
            counts[child] += counts[node]
    return counts


def _number(x: Data) -> Data:
    """numpy scalars back to plain floats, so float nodes keep float gradients."""
    return x if type(x) is np.ndarray else float(x)


def _fit(child: Value, grad: Data) -> Data:
    if type(grad) is np.ndarray:
        return grad if type(child.data) is np.ndarray else float(grad.sum())
    return float(grad)


def _copy(x: Data) -> Data:
    return x.copy() if type(x) is np.ndarray else float(x)


def _zero(params: Sequence[Value]) -> None:
    for p in params:
        p.grad = 0.0


def _grads(params: Sequence[Value]) -> np.ndarray:
    return np.array([float(p.grad) for p in params])


def _names(names: Sequence[str] | None, params: Sequence[Value]) -> tuple[str, ...]:
    if names is not None:
        return tuple(names)
    return tuple(p.label or f"p{i}" for i, p in enumerate(params))
