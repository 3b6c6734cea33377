"""Export a run as a standalone PyTorch script that retrains it and compares the losses.

`pytorch_script(trainer)` returns the text of a `.py` file that needs only `torch`: it
rebuilds the dataset (every point embedded as an exact float literal), the network as
`torch.nn.Linear` layers in float64 with the run's initial weights, the loss with its L1/L2
terms, the optimizer, and trains for as many steps as the run has, on the same
mini-batches, at the learning rate each step used, skipping `zero_grad` where the run
did. It prints the loss of each step beside the app's and the largest difference.

Decisions worth knowing:

- What is embedded rather than recomputed, so the script reproduces the run instead of a
  re-derivation of it: the per-step learning rate from the history (mid-run learning-rate
  edits and schedules both come out right), the batch indices of each step (numpy's
  generator is not available in torch), the steps whose `zero_grad` was skipped, and the
  weights typed in by hand (`trainer.edits`), set in torch just before the step they
  precede -- so the script starts from `trainer.initial_params`, as the app did.
- Every float is written with Python's repr, which reads back as the same float64.
- Torch sums in a different order than gradbox's scalar graph (a matrix product versus
  b + w0*x0 + w1*x1, one penalty sum per tensor versus per parameter), so losses agree to
  rounding (around 1e-15) rather than bit for bit.
- What the script cannot know: points edited while the run went on (only the current
  points exist). The printed difference then shows where the runs part; the header says
  when the data was edited.

Pure Python (no Qt, no torch needed to write the script).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.nn import INIT_LABELS, parameter_name, parse_parameter_name
from gradbox.autograd.optim import Adam
from gradbox.formatting import counted
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

# The tolerance the script uses for its verdict, and the tests for theirs.
TOLERANCE = 1e-6
WIDTH = 96  # wrap embedded lists to about this many characters a line

_ACTIVATION_MODULES = {"relu": "torch.nn.ReLU()", "tanh": "torch.nn.Tanh()",
                       "sigmoid": "torch.nn.Sigmoid()", "linear": None}

def float_literal(v: float) -> str:
    """A Python literal that reads back as the same float64 (NaN and inf spelled out)."""
    v = float(v)
    if math.isfinite(v):
        return repr(v)
    return f'float("{v}")'  # only test losses can be NaN; repr(nan) is not Python


def comma_rows(items: Sequence[str], indent: str) -> list[str]:
    """Items joined by commas into lines of about WIDTH characters; no item is split."""
    lines: list[str] = []
    line = indent
    for item in items:
        piece = f"{item}, "
        if len(line) + len(piece) > WIDTH and line.strip():
            lines.append(line.rstrip())
            line = indent
        line += piece
    if line.strip():
        lines.append(line.rstrip())
    return lines


_float, _rows = float_literal, comma_rows  # (the short names this file uses; the notebook
# export uses the public ones)


def _wrap(name: str, items: Sequence[str], comment: str = "") -> list[str]:
    """`# comment` and `NAME = [a, b, ...]`, wrapped at WIDTH."""
    lines = [f"# {comment}"] if comment else []
    if not items:
        return [*lines, f"{name} = []"]
    return [*lines, f"{name} = [", *_rows(items, "    "), "]"]


def _section(title: str) -> str:
    return f"# --- {title} ".ljust(WIDTH, "-")


def _floats(values: Iterable[float]) -> list[str]:
    return [_float(v) for v in values]


def _edits(trainer: Trainer) -> list[tuple[int, str, int, str, tuple[int, ...], float, float]]:
    """Weights typed in by hand before a recorded step, in the order they were typed:
    (the step they precede, from 1; gradbox name; layer; "weight" or "bias"; index in
    that tensor; old value; new value). Edits after the last step change no loss."""
    out = []
    for edit in getattr(trainer, "edits", ()):
        if edit.step >= trainer.step_count:
            continue
        parsed = parse_parameter_name(edit.name)
        if parsed is None:
            raise ValueError(f"cannot place the edited parameter {edit.name!r} in a layer")
        layer, neuron, inp = parsed
        kind, index = ("bias", (neuron,)) if inp is None else ("weight", (neuron, inp))
        # The name the network gives that weight, not the file's string.
        name = parameter_name(layer, neuron, inp)
        out.append((edit.step + 1, name, layer, kind, index, edit.old, edit.new))
    return out


def _layer_blocks(params: np.ndarray, sizes: Sequence[int]
                  ) -> list[tuple[list[list[float]], list[float]]]:
    """Flat gradbox parameters -> (weight rows, bias) per layer.

    gradbox stores each neuron as its nin weights then its bias, neuron after neuron, so
    a layer is a (nout, nin + 1) block: neuron j is row j of torch's weight and bias[j].
    """
    out = []
    offset = 0
    for nin, nout in itertools.pairwise(sizes):
        block = params[offset: offset + nout * (nin + 1)].reshape(nout, nin + 1)
        offset += nout * (nin + 1)
        out.append((block[:, :nin].tolist(), block[:, nin].tolist()))
    if offset != len(params):
        raise ValueError(f"{len(params)} parameters do not fit layers {list(sizes)}")
    return out


def _batches(trainer: Trainer) -> list[list[int]] | None:
    """The dataset indices of each step's batch, or None when every step used all training
    points (the script then needs no list)."""
    steps = trainer.step_count
    train = np.flatnonzero(~trainer.dataset.is_test)
    batches = [trainer.batch_indices(step) for step in range(steps)]
    if all(len(b) == len(train) and np.array_equal(b, train) for b in batches):
        return None
    return [[int(i) for i in b] for b in batches]


def pytorch_script_of(state: TrainingState) -> str:
    """`pytorch_script` of a run given as its whole state (as the window holds it: the
    trainer itself lives in the training process). The state continues bit for bit."""
    return pytorch_script(Trainer.from_state(state))


def write_pytorch_script(run: TrainingState | tuple[Any, ...], _progress: object,
                         _cancelled: object, *, path: str) -> int:
    """Build the script of a run (a `TrainingState`, or the training process's answer that
    starts with one) and write it to `path`; its number of steps. What the app runs in a
    process of its own (gradbox.runner.worker): a 1000x1000 network's script took 3.95 s
    of the window's UI thread to build."""
    state = run[0] if isinstance(run, tuple) else run
    Path(path).write_text(pytorch_script_of(state), encoding="utf-8")
    return int(state.step)


