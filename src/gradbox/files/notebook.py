"""Export a run as a Jupyter notebook that rebuilds it in gradbox's own Python API.

`notebook(state)` returns an `nbformat` notebook whose cells a learner reads and changes:
the points, the network with the run's initial weights, the loss and the optimizer, the
run's events (weights typed in by hand, steps that forgot zero_grad, learning-rate
changes), one training step written out phase by phase, the rest of the steps, a check
against the app's losses, and plots of the loss curve and the decision boundary.

Run top to bottom unchanged it reproduces the run's training losses bit for bit: it makes
the same calls the app's trainer makes (`gradbox.autograd`: the same scalar graph, summed
in the same order), on the same mini-batches (drawn the same way, from the step number),
at the same learning rates. Every float is written with Python's repr, which reads back
as the same float64.

What it cannot rebuild: points edited while the run went on (the notebook trains on the
points the run has now; its first cell says at which steps they changed), and the ghost
run (a copy trained beside the broken one, for the picture only).

Pure Python: `nbformat` builds the document; no Qt, no kernel.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence

import nbformat
import numpy as np
from nbformat import v4

from gradbox.files.export_torch import comma_rows, float_literal
from gradbox.formatting import counted
from gradbox.training.state import DataChange, ParameterEdit, RateChange, TrainingState

# The line each printed loss starts with: what a test (or a learner) reads back.
LOSS_LINE = "loss at step"


def _array(name: str, items: Sequence[str], dtype: str = "") -> str:
    kind = f", dtype={dtype}" if dtype else ""
    if not items:
        return f"{name} = np.array([]{kind})"
    return f"{name} = np.array([\n" + "\n".join(comma_rows(items, "    ")) + f"\n]{kind})"


def _ranges(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """(first, last) 1-based steps of each run of True."""
    out: list[tuple[int, int]] = []
    for i, flag in enumerate(flags, start=1):
        if not flag:
            continue
        if out and out[-1][1] == i - 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return out


def _events(state: TrainingState) -> tuple[dict[int, list[tuple[str, float]]], dict[int, float]]:
    edits: dict[int, list[tuple[str, float]]] = {}
    rates: dict[int, float] = {}
    for event in state.events:
        if isinstance(event, ParameterEdit):
            edits.setdefault(event.step, []).append((event.name, event.new))
        elif isinstance(event, RateChange):
            rates[event.step] = event.lr
    return edits, rates


def _first_lr(state: TrainingState) -> float:
    """The base learning rate the run started with (before any rate change)."""
    rates = [e for e in state.events if isinstance(e, RateChange)]
    if not rates:
        return float(state.config.lr)
    # Each change records only the new rate: the one before the first change is the
    # rate of the checkpoint at step 0.
    return float(state.checkpoints[0].lr if state.checkpoints else state.current.lr)


def notebook(state: TrainingState, title: str = "untitled") -> nbformat.NotebookNode:
    """The run `state` (as far as it has gone) as a notebook; see the module docstring."""
    c = state.config
    data = state.dataset
    history = state.history
    n = len(history)
    edits, rates = _events(state)
    forgot = _ranges([bool(v) for v in history.column("zero_grad_skipped")]) if n else []
    data_steps = [e.step for e in state.events if isinstance(e, DataChange) and e.step > 0]
    regression = c.is_regression
    sizes = list(c.layer_sizes)

    cells = []
    md, code = v4.new_markdown_cell, v4.new_code_cell
    warning = ""
    if data_steps:
        warning = ("\n\n**Note:** the points were changed during the run (after step "
                   + ", ".join(str(s) for s in data_steps) + "). This notebook trains on the "
                   "points the run has now, so the steps before the change will differ.")
    cells.append(md(
        f"# The gradbox run *{title}*, in code\n\n"
        f"This notebook rebuilds the run you trained in gradbox — {c.dataset} data, a "
        f"{'-'.join(str(s) for s in sizes)} network ({c.activation}), {c.optimizer} — and "
        f"trains it again for {counted(n, 'step')} with gradbox's own Python API, one "
        "training step at a time.\n\nRun it top to bottom (*Run → Run All Cells*) and it "
        "gets the app's losses exactly, bit for bit. Then change a cell — the learning "
        "rate, a weight, a step that forgets `zero_grad` — and run it again to see what "
        f"that changes.{warning}"))
    cells.append(code(
        "import numpy as np\n\n"
        "from gradbox.autograd import features, losses\n"
        "from gradbox.autograd.nn import MLP, numpy_forward\n"
        "from gradbox.autograd.optim import Schedule, make_optimizer"))

    # --- data
    points = [f"[{float_literal(x)}, {float_literal(y)}]" for x, y in np.asarray(data.points)]
    labels = [str(int(v)) for v in data.labels]
    tests = [str(bool(v)) for v in data.is_test]
    lines = [
        "# The points: x₁, x₂ of each, its class, and True where it is held out for testing.",
        _array("points", points),
        _array("labels", labels, "int"),
        _array("is_test", tests, "bool"),
    ]
    if regression and data.targets is not None:
        lines.append("# What the network should output at each point.")
        lines.append(_array("targets", [float_literal(v) for v in data.targets]))
        lines.append("truth = targets")
    else:
        lines.append("truth = labels")
    lines.append("train = np.flatnonzero(~is_test)  # the points training sees")
    cells.append(md("## The data"))
    cells.append(code("\n".join(lines)))

    # --- network
    weights = [float_literal(v) for v in state.initial_params]
    cells.append(md(
        "## The network\n\nThe same network as in the app, starting from the run's own "
        "initial weights (in `model.parameters()` order). Delete the `set_flat` line to "
        "start from fresh random weights instead."))
    cells.append(code(
        f"FEATURES = {tuple(c.effective_features)!r}  # what the network takes as input\n"
        f"SIZES = {sizes!r}  # inputs, hidden layers, outputs\n"
        f"ACTIVATION = {c.activation!r}\n"
        "model = MLP(SIZES[0], SIZES[1:], activation=ACTIVATION, seed=0)\n"
        + _array("initial_weights", weights) + "\n"
        "model.set_flat(initial_weights)\n"
        "params = model.parameters()\n"
        "weights = dict(model.named_parameters())  # by the names the app shows\n"
        "print(model)"))

    # --- loss and optimizer
    loss_call = ("losses.compute_regression_loss(LOSS, output, truth[batch])" if regression
                 else "losses.compute_loss(LOSS, output, truth[batch])")
    batch_size = "None" if c.batch_size is None else str(int(c.batch_size))
    cells.append(md(
        "## Loss, optimizer, mini-batches\n\nThe loss is computed on a graph of scalar "
        "`Value`s, exactly as the app builds it; L1/L2 penalties are added when set."))
    cells.append(code(
        f"LOSS = {c.effective_loss!r}\n"
        f"L1, L2 = {float_literal(c.l1)}, {float_literal(c.l2)}\n"
        f"OPTIMIZER, LR, MOMENTUM = {c.optimizer!r}, {float_literal(_first_lr(state))}, "
        f"{float_literal(c.momentum)}\n"
        f"SCHEDULE, SCHEDULE_STEPS = {c.schedule!r}, {int(c.steps)}  # how LR changes by step\n"
        f"BATCH_SIZE, BATCH_SEED = {batch_size}, {int(c.seed)}  # None: every training point\n"
        "optimizer = make_optimizer(OPTIMIZER, params, LR, MOMENTUM)\n\n\n"
        "def batch_at(step):\n"
        '    """The training points step `step + 1` uses: all, or a batch drawn from the '
        'step number."""\n'
        "    if BATCH_SIZE is None or BATCH_SIZE >= len(train):\n"
        "        return train\n"
        "    rng = np.random.default_rng([BATCH_SEED, step])\n"
        "    return np.sort(rng.choice(train, BATCH_SIZE, replace=False))\n\n\n"
        "def loss_of(batch):\n"
        "    output = model(features.input_nodes(points[batch], FEATURES))\n"
        f"    loss = {loss_call}\n"
        "    if L2:\n"
        "        loss = loss + L2 * losses.l2_penalty(params)\n"
        "    if L1:\n"
        "        loss = loss + L1 * losses.l1_penalty(params)\n"
        "    return loss"))

    # --- events
    edit_lines = ",\n".join(f"    {step}: [" + ", ".join(f"({name!r}, {float_literal(v)})"
                                                      for name, v in items) + "]"
                            for step, items in sorted(edits.items()))
    rate_lines = ", ".join(f"{step}: {float_literal(lr)}" for step, lr in sorted(rates.items()))
    cells.append(md(
        "## What happened during the run\n\nEach by the step it came after. Change them, "
        "add some, or empty them to see the run without them."))
    cells.append(code(
        "# Weights typed in by hand: after step k, set these weights to these values.\n"
        + (f"EDITS = {{\n{edit_lines},\n}}" if edits else "EDITS = {}") + "\n"
        "# The learning rate set to a new value after step k.\n"
        f"RATE_CHANGES = {{{rate_lines}}}\n"
        "# Steps (first, last) that forgot zero_grad: their gradients add to the last ones.\n"
        f"FORGET_ZERO_GRAD = {forgot!r}\n\n\n"
        "def forgets_zero_grad(step):\n"
        "    return any(first <= step <= last for first, last in FORGET_ZERO_GRAD)"))

    # --- one step
    cells.append(md(
        "## One training step\n\nThe four phases of the training loop: forward (build the "
        "graph, compute the loss), zero_grad, backward (gradients from the loss to every "
        "weight) and update (move each weight against its gradient)."))
    cells.append(code(
        "lr = LR\n\n\n"
        "def train_step(step):\n"
        '    """Training step `step` (1, 2, ...); returns its loss."""\n'
        "    global lr\n"
        "    for name, value in EDITS.get(step - 1, []):  # what was typed in before it\n"
        "        weights[name].data = value\n"
        "    lr = RATE_CHANGES.get(step - 1, lr)\n"
        "    loss = loss_of(batch_at(step - 1))  # forward\n"
        "    if not forgets_zero_grad(step):\n"
        "        optimizer.zero_grad()  # zero_grad\n"
        "    loss.backward()  # backward\n"
        "    optimizer.lr = Schedule(SCHEDULE, lr, SCHEDULE_STEPS).lr_at(step - 1)\n"
        "    optimizer.step()  # update\n"
        "    return loss.data\n\n\n"
        "run_losses = [train_step(1)]\n"
        f'print("{LOSS_LINE} 1:", repr(run_losses[0]))\n'
        'print("gradient of each weight after step 1:")\n'
        "for name, p in weights.items():\n"
        '    print(f"  {name:>24} = {p.data: .6f}   grad {p.grad: .6f}")'))

    # --- the rest
    cells.append(md(f"## The rest of the run\n\nSteps 2 to {n}, each printed."))
    cells.append(code(
        f"STEPS = {n}\n"
        "for step in range(len(run_losses) + 1, STEPS + 1):\n"
        "    run_losses.append(train_step(step))\n"
        f'    print(f"{LOSS_LINE} {{step}}:", repr(run_losses[-1]))'))

    # --- check
    app = [float_literal(v) for v in history.column("loss")] if n else []
    cells.append(md("## The same as the app?"))
    cells.append(code(
        "# The training loss of each step, as the app measured it.\n"
        + _array("APP_LOSSES", app) + "\n"
        "same = [a == b for a, b in zip(run_losses, APP_LOSSES)]\n"
        "if len(run_losses) == len(APP_LOSSES) and all(same):\n"
        '    print(f"all {len(same)} losses are the app\'s, bit for bit")\n'
        "else:\n"
        "    first = next((i for i, s in enumerate(same) if not s), len(same))\n"
        '    print(f"the runs part at step {first + 1}: a cell was changed, or the points '
        'were")'))

    # --- plots
    cells.append(md("## Plots"))
    # gradbox's own install has no matplotlib (the README's `pip install .`): the plot
    # cells say how to get it instead of failing with an ImportError.
    cells.append(code(
        "try:\n"
        "    import matplotlib.pyplot as plt\n"
        "except ImportError:\n"
        "    plt = None\n"
        '    print("The plots need matplotlib: pip install matplotlib, then run these '
        'cells again (the losses above are checked without it).")\n\n'
        + _only_with_plt(
            "fig, ax = plt.subplots(figsize=(6, 3.5))\n"
            'ax.plot(range(1, len(run_losses) + 1), run_losses, label="this notebook")\n'
            'ax.plot(range(1, len(APP_LOSSES) + 1), APP_LOSSES, ":", label="the app")\n'
            'ax.set_xlabel("step")\n'
            'ax.set_ylabel("training loss")\n'
            "ax.legend()\n"
            "plt.show()")))
    cells.append(code(_only_with_plt(_boundary_cell(regression))))

    book = v4.new_notebook(cells=cells)
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                   "language": "python"}
    book.metadata["gradbox"] = {"steps": n, "title": title}
    return book


