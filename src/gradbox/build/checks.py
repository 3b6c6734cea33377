"""One case's two runs, inside the sandbox's child: the learner's names and gradbox's.

A `Run` runs `case.code` with the learner's names and with gradbox's reference
(`gradbox.build.reference`), compares what the case lists, names the mistake that wrong
numbers point to (an op's local derivative, a variant of `gradbox.teaching.pitfalls`,
the mistake a case is made to catch), finds the line of the learner's file to look at,
and builds the `CaseResult`: passed, or the message in the article's words, the mistake
id, the line, the learner's prints, the failing case's graph (the learner's numbers beside
the expected ones) and the case as the Playground's text. What each kind of case checks,
and `run_case`, are `gradbox.build.kinds`.

Never imported in the caller's process to run learner code: the sandbox's child
(`gradbox.build.child`) is the only caller.
"""

from __future__ import annotations

import importlib.util
import io
import math
import os
import re
import sys
import types
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from gradbox.build import reference
from gradbox.build.cases import Case
from gradbox.build.explain import (
    Explained,
    assign_variants,
    close,
    explain_error,
    number,
    numbers,
    variant_values,
)
from gradbox.build.graphs import as_number, case_graph, topological
from gradbox.build.report import CaseGraph, CaseResult, describe_mistake

__all__ = ["OUTPUT_CAP", "Capture", "Learner", "Run", "case_line", "helpers", "op_method",
           "run_code", "see"]

OUTPUT_CAP = 4000  # characters of the learner's prints kept per case
CASE_FILE = "<case>"
# The mistake a mismatch means in a case made to catch one thing.
CASE_MISTAKE = {
    "backward-twice-adds": "grad-reset-in-backward",
    "zero-grad": "grad-not-reset",
    "zero-grad-then-backward": "grad-not-reset",
    "module-zero-grad": "module-zero-grad",
    "parameters-order": "parameters-order",
    "neuron": "wrong-network",
    "mlp-forward-backward": "wrong-network",
    "retain-graph": "retain-graph-ignored",
    "add-twice-allowed": "freed-too-much",
    "backward-chain": "seed-not-one",
}


# Where to look for a mistake shown only by wrong numbers: the closure that passed the
# first wrong gradient on, or (owner, attribute) of the learner's names.
CLOSURE_MISTAKES = ("assign-not-accumulate", "wrong-local-derivative", "tanh-slope-from-input")
FUNCTION_MISTAKES = {
    "not-topological": ("Value", "backward"), "seed-not-one": ("Value", "backward"),
    "grad-reset-in-backward": ("Value", "backward"),
    "backward-twice-silent": ("Value", "backward"),
    "retain-graph-ignored": ("Value", "backward"), "freed-too-much": ("Value", "backward"),
    "grad-not-reset": ("zero_grad", ""), "wrong-derivative": ("numerical_derivative", ""),
    "module-zero-grad": ("Module", "zero_grad"), "parameters-order": ("Neuron", "parameters"),
    "contract": ("Value", "__init__"),
    "number-not-wrapped": ("Value", "__add__"),
}
# The Playground's broken variants (gradbox.teaching.playground) that show a mistake.
PLAYGROUND_VARIANT = {"assign-not-accumulate": "assign", "not-topological": "wrong order"}
_LEAF = re.compile(r"^(\w+) = Value\((-?[\d.]+(?:e-?\d+)?)\)$")
_NOT_AN_EXPRESSION = re.compile(r"(\.backward\(|\._backward\(|\.grad = |^pass_gradients\()")


def op_method(op: Any) -> str:
    """The Value method that makes a node with this `_op` label ('' if none is known)."""
    if not isinstance(op, str):
        return ""
    if op.startswith("**"):
        return "__pow__"
    return {"+": "__add__", "*": "__mul__", "tanh": "tanh", "exp": "exp",
            "relu": "relu"}.get(op.lower(), "")  # micrograd labels relu 'ReLU'


