"""What a check of the learner's engine found, as plain frozen records.

A `CheckReport` holds one `StageResult` per stage that ran, each with the `CaseResult`s of
its cases, in the order they ran. The failing case of a stage carries a `CaseGraph`: the
graph the learner's engine built, one `GraphNode` per node with the learner's value and
gradient and the expected ones beside them, and the first node that is wrong in backward
order -- the place to look.

These records are all that crosses from the sandbox's child process: `to_json()` gives
plain dicts, lists, strings and numbers (the object `gradbox check --json` prints, which a
course's autograder reads), and `from_json()` reads them back (never a pickle). The shape
is the issue's, plus what a view needs (`line`, `output`, `graph`; a report's `error`):

    {"passed": bool, "error": str | null, "line": int | null, "mistake": str | null,
     "stages": [{"stage": int, "title": str, "passed": bool,
                 "cases": [{"name": str, "passed": bool, "code": str, "message": str,
                            "mistake": str | null, "line": int | null, "output": str,
                            "graph": {"first_wrong": int | null,
                                      "nodes": [{"id", "op", "label", "parents", "data",
                                                 "grad", "expected_data",
                                                 "expected_grad"}]} | null,
                            "playground": str | null, "playground_variant": str | null}]}]}

`MISTAKES` lists the stable mistake ids, each with the rule it breaks in the article's
words; docs/build-it-yourself.md prints the same list.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MISTAKES",
    "MISTAKE_IDS",
    "CaseGraph",
    "CaseResult",
    "CheckReport",
    "GraphNode",
    "Mistake",
    "StageResult",
    "describe_mistake",
]


@dataclass(frozen=True)
class Mistake:
    """A stable id (what `--json` prints), what it means, and the article's rule."""

    id: str
    description: str
    rule: str = ""  # the article's section or rule it breaks ('gradients accumulate')


MISTAKES: tuple[Mistake, ...] = (
    Mistake("assign-not-accumulate", "a `_backward` assigns (`=`) a gradient instead of "
            "adding it (`+=`): a value used twice keeps only the last share",
            "gradients accumulate"),
    Mistake("not-topological", "`backward` does not fire the nodes in reverse topological "
            "order: a node passed its gradient on before all of its consumers had added "
            "theirs", "get the order wrong and it breaks silently"),
    Mistake("missing-radd", "no `__radd__`/`__rmul__` (or another reflected operator): "
            "`2 * a` and `sum([a, b])` fail", "operator overloading"),
    Mistake("radd-recursion", "a reflected operator written as `other + self`: Python "
            "asks `__radd__` again, forever", "operator overloading"),
    Mistake("number-not-wrapped", "a plain number is not wrapped as a `Value` at the door, "
            "so `a + 2` fails or builds a node without a gradient",
            "normalize the types at the door"),
    Mistake("tanh-slope-from-input", "the slope of `tanh` computed from the input "
            "(`1 - x**2`) instead of from the output (`1 - t**2`)",
            "why store a function instead of a number"),
    Mistake("wrong-local-derivative", "an op's `_backward` multiplies by the wrong local "
            "derivative (the op is named in the message)", "a node is a small delivery worker"),
    Mistake("wrong-forward", "an op computes the wrong value going forward",
            "the skeleton"),
    Mistake("contract", "a `Value` lacks a field of the fixed API (`data`, `grad`, `_prev` "
            "as a set of both parents, `_op`, `_backward`)", "the skeleton"),
    Mistake("wrong-derivative", "`numerical_derivative` does not return the central "
            "difference (f(x+h) - f(x-h)) / 2h", "the oracle"),
    Mistake("seed-not-one", "`backward` does not start with the output's own gradient "
            "set to 1 (d out / d out = 1)", "wake the workers from the output"),
    Mistake("grad-not-reset", "`zero_grad` misses some of the values (parameters) it is "
            "given, so their gradients keep the last step's", "why zero_grad every step"),
    Mistake("grad-reset-in-backward", "`backward` resets the leaves' gradients itself: "
            "two backward calls should add up, as in PyTorch", "why zero_grad every step"),
    Mistake("backward-twice-silent", "a second `backward` through ops that saved values "
            "runs silently instead of raising the freed-graph error",
            "why backward twice raises"),
    Mistake("retain-graph-ignored", "`backward(retain_graph=True)` still frees the graph "
            "(or the argument is missing), so a second backward fails",
            "why backward twice raises"),
    Mistake("freed-too-much", "a second `backward` through ops that save nothing (`+`) "
            "raises, though PyTorch lets it accumulate", "why backward twice raises"),
    Mistake("parameters-order", "`parameters()` does not list each neuron's weights then "
            "bias, layer by layer, neuron by neuron", "a neural network on top"),
    Mistake("module-zero-grad", "`Module.zero_grad()` misses some parameters",
            "why zero_grad every step"),
    Mistake("wrong-network", "`Neuron`/`Layer`/`MLP` compute the wrong output "
            "(the activation, the last layer's linearity, the sum)", "a neural network on top"),
    Mistake("trains-differently", "training on your engine does not follow gradbox's own "
            "engine on the same data and weights", "train it"),
    Mistake("timeout", "the code did not finish within the time limit (an endless loop, "
            "or a walk that never ends)", ""),
    Mistake("recursion", "Python's recursion limit was hit: a recursive walk (or an "
            "operator that calls itself) goes too deep", "topological order, iteratively"),
    Mistake("memory", "the code asked for more memory than the limit allows", ""),
    Mistake("crashed", "the process running your code ended without a result "
            "(`os._exit`, a signal)", ""),
    Mistake("syntax-error", "the file is not valid Python", ""),
    Mistake("missing-name", "the file does not define a name this stage needs "
            "(`Value`, `numerical_derivative`, `zero_grad`, `MLP` ...)", "the fixed API"),
    Mistake("error", "your code raised an exception this check did not expect", ""),
)
MISTAKE_IDS: tuple[str, ...] = tuple(m.id for m in MISTAKES)
_BY_ID = {m.id: m for m in MISTAKES}


