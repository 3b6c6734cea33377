"""The expression playground without any Qt: the last good expression, the graph the last
forward built, and what backward (correct or broken on purpose) and the gradient check did
to it. The language itself (parse, the whitelist, building the graph) is expression.py."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from gradbox.autograd.engine import Value
from gradbox.autograd.gradcheck import GradCheck, gradient_check, relative_error
from gradbox.formatting import fmt, ordinal
from gradbox.teaching import pitfalls
from gradbox.teaching.expression import ExpressionError, parse

# --- the playground's state ------------------------------------------------------------------
# The variants the playground offers, by `gradbox.teaching.pitfalls.VARIANTS` key, with the name
# a user sees. "backward twice" is not among them: it has its own button.
PLAYGROUND_VARIANTS: dict[str, str] = {
    "engine": "correct engine",
    "wrong order": "wrong order (naive recursion)",
    "assign": "assign instead of accumulate (=)",
}
CHECK_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Outcome:
    """What the playground says after an action: "info", "warning" or "error", and text.

    `quote` is the engine's own words (PyTorch's error message), shown verbatim.
    """

    kind: str
    title: str
    text: str = ""
    quote: str = ""


@dataclass(frozen=True)
class GradientRow:
    """One variable as the playground's table shows it; None where nothing is known yet."""

    name: str
    value: float
    grad: float | None  # the correct engine's gradient
    variant_grad: float | None  # the broken variant's, beside it
    numeric: float | None  # finite difference, after a gradient check
    error: float | None  # relative error of the checked column against `numeric`
    wrong: bool  # the variant disagrees with the engine
    worst: bool  # the largest relative error of the last check


