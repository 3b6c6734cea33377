"""(c) of the checks: random expression graphs, shrunk to the smallest that fails.

Hypothesis draws small programs over the ops a stage has built (`x0 = Value(1.5)`,
`v2 = x0 * x1`, `L = v2.tanh() + x0`) and runs each on the learner's engine, on gradbox's
engine (`gradbox.autograd.engine`) and by a central difference. A program where the
learner's leaf gradients differ from gradbox's is a counterexample; Hypothesis shrinks it
to the smallest it can find, and that program is then run as an ordinary case (its code
shown, its graph drawn, the mistake named).

Before stage 6 each value is used once (a tree): reuse is what stage 6 is about, so an
engine that assigns instead of adding is not caught early by accident. Programs whose
numbers are unstable (a division by almost 0, relu next to its kink, gradbox's engine and
the central difference disagreeing) are skipped, never counted against the learner.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from gradbox.build.cases import Case
from gradbox.build.explain import close, number
from gradbox.build.report import CaseResult

__all__ = ["EXAMPLES", "Program", "program_code", "random_case"]

EXAMPLES = 60  # programs tried per random case (derandomized: the same ones every time)
LEAVES = (1.0, 2.0, -1.0, 0.5, -0.5, 1.5, -1.5, 3.0, -2.0)  # shrinks towards 1.0
UNARY = {"tanh": "{}.tanh()", "exp": "{}.exp()", "relu": "{}.relu()",
         "**": "{} ** 2", "**3": "{} ** 3", "**-1": "{} ** -1"}
BINARY = {"+": "{} + {}", "*": "{} * {}", "-": "{} - {}", "/": "{} / {}"}
CONSTANT = 2.0

Program = tuple[tuple[float, ...], tuple[tuple[str, int, int], ...]]


def _ops(case_ops: tuple[str, ...]) -> list[str]:
    ops = [op for op in BINARY if op in case_ops]
    for op in UNARY:
        if op.split("3")[0].split("-1")[0] in case_ops or op in case_ops:
            ops.append(op)
    return ops


def _layout(program: Program, reuse: bool) -> list[tuple[str, str, str | None]]:
    """The program's steps as (name, op, left, right) over value names; a binary op
    short of a second unused value takes the number CONSTANT (wrapped at the door)."""
    leaves, steps = program
    names = [f"x{i}" for i in range(len(leaves))]
    unused = list(names)
    out = []
    for k, (op, i, j) in enumerate(steps):
        pool = names if reuse else unused
        if not pool:
            break
        left = pool[i % len(pool)]
        if not reuse:
            unused.remove(left)
        right: str | None = None
        if op in BINARY:
            pool = names if reuse else unused
            if pool and j != 7:
                right = pool[j % len(pool)]
                if not reuse:
                    unused.remove(right)
            else:
                right = repr(CONSTANT)
        name = f"v{len(leaves) + k}"
        names.append(name)
        unused.append(name)
        out.append((name, op, left, right))
    return out


def program_code(program: Program, reuse: bool, backward: str) -> tuple[str, str, list[str]]:
    """(code, the expression in one line, the leaves the output depends on)."""
    leaves, _steps = program
    layout = _layout(program, reuse)
    lines = [f"x{i} = Value({x!r})" for i, x in enumerate(leaves)]
    infix: dict[str, str] = {f"x{i}": f"x{i}" for i in range(len(leaves))}
    uses: dict[str, set[str]] = {f"x{i}": {f"x{i}"} for i in range(len(leaves))}
    for idx, (name, op, left, right) in enumerate(layout):
        target = "L" if idx == len(layout) - 1 else name
        if op in BINARY:
            lines.append(f"{target} = {BINARY[op].format(left, right)}")
            r = infix.get(right, right) if right is not None else ""
            infix[name] = f"({infix[left]} {op} {r})"
            uses[name] = uses[left] | uses.get(right or "", set())
        else:
            lines.append(f"{target} = {UNARY[op].format(left)}")
            shown = UNARY[op].format(infix[left])
            infix[name] = f"({shown})"
            uses[name] = set(uses[left])
    last = layout[-1][0]
    lines.append("L.backward()" if backward == "learner" else
                 "pass_gradients(L)  # your _backward closures, from L back to the leaves")
    expression = infix[last]
    if expression.startswith("(") and expression.endswith(")"):
        expression = expression[1:-1]
    return "\n".join(lines), expression, sorted(uses[last], key=lambda n: int(n[1:]))


def _forward(program: Program, reuse: bool, values: list[float]) -> tuple[float, bool]:
    """The program's output for leaf values `values` on gradbox's engine, and whether its
    numbers are tame enough to judge by (no division by ~0, relu away from its kink)."""
    from gradbox.autograd.engine import Value
    env: dict[str, Any] = {f"x{i}": Value(v) for i, v in enumerate(values)}
    ok = True
    out = None
    for name, op, left, right in _layout(program, reuse):
        a = env[left]
        if op in BINARY:
            b = env[right] if right in env else float(right)  # type: ignore[arg-type]
            bd = b.data if hasattr(b, "data") else b
            if op == "/" and abs(bd) < 0.2:
                ok = False
            out = {"+": a + b, "*": a * b, "-": a - b, "/": a / b if abs(bd) > 1e-12
                   else a}[op]
        else:
            if op == "**-1" and abs(a.data) < 0.2:
                ok = False
            if op == "relu" and abs(a.data) < 1e-3:
                ok = False
            if op == "exp" and a.data > 10:
                ok = False
                out = a
            elif op == "**-1" and abs(a.data) < 1e-12:
                out = a
            else:
                out = {"tanh": a.tanh, "exp": a.exp, "relu": a.relu,
                       "**": lambda a=a: a ** 2, "**3": lambda a=a: a ** 3,
                       "**-1": lambda a=a: a ** -1}[op]()
        if not math.isfinite(out.data) or abs(out.data) > 1e4:
            ok = False
        env[name] = out
    assert out is not None
    return float(out.data), ok


def _truth(program: Program, reuse: bool, leaves: list[str]) -> dict[str, float] | None:
    """Each leaf's gradient by gradbox's engine, checked by a central difference; None
    when the program is not tame or the two disagree (not fair to judge by)."""
    from gradbox.autograd.engine import Value
    values = list(program[0])
    _out, ok = _forward(program, reuse, values)
    if not ok:
        return None
    code, _expr, _ = program_code(program, reuse, "learner")
    ns: dict[str, Any] = {"Value": Value}
    exec(compile(code, "<random>", "exec"), ns)
    grads = {name: float(ns[name].grad) for name in leaves}
    h = 1e-6
    for name in leaves:
        i = int(name[1:])
        up = values.copy()
        down = values.copy()
        up[i] += h
        down[i] -= h
        numeric = (_forward(program, reuse, up)[0] - _forward(program, reuse, down)[0]) / (2 * h)
        if not close(numeric, grads[name], 1e-4):
            return None
    return grads


def random_case(case: Case, learner: Any, run_case: Callable[[Case, Any], CaseResult]
                ) -> CaseResult:
    """Search for a program the learner's engine gets wrong; run the smallest found as an
    ordinary case. Passed when none of `EXAMPLES` programs fails."""
    from hypothesis import HealthCheck, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample

    from gradbox.build.checks import Capture, helpers, run_code

    reuse = bool(case.option("reuse"))
    backward = str(case.option("backward"))
    ops = _ops(case.ops)
    strategy = st.tuples(
        st.lists(st.sampled_from(LEAVES), min_size=1, max_size=4).map(tuple),
        st.lists(st.tuples(st.sampled_from(ops), st.integers(0, 7), st.integers(0, 7)),
                 min_size=1, max_size=6).map(tuple))
    tried = [0]
    failing: list[Program] = []  # every counterexample, smallest last

    def fails(program: Program) -> bool:
        code, _expr, leaves = program_code(program, reuse, backward)
        try:
            truth = _truth(program, reuse, leaves)
        except (ArithmeticError, ValueError):  # not a program to judge by
            truth = None
        if truth is None:
            return False
        tried[0] += 1
        ns = {**learner.ns, **helpers()}
        if run_code(code, ns, Capture(cap=0)) is not None:  # prints dropped: 60 runs
            wrong = True
        else:
            try:
                wrong = not all(close(float(ns[n].grad), truth[n]) for n in leaves)
            except (TypeError, ValueError, AttributeError):
                wrong = True
        if wrong:
            failing.append(program)
        return wrong

    try:
        found = find(strategy, fails, settings=settings(
            max_examples=EXAMPLES, database=None, derandomize=True, deadline=None,
            suppress_health_check=list(HealthCheck)))
    except NoSuchExample:
        return CaseResult(case.name, True, case.code,
                          f"passed: {tried[0]} random expressions agree with gradbox's "
                          "engine and the central difference")
    except Exception:  # Flaky: the learner's engine answered the same program two ways
        if not failing:  # (a set's order that changes from run to run); the last found
            raise
        found = failing[-1]
    code, expression, leaves = program_code(found, reuse, backward)
    truth = _truth(found, reuse, leaves) or {}
    small = Case(case.name, code, case.about, case.needs,
                 compare=tuple(f"{n}.grad" for n in leaves), root="L")
    result = run_case(small, learner)
    if result.passed:  # cannot happen unless the learner's engine is not deterministic
        return replace(result, passed=False, message=f"`{expression}` gave different "
                       "gradients on two runs of the same code.")
    agreed = ", ".join(f"{n}.grad = {number(v)}" for n, v in truth.items())
    return replace(result, message=f"The smallest failing expression found: L = "
                   f"{expression}. {result.message} (gradbox's engine and the central "
                   f"difference agree: {agreed}.)")