def describe_mistake(mistake_id: str) -> Mistake:
    """The record of a stable id (KeyError for an unknown one)."""
    return _BY_ID[mistake_id]


def _number(x: Any) -> float:
    """A number from the wire: JSON has no nan/inf, so they travel as strings."""
    if isinstance(x, str):
        return float(x)
    return float(x)


def _wire(x: float | None) -> float | str | None:
    if x is None:
        return None
    return x if math.isfinite(x) else repr(float(x))  # 'nan', 'inf', '-inf'


def _text(x: Any) -> str | None:
    return None if x is None else str(x)


@dataclass(frozen=True)
class GraphNode:
    """One node of the graph the learner's engine built, as plain data.

    `data`/`grad` are the learner's numbers (nan where the learner's node held something
    that is not a number); `expected_*` gradbox's engine's on the same expression (None
    where there is nothing to compare, e.g. a constant the learner wrapped differently).
    """

    id: int
    op: str
    label: str
    parents: tuple[int, ...]
    data: float
    grad: float
    expected_data: float | None
    expected_grad: float | None

    @property
    def wrong(self) -> bool:
        """The learner's value or gradient differs from the expected one."""
        return _differs(self.data, self.expected_data) or _differs(self.grad, self.expected_grad)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "op": self.op, "label": self.label,
                "parents": list(self.parents), "data": _wire(self.data),
                "grad": _wire(self.grad), "expected_data": _wire(self.expected_data),
                "expected_grad": _wire(self.expected_grad)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GraphNode:
        def maybe(x: Any) -> float | None:
            return None if x is None else _number(x)
        return cls(int(d["id"]), str(d["op"]), str(d["label"]),
                   tuple(int(p) for p in d["parents"]), _number(d["data"]),
                   _number(d["grad"]), maybe(d["expected_data"]), maybe(d["expected_grad"]))


def _differs(mine: float, expected: float | None, tol: float = 1e-6) -> bool:
    if expected is None:
        return False
    if math.isnan(mine) or math.isnan(expected):
        return math.isnan(mine) != math.isnan(expected)
    if math.isinf(mine) or math.isinf(expected):
        return mine != expected
    return abs(mine - expected) > tol * max(1.0, abs(expected))