def _nested_backward(method: Any) -> CodeType | None:
    """The code of the closure an op's method defines (`_backward` by name, else the only
    function it defines), read from the method's constants: still there after backward
    has freed the closures themselves."""
    code = getattr(method, "__code__", None)
    if code is None:
        return None
    nested = [c for c in code.co_consts if isinstance(c, CodeType)]
    named = [c for c in nested if c.co_name == "_backward"]
    if len(named) == 1:
        return named[0]
    return nested[0] if len(nested) == 1 else None  # several closures: which one is a guess


def playground_text(code: str) -> str | None:
    """A case's code as the Playground's expression text, or None when it is more than
    an expression (a loop, a network, zero_grad): `a = Value(3.0)` becomes `a = 3.0`, the
    calls of backward are left out (the Playground has its own button)."""
    from gradbox.teaching.expression import ExpressionError, parse
    lines = []
    for line in code.splitlines():
        if _NOT_AN_EXPRESSION.search(line):
            continue
        leaf = _LEAF.match(line)
        lines.append(f"{leaf.group(1)} = {leaf.group(2)}" if leaf else line)
    text = "\n".join(lines)
    try:
        parse(text)
    except (ExpressionError, ValueError, TypeError):
        return None
    return text


class Capture(io.TextIOBase):
    """The learner's prints, kept up to `cap` characters (the rest counted, not kept)."""

    def __init__(self, cap: int = OUTPUT_CAP) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        text = str(text)
        room = self.cap - self.size
        if room > 0:
            self.parts.append(text[:room])
        self.size += len(text)
        return len(text)

    def text(self) -> str:
        kept = "".join(self.parts)
        if self.size > self.cap:
            kept += f"\n… {self.size - self.cap:,} more characters not shown"
        return kept


@dataclass
class Learner:
    """The learner's file, run once: its names and its file name (for tracebacks)."""

    ns: dict[str, Any]
    filename: str
    output: str = ""  # what the file printed while it was run
    notes: list[str] = field(default_factory=list)


def set_weights(model: Any) -> None:
    """Every parameter of `model` set through parameters(), the same on both sides:
    the checks never depend on the learner's random initialisation."""
    for i, p in enumerate(model.parameters()):
        p.data = round(0.8 * math.sin(1.7 * i + 0.4), 4)


def pass_gradients(root: Any) -> None:
    """The checker's own backward walk over the learner's closures (stages 3 and 4,
    before the learner has written backward): reverse topological order, from 1."""
    order = topological(root, limit=100_000) or []
    root.grad = 1.0
    for node in reversed(order):
        node._backward()


def helpers() -> dict[str, Any]:
    return {"set_weights": set_weights, "pass_gradients": pass_gradients}


def run_code(code: str, ns: dict[str, Any], capture: Capture | None = None,
             filename: str = CASE_FILE) -> BaseException | None:
    """Run `code` in `ns`; the exception it raised, or None. Prints go to `capture`."""
    saved = sys.stdout
    if capture is not None:
        sys.stdout = capture
    try:
        exec(compile(code, filename, "exec"), ns)  # in the sandbox's child
    except BaseException as error:  # SystemExit too: the learner's code
        return error
    finally:
        sys.stdout = saved
    return None


def case_line(error: BaseException) -> int | None:
    tb = error.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == CASE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _values(x: Any) -> list[float] | float:
    if isinstance(x, list | tuple):
        return [as_number(v) for v in x]
    return as_number(x)


def _show(x: list[float] | float) -> str:
    if isinstance(x, list):
        shown = ", ".join(number(v) for v in x[:8])
        return f"[{shown}{', …' if len(x) > 8 else ''}]"
    return number(x)


def _same(mine: list[float] | float, expected: list[float] | float) -> bool:
    if isinstance(expected, list):
        return isinstance(mine, list) and len(mine) == len(expected) and all(
            close(m, e) for m, e in zip(mine, expected, strict=True))
    return not isinstance(mine, list) and close(mine, expected)


