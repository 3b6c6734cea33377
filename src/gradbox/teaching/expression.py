"""A safe parser for the expression playground: text in, a graph of `Value`s out.

The text is parsed with Python's `ast` and the tree is walked against a whitelist:
variables, numbers, + - * / ** (with a numeric exponent), unary minus, and the
functions in `FUNCTIONS`, written `tanh(x)` or `(x).tanh()`. Nothing the user types is
ever evaluated by Python; the walk builds engine nodes directly. Anything else is
rejected with an `ExpressionError` that says what and where.

Each variable name becomes one leaf, however often it is used, so `a + a` reuses a
single node -- the case where gradients accumulate.

Several statements, separated by `;` or line breaks, name intermediate values:
`a = 1; b = a + a; c = b + b`. A name assigned a plain number is a leaf starting at
that number; a name assigned anything else is the node that expression builds, so a
later use of it reuses that very node (`b + b` uses `b` twice). That is the graph
the wrong-order lesson needs, and one expression alone cannot write it. The output is
the last statement's value.
"""

from __future__ import annotations

import ast
import math
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, NoReturn

from gradbox.autograd import ops
from gradbox.autograd.engine import Value

__all__ = [
    "FUNCTIONS",
    "MAX_DEPTH",
    "MAX_EXPONENT",
    "MAX_LENGTH",
    "Expression",
    "ExpressionError",
    "default_value",
    "derivative_formula",
    "parse",
]

# Bounds that keep a typed expression from hanging or exhausting the app: the text is
# short, the tree shallow (the walk recurses), and powers small (x**10 of a large x
# already overflows; there is nothing to learn from 9**9**9).
MAX_LENGTH = 2000
MAX_DEPTH = 100
MAX_EXPONENT = 10

_UNARY: dict[str, Callable[[Value], Value]] = {
    "tanh": Value.tanh,
    "exp": Value.exp,
    "log": Value.log,
    "sin": Value.sin,
    "relu": Value.relu,
    "sigmoid": Value.sigmoid,
    "abs": abs,
}
FUNCTIONS: tuple[str, ...] = tuple(_UNARY)

def derivative_formula(op: str) -> str:
    """The local-derivative formula for a node's op ("**2" included), from `autograd.ops`."""
    try:
        ops.split(op)
    except KeyError:
        raise KeyError(f"no formula for the op {op!r}") from None
    return ops.formula(op)


def default_value(name: str) -> float:
    """A variable's starting value: fixed per name, between 0.2 and 1.2.

    Different names get different values where possible, so d(a·b)/da = b and
    d(a·b)/db = a can be told apart; positive, so log(x) works out of the box; small,
    so tanh is not saturated. crc32 rather than hash(): the same on every run.
    """
    return round(0.2 + (zlib.crc32(name.encode("utf-8")) % 11) / 10, 1)


class ExpressionError(ValueError):
    """A rejected expression: what is wrong and where (1-based line and column)."""

    def __init__(self, message: str, position: int, line: int = 1,
                 end: int | None = None) -> None:
        super().__init__(message, position, line)
        self.message = message
        self.position = position  # 1-based column
        self.line = line
        self.end = end  # 1-based column just past the offending text, on the same line

    def __str__(self) -> str:
        where = f"column {self.position}" if self.line == 1 else \
            f"line {self.line}, column {self.position}"
        return f"{self.message} ({where})"


@dataclass(frozen=True)
class Expression:
    """A parsed expression: its text, the graph's output, and its variables by name."""

    text: str
    root: Value
    leaves: dict[str, Value]  # one leaf per variable, in order of first appearance
    _statements: tuple[_Statement, ...] = field(repr=False, compare=False)
    _source: _Source = field(repr=False, compare=False)
    # Names the text assigns a plain number (`a = 1`): leaves with a starting value.
    literals: dict[str, float] = field(default_factory=dict, compare=False)
    # Names the text assigns a computation (`b = a + a`): intermediate nodes.
    intermediates: dict[str, Value] = field(default_factory=dict, compare=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.leaves)

    @property
    def values(self) -> dict[str, float]:
        return {name: float(leaf.data) for name, leaf in self.leaves.items()}

    def rebuild(self) -> Value:
        """Build the graph again from the same leaves and their current data.

        The forward pass after a leaf's value changed, without parsing again; also the
        `build` a gradient check needs.
        """
        return _build_statements(self._statements, self.leaves, self._source)[0]


