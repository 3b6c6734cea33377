"""The Help menu's table of keys: every menu action's shortcut, read from the menus
themselves, then the keys no menu holds."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu

# Keys that are not a menu's (the menus' own shortcuts are listed from the menus
# themselves, so the list cannot leave one out: it omitted Ctrl+1..4, Ctrl+P, Ctrl+N, Ctrl+Q).
OTHER_KEYS = (
    ("Enter / Tab", "in a number box: use the typed value (keys work again)"),
    ("Esc", "leave a field (a number box gets its old value back)"),
    ("Space", "on a focused switch or button: press it"),
    ("← → Home End on the timeline", "move back and forth; steps stay"),
    ("Click on the plot", "select a point, or add one of the picked class"),
    ("Shift+click", "add a point of the next class"),
    ("Right-click", "remove the nearest point"),
    ("Ctrl+Enter", "in Build it yourself: check your code"),
    ("Tab / Shift+Tab", "in your code: indent / dedent the selected lines (Ctrl+Tab leaves it)"),
)


def shortcuts_html(menus: Sequence[QMenu]) -> str:
    """Every menu action's shortcut, then the keys no menu holds, as a table."""
    rows: list[tuple[str, str]] = []
    for menu in menus:
        for action in _all_actions(menu):
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            if keys:
                where = menu.title().replace("&", "")
                rows.append((keys, f"{action.text().replace('&', '')} ({where})"))
    rows += OTHER_KEYS
    cells = "".join(f"<tr><td><b>{html.escape(k)}</b></td><td>{html.escape(t)}</td></tr>"
                    for k, t in rows)
    return f"<table>{cells}</table>"


def _all_actions(menu: QMenu) -> list[QAction]:
    found = []
    for action in menu.actions():
        if action.menu() is not None:
            found += _all_actions(action.menu())
        elif not action.isSeparator():
            found.append(action)
    return found