class Playground:
    """The expression playground without any Qt: the last good expression, the graph the
    last forward built, and what backward (correct or broken) did to it.

    Leaves keep their gradients across passes, as PyTorch's leaves do: a second
    Backward without Zero grads adds to them. Every action returns an `Outcome` for the
    message area; a rejected expression raises `ExpressionError` and changes nothing.
    """

    def __init__(self, text: str = "tanh(a*b + c)",
                 values: Mapping[str, float] | None = None) -> None:
        self.expression = parse(text, values)
        self.root = self.expression.root
        self.variant = "engine"
        self.retain_graph = False
        self.passes = 0  # backward passes through `root`
        self.first_retained = False  # whether the first pass kept the graph
        self.has_grads = False  # a backward has run since the expression was set
        self.correct: tuple[float, ...] | None = None  # engine column in variant mode
        self.broken: tuple[float, ...] | None = None
        self.firings: list[Value] = []
        self.check: GradCheck | None = None
        self.checked: tuple[float, ...] | None = None  # the column the check compared

    # --- state ---------------------------------------------------------------------------
    @property
    def text(self) -> str:
        return self.expression.text

    @property
    def leaves(self) -> list[Value]:
        return list(self.expression.leaves.values())

    @property
    def names(self) -> tuple[str, ...]:
        return self.expression.names

    def grads(self) -> tuple[float, ...]:
        return tuple(float(leaf.grad) for leaf in self.leaves)

    def rows(self) -> list[GradientRow]:
        names, leaves = self.names, self.leaves
        variant_mode = self.broken is not None
        engine = self.correct if variant_mode else (self.grads() if self.has_grads else None)
        rows = []
        for i, (name, leaf) in enumerate(zip(names, leaves)):
            grad = engine[i] if engine is not None else None
            broken = self.broken[i] if self.broken is not None else None
            wrong = broken is not None and grad is not None and not _close(broken, grad)
            numeric = error = None
            worst = False
            if self.check is not None:
                numeric = float(self.check.numeric[i])
                error = float(self.check.relative_error[i])
                worst = i == self.check.worst
            rows.append(GradientRow(name, float(leaf.data), grad, broken, numeric, error,
                                    wrong, worst))
        return rows

    def _clear_results(self) -> None:
        self.correct = self.broken = None
        self.firings = []
        self.check = None
        self.checked = None

    # --- actions -------------------------------------------------------------------------
    def set_text(self, text: str) -> Outcome:
        """Parse `text`; values typed into the table survive for names still there.

        A value the text itself sets (`a = 1`) wins once that number changes in the text.
        Raises `ExpressionError` and keeps the current expression if `text` is rejected.
        """
        fresh = parse(text)  # first without values: what the text itself sets
        old = self.expression
        carried = {name: value for name, value in old.values.items()
                   if name in fresh.leaves and old.literals.get(name) == fresh.literals.get(name)}
        self.expression = parse(text, carried) if carried else fresh
        self.root = self.expression.root
        self.passes = 0
        self.has_grads = False
        self._clear_results()
        return Outcome("info", "Forward done",
                       f"{len(self.root.topological_order())} nodes; output = "
                       f"{fmt(self.root.data)}. Press Backward to send gradients back.")

    def set_variant(self, variant: str) -> None:
        if variant not in PLAYGROUND_VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; choose from "
                             f"{list(PLAYGROUND_VARIANTS)}")
        self.variant = variant
        self._clear_results()

    def set_value(self, name: str, value: float) -> Outcome:
        """Give a variable a new value and run the forward pass again.

        Raises `ExpressionError` (and keeps the old value) if the expression cannot be
        evaluated there, e.g. log of a negative number.
        """
        value = float(value)
        if not math.isfinite(value):
            raise ExpressionError(f"{name} must be a finite number", 1)
        leaf = self.expression.leaves[name]
        old = leaf.data
        leaf.data = value
        try:
            return self.forward()
        except ExpressionError:
            leaf.data = old
            self.forward()
            raise

    def forward(self) -> Outcome:
        """Build the graph again from the leaves' current values (a fresh graph)."""
        self.root = self.expression.rebuild()
        self.passes = 0
        self._clear_results()
        return Outcome("info", "Forward done",
                       f"output = {fmt(self.root.data)}. The graph is new; the leaves "
                       "keep whatever gradient they hold.")

    def zero_grads(self) -> Outcome:
        for node in self.root.topological_order():
            node.grad = 0.0
        self._clear_results()
        self.has_grads = True  # zeros are a known gradient: the table shows 0
        return Outcome("info", "Gradients set to zero", "Every node's grad is 0 again.")

    def backward(self) -> Outcome:
        """One backward pass, with the chosen variant; a used graph is rebuilt first,
        as a training loop's forward would."""
        if self.passes > 0:
            self.forward()
        self._clear_results()
        if self.variant != "engine":
            return self._backward_variant()
        held = [name for name, g in zip(self.names, self.grads()) if g != 0.0]
        self.root.backward(retain_graph=self.retain_graph)
        self.passes = 1
        self.first_retained = self.retain_graph
        self.has_grads = True
        text = ("Each node multiplies the gradient it received by its local derivative "
                "and hands it to its inputs, the output first. The numbered badges in the "
                "graph show the order.")
        if held:
            return Outcome("warning", "Backward added to old gradients",
                           f"{', '.join(held)} still held gradient from an earlier backward, "
                           "and this pass was added to it (+=), as PyTorch does. Press Zero "
                           "grads, then Backward, to see this pass alone.")
        return Outcome("info", "Backward done", text)

    def _backward_variant(self) -> Outcome:
        backward, what = pitfalls.VARIANTS[self.variant]
        leaves, names = self.leaves, self.names
        try:
            columns = pitfalls.beside_correct(self.expression.rebuild, leaves, backward, names)
        except pitfalls.TooManyPathsError as error:
            return Outcome("error", "Too many paths to walk one by one",
                           f"{error}. That explosion is the point of this lesson: the "
                           "naive recursion fires a node once per path, and every reused "
                           "value doubles the paths. Try a shorter chain, such as "
                           "a = 1; b = a + a; c = b + b.")
        # The named intermediate values (b in `b = a + a`) carry gradients the graph
        # shows too: the correct ones first, from a graph of their own.
        for leaf in leaves:
            leaf.grad = 0.0
        reference = self.expression.rebuild()
        reference.backward()
        correct_named = _named_grads(reference)
        for leaf in leaves:
            leaf.grad = 0.0
        self.root = self.expression.rebuild()
        if self.variant == "wrong order":
            self.firings = pitfalls.wrong_order_firings(self.root)
        backward(self.root)
        self.passes = 1
        self.first_retained = True  # the variants never free the graph
        self.has_grads = True
        self.correct = tuple(float(g) for g in columns.correct)
        self.broken = tuple(float(g) for g in columns.broken)
        wrong = [n for n, bad in zip(names, columns.differs) if bad]
        # An intermediate's wrong gradient shows only in the graph: say what it holds.
        wrong += [f"{name} (in the graph: {fmt(grad)}, correct {fmt(correct_named[name])})"
                  for name, grad in _named_grads(self.root).items()
                  if name in correct_named and not _close(grad, correct_named[name])]
        label = PLAYGROUND_VARIANTS[self.variant]
        if not wrong:
            return Outcome("info", f"{label}: same numbers here",
                           f"{what[0].upper()}{what[1:]}. On this graph every value is "
                           "used once (a tree), so the mistake does not show. Try a graph "
                           "that reuses a value, such as a = 1; b = a + a; c = b + b.")
        text = f"{what[0].upper()}{what[1:]}. Wrong: {', '.join(wrong)}."
        if self.firings and len(self.firings) <= 40:
            order = ", ".join(_node_name(node) for node in self.firings)
            twice = sorted({_node_name(node) for node in self.firings
                            if node.inputs and self.firings.count(node) > 1})
            text += f" It fired: {order}."
            if twice:
                text += (f" {', '.join(twice)} passed gradient on more than once, before "
                         "every consumer had reported.")
        return Outcome("error", f"{label}: {len(wrong)} wrong gradient"
                       f"{'s' if len(wrong) > 1 else ''}", text)

    def backward_again(self) -> Outcome:
        """A second backward through the same graph, exactly as the engine does it."""
        if self.variant != "engine":
            raise ValueError("Backward again runs the correct engine; choose it first")
        if self.passes == 0:
            return Outcome("info", "Nothing to repeat yet",
                           "Press Backward first; Backward again then goes back through "
                           "the same graph a second time.")
        saving = pitfalls.saving_ops(self.root)
        before = self.grads()
        self.check = None
        self.checked = None
        try:
            self.root.backward(retain_graph=self.retain_graph)
        except RuntimeError as exc:
            text = pitfalls.explain_backward_twice(saving, self.first_retained, raised=True)
            if self.retain_graph and not self.first_retained:
                text += (" retain_graph is ticked now, but the first backward ran without "
                         "it and the graph is already freed: press Backward again only "
                         "after a Backward made with retain_graph ticked.")
            return Outcome("error", "Backward again raised RuntimeError", text, str(exc))
        self.passes += 1
        after = self.grads()
        change = ", ".join(f"{n}: {fmt(b)} → {fmt(a)}"
                           for n, b, a in zip(self.names, before, after))
        text = pitfalls.explain_backward_twice(saving, self.first_retained, raised=False)
        return Outcome("warning", f"Backward ran a {ordinal(self.passes)} time: "
                       "gradients added again", f"{change}. {text}")

    def gradient_check(self) -> Outcome:
        """Finite differences beside the gradients shown (the variant's, in variant mode).

        It checks what the table shows, not a fresh pass: after a second backward or a
        forgotten zero_grad the check fails, as it should. With nothing shown yet it
        runs Backward first.
        """
        if not self.names:
            return Outcome("info", "Nothing to check", "This expression has no variables.")
        if self.broken is None and (self.variant != "engine" or not self.has_grads
                                    or not any(self.grads())):
            self.backward()
        backward = pitfalls.VARIANTS[self.variant][0]
        leaves, names = self.leaves, self.names
        numeric = gradient_check(self.expression.rebuild, leaves, names,
                                 backward=backward).numeric
        shown = self.broken if self.broken is not None else self.grads()
        analytic = np.array(shown, dtype=np.float64)
        self.checked = tuple(shown)
        self.check = GradCheck(names, analytic, numeric, relative_error(analytic, numeric))
        worst = self.check.worst
        if self.check.passed(CHECK_TOLERANCE):
            return Outcome("info", f"Gradient check passed: worst relative error "
                           f"{self.check.worst_error:.1e}",
                           f"Every gradient agrees with (f(x+ε) − f(x−ε)) / 2ε, ε = 1e-6; "
                           f"the largest difference is at {names[worst]}.")
        which = "The variant's" if self.broken is not None else "The"
        return Outcome("error", f"Gradient check FAILED: relative error "
                       f"{self.check.worst_error:.2g} at {names[worst]}",
                       f"{which} gradient of {names[worst]} is {fmt(analytic[worst])}, "
                       f"the finite difference says {fmt(numeric[worst])}.")

    def forget_zero_grad(self, passes: int = 3) -> pitfalls.ForgetZeroGrad:
        """Backward `passes` times on the same values, with and without zero_grad."""
        return pitfalls.forget_zero_grad_demo(self.expression.rebuild, self.leaves, passes,
                                              self.names)


def _node_name(node: Value) -> str:
    """How a node is called in a sentence: its name, its number, or its op as drawn."""
    if node.label:
        return node.label
    if not node.inputs:
        return fmt(float(node.data))
    return {"*": "×"}.get(node.op, node.op)


def _named_grads(root: Value) -> dict[str, float]:
    """The gradient of every named intermediate node of the graph under `root` (the
    output's own is always 1, so it is left out)."""
    return {node.label: float(node.grad) for node in root.topological_order()
            if node.label and node.inputs and node is not root}


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