def parse(text: str, values: Mapping[str, float] | None = None) -> Expression:
    """Parse `text` into a graph of `Value`s; variables take `values[name]` or a default.

    Raises `ExpressionError` for anything outside the whitelist, and for an expression
    that cannot be evaluated at these values (log of a negative number, 1/0).
    """
    if not isinstance(text, str):
        raise TypeError(f"expression text must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(
            f"the expression is too long ({len(text)} characters; the limit is {MAX_LENGTH})",
            *_line_column(text, MAX_LENGTH))
    if not text.strip():
        raise ExpressionError("the expression is empty", 1)
    _check_bracket_depth(text)
    source = _Source(text)
    try:
        # "exec", not "eval": statements separated by ; or line breaks name intermediate
        # values. Only assignments and one final expression pass `_statements` below.
        tree = ast.parse(source.stripped, mode="exec")
    except SyntaxError as exc:
        raise source.syntax_error(exc) from None
    except (RecursionError, MemoryError):
        # CPython's parser gives up on a few hundred nested unary operators this way.
        raise ExpressionError("the expression is nested too deeply", 1) from None
    except ValueError as exc:  # e.g. a null character, on some Python versions
        raise ExpressionError(str(exc), 1) from None
    statements = _statements(tree, source)
    names: list[str] = []
    assigned: set[str] = set()
    literals: dict[str, float] = {}
    checker = _Checker(source, names)
    for statement in statements:
        target, node = statement.target, statement.value
        checker.check(node, 1)
        if target is not None:
            if target in names:
                # Python would read the old value first; a graph has one node per name.
                raise source.error(f"'{target}' is used before this assignment; each name "
                                   "is assigned once, before it is used", statement.where)
            number = _literal(node)
            if number is not None:
                literals[target] = number
            assigned.add(target)
            names.append(target)
    values = values or {}
    leaf_names = [n for n in names if n not in assigned or n in literals]
    leaves = {name: Value(float(values[name]) if name in values else
                          literals.get(name, default_value(name)), label=name)
              for name in leaf_names}
    root, intermediates = _build_statements(statements, leaves, source)
    return Expression(text, root, leaves, statements, source, literals, intermediates)


class _Statement(NamedTuple):
    target: str | None  # the name assigned, None for the final bare expression
    value: ast.expr
    where: ast.AST  # the target's position, for messages about it


def _statements(tree: ast.Module, source: _Source) -> tuple[_Statement, ...]:
    """One `_Statement` per assignment or final expression; anything else is refused."""
    body = tree.body
    if not body:
        raise ExpressionError("the expression is empty", 1)
    out: list[_Statement] = []
    seen: set[str] = set()
    for k, stmt in enumerate(body):
        last = k == len(body) - 1
        if isinstance(stmt, ast.Expr):
            if not last:
                raise source.error(
                    "only the last statement can be a bare expression; name the others, "
                    "as in b = a + a", stmt)
            out.append(_Statement(None, stmt.value, stmt))
            continue
        if not isinstance(stmt, ast.Assign):
            what = "+= and the like are" if isinstance(stmt, ast.AugAssign) else \
                "this statement is"
            raise source.error(f"{what} not allowed; write name = expression, or an "
                               f"expression ({_ALLOWED})", stmt)
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
            raise source.error("assign to one plain name, as in b = a + a", stmt.targets[-1])
        target = stmt.targets[0]
        if target.id in FUNCTIONS:
            raise source.error(f"{target.id} is a function; choose another name", target)
        if target.id in seen:
            raise source.error(f"'{target.id}' is already assigned; each name is assigned "
                               "once -- give the new value a new name", target)
        seen.add(target.id)
        out.append(_Statement(target.id, stmt.value, target))
    return tuple(out)