def pytorch_script(trainer: Trainer) -> str:
    """The text of a standalone PyTorch script that retrains `trainer`'s run.

    Call it while the trainer is not stepping (from the thread that drives it): it reads
    the history, the dataset and the checkpoints.
    """
    c = trainer.config
    history = list(trainer.history[: trainer.step_count])
    steps = len(history)
    sizes = list(c.layer_sizes)
    ds = trainer.dataset
    batches = _batches(trainer)
    optimizer = trainer.run.optimizer
    skipped = [r.step for r in history if r.zero_grad_skipped]
    edits = _edits(trainer)
    n_test = int(np.count_nonzero(ds.is_test))
    single = c.outputs == 1
    regression = c.is_regression
    loss = losses.lookup(c.effective_loss, regression)  # its title and torch lines
    names = c.effective_features

    out: list[str] = []
    add = out.append
    # --- header: what each part corresponds to in the app --------------------------------
    add("#!/usr/bin/env python3")
    add('"""A gradbox run, retrained with PyTorch.')
    add("")
    add("Written by gradbox. It needs only `torch` (pip install torch) and runs on the CPU:")
    add("")
    add("    python this_file.py")
    add("")
    add("It builds the same data, network and initial weights as the app, trains them the")
    add("same way, prints the loss of each step next to the loss the app recorded, and the")
    add("largest difference (expect rounding-level differences, around 1e-15: torch adds")
    add("the numbers up in a different order than gradbox's graph).")
    add("")
    add("Where each part comes from in the app:")
    add("")
    add(f"  1. Data            Designer > Data: {c.dataset}, {len(ds)} points, "
        f"noise {c.noise:g}, seed {c.seed},")
    if regression:
        add(f"                     a target number per point, {n_test} held out for testing "
            "(drawn hollow).")
        add("                     POINTS, TARGETS and IS_TEST are the points as the app had them.")
    else:
        add(f"                     {ds.classes} classes, {n_test} held out for testing "
            "(drawn hollow in the Playground).")
        add("                     POINTS, LABELS and IS_TEST are the points as the app had "
            "them.")
    hidden = " -> ".join(str(s) for s in sizes)
    add(f"  2. Network         Designer > Network: input features "
        f"{', '.join(features.labels(names))};")
    add(f"                     layers {hidden}, {c.activation} hidden neurons, last layer "
        "linear (raw scores).")
    add(f"  3. Initial weights Designer > Network: {INIT_LABELS[c.init]} initialization, scale "
        f"{c.init_scale:g};")
    add("                     as the Parameters & gradients panel shows them at step 0: "
        "gradbox's")
    add("                     layers.L.neurons.J.w.I is net[L].weight[J, I] here, and")
    add("                     layers.L.neurons.J.b is net[L].bias[J].")
    penalties = f"L1 {c.l1:g}, L2 {c.l2:g}"
    add(f"  4. Loss            Designer > Training: {loss.title}, {penalties};")
    add("                     the loss curve plots this number, penalties included.")
    if isinstance(optimizer, Adam):
        b1, b2 = optimizer.betas
        opt_text = f"Adam (betas {b1:g}, {b2:g}, eps {optimizer.eps:g})"
    else:
        opt_text = f"SGD, momentum {c.momentum:g}"
    add(f"  5. Optimizer       Designer > Training: {opt_text},")
    add(f"                     schedule {c.schedule}; LRS holds the learning rate each step "
        "used")
    add("                     (the app's Schedule.lr_at, after any learning-rate edits).")
    add("  6. Batches         Designer > Training > Batch size: " + (
        "all training points every step." if batches is None else
        f"{c.batch_size} points a step;\n                     BATCHES lists each step's points."))
    if skipped:
        add(f"  7. Training loop   {counted(steps, 'step')}, as in the loss curve; the "
            "toolbar's")
        add(f"                     'forget zero_grad' switch was on for steps "
            f"{_ranges(skipped)}:")
        add("                     gradients pile up there (SKIP_ZERO_GRAD).")
    else:
        add(f"  7. Training loop   {counted(steps, 'step')}, as in the loss curve (one per toolbar "
            "Step).")
    if edits:
        add(f"                     Weights typed in by hand before steps "
            f"{_ranges(sorted({e[0] for e in edits}))} are in EDITS.")
    add("  8. Comparison      APP_LOSSES / APP_TEST_LOSSES: the loss curve's training and test")
    add("                     losses, as the app recorded them.")
    for note in _notes(trainer):
        add("")
        out.extend(note)
    add('"""')
    add("")
    add("import torch")
    add("import torch.nn.functional as F")
    add("")
    add("# gradbox computes in float64 (Python floats); torch's default is float32.")
    add("torch.set_default_dtype(torch.float64)")
    add("")

    # --- 1. data ----------------------------------------------------------------------------
    add(_section("1. Data (Designer > Data; the points in the Playground)"))
    out.extend(_wrap("POINTS", [f"[{_float(x)}, {_float(y)}]" for x, y in ds.points.tolist()],
                     "x, y of every point, exactly as the app had them"))
    if regression:
        assert ds.targets is not None
        out.extend(_wrap("TARGETS", _floats(ds.targets), "the number each point should get"))
    else:
        out.extend(_wrap("LABELS", [str(int(v)) for v in ds.labels], "class of each point"))
    out.extend(_wrap("IS_TEST", [str(bool(v)) for v in ds.is_test],
                     "True: held out for testing (never trained on)"))
    add("x_all = torch.tensor(POINTS).reshape(-1, 2)")
    if regression:
        add("labels_all = torch.tensor(TARGETS)  # regression: targets, not classes")
    else:
        add("labels_all = torch.tensor(LABELS, dtype=torch.long)")
    add("train_index = [i for i, test in enumerate(IS_TEST) if not test]")
    add("test_index = [i for i, test in enumerate(IS_TEST) if test]")
    add("")

    # --- 2. network -------------------------------------------------------------------------
    add(_section("2. Network (Designer > Network)"))
    add("")
    add("")
    add("def features_of(points):")
    add(f"    # the network's inputs: {', '.join(features.labels(names))}")
    add("    x1, x2 = points[:, 0], points[:, 1]")
    add(f"    return torch.stack([{', '.join(features.FEATURES[n].torch for n in names)}], "
        "dim=1)")
    add("")
    add("")
    add("net = torch.nn.Sequential(")
    act = _ACTIVATION_MODULES[c.activation]
    for i, (nin, nout) in enumerate(itertools.pairwise(sizes)):
        last = i == len(sizes) - 2
        add(f"    torch.nn.Linear({nin}, {nout}),"
            + ("  # output layer: linear, one raw score per output" if last else ""))
        if not last and act is not None:
            add(f"    {act},")
    add(")")
    add("linears = [m for m in net if isinstance(m, torch.nn.Linear)]")
    add("")

    # --- 3. initial weights -----------------------------------------------------------------
    add(_section("3. Initial weights (Parameters & gradients panel at step 0)"))
    add("# One (weight, bias) pair per Linear: row J of weight holds neuron J's input weights")
    add("# (gradbox's layers.L.neurons.J.w.0, w.1, ...), bias[J] its bias (layers.L.neurons.J.b).")
    add("INITIAL_WEIGHTS = [")
    initial = np.asarray(trainer.initial_params, dtype=np.float64)
    for li, (rows, bias) in enumerate(_layer_blocks(initial, sizes)):
        add(f"    (  # layer {li}: {sizes[li]} -> {sizes[li + 1]}")
        add("        [")
        for j, row in enumerate(rows):
            one_line = f"            [{', '.join(_floats(row))}],  # neuron {j}"
            if len(one_line) <= WIDTH:
                add(one_line)
            else:
                add(f"            [  # neuron {j}")
                out.extend(_rows(_floats(row), "                "))
                add("            ],")
        add("        ],")
        add("        [  # bias")
        out.extend(_rows(_floats(bias), "            "))
        add("        ],")
        add("    ),")
    add("]")
    add("with torch.no_grad():")
    add("    for linear, (weight, bias) in zip(linears, INITIAL_WEIGHTS):")
    add("        linear.weight.copy_(torch.tensor(weight))")
    add("        linear.bias.copy_(torch.tensor(bias))")
    add("")

    # --- 4. loss ---------------------------------------------------------------------------
    add(_section("4. Loss (Designer > Training: Loss, L1, L2)"))
    add(f"L1 = {_float(c.l1)}  # strength of sum(|w|) over every weight and bias")
    add(f"L2 = {_float(c.l2)}  # strength of sum(w²) over every weight and bias")
    add("")
    add("")
    add("def scores_of(x):")
    if regression:
        add("    return net(features_of(x)).squeeze(1)  # one output: the predicted number")
    elif single:
        add("    return net(features_of(x)).squeeze(1)  # one output: a score, positive means "
            "class 1")
    else:
        add("    return net(features_of(x))  # one score per class")
    add("")
    add("")
    add("def data_loss(scores, labels):")
    add(f"    # {loss.title}, averaged over the points")
    for line in loss.torch_lines:
        add(f"    {line}")
    add("")
    add("")
    add("def loss_of(x, labels):")
    add("    loss = data_loss(scores_of(x), labels)")
    add("    # Penalties are added as gradbox adds them: L2 first, then L1, both on every")
    add("    # parameter (biases too).")
    add("    if L2:")
    add("        loss = loss + L2 * sum((p * p).sum() for p in net.parameters())")
    add("    if L1:")
    add("        loss = loss + L1 * sum(p.abs().sum() for p in net.parameters())")
    add("    return loss")
    add("")
    add("")

    # --- 5. optimizer and schedule -------------------------------------------------------
    add(_section("5. Optimizer and learning-rate schedule (Designer > Training)"))
    out.extend(_wrap("LRS", _floats(r.lr for r in history),
                     f"learning rate of each step: schedule {c.schedule!r} from lr {c.lr!r}"
                     " (as the app used it)"))
    first_lr = _float(history[0].lr if history else c.lr)
    if isinstance(optimizer, Adam):
        b1, b2 = optimizer.betas
        add(f"optimizer = torch.optim.Adam(net.parameters(), lr={first_lr}, "
            f"betas=({_float(b1)}, {_float(b2)}), eps={_float(optimizer.eps)})")
    else:
        add(f"optimizer = torch.optim.SGD(net.parameters(), lr={first_lr}, "
            f"momentum={_float(c.momentum)})")
    add("")

    # --- 6. batches --------------------------------------------------------------------------
    add(_section("6. Mini-batches (Designer > Training > Batch size)"))
    if batches is None:
        add("BATCHES = None  # full batch: every step trains on all training points")
    else:
        add("# The points (indices into POINTS) each step trained on.")
        add("BATCHES = [")
        for step, b in enumerate(batches, start=1):
            add(f"    [  # step {step}")
            out.extend(_rows([str(i) for i in b], "        "))
            add("    ],")
        add("]")
    add("")

    # --- 7. the app's numbers, and the loop ------------------------------------------------
    add(_section("7. What the app recorded (the loss curve)"))
    out.extend(_wrap("APP_LOSSES", _floats(r.loss for r in history),
                     "training loss of each step (penalties included)"))
    out.extend(_wrap("APP_TEST_LOSSES",
                     ["None" if math.isnan(r.test_loss) else _float(r.test_loss)
                      for r in history],
                     "loss on the held-out points before each update (no penalties; "
                     "None: no points held out)"))
    add("# Steps (from 1) where the toolbar's 'forget zero_grad' was on: gradients of the")
    add("# previous step are not cleared, so the new ones are added to them.")
    add(f"SKIP_ZERO_GRAD = {{{', '.join(str(s) for s in skipped)}}}" if skipped
        else "SKIP_ZERO_GRAD = set()")
    add("# Weights typed in by hand (parameters panel or graph), set just before a step:")
    add("# step (from 1): [(layer, 'weight' or 'bias', index, new value), ...]")
    if edits:
        add("EDITS = {")
        for step in sorted({e[0] for e in edits}):
            add(f"    {step}: [")
            for _, name, layer, kind, index, old_value, new_value in edits:
                if _ == step:
                    add(f"        ({layer}, {kind!r}, {index!r}, {_float(new_value)}),"
                        f"  # {name}, was {_float(old_value)}")
            add("    ],")
        add("}")
    else:
        add("EDITS = {}")
    add(f"TOLERANCE = {TOLERANCE!r}")
    add("")
    add("")
    add("def main():")
    add("    worst = worst_test = 0.0")
    add("    for step, lr in enumerate(LRS):  # step 0 is the app's step 1")
    add("        batch = train_index if BATCHES is None else BATCHES[step]")
    add("        x, labels = x_all[batch], labels_all[batch]")
    add("        with torch.no_grad():")
    add("            for layer, kind, index, value in EDITS.get(step + 1, []):")
    add("                getattr(linears[layer], kind)[index] = value")
    add("        if step + 1 not in SKIP_ZERO_GRAD:")
    add("            optimizer.zero_grad()")
    add("        loss = loss_of(x, labels)")
    add("        loss.backward()")
    add("        if test_index:  # the test loss is measured before the update, as in the app")
    add("            with torch.no_grad():")
    add("                scores = scores_of(x_all[test_index])")
    add("                test_loss = data_loss(scores, labels_all[test_index]).item()")
    add("            worst_test = max(worst_test, abs(test_loss - APP_TEST_LOSSES[step]))")
    add("        for group in optimizer.param_groups:")
    add("            group['lr'] = lr")
    add("        optimizer.step()")
    add("        difference = abs(loss.item() - APP_LOSSES[step])")
    add("        worst = max(worst, difference)")
    add("        print(f'step {step + 1:5d}  loss {loss.item():.12f}  app {APP_LOSSES[step]:.12f}'")
    add("              f'  difference {difference:.1e}')")
    add("    if not LRS:")
    add("        print('the app had not trained yet: nothing to compare')")
    add("        return")
    add("    print(f'final loss {loss.item()!r} (app: {APP_LOSSES[-1]!r})')")
    add("    print(f'max difference from the app over {len(LRS)} steps: {worst:.3e}')")
    add("    if test_index:")
    add("        print(f'max test-loss difference from the app: {worst_test:.3e}')")
    add("    if max(worst, worst_test) <= TOLERANCE:")
    add("        print(f'torch reproduces the app within {TOLERANCE:g}')")
    add("    else:")
    add("        print(f'torch differs from the app by more than {TOLERANCE:g} '")
    add("              '(see the note at the top of this file)')")
    add("")
    add("")
    add('if __name__ == "__main__":')
    add("    main()")
    return "\n".join(out) + "\n"


def _notes(trainer: Trainer) -> list[list[str]]:
    """Why the printed losses may part from the app's, in words for the header."""
    notes = []
    if trainer.dataset_version:
        notes.append(["Note: the points were edited during this session. The script has only",
                      "the current points, so steps trained on earlier points will not match."])
    history = trainer.history
    kept = trainer.state().checkpoints
    if (history and history[0].zero_grad_skipped and kept and kept[0].step == 0
            and np.any(kept[0].run.grads)):
        notes.append(["Note: step 1 kept gradients left over from before it (zero_grad was",
                      "skipped); the script starts from zero gradients, so it will differ."])
    return notes


def _ranges(steps: Sequence[int]) -> str:
    """[1, 2, 3, 7] -> '1-3, 7'."""
    parts: list[str] = []
    start = prev = steps[0]
    for s in [*steps[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if s is not None:
            start = prev = s
    return ", ".join(parts)