@dataclass(frozen=True)
class CaseGraph:
    """The failing case's graph: its nodes (each after its parents: a topological order,
    output last) and the index into `nodes` of the first wrong node in backward order,
    or None when every node agrees (the graph then shows the case, not a culprit)."""

    nodes: tuple[GraphNode, ...]
    first_wrong: int | None

    def to_json(self) -> dict[str, Any]:
        return {"first_wrong": self.first_wrong, "nodes": [n.to_json() for n in self.nodes]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CaseGraph:
        first = d.get("first_wrong")
        return cls(tuple(GraphNode.from_json(n) for n in d["nodes"]),
                   None if first is None else int(first))


@dataclass(frozen=True)
class CaseResult:
    """One case: its name, whether it passed, the code that ran (as the learner would
    type it), what it found in words, the mistake id (None when passed or unnamed), the
    line of the learner's file to look at, the learner's prints (capped) and the graph."""

    name: str
    passed: bool
    code: str
    message: str
    mistake: str | None = None
    line: int | None = None
    output: str = ""
    graph: CaseGraph | None = None
    # The case as the Playground's text ("a = 3.0\nb = a * a") and the broken variant to
    # show beside the engine ('assign', 'wrong order', or 'engine'); None when the case
    # is not an expression the Playground can hold (a loop, a network).
    playground: str | None = None
    playground_variant: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "code": self.code,
                "message": self.message, "mistake": self.mistake, "line": self.line,
                "output": self.output,
                "graph": None if self.graph is None else self.graph.to_json(),
                "playground": self.playground, "playground_variant": self.playground_variant}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CaseResult:
        graph = d.get("graph")
        line = d.get("line")
        mistake = d.get("mistake")
        return cls(str(d["name"]), bool(d["passed"]), str(d["code"]), str(d["message"]),
                   None if mistake is None else str(mistake),
                   None if line is None else int(line), str(d.get("output", "")),
                   None if graph is None else CaseGraph.from_json(graph),
                   _text(d.get("playground")), _text(d.get("playground_variant")))


@dataclass(frozen=True)
class StageResult:
    """The cases of one stage that ran, in order; passed when every one passed."""

    stage: int
    title: str
    passed: bool
    cases: tuple[CaseResult, ...]

    @property
    def first_failure(self) -> CaseResult | None:
        return next((c for c in self.cases if not c.passed), None)

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "title": self.title, "passed": self.passed,
                "cases": [c.to_json() for c in self.cases]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> StageResult:
        return cls(int(d["stage"]), str(d["title"]), bool(d["passed"]),
                   tuple(CaseResult.from_json(c) for c in d["cases"]))


@dataclass(frozen=True)
class CheckReport:
    """A whole check. `error` is set when the file could not be used at all (a syntax
    error, no `Value`, the child died before reading it): then `stages` may be empty,
    `line` points at the place and `mistake` names it. `gradbox check` exits 2 then,
    1 when a case failed, 0 when all passed."""

    passed: bool
    stages: tuple[StageResult, ...]
    error: str | None = None
    line: int | None = None
    mistake: str | None = None

    @property
    def first_failure(self) -> tuple[StageResult, CaseResult] | None:
        """The first failing case in stage order (all a view shows), with its stage."""
        for stage in self.stages:
            case = stage.first_failure
            if case is not None:
                return stage, case
        return None

    @property
    def stages_passed(self) -> int:
        """How many stages passed in a row from the first (the highest stage unlocked)."""
        count = 0
        for stage in self.stages:
            if not stage.passed:
                break
            count += 1
        return count

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "error": self.error, "line": self.line,
                "mistake": self.mistake, "stages": [s.to_json() for s in self.stages]}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CheckReport:
        line = d.get("line")
        error = d.get("error")
        mistake = d.get("mistake")
        return cls(bool(d["passed"]), tuple(StageResult.from_json(s) for s in d["stages"]),
                   None if error is None else str(error),
                   None if line is None else int(line),
                   None if mistake is None else str(mistake))

    @classmethod
    def failed_to_run(cls, error: str, *, mistake: str | None = None,
                      line: int | None = None) -> CheckReport:
        """A report for a file that could not be used at all."""
        return cls(False, (), error, line, mistake)
