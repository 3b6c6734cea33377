"""The graph in words: a node's details, Graphviz DOT, and colour classes."""

from __future__ import annotations

import re

import numpy as np

from gradbox.autograd import ops
from gradbox.formatting import fmt, ordinal
from gradbox.graph.core import Graph, at
from gradbox.graph.fanout import fanout_contributions


def details(graph: Graph, node: int, sample: int = 0, sample_label: str | None = None) -> str:
    """Everything about one node, as plain text for the details pane.

    `sample_label` names the sample in the text ("point 17") when its index in the
    graph's arrays is not what the user knows it by (a mini-batch's position 3).
    """
    op = graph.ops[node]
    called = sample_label or f"sample {sample}"
    name = graph.names[node]
    shared = type(graph.data(node)) is not np.ndarray
    lines = [f"Node #{node} — {graph.display_name(node)}",
             f"topological number {node} of {len(graph)}; receives its gradient "
             f"{ordinal(len(graph) - node)} in backward"]
    if node in graph.boundary:
        lines.append("an input from outside the expanded neuron")
    lines.append(f"op: {op or 'leaf'}")
    lines.append(f"local derivative: {ops.formula(op)}")
    if graph.children[node]:
        lines.append("inputs:")
        for slot, c in enumerate(graph.children[node]):
            lines.append(f"  {slot}: #{c} {graph.display_name(c)} = "
                         f"{fmt(at(graph.data(c), sample))}")
    which = "every sample" if shared and graph.n_samples > 1 else called
    lines.append(f"value ({which}): {fmt(at(graph.data(node), sample))}")
    if shared and graph.n_samples > 1:
        lines.append(f"grad (sum over {graph.n_samples} samples): "
                     f"{fmt(at(graph.grad(node), sample))}")
    else:
        lines.append(f"grad ({called}): {fmt(at(graph.grad(node), sample))}")
    if name:
        lines.append(f"parameter: {name}")
    if graph.consumers[node]:
        fan = fanout_contributions(graph, node, sample)
        uses = len(fan.contributions)
        lines.append(f"used {uses} time{'s' if uses > 1 else ''}"
                     + (" (fan-out: the gradients add up, +=)" if uses > 1 else "") + ":")
        for part in fan.contributions:
            step = (f"local {fmt(part.local)} × upstream {fmt(part.upstream)} = "
                    f"{fmt(part.sample_amount)}")
            if shared and part.per_sample:
                step = f"{called}: {step}; over all samples {fmt(part.amount)}"
            lines.append(f"  via #{part.consumer} ({graph.ops[part.consumer]}), "
                         f"operand {part.slot}: {step}")
        lines.append(f"  sum = {fmt(fan.total)}"
                     + (" = grad" if fan.matches else
                        f" ≠ grad {fmt(fan.grad)}: gradient left over from an earlier "
                        f"backward (was zero_grad skipped?)"))
    return "\n".join(lines)


def group_details(graph: Graph, node: int, sample: int = 0,
                  sample_label: str | None = None) -> str:
    """What a box of a collapsed graph (`groups.collapse`) stands for, and its numbers."""
    called = sample_label or f"sample {sample}"
    members = graph.members[node] if graph.members is not None else (node,)
    lines = [f"{graph.labels[node]}",
             f"one box for {len(members)} nodes (its parameters and operations); "
             "double-click it to open it in place",
             f"receives its gradient {ordinal(len(graph) - node)} of {len(graph)} in backward"]
    if graph.children[node]:
        lines.append("inputs:")
        for c in graph.children[node]:
            lines.append(f"  {graph.display_name(c)} = {fmt(at(graph.data(c), sample))}")
    lines.append(f"output ({called}): {fmt(at(graph.data(node), sample))}")
    lines.append(f"grad of the output ({called}): {fmt(at(graph.grad(node), sample))}")
    return "\n".join(lines)


def gradient_bins(grads: np.ndarray, levels: int = 6) -> np.ndarray:
    """Colour classes for gradients: sign times a log-magnitude level in 1..levels, 0 = none.

    The scale is relative to the largest gradient in view (its 98th percentile, so one
    outlier does not wash everything out); each level is a factor 10^(1/2) smaller.
    """
    # nan/inf (a diverged run) get no colour rather than breaking the scale
    grads = np.nan_to_num(np.asarray(grads, dtype=np.float64), nan=0.0, posinf=0.0,
                          neginf=0.0)
    magnitude = np.abs(grads)
    nonzero = magnitude[magnitude > 0]
    if nonzero.size == 0:
        return np.zeros(len(grads), dtype=np.int64)
    top = float(np.percentile(nonzero, 98))
    with np.errstate(divide="ignore"):
        steps = np.floor(-2 * np.log10(magnitude / top))
    level = np.clip(levels - steps, 1, levels)
    level[magnitude == 0] = 0
    return (np.sign(grads) * level).astype(np.int64)



# --- Graphviz -------------------------------------------------------------------------
def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: Graph, sample: int = 0) -> str:
    """Graphviz DOT text: one box per node (name/op, value, grad), one arrow per operand."""
    values = graph.values(sample)
    grads = graph.grads(sample)
    lines = ["digraph gradbox {", "  rankdir=LR;",
             '  node [shape=box, style="rounded,filled", fillcolor=white, '
             'fontname="Helvetica", fontsize=10];']
    for i in range(len(graph)):
        title = graph.display_name(i) if graph.is_leaf(i) else graph.ops[i]
        if not graph.is_leaf(i) and graph.labels[i]:
            title = f"{graph.labels[i]} = {title}"  # b = + : tells two additions apart
        parts = (f"#{i} {title}", f"data {fmt(values[i])}", f"grad {fmt(grads[i])}")
        label = "\\n".join(_dot_escape(part) for part in parts)
        extra = ", peripheries=2" if graph.is_fanout(i) else ""
        if graph.names[i]:
            extra += ", fillcolor=lightyellow"
        lines.append(f'  n{i} [label="{label}"{extra}];')
    lines.extend(f"  n{c} -> n{p};" for c, p in graph.edges)
    lines.append("}")
    return "\n".join(lines) + "\n"


_DOT_NODE = re.compile(r"^\s*(n\d+)\s*\[", re.MULTILINE)
_DOT_EDGE = re.compile(r"^\s*n\d+\s*->\s*n\d+", re.MULTILINE)


def parse_dot_counts(text: str) -> tuple[int, int]:
    """(nodes, edges) declared in DOT text written by `to_dot`."""
    return len(set(_DOT_NODE.findall(text))), len(_DOT_EDGE.findall(text))
