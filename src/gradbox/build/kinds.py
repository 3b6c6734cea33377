"""What each kind of case checks (`gradbox.build.cases.KINDS`), and `run_case`.

`compare` runs the code on the learner's names and on the reference and compares;
`derivative` checks stage 0's oracle; `contract` the fields and `_prev` of Values by
identity; `order` which nodes `backward` fires and when (each after all its consumers);
`raises` a second backward that must or must not raise; `random` and `train` have modules
of their own (`gradbox.build.randomgraphs`, `gradbox.build.train`).

Runs in the sandbox's child only (`gradbox.build.child`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from gradbox.build.cases import Case
from gradbox.build.checks import (
    CASE_FILE,
    CASE_MISTAKE,
    Learner,
    Run,
    case_line,
    op_method,
    run_code,
    see,
)
from gradbox.build.explain import Explained, close, explain_error, numbers
from gradbox.build.graphs import as_number, parents_of, topological
from gradbox.build.report import CaseResult

__all__ = ["KIND_RUNNERS", "run_case"]

# A RuntimeError in these cases is a graph freed where PyTorch frees nothing (`+`).
FREED_TOO_MUCH = ("backward-twice-adds", "zero-grad-then-backward")


def _compare(run: Run) -> CaseResult:
    error = run.run()
    if isinstance(error, RuntimeError) and run.case.name in FREED_TOO_MUCH:
        return run.result(False, "`+` saved nothing for its backward, so a second backward "
                          "through it works in PyTorch (and adds again); your code raised "
                          f"RuntimeError: {error}{see('freed-too-much')}.", "freed-too-much")
    if error is not None:
        return run.error(error)
    return run.compare()


def _derivative(run: Run) -> CaseResult:
    try:
        raw = run_value(run, run.case.code)
    except BaseException as error:
        return run.error(error)
    if raw is None:
        return run.result(False, f"`{run.case.code}` returned None: does "
                          "`numerical_derivative` `return` the slope?", "wrong-derivative",
                          graph=False)
    mine = as_number(raw)
    expected = float(run.case.option("expected"))  # type: ignore[arg-type]
    tolerance = float(run.case.option("tolerance"))  # type: ignore[arg-type]
    if abs(mine - expected) <= tolerance:
        return run.result(True)
    f, x, h = _derivative_parts(run.case.code)
    words = ""
    if f is not None and close(mine, (f(x + h) - f(x)) / h, 1e-9):
        words = " That is the one-sided difference (f(x + h) − f(x)) / h: step to both " \
                "sides, (f(x + h) − f(x − h)) / 2h."
    elif f is not None and h != 1e-6 and close(mine, (f(x + 1e-6) - f(x - 1e-6)) / 2e-6, 1e-6):
        words = f" That is the slope with h = 1e-6: use the h it is given (here {h:g})."
    shown, due = numbers(mine, expected)
    return run.result(False, f"`{run.case.code}` gives {shown} where it should give "
                      f"{due} (to {tolerance:g}).{words}", "wrong-derivative",
                      graph=False)


def run_value(run: Run, expression: str) -> Any:
    saved = sys.stdout
    sys.stdout = run.capture
    try:
        return eval(compile(expression, CASE_FILE, "eval"), run.ns)
    finally:
        sys.stdout = saved


def _derivative_parts(code: str) -> tuple[Callable[[float], float] | None, float, float]:
    """The f, x and h of a derivative case (for naming a one-sided difference)."""
    probe: dict[str, Any] = {}
    try:
        exec("def numerical_derivative(f, x, h=1e-6):\n    return f, x, h\n"
             f"parts = {code}", probe)
        return probe["parts"]
    except Exception:
        return None, 0.0, 1e-6


def _contract(run: Run) -> CaseResult:
    error = run.run()
    if error is not None:
        return run.error(error)
    what = run.case.option("what")
    cls = run.ns.get("Value")
    problems: list[tuple[str, str]] = []  # (words, mistake)

    def check_node(name: str, node: Any, parents: tuple[Any, ...], op: str | None,
                   count: int | None = None) -> None:
        if node is None:
            problems.append((f"`{name}` is None, not a Value: does the op's method end with "
                             "`return out`?", "contract"))
            return
        if not isinstance(node, cls):
            problems.append((f"`{name}` is a {type(node).__name__}, not a Value", "contract"))
            return
        for attr in ("data", "grad", "_prev", "_op", "_backward"):
            if not hasattr(node, attr):
                problems.append((f"`{name}` has no `{attr}`", "contract"))
                return
        prev = node._prev
        if not isinstance(prev, set | frozenset):
            problems.append((f"`{name}._prev` is a {type(prev).__name__}; it should be a "
                             "set (`set(_children)`)", "contract"))
            return
        for p in prev:
            if not isinstance(p, cls):
                problems.append((f"`{name}._prev` holds {p!r}, a plain "
                                 f"{type(p).__name__}: numbers must be wrapped as Values at "
                                 "the door", "number-not-wrapped"))
                return
        for p in parents:
            if not any(x is p for x in prev):
                problems.append((f"`{name}._prev` does not hold the very object it was built "
                                 "from (by identity)", "contract"))
                return
        count = len({id(p) for p in parents}) if count is None else count
        if len(prev) != count:
            problems.append((f"`{name}._prev` holds {len(prev)} values; it should hold "
                             f"{count}", "contract"))
            return
        if not isinstance(node._op, str):
            problems.append((f"`{name}._op` should be a string label", "contract"))
        elif op is not None and node._op != op:
            problems.append((f"`{name}._op` is {node._op!r}; it should be {op!r}", "contract"))
        if not callable(node._backward):
            problems.append((f"`{name}._backward` cannot be called", "contract"))

    ns = run.ns
    if what == "leaf":
        a = ns["a"]
        check_node("a", a, (), "")
        if not problems:
            if as_number(a.data) != 3.0:
                problems.append(("`a.data` should be 3.0", "contract"))
            elif not isinstance(a.grad, int | float) or a.grad != 0:
                problems.append((f"`a.grad` is {a.grad!r}; a new Value's gradient is 0.0",
                                 "contract"))
            else:
                try:
                    a._backward()
                except Exception as error:
                    return run.failed(Explained(
                        f"`a._backward()` raised {type(error).__name__}: {error}. A leaf's "
                        "`_backward` takes no arguments and does nothing.", "contract",
                        explain_error(error, run.learner.filename).line))
    elif what == "children":
        check_node("c", ns["c"], (ns["a"], ns["b"]), "+")
    elif what == "op":
        check_node("c", ns["c"], (ns["a"], ns["b"]), None)
    elif what == "wrapped":
        for name in ("c", "d"):
            node = ns[name]
            check_node(name, node, (ns["a"],), None, count=2)
            if problems:
                break
    if problems:
        words, mistake = problems[0]
        op = run.case.option("op")
        # An op's result that is wrong: look in the op's method, not in __init__.
        line = run.line_of(getattr(cls, op_method(op), None)) if op else None
        return run.result(False, words if words.endswith("?") else f"{words}.", mistake, line)
    return run.compare()


def _order(run: Run) -> CaseResult:
    """Which nodes `backward` fires, in which order: each after all of its consumers."""
    lines = run.case.code.rstrip().split("\n")
    build, last = "\n".join(lines[:-1]), lines[-1]
    error = run_code(build, run.ns, run.capture)
    if error is not None:
        return run.error(error)
    root = run.ns["L"]
    nodes = topological(root) or []
    fired: list[int] = []
    names = {id(v): k for k, v in run.ns.items() if any(v is n for n in nodes)}
    for node in nodes:
        if not parents_of(node):
            continue
        original = node._backward

        def wrapper(node: Any = node, original: Any = original) -> Any:
            fired.append(id(node))
            return original()
        try:
            node._backward = wrapper
        except Exception:  # a node we cannot watch is not watched
            continue
    error = run_code(last, run.ns, run.capture)
    if error is not None:
        return run.error(error)
    consumers: dict[int, list[int]] = {id(n): [] for n in nodes}
    for n in nodes:
        for p in parents_of(n):
            consumers.setdefault(id(p), []).append(id(n))
    seen: set[int] = set()
    for i, node_id in enumerate(fired):
        name = names.get(node_id, "a node")
        if node_id in seen:
            return run.result(False, f"Your `backward` fires `{name}` twice: a node must "
                              "pass its gradient on once, after all its consumers"
                              f"{see('not-topological')}.", "not-topological")
        seen.add(node_id)
        early = [c for c in consumers.get(node_id, []) if c not in fired[:i]]
        if early:
            waiting = " and ".join(f"`{names.get(c, 'a node')}`" for c in early)
            uses = "which uses it, has" if len(early) == 1 else "which use it, have"
            return run.result(False, f"Your `backward` fires `{name}` before {waiting}, "
                              f"{uses} passed {'its' if len(early) == 1 else 'their'} "
                              f"gradient to it: not reverse topological order"
                              f"{see('not-topological')}.", "not-topological")
    missing = [names.get(id(n), "a node") for n in nodes
               if parents_of(n) and id(n) not in seen]
    if missing:
        return run.result(False, f"Your `backward` never fires `{missing[0]}`: every node's "
                          "`_backward` must run once.", "not-topological")
    return run.result(True)


def _raises(run: Run) -> CaseResult:
    should_raise = bool(run.case.option("raises"))
    error = run.run()
    last = len(run.case.code.rstrip().split("\n"))
    if should_raise:
        if error is None:
            return run.result(False, "The second `L.backward()` ran without a word. This op "
                              "saved values for its backward, and backward frees them: a "
                              "second call must raise RuntimeError (PyTorch's 'Trying to "
                              "backward through the graph a second time')"
                              f"{see('backward-twice-silent')}.",
                              "backward-twice-silent")
        if isinstance(error, RuntimeError) and case_line(error) == last:
            return run.result(True)
        if isinstance(error, RuntimeError):
            return run.result(False, f"The first `backward` already raised: {error}.",
                              "freed-too-much", explain_error(error, run.learner.filename).line)
        return run.error(error)
    if error is not None:
        explained = explain_error(error, run.learner.filename)
        if isinstance(error, RuntimeError):
            mistake = CASE_MISTAKE.get(run.case.name, "error")
            words = {"retain-graph-ignored": "`backward(retain_graph=True)` still freed the "
                     "graph: with retain_graph the second call must work",
                     "freed-too-much": "`+` saved nothing for its backward, so a second "
                     "backward through it works in PyTorch (and adds again)"}.get(mistake, "")
            # Where it raised is the freeing; the place to look is backward itself.
            return run.result(False, f"{words}. Your code raised RuntimeError: {error}"
                              f"{see(mistake)}.", mistake)
        return run.failed(explained)
    return run.compare()


KIND_RUNNERS: dict[str, Callable[[Run], CaseResult]] = {
    "compare": _compare, "contract": _contract, "order": _order, "raises": _raises,
    "derivative": _derivative,
}


def run_case(case: Case, learner: Learner) -> CaseResult:
    """Run one case on the learner's names; a CaseResult, whatever the learner's code does
    (short of ending the process: the sandbox says what happened then)."""
    missing = [n for n in case.needs if n not in learner.ns]
    if missing:
        return CaseResult(case.name, False, case.code,
                          f"Your file defines no `{missing[0]}`: this stage needs it "
                          "(docs/build-it-yourself.md lists the names).", "missing-name")
    try:
        if case.kind == "random":  # programs of its own, each run as an ordinary case
            from gradbox.build.randomgraphs import random_case
            return random_case(case, learner, run_case)
        if case.kind == "train":
            from gradbox.build.train import train_case
            return train_case(case, learner)
        return KIND_RUNNERS[case.kind](Run(case, learner))
    except MemoryError:
        return CaseResult(case.name, False, case.code, "MemoryError: your code asked for "
                          "more memory than the limit allows.", "memory")
    except RecursionError as error:
        explained = explain_error(error, learner.filename)
        return CaseResult(case.name, False, case.code, explained.message, explained.mistake,
                          explained.line)
    except Exception as error:
        # Raised while the checker read the learner's objects (a property that raises, a
        # _prev that is not a collection): their doing, said as such.
        explained = explain_error(error, learner.filename)
        return CaseResult(case.name, False, case.code, "While gradbox read your values: "
                          f"{explained.message}", explained.mistake, explained.line)