def _build_statements(statements: tuple[_Statement, ...],
                      leaves: dict[str, Value], source: _Source
                      ) -> tuple[Value, dict[str, Value]]:
    """Build every statement in order; a name assigned a computation is that node."""
    known = dict(leaves)
    intermediates: dict[str, Value] = {}
    builder = _Builder(known, source)
    out: Value | None = None
    for target, node, _where in statements:
        if target is not None and target in leaves:
            out = leaves[target]  # `a = 1`: the leaf itself
            continue
        out = builder.build(node)
        if target is not None:
            if not out.label and out.inputs:
                out.label = target  # the graph view shows the name beside the op
            known[target] = out
            intermediates[target] = out
    assert out is not None  # `_statements` refuses an empty body
    return out, intermediates


# --- positions ---------------------------------------------------------------------
def _line_column(text: str, index: int) -> tuple[int, int]:
    """1-based (column, line) of the character at 0-based `index`."""
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return column, line


def _check_bracket_depth(text: str) -> None:
    # Python's tokenizer stops at 200 levels with its own message; stop earlier and
    # consistently with the tree depth limit.
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ExpressionError(
                    f"the expression is nested too deeply (more than {MAX_DEPTH} brackets)",
                    *_line_column(text, i))
        elif ch in ")]}":
            depth -= 1


class _Source:
    """Maps positions in the parsed text back to the text the user typed.

    Python refuses leading whitespace ("unexpected indent"), so the text is parsed with
    it stripped; positions on the first parsed line shift right by what was stripped.
    """

    def __init__(self, text: str) -> None:
        self.stripped = text.lstrip()
        prefix = text[: len(text) - len(self.stripped)]
        self.lines_removed = prefix.count("\n")
        self.column_shift = len(prefix) - (prefix.rfind("\n") + 1)
        self.lines = self.stripped.split("\n")
        self.multiline = len([line for line in self.lines if line.strip()]) > 1

    def place(self, lineno: int, column: int) -> tuple[int, int]:
        """(column, line) in the user's text from a 1-based column on a parsed line."""
        if lineno == 1:
            column += self.column_shift
        return column, lineno + self.lines_removed

    def _char_column(self, lineno: int, byte_offset: int) -> int:
        # ast columns count UTF-8 bytes; people count characters.
        line = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1

    def error(self, message: str, node: ast.AST, start_byte: int | None = None
              ) -> ExpressionError:
        lineno = getattr(node, "lineno", 1)
        start = self._char_column(lineno, node.col_offset if start_byte is None else start_byte)
        end = None
        if getattr(node, "end_lineno", None) == lineno and node.end_col_offset is not None:
            end = self._char_column(lineno, node.end_col_offset)
        column, line = self.place(lineno, start)
        if end is not None:
            end = end + column - start
        return ExpressionError(message, column, line, end)

    def syntax_error(self, exc: SyntaxError) -> ExpressionError:
        lineno = exc.lineno if exc.lineno and exc.lineno <= len(self.lines) else len(self.lines)
        line_text = self.lines[lineno - 1]
        # Python reports "end of input" as offset 0 or past the line; point just after it.
        offset = exc.offset if exc.offset and 0 < exc.offset <= len(line_text) + 1 else \
            len(line_text.rstrip()) + 1
        message = exc.msg
        if self.multiline and message == "invalid syntax":
            message += " (a line break ends the expression unless it is inside parentheses)"
        column, line = self.place(lineno, offset)
        return ExpressionError(message, column, line)


# --- the whitelist -------------------------------------------------------------------
_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_OTHER_OPERATORS = {ast.Mod: "%", ast.FloorDiv: "//", ast.MatMult: "@", ast.LShift: "<<",
                    ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^",
                    ast.Not: "not", ast.Invert: "~"}
