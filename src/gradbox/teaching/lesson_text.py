"""A lesson file's text from a stranger, read with bounds: how big, how long a line, how
deep, and where each field is written.

`read_lesson_text(path)` opens only a plain file (a pipe or a device would never answer)
and reads at most `MAX_BYTES`; `scan(text, source)` refuses what tomllib must not be
given (a line over `MAX_LINE` characters, arrays and inline tables nested over
`MAX_DEPTH` deep, keys of more than `MAX_DEPTH` dotted parts: each either too slow or
past Python's recursion limit) and returns the line of every table and key by its path
as messages name it: 'title', 'setup.config.lr', 'steps[2].panels', 'steps[2]', and the
tables a header names on the way ('step' of a misspelt `[[step.claims]]`).

The scanner reads the text once, token by token. Its only regular expressions are single
character classes with one quantifier (a run of plain characters): nothing that can
backtrack over a stranger's text (the header patterns this replaces took cubic time:
15 s for a 6.6 KB file whose header was padded with 2,000 spaces).

Pure Python, no Qt.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_LINE", "LessonFileError", "field_lines",
           "read_lesson_text", "scan"]

MAX_BYTES = 1 << 20  # a lesson is a few KB; the largest built-in one is under 10 KB
MAX_LINE = 10_000  # characters a line (long texts are wrapped at about 92)
MAX_DEPTH = 16  # arrays in arrays, tables in tables, parts of one dotted key


class LessonFileError(ValueError):
    """A lesson file that is not exactly a lesson; says where (line, field) and why."""

    def __init__(self, source: str, line: int | None, field: str, message: str) -> None:
        shown = field if len(field) <= 80 else f"{field[:70]}…"  # (a stranger's key)
        where = ", ".join(x for x in (source, f"line {line}" if line else "", shown) if x)
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.field, self.message = source, line, field, message


def read_lesson_text(path: str | os.PathLike[str]) -> str:
    """The text of the lesson file at `path`; LessonFileError if it is not a plain file
    (a pipe, a device, a folder), is over MAX_BYTES or is not UTF-8. Never waits on a
    pipe: it is opened without blocking and refused before any read."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise LessonFileError(path.name, None, "", "not a lesson file (it is a pipe, a "
                                  "device or a folder, not a file of text)")
        with os.fdopen(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        raise LessonFileError(path.name, None, "", f"the file is over {MAX_BYTES // 1024} "
                              "KB: not a lesson (a lesson is a few KB of text)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise LessonFileError(path.name, line, "", "not UTF-8 text") from None


# --- the scanner -------------------------------------------------------------------------
class _Token(NamedTuple):
    kind: str  # "word" (a bare key or value), "text" (a quoted string), "nl", or the
    #            punctuation itself: [ ] { } = . ,
    value: str
    line: int
    start: int  # offset in the text


_PUNCTUATION = "[]{}=.,"
_WORD = re.compile(r"[^ \t\r\n\[\]{}=.,#\"']+")  # one class, one quantifier
_BASIC = re.compile(r'[^"\\\n]*')  # a basic string's plain characters
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def _tokens(text: str, source: str) -> Iterator[_Token]:
    """The text's tokens, comments and whitespace left out. Strings are read whole (a
    multi-line one spans lines); what tomllib would refuse is left to tomllib."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c == "\n":
            yield _Token("nl", c, line, i)
            line += 1
            i += 1
        elif c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c in "\"'":
            start, first_line = i, line
            if text.startswith(c * 3, i):
                value, i = _long_string(text, i + 3, c)
                line += text.count("\n", start, i)
            elif c == "'":
                end = text.find("'", i + 1, _line_end(text, i))
                i = n if end < 0 else end + 1
                value = text[start + 1:i - 1]
            else:
                value, i = _basic_string(text, i + 1)
            yield _Token("text", value, first_line, start)
        elif c in _PUNCTUATION:
            yield _Token(c, c, line, i)
            i += 1
        else:
            m = _WORD.match(text, i)
            end = m.end() if m and m.end() > i else i + 1
            yield _Token("word", text[i:end], line, i)
            i = end


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _basic_string(text: str, i: int) -> tuple[str, int]:
    """A "..." string from just after its quote: its value (escapes read) and the offset
    after its closing quote (or the line's end, if it has none)."""
    out = []
    n = len(text)
    while i < n:
        m = _BASIC.match(text, i)
        assert m is not None  # (a * quantifier always matches)
        out.append(m.group())
        i = m.end()
        if i >= n or text[i] == "\n":
            break
        if text[i] == '"':
            return "".join(out), i + 1
        escape = text[i + 1:i + 2]  # a backslash
        out.append(_ESCAPES.get(escape, escape))
        i += 2
    return "".join(out), i


def _long_string(text: str, i: int, quote: str) -> tuple[str, int]:
    """A multi-line string from just after its opening quotes: its raw text and the
    offset after its closing quotes (up to two more quotes belong to it)."""
    closing = quote * 3
    j = i
    while True:
        end = text.find(closing, j)
        if end < 0:
            return text[i:], len(text)
        if quote == '"' and _escaped(text, end, i):
            j = end + 1
            continue
        extra = 0  # """a""""" is the text a"": up to two quotes before the closing three
        while extra < 2 and text.startswith(quote, end + 3 + extra):
            extra += 1
        return text[i:end + extra], end + extra + 3


def _escaped(text: str, k: int, start: int) -> bool:
    backslashes = 0
    while k - 1 - backslashes >= start and text[k - 1 - backslashes] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


class _Scanner:
    """Walks the tokens once: checks the depth bounds and records each field's line."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self._tokens = _tokens(text, source)  # one at a time: a list would cost ~100 B each
        self._next = next(self._tokens, None)
        self.lines: dict[str, int] = {}
        self.counts: dict[str, int] = {}

    def too_deep(self, token: _Token, what: str) -> LessonFileError:
        return LessonFileError(self.source, token.line, "", f"{what}: not a lesson")

    def peek(self) -> _Token | None:
        return self._next

    def take(self) -> _Token:
        token = self._next
        assert token is not None
        self._next = next(self._tokens, None)
        return token

    def run(self) -> dict[str, int]:
        table = ""
        while (token := self.peek()) is not None:
            if token.kind == "nl":
                self.take()
            elif token.kind == "[":
                table = self.header()
            elif token.kind in ("word", "text"):
                self.key_value(table)
            else:
                self.skip_line()
        return self.lines

    def skip_line(self) -> None:
        while (token := self.peek()) is not None and token.kind != "nl":
            self.take()

    def keys(self) -> list[str] | None:
        """A dotted key's parts (None if what follows is not a key)."""
        parts: list[str] = []
        while (token := self.peek()) is not None and token.kind in ("word", "text"):
            parts.append(token.value)
            self.take()
            if len(parts) > MAX_DEPTH:
                raise self.too_deep(token, f"a key or table name of more than {MAX_DEPTH} "
                                    "parts (too deep)")
            dot = self.peek()
            if dot is None or dot.kind != ".":
                return parts
            self.take()
        return parts or None

    def header(self) -> str:
        """A [table] or [[array table]] header: its path, its line recorded (and the
        lines of the tables it names on the way, where not written before)."""
        opening = self.take()
        after = self.peek()
        array = after is not None and after.kind == "[" and after.start == opening.start + 1
        if array:
            self.take()
        parts = self.keys() or []
        self.skip_line()
        if not parts:
            return ""
        line = opening.line
        prefix = self.resolve(parts[:-1], line)
        base = f"{prefix}.{parts[-1]}" if prefix else parts[-1]
        if array:
            self.lines.setdefault(base, line)
            self.counts[base] = self.counts.get(base, 0) + 1
            base = f"{base}[{self.counts[base]}]"
        self.lines.setdefault(base, line)
        return base

    def resolve(self, parts: list[str], line: int) -> str:
        """A table's dotted name with the array tables in it numbered as last seen
        (steps.claims -> steps[2].claims); each table on the way gets `line` if it has
        none yet."""
        out = ""
        for part in parts:
            out = f"{out}.{part}" if out else part
            if out in self.counts:
                out = f"{out}[{self.counts[out]}]"
            self.lines.setdefault(out, line)
        return out

    def key_value(self, table: str) -> None:
        """`key = value` in `table`: the key's line (each dotted part's too), then the
        value, whose inline tables' keys are recorded as well."""
        start = self.peek()
        assert start is not None
        parts = self.keys()
        equals = self.peek()
        if not parts or equals is None or equals.kind != "=":
            self.skip_line()
            return
        self.take()
        path = self._under(table, parts, start.line) if table else \
            self.resolve(parts, start.line)
        self.value(path, 0)
        self.skip_line()

    def _under(self, table: str, parts: list[str], line: int) -> str:
        out = table
        for part in parts:
            out = f"{out}.{part}"
            self.lines.setdefault(out, line)
        return out

    def value(self, path: str, depth: int) -> None:
        """One value; arrays and inline tables are walked (they may span lines)."""
        token = self.peek()
        if token is None:
            return
        if token.kind not in ("[", "{"):
            self.take()
            return
        if depth + 1 > MAX_DEPTH:
            raise self.too_deep(token, f"lists or tables nested more than {MAX_DEPTH} deep")
        self.take()
        closing = "]" if token.kind == "[" else "}"
        while (token := self.peek()) is not None:
            if token.kind == closing:
                self.take()
                return
            if token.kind in ("nl", ","):
                self.take()
            elif closing == "}" and token.kind in ("word", "text"):
                start = token
                parts = self.keys()
                equals = self.peek()
                if parts and equals is not None and equals.kind == "=":
                    self.take()
                    self.value(self._under(path, parts, start.line), depth + 1)
            elif token.kind in ("[", "{"):
                self.value(path, depth + 1)
            else:
                self.take()


def scan(text: str, source: str = "lesson") -> dict[str, int]:
    """Check the bounds a lesson's text must keep before it is parsed (LessonFileError
    naming the line if not) and give the line (from 1) of each field by its path."""
    lengths = [len(line) for line in text.split("\n")]
    if max(lengths) > MAX_LINE:
        number = next(i for i, n in enumerate(lengths, start=1) if n > MAX_LINE)
        raise LessonFileError(source, number, "", f"a line of {lengths[number - 1]:,} "
                              f"characters (at most {MAX_LINE:,}): not a lesson")
    return _Scanner(text, source).run()


def field_lines(text: str) -> dict[str, int]:
    """The line (from 1) where each field of the file is written, by its path as messages
    name it: 'title', 'setup.config.lr', 'steps[2].panels' (tables too: 'steps[2]')."""
    return scan(text)
