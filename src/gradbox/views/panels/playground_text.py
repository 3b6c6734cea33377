"""How the playground words what happened: the message after an action (the one before it
kept, dimmed), and a parse error with a caret under the offending character."""

from __future__ import annotations

import html
import re

from PySide6.QtGui import QTextDocument

from gradbox.teaching.expression import ExpressionError
from gradbox.teaching.playground import Outcome
from gradbox.views.palette import ERROR_BOX, NOTE_BOX

MESSAGE_STYLE = {
    "info": "background: #eef4fb; color: #1d3557; border: 1px solid #b9cfe6;",
    "warning": "background: {}; color: {}; border: 1px solid {};".format(*NOTE_BOX),
    "error": "background: {}; color: {}; border: 1px solid {};".format(*ERROR_BOX),
}
CARET_CONTEXT = 56  # characters of the offending line shown around the caret


def caret_text(text: str, line: int, column: int, end: int | None = None,
               context: int = CARET_CONTEXT) -> tuple[str, str]:
    """The offending line of `text` and a caret line under `column` (1-based).

    A line longer than `context` is cut to the part around the caret, with "…" where it
    was cut: the caret must stay under its character, so this text cannot wrap, and a
    300-character line would widen the panel past the window.
    """
    lines = text.split("\n")
    shown = lines[line - 1] if 0 < line <= len(lines) else ""
    width = max(1, (end - column) if end is not None and end > column else 1)
    start = 0
    if len(shown) > context:
        start = max(0, min(column - 1 - context // 2, len(shown) - context))
        cut = shown[start:start + context]
        shown = ("…" if start else "") + cut + ("…" if start + context < len(shown) else "")
        start -= 1 if start else 0  # the "…" takes the first cut character's place
        width = min(width, context)
    return shown, " " * max(0, column - 1 - start) + "^" * width


def breakable(text: str, every: int = 24) -> str:
    """`text` with a zero-width space every `every` characters of any longer word, so a
    word-wrapping label can wrap a 300-character name instead of widening its panel."""
    def split(match: re.Match[str]) -> str:
        word = match.group(0)
        return "\u200b".join(word[i:i + every] for i in range(0, len(word), every))
    return re.sub(rf"\S{{{every + 1},}}", split, text)


def outcome_html(outcome: Outcome) -> str:
    rich = f"<b>{html.escape(breakable(outcome.title))}</b>"
    if outcome.quote:
        # The engine's words verbatim, set apart as PyTorch prints them.
        rich += (f"<pre style='white-space: pre-wrap'>{html.escape(breakable(outcome.quote))}"
                 "</pre>")
    if outcome.text:
        rich += ("" if outcome.quote else "<br>") + html.escape(breakable(outcome.text))
    return rich


def message_html(latest: Outcome, previous: Outcome | None) -> str:
    """The latest outcome, and the one before it dimmed under a rule if it is kept."""
    rich = outcome_html(latest)
    if previous is not None:
        rich += ("<hr><div style='color: #555555'><small>Before that:</small><br>"
                 f"{outcome_html(previous)}</div>")
    return rich


def parse_error_html(text: str, error: ExpressionError, last_good: str) -> str:
    """The offending line, a caret under where it went wrong, the message, and the
    expression still shown."""
    shown, caret = caret_text(text, error.line, error.position, error.end)
    where = f"line {error.line}, column {error.position}" if error.line > 1 else \
        f"column {error.position}"
    return (f"<pre style='margin:0'>{html.escape(shown)}\n"
            f"{html.escape(caret)}</pre>"
            f"<b>{html.escape(breakable(error.message))}</b> "
            f"({where}). Still showing the last good expression: "
            f"<code>{html.escape(breakable(last_good))}</code>")


def index_of(text: str, line: int, column: int) -> int:
    """The character index of a 1-based (line, column) in `text`."""
    lines = text.split("\n")
    return sum(len(x) + 1 for x in lines[: line - 1]) + column - 1


def plain(rich: str) -> str:
    """Rich text as a reader sees it."""
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText().replace("\u200b", "")  # the break points are no text