def _only_with_plt(source: str) -> str:
    """`source` run only where matplotlib could be imported."""
    return "if plt is not None:\n" + textwrap.indent(source, "    ")


def _boundary_cell(regression: bool) -> str:
    head = (
        "# What the network outputs over the plane, from the weights it has now.\n"
        "low, high = points.min(axis=0) - 0.5, points.max(axis=0) + 0.5\n"
        "xs, ys = np.meshgrid(np.linspace(low[0], high[0], 120), np.linspace(low[1], "
        "high[1], 120))\n"
        "grid = np.column_stack([xs.ravel(), ys.ravel()])\n"
        "out = numpy_forward(model.get_flat(), SIZES, ACTIVATION,\n"
        "                    features.transform(grid, FEATURES))\n"
        "fig, ax = plt.subplots(figsize=(5, 5))\n")
    if regression:
        body = ('ax.contourf(xs, ys, out[:, 0].reshape(xs.shape), 20, cmap="RdBu")\n'
                'ax.scatter(points[:, 0], points[:, 1], c=truth, cmap="RdBu", '
                'edgecolors="k")\n')
    else:
        body = ("classes = losses.predictions(out[:, 0] if out.shape[1] == 1 else "
                "[out[:, k] for k in range(out.shape[1])])\n"
                'ax.contourf(xs, ys, classes.reshape(xs.shape), alpha=0.3, cmap="coolwarm")\n'
                'ax.scatter(points[:, 0], points[:, 1], c=labels, cmap="coolwarm", '
                'edgecolors="k")\n')
    return head + body + 'ax.set_title(f"after step {len(run_losses)}")\nplt.show()'


def notebook_text(state: TrainingState, title: str = "untitled") -> str:
    """The notebook as the text of an .ipynb file."""
    book = notebook(state, title)
    nbformat.validate(book)
    return json.dumps(book, indent=1, ensure_ascii=False) + "\n"