_FORBIDDEN = {
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "'and' and 'or' are not allowed",
    ast.IfExp: "conditional expressions (if/else) are not allowed",
    ast.Subscript: "indexing ([...]) is not allowed",
    ast.Slice: "slices are not allowed",
    ast.Lambda: "lambda is not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.List: "lists are not allowed",
    ast.Tuple: "tuples are not allowed (is there a stray comma?)",
    ast.Set: "sets are not allowed",
    ast.Dict: "dicts are not allowed",
    ast.JoinedStr: "strings are not allowed",
    ast.NamedExpr: "assignment (:=) is not allowed",
    ast.Starred: "* unpacking is not allowed",
    ast.Await: "await is not allowed",
}
_ALLOWED = f"use numbers, variables, + - * / **, and {', '.join(FUNCTIONS)}"


def _literal(node: ast.expr) -> float | None:
    """The value of a numeric literal such as 2, -1 or +0.5; None for anything else."""
    sign = 1.0
    # A loop, not recursion: "-" * 900 + "1" must not overflow the stack.
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -sign if isinstance(node.op, ast.USub) else sign
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        try:
            return sign * float(node.value)
        except OverflowError:
            return math.inf
    return None


class _Checker:
    """Walks the tree once, rejecting anything off the whitelist; collects variable names."""

    def __init__(self, source: _Source, names: list[str]) -> None:
        self.source = source
        self.names = names

    def fail(self, message: str, node: ast.AST, start_byte: int | None = None) -> NoReturn:
        raise self.source.error(message, node, start_byte)

    def check(self, node: ast.expr, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.fail(f"the expression is nested too deeply (more than {MAX_DEPTH} levels; "
                      "each operator in a long chain counts one)", node)
        if isinstance(node, ast.BinOp):
            self.check_binary(node, depth)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.USub, ast.UAdd)):
                self.fail(f"the operator '{_OTHER_OPERATORS[type(node.op)]}' is not "
                          f"supported; {_ALLOWED}", node)
            self.check(node.operand, depth + 1)
        elif isinstance(node, ast.Name):
            if node.id in FUNCTIONS:
                self.fail(f"{node.id} is a function: write {node.id}(x)", node)
            if node.id not in self.names:
                self.names.append(node.id)
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.Call):
            self.check_call(node, depth)
        elif isinstance(node, ast.Attribute):
            if node.attr in FUNCTIONS:
                self.fail(f".{node.attr} is a method: call it as .{node.attr}()", node,
                          _dot(node))
            self.fail(f"attribute access ('.{node.attr}') is not allowed; the methods are "
                      f"{', '.join(f'.{f}()' for f in FUNCTIONS)}", node, _dot(node))
        else:
            self.fail(_FORBIDDEN.get(type(node), f"this is not allowed here; {_ALLOWED}"), node)

    def check_binary(self, node: ast.BinOp, depth: int) -> None:
        if type(node.op) not in _BINARY:
            self.fail(f"the operator '{_OTHER_OPERATORS.get(type(node.op), '?')}' is not "
                      f"supported; {_ALLOWED}", node)
        self.check(node.left, depth + 1)  # left first: names in order of appearance
        if isinstance(node.op, ast.Pow):
            k = _literal(node.right)
            if k is None:
                self.fail("the exponent must be a number, as in x**2 or x**-1 (** takes a "
                          "constant power; for a variable power write exp(b*log(a)))",
                          node.right)
            elif not abs(k) <= MAX_EXPONENT:
                self.fail(f"the exponent {_number_text(k)} is too large; powers are limited "
                          f"to -{MAX_EXPONENT} … {MAX_EXPONENT}", node.right)
        else:
            self.check(node.right, depth + 1)

    def check_constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, (str, bytes)):
            self.fail("strings are not allowed; " + _ALLOWED, node)
        if isinstance(value, complex):
            self.fail("complex numbers are not supported", node)
        if type(value) not in (int, float):
            self.fail(f"{value!r} is not a number", node)
        number = _literal(node)
        if number is None or not math.isfinite(number):
            self.fail("this number is too large", node)

    def check_call(self, node: ast.Call, depth: int) -> None:
        func = node.func
        if node.keywords:
            keyword = node.keywords[0]
            self.fail("keyword arguments are not allowed", keyword)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail("* unpacking is not allowed", arg)
        if isinstance(func, ast.Name):
            if func.id not in FUNCTIONS:
                self.fail(f"unknown function '{func.id}'; the functions are "
                          f"{', '.join(FUNCTIONS)}", func)
            if len(node.args) != 1:
                self.fail(f"{func.id}() takes exactly one argument ({len(node.args)} given)",
                          node)
            self.check(node.args[0], depth + 1)
        elif isinstance(func, ast.Attribute):
            if func.attr not in FUNCTIONS:
                self.fail(f"unknown method '.{func.attr}()'; the methods are "
                          f"{', '.join(f'.{f}()' for f in FUNCTIONS)}", func, _dot(func))
            if node.args:
                self.fail(f".{func.attr}() takes no arguments ({len(node.args)} given)", node)
            self.check(func.value, depth + 1)
        else:
            self.fail(f"only these functions can be called: {', '.join(FUNCTIONS)}", func)


