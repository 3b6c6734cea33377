"""The playground's parser: right values and gradients, and a clear rejection for the rest."""

import ast
import math
from pathlib import Path

import pytest

import gradbox.teaching.expression as expression_module
from gradbox.autograd import ops
from gradbox.autograd.gradcheck import gradient_check
from gradbox.teaching.expression import (
    FUNCTIONS,
    MAX_DEPTH,
    MAX_EXPONENT,
    MAX_LENGTH,
    ExpressionError,
    default_value,
    derivative_formula,
    parse,
)
from gradbox.teaching.pitfalls import backward_assign


def finite_differences(text: str, values: dict[str, float], eps: float = 1e-6
                       ) -> dict[str, float]:
    slopes = {}
    for name in values:
        plus = parse(text, {**values, name: values[name] + eps}).root.data
        minus = parse(text, {**values, name: values[name] - eps}).root.data
        slopes[name] = (plus - minus) / (2 * eps)
    return slopes


def gradients(text: str, values: dict[str, float]) -> dict[str, float]:
    expr = parse(text, values)
    expr.root.backward()
    return {name: leaf.grad for name, leaf in expr.leaves.items()}


# --- values and gradients ------------------------------------------------------------
@pytest.mark.parametrize(("text", "values", "expected"), [
    ("tanh(a*b + c)", {"a": 0.5, "b": -1.5, "c": 0.25}, math.tanh(0.5 * -1.5 + 0.25)),
    ("a + a", {"a": 3.0}, 6.0),
    ("(x1*w1 + x2*w2 + b).tanh()", {"x1": 2.0, "w1": -3.0, "x2": 0.0, "w2": 1.0, "b": 6.88},
     math.tanh(2.0 * -3.0 + 6.88)),
    ("exp(x) / (1 + exp(x))", {"x": 0.7}, 1 / (1 + math.exp(-0.7))),
    ("-a ** 2 + relu(b) - sigmoid(-c) * abs(a) / log(b)", {"a": -1.5, "b": 2.0, "c": 0.3},
     -(1.5**2) + 2.0 - 1 / (1 + math.exp(0.3)) * 1.5 / math.log(2.0)),
])
def test_values_and_gradients_match_finite_differences(text: str, values: dict[str, float],
                                                        expected: float) -> None:
    expr = parse(text, values)
    assert expr.root.data == pytest.approx(expected, rel=1e-14)
    assert set(expr.names) == set(values)
    analytic = gradients(text, values)
    numeric = finite_differences(text, values)
    for name in values:
        assert analytic[name] == pytest.approx(numeric[name], rel=1e-6, abs=1e-8), name


def test_known_gradients() -> None:
    g = gradients("tanh(a*b + c)", {"a": 0.5, "b": -1.5, "c": 0.25})
    slope = 1 - math.tanh(-0.5) ** 2
    assert g == pytest.approx({"a": -1.5 * slope, "b": 0.5 * slope, "c": slope}, rel=1e-15)
    s = 1 / (1 + math.exp(-0.7))
    assert gradients("exp(x) / (1 + exp(x))", {"x": 0.7})["x"] == \
        pytest.approx(s * (1 - s), rel=1e-13)
    # micrograd's neuron: x1 gets w1 * (1 - o^2), x2's weight gets x2 = 0.
    g = gradients("(x1*w1 + x2*w2 + b).tanh()",
                  {"x1": 2.0, "w1": -3.0, "x2": 0.0, "w2": 1.0, "b": 6.8813735870195432})
    assert g["x1"] == pytest.approx(-1.5, rel=1e-6)
    assert g["w1"] == pytest.approx(1.0, rel=1e-6)
    assert g["w2"] == 0.0


def test_a_name_used_twice_is_one_leaf() -> None:
    expr = parse("a + a", {"a": 3.0})
    a = expr.leaves["a"]
    assert list(expr.leaves) == ["a"]
    assert expr.root.inputs == (a, a)
    assert a.label == "a"
    expr.root.backward()
    assert a.grad == 2.0


def test_leaves_are_listed_in_order_of_first_appearance() -> None:
    assert parse("b + a*c + tanh(a) - d**2").names == ("b", "a", "c", "d")


