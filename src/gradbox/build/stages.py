"""The stages of Build it yourself, as data files a teacher can read, copy and reorder.

Each stage is one TOML file in `stages/` (the built-in ones are `stages/NN-key.toml`):

    number   the stage's place (0, 1, 2 ...); stages run in this order
    key      a short name (lower-case letters, digits, dashes)
    title    what the stage builds
    text     the article's passage, in the product's own words
    starter  the code the editor starts with at this stage
    hints    opened one at a time, on request; none gives the answer away
    cases    the built-in checks this stage runs, by name (`gradbox.build.cases`);
             the checks themselves are built in, a file only chooses and orders them
    [predict]  optional: question, code, expression, answer -- "predict `a.grad` first",
             asked before the answer is shown (the accumulation and zero_grad stages);
             `answer` is the value of `expression` after `code` runs

Reading is strict and bounded: a file larger than `MAX_STAGE_BYTES`, a syntax error, a
missing or unknown field, a value of the wrong kind or an unknown case is a
`StageFileError` naming the file, the line and the field (the reading of lesson files,
`gradbox.teaching.lesson_files.field_lines`, finds the lines).

Pure Python, no Qt.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradbox.teaching.lesson_files import field_lines, value_kind

__all__ = [
    "MAX_STAGE_BYTES",
    "Predict",
    "Stage",
    "StageFileError",
    "builtin_stage_files",
    "load_stage",
    "load_stage_file",
    "load_stages",
    "stage",
]

MAX_STAGE_BYTES = 256 * 1024  # a stage is a page of text and a screen of code
BUILTIN = Path(__file__).resolve().parent / "stages"
KEY = re.compile(r"^[a-z0-9][a-z0-9-]*$")
STAGE_FIELDS = ("number", "key", "title", "text", "starter", "hints", "cases", "predict")
PREDICT_FIELDS = ("question", "code", "answer", "expression")


class StageFileError(ValueError):
    """A stage file that is not exactly a stage; says where (line, field) and why."""

    def __init__(self, source: str, line: int | None, field: str, message: str) -> None:
        where = ", ".join(x for x in (source, f"line {line}" if line else "", field) if x)
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.field, self.message = source, line, field, message


@dataclass(frozen=True)
class Predict:
    """'Predict it first': a question about `code` (shown as it is), whose true answer is
    `answer`, the value of `expression` once `code` has run (a test runs it on gradbox's
    engine and checks)."""

    question: str
    code: str
    answer: float
    expression: str = ""


@dataclass(frozen=True)
class Stage:
    """One stage: what to read, what to start from, the hints, the checks it runs."""

    number: int
    key: str
    title: str
    text: str
    starter: str
    hints: tuple[str, ...]
    cases: tuple[str, ...]
    predict: Predict | None = None


class _Reader:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.lines = field_lines(text)

    def error(self, path: str, message: str) -> StageFileError:
        line = self.lines.get(path) or self.lines.get(path.split(".")[0]) or 1
        return StageFileError(self.source, line, path, message)

    def string(self, table: dict[str, Any], path: str, *, required: bool = True,
               empty: bool = False) -> str:
        key = path.rsplit(".", 1)[-1]
        if key not in table:
            if required:
                raise self.error(path, f"missing field {key!r}")
            return ""
        value = table[key]
        if not isinstance(value, str):
            raise self.error(path, f"must be text in quotes, got {value_kind(value)}")
        if not empty and not value.strip():
            raise self.error(path, "must not be empty")
        return value

    def strings(self, table: dict[str, Any], path: str) -> tuple[str, ...]:
        key = path.rsplit(".", 1)[-1]
        value = table.get(key, [])
        if not isinstance(value, list):
            raise self.error(path, f"must be a list in [brackets], got {value_kind(value)}")
        for i, item in enumerate(value, start=1):
            if not isinstance(item, str) or not item.strip():
                raise self.error(path, f"item {i} must be text in quotes, got {value_kind(item)}")
        return tuple(value)

    def fields(self, table: dict[str, Any], path: str, allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                where = f"{path}.{key}" if path else key
                raise self.error(where, f"unknown field {key!r}; the fields here are "
                                        f"{', '.join(allowed)}")


def load_stage(text: str, source: str = "stage") -> Stage:
    """Read a stage file's text strictly; StageFileError names the line and field."""
    if len(text.encode("utf-8", "replace")) > MAX_STAGE_BYTES:
        raise StageFileError(source, None, "", f"larger than {MAX_STAGE_BYTES // 1024} KB: "
                                               "not a stage")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        line = int(found.group(1)) if found else None
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise StageFileError(source, line, "", f"not valid TOML: {message}") from None
    r = _Reader(text, source)
    r.fields(data, "", STAGE_FIELDS)
    number = data.get("number")
    if "number" not in data:
        raise r.error("number", "missing field 'number'")
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise r.error("number", f"must be a whole number, 0 or more, got {value_kind(number)}")
    key = r.string(data, "key")
    if not KEY.match(key):
        raise r.error("key", f"must be lower-case letters, digits and dashes, got {key!r}")
    title = r.string(data, "title")
    body = r.string(data, "text")
    starter = r.string(data, "starter", required=False, empty=True)
    hints = r.strings(data, "hints")
    cases = r.strings(data, "cases")
    if not cases:
        raise r.error("cases", "a stage runs one or more cases")
    from gradbox.build.cases import CASES  # the checks are built in; a file chooses them
    for case in cases:
        if case not in CASES:
            raise r.error("cases", f"unknown case {case!r}; the cases are "
                                   f"{', '.join(sorted(CASES))}")
    predict = None
    if "predict" in data:
        raw = data["predict"]
        if not isinstance(raw, dict):
            raise r.error("predict", f"must be a table ([predict]), got {value_kind(raw)}")
        r.fields(raw, "predict", PREDICT_FIELDS)
        answer = raw.get("answer")
        if isinstance(answer, bool) or not isinstance(answer, int | float) \
                or not math.isfinite(answer):
            raise r.error("predict.answer", f"must be a finite number, got {value_kind(answer)}")
        predict = Predict(r.string(raw, "predict.question"), r.string(raw, "predict.code"),
                          float(answer), r.string(raw, "predict.expression", required=False,
                                                  empty=True))
    return Stage(number, key, title, body.strip(), starter.lstrip("\n"), hints, cases,
                 predict)