def _words(mistake: str) -> str:
    m = describe_mistake(mistake)
    return m.description[0].upper() + m.description[1:]


def see(mistake: str) -> str:
    rule = describe_mistake(mistake).rule
    return f" — see '{rule}'" if rule else ""


class Run:
    """One case's two runs (learner, reference) and the result built from them."""

    def __init__(self, case: Case, learner: Learner) -> None:
        self.case = case
        self.learner = learner
        self.capture = Capture()
        self.ns: dict[str, Any] = {**learner.ns, **helpers()}
        self.ref: dict[str, Any] = {**reference.namespace(), **helpers()}
        self.ref_error = run_code(case.code, self.ref)
        if self.ref_error is not None and case.kind != "raises":
            raise AssertionError(f"the reference fails its own case {case.name}: "
                                 f"{self.ref_error!r}")

    def graph(self) -> CaseGraph | None:
        """The failing case's graph; after two backward calls, leaves' gradients only."""
        return case_graph(self.ns.get(self.case.root), self.ref.get(self.case.root),
                          self.ns, self.ref,
                          leaves_only=self.case.code.count(".backward(") > 1)

    def run(self) -> BaseException | None:
        return run_code(self.case.code, self.ns, self.capture)

    def result(self, passed: bool, message: str = "", mistake: str | None = None,
               line: int | None = None, graph: bool = True) -> CaseResult:
        g = None
        if not passed and graph and self.case.root:
            try:
                g = self.graph()
            except Exception:  # a graph we cannot read is not drawn
                g = None
        text = playground_text(self.case.code) if not passed and g is not None else None
        variant = None if text is None else PLAYGROUND_VARIANT.get(mistake or "", "engine")
        if not passed and line is None and mistake is not None:
            line = self.look_here(mistake, g)
        return CaseResult(self.case.name, passed, self.case.code,
                          message or ("passed: " + self.case.about), mistake, line,
                          self.capture.text(), g, text, variant)

    def look_here(self, mistake: str, graph: CaseGraph | None) -> int | None:
        """The line of the learner's file a wrong number points to: the `_backward` that
        handed the first wrong node its gradient, or the function the mistake is in."""
        if mistake in CLOSURE_MISTAKES and graph is not None and graph.first_wrong is not None:
            nodes = topological(self.ns.get(self.case.root)) or []
            consumers = [nodes[n.id] for n in graph.nodes
                         if graph.first_wrong in n.parents and n.id < len(nodes)]
            for node in consumers:
                # The closure itself while the graph is kept; once backward has freed it
                # (its _backward replaced), the method of the op that made the node.
                closure = getattr(node, "_backward", None)
                code = getattr(closure, "__code__", None)
                if code is not None and "<locals>" in code.co_qualname:
                    line = self.line_of(closure, body=True)
                    if line is not None:
                        return line
                method = getattr(self.ns.get("Value"), op_method(getattr(node, "_op", "")),
                                 None)
                line = self.line_of(_nested_backward(method), body=True) or \
                    self.line_of(method)
                if line is not None:
                    return line
        owner, name = FUNCTION_MISTAKES.get(mistake, ("", ""))
        if not owner:
            return None
        if owner == "Module":  # the learner's class of the model the case built
            model = self.ns.get("m")
            return self.line_of(getattr(type(model), name, None)) if model is not None \
                else None
        thing = self.ns.get(owner)
        return self.line_of(getattr(thing, name, None) if name else thing)

    def line_of(self, function: Any, *, body: bool = False) -> int | None:
        """Where `function` (or a code object) is in the learner's file: its `def`, or
        with `body` its first statement (the line to fix in a two-line closure)."""
        code = function if isinstance(function, CodeType) else (
            getattr(function, "__code__", None)
            or getattr(getattr(function, "__func__", None), "__code__", None))
        if code is None or code.co_filename != self.learner.filename:
            return None
        if body:
            lines = [ln for _s, _e, ln in code.co_lines()
                     if ln is not None and ln > code.co_firstlineno]
            if lines:
                return min(lines)
        return int(code.co_firstlineno)

    def failed(self, explained: Explained) -> CaseResult:
        return self.result(False, explained.message, explained.mistake, explained.line)

    def error(self, error: BaseException) -> CaseResult:
        explained = explain_error(error, self.learner.filename)
        if isinstance(error, TypeError | AttributeError) and re.search(
                r"'list' (and|object has no attribute)", str(error)):
            explained = Explained(f"{type(error).__name__}: {error}. A Layer (and so an MLP) whose "
                                  "last layer has one neuron returns that neuron's Value, "
                                  "not a list of one.", "wrong-network", explained.line)
        return self.failed(explained)

    # --- comparing with the reference ------------------------------------------------------
    def compare(self) -> CaseResult:
        wrong = []
        for expr in self.case.compare:
            try:
                mine_raw = eval(expr, self.ns)  # the case's own expression
            except Exception as error:
                return self.error(error)
            expected = _values(eval(expr, self.ref))
            mine = _values(mine_raw)
            if not _same(mine, expected):
                wrong.append((expr, mine_raw, mine, expected))
        if not wrong:
            return self.result(True)
        expr, raw, mine, expected = wrong[0]
        if isinstance(mine, float) and isinstance(expected, float):
            shown, due = numbers(mine, expected)
        else:
            shown, due = _show(mine), _show(expected)
        said = f"`{expr}` is {'None' if raw is None else shown} where it should be {due}"
        if raw is None:
            return self.result(False, f"{said}: a number belongs there.", "contract")
        if hasattr(raw, "data") and hasattr(raw, "grad"):
            return self.result(False, f"`{expr}` holds a Value, not a number: a `_backward` "
                               "multiplies by a Value (`other`) where it needs its number "
                               "(`other.data`).", "wrong-local-derivative")
        mistake, why = self.name_mistake(wrong)
        if mistake is None:
            return self.result(False, said + (f". {why}" if why else "."))
        return self.result(False, f"{why or _words(mistake)}: {said}{see(mistake)}.",
                           mistake)

    def name_mistake(self, wrong: list[tuple[str, Any, Any, Any]]) -> tuple[str | None, str]:
        """The mistake id the wrong numbers point to, and words for it ('' for the
        mistake's own description)."""
        case = self.case
        exprs = [w[0] for w in wrong]
        if case.name in CASE_MISTAKE:
            mistake = CASE_MISTAKE[case.name]
            if mistake == "wrong-network" and self.bias_first(wrong):
                return "parameters-order", "Your `parameters()` lists each neuron's bias " \
                    "before its weights; the fixed order is the weights, then the bias"
            if mistake == "grad-reset-in-backward" and all(
                    isinstance(w[2], float) and isinstance(w[3], float) and w[2] > w[3]
                    for w in wrong):
                return "seed-not-one", ("The second `backward` passed more than 1 from the "
                                        "output: each call starts from d out / d out = 1 "
                                        "(set the output's grad to 1; do not add 1 to it)")
            if mistake != "seed-not-one":
                return mistake, ""
            if not all(isinstance(w[2], float) and w[2] == 0.0 for w in wrong):
                return self.name_from_variants(wrong)
            return self.nothing_arrived()
        if all(e.endswith(".data") for e in exprs):
            return "wrong-forward", f"The forward value of `{exprs[0][:-5]}` is wrong"
        op = case.option("op")
        if op is not None:
            return self.name_local(op, wrong)
        return self.name_from_variants(wrong)

    def nothing_arrived(self) -> tuple[str, str]:
        """No gradient reached a leaf: the seed is missing, or the nodes fired before
        their gradient had arrived (in topological order, not its reverse)."""
        root = self.ns.get(self.case.root)
        if as_number(getattr(root, "grad", math.nan)) == 1.0:
            return "not-topological", ("No gradient reached the leaves, though the output's "
                                       "is 1: your `backward` fires each node before its "
                                       "gradient has arrived — walk the topological order "
                                       "in reverse, from the output")
        return "seed-not-one", ""

    def bias_first(self, wrong: list[tuple[str, Any, Any, Any]]) -> bool:
        """The learner's numbers are the reference's with each neuron's bias listed first."""
        ns = {**reference.namespace(bias_first=True), **helpers()}
        if run_code(self.case.code, ns) is not None:
            return False
        try:
            return all(_same(mine, _values(eval(expr, ns)))
                       for expr, _raw, mine, _expected in wrong)
        except Exception:
            return False

    def name_local(self, op: str, wrong: list[tuple[str, Any, Any, Any]]
                   ) -> tuple[str | None, str]:
        """One op's _backward, run alone: which local derivative the numbers match."""
        out = self.ns.get(self.case.root)
        g = as_number(getattr(out, "grad", math.nan))
        expr, _raw, mine, expected = wrong[0]
        if isinstance(mine, float) and isinstance(expected, float):
            if g not in (0.0, 1.0) and close(mine * g, expected):
                return "wrong-local-derivative", (
                    f"Your `_backward` for `{op}` forgets to multiply by `out.grad` "
                    "(the chain rule: local derivative × the gradient that arrived)")
            if op == "tanh":
                x = as_number(self.ref["a"].data)
                if close(mine, (1 - x * x) * g):
                    return "tanh-slope-from-input", "Your `tanh` takes its slope from the " \
                        "input (1 − x²) instead of its output (1 − t²)"
            if op == "*" and expr.startswith("a.") and close(
                    mine, as_number(self.ref["a"].data) * g):
                return "wrong-local-derivative", ("Your `_backward` for `*` gives each "
                                                  "input its own value; its local "
                                                  "derivative is the *other* input's")
        return "wrong-local-derivative", f"Your `_backward` for `{op}` is wrong"

    def name_from_variants(self, wrong: list[tuple[str, Any, Any, Any]]
                           ) -> tuple[str | None, str]:
        grads = tuple(w for w in self.case.compare if w.endswith(".grad"))
        if not grads:
            return None, ""
        try:
            mine = {e: as_number(eval(e, self.ns)) for e in grads}
        except Exception:
            return None, ""
        variants = variant_values(self.case.code, grads, helpers())
        right = variants.pop("right", None)
        for mistake, values in variants.items():
            if right is not None and all(close(values[e], right[e]) for e in grads):
                continue  # this variant is right here: it names nothing
            if all(close(mine[e], values[e]) for e in grads):
                ops = self.first_wrong_consumers()
                which = f"for `{ops[0]}`" if len(ops) == 1 else "(one of them)"
                words = {"assign-not-accumulate": f"Your `_backward` {which} assigns (`=`) "
                         "where it must add (`+=`): a value used twice keeps only the last "
                         "share",
                         "not-topological": "Your `backward` fires a node before all of "
                         "its consumers have added their share (not reverse topological "
                         "order)"}[mistake]
                return mistake, words
        assigned = self.name_assign(mine, right)
        if assigned is not None:
            return "assign-not-accumulate", assigned
        if all(v == 0.0 for v in mine.values()):
            return self.nothing_arrived()
        return None, self.first_wrong_words()

    def name_assign(self, mine: dict[str, float], right: dict[str, float] | None
                    ) -> str | None:
        """Words for `=` in place of `+=` in some closures (`self.grad = ...` in `*`
        alone, say), when the learner's numbers are what that gives in an order their
        backward may have fired the nodes in; None when no such mistake gives them."""
        grads = tuple(mine)
        found: set[frozenset[tuple[str, int]]] = set()
        for slots, values in assign_variants(self.case.code, grads, helpers()):
            if right is not None and all(close(values[e], right[e]) for e in grads):
                continue  # assigning here loses nothing: it names nothing
            if all(close(mine[e], values[e]) for e in grads):
                found.add(slots)
        if not found:
            return None
        # The fewest closures that explain the numbers; several when the order the
        # learner's walk fired in makes two of them give the same numbers.
        fewest = min(len(slots) for slots in found)
        ways = sorted(" and ".join(f"`{'self' if i == 0 else 'other'}.grad` in "
                                   f"`{op.rstrip('-0123456789.') or op}`"
                                   for op, i in sorted(slots))
                      for slots in found if len(slots) == fewest)
        where = ways[0] if len(ways) == 1 else "one of " + ", ".join(dict.fromkeys(ways))
        return (f"Your `_backward` assigns (`=`) where it must add (`+=`) — {where}: a "
                "value used twice keeps only the last share")

    def first_wrong_consumers(self) -> list[str]:
        """The ops that hand the first wrong node (in backward order) its gradient."""
        try:
            graph = self.graph()
        except Exception:
            return []
        if graph is None or graph.first_wrong is None:
            return []
        return sorted({n.op for n in graph.nodes if graph.first_wrong in n.parents})

    def first_wrong_words(self) -> str:
        try:
            graph = self.graph()
        except Exception:
            return ""
        if graph is None or graph.first_wrong is None:
            return ""
        node = graph.nodes[graph.first_wrong]
        consumers = [n for n in graph.nodes if node.id in n.parents]
        name = f"`{node.label}`" if node.label else f"the {node.op or 'leaf'} node"
        sent = ""
        if consumers:
            ops = sorted({c.op for c in consumers})
            sent = f", which gets it from {', '.join(f'`{o}`' for o in ops)}"
        return (f"The first wrong gradient, in backward order, is at {name} (yours "
                f"{number(node.grad)}, expected {number(node.expected_grad or 0.0)}){sent}")