def test_functions_and_methods_build_the_same_node() -> None:
    for name in FUNCTIONS:
        as_function = parse(f"{name}(x)", {"x": 0.8}).root
        as_method = parse(f"(x).{name}()", {"x": 0.8}).root
        bare_method = parse(f"x.{name}()", {"x": 0.8}).root
        assert as_function.data == as_method.data == bare_method.data
        assert as_function.op == as_method.op == bare_method.op == name


def test_numbers_unary_signs_and_powers() -> None:
    assert parse("-2 * a", {"a": 3.0}).root.inputs[0].data == -2.0  # one constant, no neg node
    assert parse("-a", {"a": 3.0}).root.op == "neg"
    plus = parse("+a", {"a": 3.0})
    assert plus.root is plus.leaves["a"]
    assert parse("a ** 2", {"a": 3.0}).root.op == "**2"
    assert parse("a ** -1", {"a": 4.0}).root.data == 0.25
    assert parse("a ** (-0.5)", {"a": 4.0}).root.data == 0.5
    assert parse("(-2) ** 2").root.data == 4.0
    assert parse(f"a ** {MAX_EXPONENT}", {"a": 2.0}).root.data == 2.0**MAX_EXPONENT
    assert parse(f"a ** -{MAX_EXPONENT}", {"a": 2.0}).root.data == 2.0**-MAX_EXPONENT
    assert parse("1.5e2 + 3", {}).root.data == 153.0


def test_whitespace_and_line_breaks_inside_parentheses() -> None:
    assert parse("  \n  ( a\n  * b )  ", {"a": 2.0, "b": 3.0}).root.data == 6.0


# --- variables' values ------------------------------------------------------------------
def test_default_values_are_fixed_per_name_and_positive() -> None:
    names = ["a", "b", "c", "x", "y", "w1", "w2", "x1", "x2", "bias"]
    for name in names:
        assert 0.2 <= default_value(name) <= 1.2
        assert default_value(name) == default_value(name)
    assert len({default_value(n) for n in names}) > 3  # not one value for everything
    expr = parse("a * b + log(c)")
    assert expr.values == {n: default_value(n) for n in ("a", "b", "c")}


def test_given_values_override_defaults_and_extras_are_ignored() -> None:
    expr = parse("a * b", {"a": -4.0, "unused": 9.0})
    assert expr.values == {"a": -4.0, "b": default_value("b")}
    assert expr.text == "a * b"


def test_rebuild_reuses_the_leaves_with_their_current_data() -> None:
    expr = parse("a * a + b", {"a": 2.0, "b": 1.0})
    expr.leaves["a"].data = 5.0
    root = expr.rebuild()
    assert root.data == 26.0
    assert root is not expr.root
    assert root.inputs[0].inputs[0] is expr.leaves["a"]


def test_rebuild_serves_the_gradient_check() -> None:
    expr = parse("tanh(a*b + c) * a + exp(-b) / c", {"a": 0.4, "b": -0.9, "c": 1.3})
    leaves = list(expr.leaves.values())
    assert gradient_check(expr.rebuild, leaves, expr.names).passed()
    assert not gradient_check(expr.rebuild, leaves, expr.names, backward=backward_assign).passed()


