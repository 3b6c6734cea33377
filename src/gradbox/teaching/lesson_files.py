"""Lessons as plain text files (TOML) a teacher can read, copy and change.

`dump_lesson(lesson)` writes a `Lesson` as TOML; `load_lesson(text, source)` reads one
back, strictly: anything that is not exactly a lesson -- a syntax error, a missing or
unknown field, a value of the wrong kind, a panel or dataset that does not exist -- is a
`LessonFileError` whose message names the file, the line and the field
(`my-lesson.toml, line 14, steps[2].panels: unknown panel 'lossCurve'; ...`). Every
built-in lesson round-trips: `load_lesson(dump_lesson(x)) == x`.

The format (docs/lessons.md has a commented example):

    key, title, intro, formulas, controls, takeaway      the lesson
    [setup]          view = "playground": expression, values, variant, retain_graph, tab
                     view = "training": forget_zero_grad, ghost, main_tab, and
    [setup.config]   the run's settings (gradbox.training.config.TrainingConfig's fields)
    [[steps]]        do, look, panels, loop_line -- one table per step, in order
    [[steps.claims]] quantity, op, value, at_step, says, by, run, pinned -- the step's
                     checkable claims (gradbox.teaching.claims.Claim), after their step

Python's tomllib reads the syntax (it reports the line of a syntax error); before it, a
scanner (`lesson_text.scan`) checks the text's bounds (size, line length, nesting) and
finds the line of every table and key.

Pure Python, no Qt.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gradbox.autograd.phases import PHASES
from gradbox.teaching.claims import OPS, QUANTITIES, Claim
from gradbox.teaching.lesson_model import ALL_CONTROLS, STEP_NAMES, Lesson, Setup, Step
from gradbox.teaching.lesson_text import (
    MAX_BYTES,
    LessonFileError,
    field_lines,
    read_lesson_text,
    scan,
)
from gradbox.teaching.playground import PLAYGROUND_VARIANTS
from gradbox.training.config import ConfigError, TrainingConfig
from gradbox.training.goals import MAX_RUN_STEPS

__all__ = ["LessonFileError", "dump_lesson", "field_lines", "load_lesson",
           "read_lesson"]

PLAYGROUND_TABS = ("variables", "micro-batches", "forget zero_grad")
LOOP_LINES = ("", *(str(p) for p in PHASES))
WIDTH = 92  # long texts are wrapped at about this many characters a line
KEY = re.compile(r"[a-z0-9][a-z0-9-]*")  # fullmatch: no newline after it

LESSON_FIELDS = ("key", "title", "intro", "formulas", "controls", "takeaway", "setup", "steps")
SETUP_FIELDS = {"playground": ("view", "expression", "values", "variant", "retain_graph", "tab"),
                "training": ("view", "config", "forget_zero_grad", "ghost", "main_tab",
                             "run_speed", "run_stop", "run_stop_value")}
STEP_FIELDS = ("do", "look", "panels", "loop_line", "claims")
CLAIM_FIELDS = ("quantity", "op", "value", "at_step", "says", "by", "run", "pinned")
RUN_STOPS = ("never", "steps", "loss", "accuracy")
MAX_SPEED = "max"  # run_speed = "max": as fast as the machine allows
# The JSON-like kind of each TrainingConfig field, as a lesson file writes it.
CONFIG_KINDS = {"dataset": str, "n_samples": int, "noise": float, "test_ratio": float,
                "classes": int, "hidden": "ints", "activation": str, "loss": str,
                "optimizer": str, "lr": float, "momentum": float, "schedule": str,
                "batch_size": int, "l1": float, "l2": float, "seed": int, "steps": int,
                "features": "strs", "init": str, "init_scale": float}


# --- writing ----------------------------------------------------------------------------
def _escape(text: str) -> str:
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _string(text: str, indent: int = 0) -> str:
    """A TOML string: one line if short, else a multi-line string wrapped at spaces with
    line-ending backslashes (which TOML removes with the line break), so it reads back
    as exactly `text`."""
    escaped = _escape(text)
    if len(escaped) + indent <= WIDTH - 10:
        return f'"{escaped}"'
    # Break after a space, where the next piece does not start with a space (TOML trims
    # the whitespace that starts a continued line).
    pieces = re.split(r"(?<= )(?=\S)", escaped)
    lines, line = [], ""
    for piece in pieces:
        if line and len(line) + len(piece) > WIDTH:
            lines.append(line)
            line = ""
        line += piece
    lines.append(line)
    body = "\\\n".join(lines)
    return f'"""\n{body}"""'


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, tuple | list):
        items = [_value(v) for v in value]
        one_line = f"[{', '.join(items)}]"
        if len(one_line) <= WIDTH - 20:
            return one_line
        return "[\n" + "".join(f"    {item},\n" for item in items) + "]"
    raise TypeError(f"cannot write {value!r} in a lesson file")


def _key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{_escape(name)}"'


def dump_lesson(lesson: Lesson) -> str:
    """The lesson as the text of a .toml file."""
    out = [f"# A gradbox lesson: {lesson.title}",
           "# File → Open lesson… loads it; docs/lessons.md says what each field means.", ""]
    out.append(f"key = {_value(lesson.key)}")
    out.append(f"title = {_value(lesson.title)}")
    out.append(f"intro = {_value(lesson.intro)}")
    out.append(f"formulas = {_value(lesson.formulas)}")
    out.append(f"controls = {_value(lesson.controls)}")
    if lesson.takeaway:
        out.append(f"takeaway = {_value(lesson.takeaway)}")
    s = lesson.setup
    out += ["", "[setup]", f"view = {_value(s.view)}"]
    if s.view == "playground":
        out.append(f"expression = {_value(s.expression)}")
        out.append(f"variant = {_value(s.variant)}")
        out.append(f"retain_graph = {_value(s.retain_graph)}")
        out.append(f"tab = {_value(s.tab)}")
        if s.values:
            out += ["", "[setup.values]"]
            out += [f"{_key(name)} = {_value(float(v))}" for name, v in s.values.items()]
    else:
        assert s.config is not None
        out.append(f"forget_zero_grad = {_value(s.forget_zero_grad)}")
        out.append(f"ghost = {_value(s.ghost)}")
        out.append(f"main_tab = {_value(s.main_tab)}")
        out.append("run_speed = " + (_value(MAX_SPEED) if s.run_speed is None
                                     else _value(s.run_speed)))
        out.append(f"run_stop = {_value(s.run_stop)}")
        out.append(f"run_stop_value = {_value(s.run_stop_value)}")
        out += ["", "[setup.config]"]
        for f in fields(TrainingConfig):
            value = getattr(s.config, f.name)
            if value is not None:  # TOML has no null: a missing batch_size is "all points"
                out.append(f"{f.name} = {_value(value)}")
    for step in lesson.steps:
        out += ["", "[[steps]]", f"do = {_value(step.do)}", f"look = {_value(step.look)}"]
        if step.panels:
            out.append(f"panels = {_value(step.panels)}")
        if step.loop_line:
            out.append(f"loop_line = {_value(step.loop_line)}")
        for claim in step.claims:
            out += ["", "[[steps.claims]]"]
            out += [f"{name} = {_value(getattr(claim, name))}"
                    for name in ("quantity", "op", "value", "at_step", "says")]
            if claim.by:
                out.append("by = true")
            if claim.run:
                out.append(f"run = {_inline(claim.run)}")
            if claim.pinned is not None:
                out.append(f"pinned = {_inline(claim.pinned)}")
    return "\n".join(out) + "\n"


def _inline(settings: Any) -> str:
    """Settings (config field: value) as a TOML inline table."""
    return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in settings.items()) + " }"


# --- reading -------------------------------------------------------------------------------
class _Reader:
    def __init__(self, lines: dict[str, int], source: str) -> None:
        self.source = source
        self.lines = lines

    def error(self, path: str, message: str) -> LessonFileError:
        """An error about field `path`, at its line -- or, for a field that is not there,
        at the line of the table it belongs in (line 1 for the lesson's own fields)."""
        line = 1
        probe = path
        while probe:
            if probe in self.lines:
                line = self.lines[probe]
                break
            probe = _parent(probe)
        return LessonFileError(self.source, line, path, message)

    def table(self, value: Any, path: str, allowed: tuple[str, ...],
              required: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(path, f"must be a table ([{path}]), got {value_kind(value)}")
        for key in value:
            if key not in allowed:
                where = f"{path}.{key}" if path else key
                raise self.error(where, f"unknown field {_quoted(key)}; the fields here are "
                                        f"{', '.join(allowed)}")
        for key in required:
            if key not in value:
                where = f"{path}.{key}" if path else key
                raise self.error(where, f"missing field {key!r}")
        return value

    def string(self, value: Any, path: str, choices: tuple[str, ...] | None = None,
               empty: bool = True) -> str:
        if not isinstance(value, str):
            raise self.error(path, f"must be text in quotes, got {value_kind(value)}")
        if not empty and not value.strip():
            raise self.error(path, "must not be empty")
        if choices is not None and value not in choices:
            raise self.error(path, f"must be one of {', '.join(repr(c) for c in choices)}, "
                                   f"got {_quoted(value)}")
        return value

    def boolean(self, value: Any, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.error(path, f"must be true or false, got {value_kind(value)}")
        return value

    def number(self, value: Any, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(path, f"must be a number, got {value_kind(value)}")
        if not math.isfinite(value):
            raise self.error(path, f"must be a finite number, got {value}")
        return value

    def whole(self, value: Any, path: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(path, f"must be a whole number, got {value_kind(value)}")
        return value

    def strings(self, value: Any, path: str, choices: tuple[str, ...] | None = None,
                ) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.error(path, f"must be a list in [brackets], got {value_kind(value)}")
        out = []
        for i, item in enumerate(value, start=1):
            if not isinstance(item, str):
                raise self.error(path, f"item {i} must be text in quotes, got {value_kind(item)}")
            if choices is not None and item not in choices:
                raise self.error(path, f"unknown panel {_quoted(item)} (item {i}); the panels are "
                                       f"{', '.join(choices)}")
            out.append(item)
        return tuple(out)


def _parent(path: str) -> str:
    """The path of the table a field is in: steps[2].claims[1] -> steps[2].claims ->
    steps[2] -> steps -> '' (string methods: a stranger's key names are in the path)."""
    if path.endswith("]") and "[" in path:
        return path[:path.rindex("[")]
    return path.rpartition(".")[0]


def _quoted(text: str) -> str:
    """A stranger's name or text in a message: quoted, and cut short (a key may be
    thousands of characters long)."""
    return repr(text) if len(text) <= 60 else f"{text[:50]!r}… ({len(text):,} characters)"


def value_kind(value: Any) -> str:
    """What a TOML value is, in a message's words ("the number 3", "a table")."""
    if isinstance(value, bool):
        return f"{str(value).lower()} (true/false)"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def read_lesson(path: str | os.PathLike[str]) -> Lesson:
    """Read the lesson file at `path` as File > Open lesson does: a plain file of UTF-8
    text within the bounds of `lesson_text`, then strictly (`load_lesson`)."""
    return load_lesson(read_lesson_text(path), Path(path).name)


def load_lesson(text: str, source: str = "lesson") -> Lesson:
    """Read a lesson file's text strictly; LessonFileError names the line and field.
    The text's size, line lengths and nesting are checked before it is parsed."""
    if len(text) > MAX_BYTES:
        raise LessonFileError(source, None, "", f"over {MAX_BYTES // 1024} KB: not a lesson")
    lines = scan(text, source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message, _, where = str(error).rpartition(" (at line ")
        number = where.partition(",")[0]
        line = int(number) if message and number.isascii() and number.isdigit() else None
        raise LessonFileError(source, line, "", f"not valid TOML: {message or error}"
                              ) from None
    except RecursionError:  # (the scan's depth bounds keep well within the limit)
        raise LessonFileError(source, None, "", "nested too deeply: not a lesson") from None
    r = _Reader(lines, source)
    top = r.table(data, "", LESSON_FIELDS, ("key", "title", "intro", "setup", "steps"))
    key = r.string(top["key"], "key", empty=False)
    if not KEY.fullmatch(key):
        raise r.error("key", f"must be lower-case letters, digits and dashes, got {_quoted(key)}")
    title = r.string(top["title"], "title", empty=False)
    intro = r.string(top["intro"], "intro", empty=False)
    formulas = r.strings(top.get("formulas", []), "formulas")
    controls = r.strings(top.get("controls", []), "controls", ALL_CONTROLS)
    takeaway = r.string(top.get("takeaway", ""), "takeaway")
    setup = _setup(r, top["setup"])
    raw_steps = top["steps"]
    if not isinstance(raw_steps, list) or not raw_steps:
        raise r.error("steps", "must be one or more [[steps]] tables")
    steps = tuple(_step(r, item, f"steps[{i}]", setup)
                  for i, item in enumerate(raw_steps, start=1))
    return Lesson(key=key, title=title, intro=intro, steps=steps, formulas=formulas,
                  setup=setup, controls=controls, takeaway=takeaway)


def _setup(r: _Reader, value: Any) -> Setup:
    if not isinstance(value, dict):
        raise r.error("setup", f"must be a table ([setup]), got {value_kind(value)}")
    view = r.string(value.get("view"), "setup.view", tuple(SETUP_FIELDS)) \
        if "view" in value else None
    if view is None:
        raise r.error("setup.view", "missing field 'view' (\"playground\" or \"training\")")
    obj = r.table(value, "setup", SETUP_FIELDS[view],
                  ("view", "expression") if view == "playground" else ("view", "config"))
    if view == "playground":
        values = obj.get("values", {})
        if not isinstance(values, dict):
            raise r.error("setup.values", f"must be a table ([setup.values]), got "
                                          f"{value_kind(values)}")
        numbers = {name: float(r.number(v, f"setup.values.{name}"))
                   for name, v in values.items()}
        return Setup("playground",
                     expression=r.string(obj["expression"], "setup.expression", empty=False),
                     values=MappingProxyType(numbers),
                     variant=r.string(obj.get("variant", "engine"), "setup.variant",
                                      tuple(PLAYGROUND_VARIANTS)),
                     retain_graph=r.boolean(obj.get("retain_graph", False),
                                            "setup.retain_graph"),
                     tab=r.string(obj.get("tab", "variables"), "setup.tab", PLAYGROUND_TABS))
    speed: float | None = 10.0
    if "run_speed" in obj:
        raw = obj["run_speed"]
        if raw == MAX_SPEED:
            speed = None
        elif r.number(raw, "setup.run_speed") <= 0:
            raise r.error("setup.run_speed", f"must be steps per second above 0, or "
                                             f"{MAX_SPEED!r}, got {raw}")
        else:
            speed = raw
    return Setup("training", config=_config(r, obj["config"]),
                 forget_zero_grad=r.boolean(obj.get("forget_zero_grad", False),
                                            "setup.forget_zero_grad"),
                 ghost=r.boolean(obj.get("ghost", False), "setup.ghost"),
                 main_tab=r.string(obj.get("main_tab", ""), "setup.main_tab",
                                   ("", *ALL_CONTROLS)),
                 run_speed=speed,
                 run_stop=r.string(obj.get("run_stop", "never"), "setup.run_stop", RUN_STOPS),
                 run_stop_value=r.number(obj.get("run_stop_value", 0.0),
                                         "setup.run_stop_value"))


def _config(r: _Reader, value: Any) -> TrainingConfig:
    kwargs = _settings(r, value, "setup.config")
    try:
        return TrainingConfig(**kwargs)
    except ConfigError as error:
        # The message names the field (dataset must be ...): point at its line.
        named = next((n for n in kwargs if str(error).startswith(n)), "")
        raise r.error(f"setup.config.{named}" if named else "setup.config",
                      str(error)) from None


def _settings(r: _Reader, value: Any, path: str) -> dict[str, Any]:
    """Config fields by name, each of its kind (a table of TrainingConfig's fields)."""
    obj = r.table(value, path, tuple(CONFIG_KINDS), ())
    kwargs: dict[str, Any] = {}
    for name, raw in obj.items():
        where = f"{path}.{name}"
        kind = CONFIG_KINDS[name]
        if kind is str:
            kwargs[name] = r.string(raw, where)
        elif kind is int:
            kwargs[name] = r.whole(raw, where)
        elif kind is float:
            kwargs[name] = r.number(raw, where)
        elif kind == "ints":
            if not isinstance(raw, list) or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in raw):
                raise r.error(where, f"must be a list of whole numbers (neurons per hidden "
                                     f"layer), got {value_kind(raw)}")
            kwargs[name] = tuple(raw)
        else:
            kwargs[name] = r.strings(raw, where)
    return kwargs


def _step(r: _Reader, value: Any, path: str, setup: Setup) -> Step:
    obj = r.table(value, path, STEP_FIELDS, ("do", "look"))
    raw_claims = obj.get("claims", [])
    if not isinstance(raw_claims, list):
        raise r.error(f"{path}.claims", "must be [[steps.claims]] tables after their step")
    if raw_claims and setup.view != "training":
        raise r.error(f"{path}.claims[1]", "claims are read on a training run: this lesson's "
                                           "setup is the playground")
    claims = tuple(_claim(r, item, f"{path}.claims[{i}]", setup)
                   for i, item in enumerate(raw_claims, start=1))
    return Step(do=r.string(obj["do"], f"{path}.do", empty=False),
                look=r.string(obj["look"], f"{path}.look", empty=False),
                panels=r.strings(obj.get("panels", []), f"{path}.panels", STEP_NAMES),
                loop_line=r.string(obj.get("loop_line", ""), f"{path}.loop_line", LOOP_LINES),
                claims=claims)


def _claim(r: _Reader, value: Any, path: str, setup: Setup) -> Claim:
    obj = r.table(value, path, CLAIM_FIELDS, ("quantity", "op", "value", "at_step", "says"))
    quantity = r.string(obj["quantity"], f"{path}.quantity", tuple(QUANTITIES))
    op = r.string(obj["op"], f"{path}.op", tuple(OPS))
    number = r.number(obj["value"], f"{path}.value")
    at_step = r.whole(obj["at_step"], f"{path}.at_step")
    if not 1 <= at_step <= MAX_RUN_STEPS:
        raise r.error(f"{path}.at_step", f"a claim is read at a step from 1 to "
                      f"{MAX_RUN_STEPS:,} (the longest Run), got {at_step:,}")
    runs: dict[str, dict[str, Any] | None] = {"run": {}, "pinned": None}
    for name in runs:
        if name in obj:
            settings = _settings(r, obj[name], f"{path}.{name}")
            assert setup.config is not None
            try:
                setup.config.with_changes(**settings)
            except ConfigError as error:
                raise r.error(f"{path}.{name}", str(error)) from None
            runs[name] = settings
    try:
        return Claim(quantity, op, number, at_step,
                     r.string(obj["says"], f"{path}.says", empty=False),
                     run=runs["run"] or {}, pinned=runs["pinned"],
                     by=r.boolean(obj.get("by", False), f"{path}.by"))
    except ValueError as error:
        raise r.error(path, str(error)) from None