def _dot(node: ast.Attribute) -> int | None:
    """Byte offset of the '.' before an attribute name, when it is on the node's first line."""
    if node.end_lineno != node.lineno or node.end_col_offset is None:
        return None
    return node.end_col_offset - len(node.attr.encode("utf-8")) - 1


# --- building the graph ------------------------------------------------------------------
class _Builder:
    """Turns a checked tree into engine nodes; only ever sees what `_Checker` let through."""

    def __init__(self, leaves: dict[str, Value], source: _Source) -> None:
        self.leaves = leaves
        self.source = source

    def build(self, node: ast.expr) -> Value:
        number = _literal(node)
        if number is not None:
            return Value(number)  # -2 is one constant, not neg(2)
        if isinstance(node, ast.Name):
            return self.leaves[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand)
            return self.apply(node, lambda: -operand if isinstance(node.op, ast.USub)
                              else operand)
        if isinstance(node, ast.BinOp):
            left = self.build(node.left)
            if isinstance(node.op, ast.Pow):
                k = _literal(node.right)
                return self.apply(node, lambda: left ** _tidy(k))
            right = self.build(node.right)
            op = {ast.Add: Value.__add__, ast.Sub: Value.__sub__, ast.Mult: Value.__mul__,
                  ast.Div: Value.__truediv__}[type(node.op)]
            return self.apply(node, lambda: op(left, right))
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                name, arg = node.func.id, node.args[0]
            else:
                name, arg = node.func.attr, node.func.value
            operand = self.build(arg)
            return self.apply(node, lambda: _UNARY[name](operand))
        raise AssertionError(f"unchecked node {type(node).__name__}")  # _Checker rejects it

    def apply(self, node: ast.expr, op: Callable[[], Value]) -> Value:
        try:
            out = op()
        except ZeroDivisionError:
            what = "division by zero" if isinstance(getattr(node, "op", None), ast.Div) else \
                "0 cannot be raised to a negative power"
            raise self.source.error(f"cannot evaluate: {what}", node) from None
        except OverflowError:
            raise self.source.error("cannot evaluate: the result is too large", node) from None
        except ValueError as exc:
            raise self.source.error(f"cannot evaluate: {exc}", node) from None
        if isinstance(out.data, complex):
            raise self.source.error(
                "cannot evaluate: a negative number to a fractional power is not a real number",
                node)
        return out


def _tidy(k: Any) -> float | int:
    # Whole exponents as ints, so the node reads "**2", not "**2.0", and (-2)**2 stays real.
    return int(k) if float(k).is_integer() else float(k)


def _number_text(k: float) -> str:
    return f"{k:g}"