# --- rejections ------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "fragment", "column"), [
    ("__import__('os')", "unknown function '__import__'", 1),
    ("a.__class__", "attribute access ('.__class__')", 2),
    ("a.__class__.__mro__", "'.__mro__'", 12),
    ("9**9**9", "exponent must be a number", 4),
    ("a**b", "exponent must be a number", 4),
    ("a ** 11", "exponent 11 is too large", 6),
    ("a ** 1e9", "too large", 6),
    ('"s"', "strings are not allowed", 1),
    ("a + f'{a}'", "strings are not allowed", 5),
    ("a[0]", "indexing", 1),
    ("foo(a)", "unknown function 'foo'", 1),
    ("a + bar(1)", "unknown function 'bar'", 5),
    ("a.foo()", "unknown method '.foo()'", 2),
    ("a +* b", "invalid syntax", 4),
    ("a +", "invalid syntax", 4),
    ("(a", "never closed", 1),
    ("tanh(a, b)", "exactly one argument (2 given)", 1),
    ("tanh()", "exactly one argument (0 given)", 1),
    ("tanh(x=1)", "keyword arguments", 6),
    ("a.tanh(1)", "takes no arguments", 1),
    ("a.tanh", "call it as .tanh()", 2),
    ("tanh + 1", "tanh is a function", 1),
    ("lambda: 1", "lambda", 1),
    ("[x for x in y]", "comprehensions", 1),
    ("a < b", "comparisons", 1),
    ("a and b", "'and' and 'or'", 1),
    ("a if b else c", "conditional", 1),
    ("(a := 1)", "assignment", 2),
    ("a, b", "tuples", 1),
    ("a % b", "'%' is not supported", 1),
    ("~a", "'~' is not supported", 1),
    ("True + a", "True is not a number", 1),
    ("1j", "complex", 1),
    ("1e400", "too large", 1),
    ("(a + b)(c)", "only these functions can be called", 2),
])
def test_rejections_say_what_and_where(text: str, fragment: str, column: int) -> None:
    with pytest.raises(ExpressionError) as info:
        parse(text)
    error = info.value
    assert fragment in error.message
    assert (error.line, error.position) == (1, column)
    assert f"column {column}" in str(error)