# --- the learner's file, run as a module (in the sandbox child only) -----------------------
API_NAMES = ("numerical_derivative", "Value", "zero_grad", "Module", "Neuron", "Layer", "MLP")


def _module_name(filename: str) -> str:
    """The learner's module's name: the file's, unless that would stand in for a module
    the checker itself imports (a learner's json.py, random.py, hypothesis.py)."""
    stem = os.path.splitext(os.path.basename(filename))[0]
    if not stem.isidentifier() or stem in sys.modules or stem in sys.stdlib_module_names:
        return "engine_under_check"
    try:
        importable = importlib.util.find_spec(stem) is not None  # hypothesis.py, numpy.py
    except (ImportError, ValueError):
        importable = True
    return "engine_under_check" if importable else stem


def load_learner(source: str, filename: str) -> tuple[Any, Any]:
    """Run the learner's file as a module: (Learner, None) or (None, CheckReport)."""
    from gradbox.build.report import CheckReport

    try:
        code = compile(source, filename, "exec")
    except SyntaxError as error:
        line = error.lineno
        text = f"SyntaxError: {error.msg}" + (f" (line {line})" if line else "")
        return None, CheckReport.failed_to_run(text, mistake="syntax-error", line=line)
    except ValueError as error:  # a NUL byte in the file
        return None, CheckReport.failed_to_run(f"not a Python file: {error}",
                                               mistake="syntax-error")
    module = types.ModuleType(_module_name(filename))
    module.__file__ = filename
    sys.modules[module.__name__] = module
    capture = Capture()
    ns = module.__dict__
    saved = sys.stdout
    sys.stdout = capture
    try:
        exec(code, ns)  # the learner's file, in this child only
        error = None
    except BaseException as caught:
        error = caught
    finally:
        sys.stdout = saved
    if error is not None:
        explained = explain_error(error, filename)
        return None, CheckReport.failed_to_run(
            f"Your file raised an error while it was run: {explained.message}",
            mistake=explained.mistake, line=explained.line)
    if not any(name in ns for name in API_NAMES):
        return None, CheckReport.failed_to_run(
            "Your file defines none of the names the stages check (`numerical_derivative`, "
            "`Value`, ...): nothing to check.", mistake="missing-name")
    return Learner({k: v for k, v in ns.items()}, filename, capture.text()), None