def load_stage_file(path: Path) -> Stage:
    """A stage from a file, read at most `MAX_STAGE_BYTES` (+1) bytes of it."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_STAGE_BYTES + 1)
    except OSError as error:
        raise StageFileError(path.name, None, "", f"cannot read: {error.strerror}") from None
    if len(raw) > MAX_STAGE_BYTES:
        raise StageFileError(path.name, None, "", f"larger than {MAX_STAGE_BYTES // 1024} KB:"
                                                  " not a stage")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise StageFileError(path.name, None, "", f"not UTF-8 text ({error.reason} at byte "
                                                  f"{error.start})") from None
    return load_stage(text, path.name)


def builtin_stage_files() -> tuple[Path, ...]:
    return tuple(sorted(BUILTIN.glob("*.toml")))


def load_stages(folder: Path | None = None) -> tuple[Stage, ...]:
    """Every stage of `folder` (the built-in ones by default, read once: 13-18 ms, which a
    Check on the UI thread should not pay each time), by number. Two stages with the same
    number are an error (the order would be a guess)."""
    return _builtin() if folder is None else _load(tuple(sorted(folder.glob("*.toml"))))


@functools.cache
def _builtin() -> tuple[Stage, ...]:
    return _load(builtin_stage_files())


def _load(files: tuple[Path, ...]) -> tuple[Stage, ...]:
    stages = sorted((load_stage_file(p) for p in files), key=lambda s: s.number)
    for before, after in itertools.pairwise(stages):
        if before.number == after.number:
            raise StageFileError(after.key, None, "number", f"two stages are number "
                                 f"{after.number} ({before.key!r} and {after.key!r})")
    return tuple(stages)


def stage(number: int) -> Stage:
    """The built-in stage `number`."""
    for s in load_stages():
        if s.number == number:
            return s
    raise KeyError(number)