def test_the_parser_never_evaluates_user_text() -> None:
    tree = ast.parse(Path(expression_module.__file__).read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    assert not {call.func.id for call in calls} & {"eval", "exec", "compile", "__import__"}
    # getattr only with a fixed attribute name, never one taken from the text.
    for call in calls:
        if call.func.id == "getattr":
            assert isinstance(call.args[1], ast.Constant)


def test_an_error_position_on_a_later_line_names_the_line() -> None:
    with pytest.raises(ExpressionError) as info:
        parse("(a +\n  b.__dict__)")
    assert (info.value.line, info.value.position) == (2, 4)
    assert "line 2, column 4" in str(info.value)


def test_positions_count_the_users_characters() -> None:
    # Leading whitespace is stripped before parsing; non-ASCII names are several bytes.
    with pytest.raises(ExpressionError) as info:
        parse("   a.__class__")
    assert info.value.position == 5
    with pytest.raises(ExpressionError) as info:
        parse("αβ + [1]")
    assert (info.value.position, info.value.end) == (6, 9)
    with pytest.raises(ExpressionError) as info:
        parse("\n\n  a +* b")
    assert (info.value.line, info.value.position) == (3, 6)


def test_a_line_break_outside_parentheses_gets_a_hint() -> None:
    with pytest.raises(ExpressionError, match="line break"):
        parse("a +\n b")


@pytest.mark.parametrize(("text", "fragment"), [
    ("(" * 500 + "a" + ")" * 500, "nested too deeply"),
    ("-" * 5000 + "a", "too long"),
    ("-" * 1500 + "a", "nested too deeply"),
    ("+" * 1999 + "1", "nested too deeply"),
    ("a+" * 500 + "a", "nested too deeply"),
    ("x" * (MAX_LENGTH + 1), "too long"),
    ("", "empty"),
    ("  \n ", "empty"),
])
def test_oversized_input_is_rejected_without_crashing(text: str, fragment: str) -> None:
    with pytest.raises(ExpressionError, match=fragment) as info:
        parse(text)
    assert info.value.position >= 1


def test_deep_brackets_point_at_the_first_bracket_too_many() -> None:
    with pytest.raises(ExpressionError) as info:
        parse("(" * 500 + "a" + ")" * 500)
    assert info.value.position == MAX_DEPTH + 1
    assert parse("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH, {"a": 0.5}).root.data == 0.5


def test_a_parser_that_gives_up_becomes_an_expression_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def overflow(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded during ast construction")

    monkeypatch.setattr(expression_module.ast, "parse", overflow)
    with pytest.raises(ExpressionError, match="nested too deeply"):
        parse("a")


@pytest.mark.parametrize(("text", "values", "fragment", "column"), [
    ("1 + log(a)", {"a": -1.0}, "log", 5),
    ("b / (a - a)", {"a": 2.0}, "division by zero", 1),
    ("a ** -1", {"a": 0.0}, "negative power", 1),
    ("a ** 0.5", {"a": -4.0}, "not a real number", 1),
    ("a ** 10", {"a": 1e300}, "too large", 1),
])
def test_expressions_that_cannot_be_evaluated(text: str, values: dict[str, float],
                                              fragment: str, column: int) -> None:
    with pytest.raises(ExpressionError, match=fragment) as info:
        parse(text, values)
    assert info.value.position == column


def test_text_must_be_a_string() -> None:
    with pytest.raises(TypeError):
        parse(42)  # type: ignore[arg-type]


# --- what the app shows --------------------------------------------------------------------
def test_every_op_an_expression_builds_has_a_formula() -> None:
    expr = parse("-(a*b + c/d)**2 + abs(a) - relu(b).exp() + log(c).tanh().sigmoid()",
                 {"a": 0.5, "b": 1.5, "c": 2.0, "d": -0.5})
    ops = {node.op for node in expr.root.topological_order()}
    assert {"+", "*", "**2", "**-1", "neg", "abs", "relu", "exp", "log", "tanh",
            "sigmoid", ""} <= ops
    for op in ops:
        assert derivative_formula(op)
    assert derivative_formula("**2") == "∂(a^2)/∂a = 2 · a^1"


def test_formulas_cover_the_engine_ops() -> None:
    for op in ("+", "*", "**3", "neg", "abs", "tanh", "exp", "log", "sin", "relu", "sigmoid",
               "sum", "mean"):
        assert derivative_formula(op) == ops.formula(op)
    assert derivative_formula("tanh") == "∂tanh(a)/∂a = 1 − tanh(a)² = 1 − out²"
    with pytest.raises(KeyError):
        derivative_formula("cos")


def test_function_names() -> None:
    assert FUNCTIONS == ("tanh", "exp", "log", "sin", "relu", "sigmoid", "abs")


# --- chains of named statements -----------------------------------------------------------
def test_a_chain_names_intermediate_values_and_reuses_them() -> None:
    expr = parse("a = 1; b = a + a; c = b + b")
    assert expr.names == ("a",)
    assert expr.literals == {"a": 1.0}
    b, c = expr.intermediates["b"], expr.intermediates["c"]
    assert expr.root is c and c.data == 4.0
    assert c.inputs == (b, b)  # one node b, used twice: the graph the wrong order breaks
    assert (b.label, c.label) == ("b", "c")
    expr.root.backward()
    assert expr.leaves["a"].grad == 4.0


def test_a_chain_on_several_lines_ends_in_a_bare_expression() -> None:
    expr = parse("h = tanh(x*w)\nout = h*v + h*u\nout + 1", {"x": 0.5, "w": 2.0, "v": 3.0,
                                                                 "u": -1.0})
    h = math.tanh(1.0)
    assert expr.root.data == pytest.approx(h * 2.0 + 1, rel=1e-15)
    assert expr.names == ("x", "w", "v", "u")
    expr.root.backward()
    assert expr.leaves["v"].grad == pytest.approx(h, rel=1e-15)


def test_given_values_beat_the_literal_and_rebuild_follows_the_chain() -> None:
    expr = parse("a = 1; b = a * a; b + b", {"a": 3.0})
    assert expr.root.data == 18.0
    expr.leaves["a"].data = 2.0
    assert expr.rebuild().data == 8.0
    assert gradient_check(expr.rebuild, [expr.leaves["a"]], ["a"]).passed()


@pytest.mark.parametrize(("text", "fragment", "column"), [
    ("a = 1; a = 2", "'a' is already assigned", 8),
    ("b = a + 1; a = 2", "'a' is used before this assignment", 12),
    ("b = b + 1", "'b' is used before this assignment", 1),
    ("a; b", "only the last statement can be a bare expression", 1),
    ("import os", "this statement is not allowed", 1),
    ("a += 1", "+= and the like are not allowed", 1),
    ("x = y = 1", "assign to one plain name", 5),
    ("a.b = 1", "assign to one plain name", 1),
    ("tanh = 1", "tanh is a function", 1),
    ("b = __import__('os'); b", "unknown function '__import__'", 5),
])
def test_statements_off_the_whitelist_are_refused(text: str, fragment: str,
                                                  column: int) -> None:
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert fragment in info.value.message
    assert info.value.position == column
