"""The window's helpers read no member of the main window: they are given what they use.

The layouts (views/layouts) and the file side (views/window/files) are handed, when the
window builds them, the port, the session document, the error reporter, the frame they
arrange and the panels they work with (docs/architecture.md, "The window and its
helpers"). This counts, over every module of the package, the reads of a `MainWindow`
member through a name that holds the window (`window.X`, `w.X`, `host.X`,
`self.window.X`): the figures written in docs/architecture.md come from `member_reads`.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import gradbox

PACKAGE = Path(gradbox.__file__).parent
MAIN_WINDOW = PACKAGE / "views" / "window" / "main_window.py"
HOLDERS = {"w", "window", "host"}  # the names the window is held by
SELF_HOLDERS = {"window", "host", "_window"}  # and self's attributes
# What quitting still asks of the window it closes (`quitting.ClosingWindow`): the
# questions tests replace on the window, and its settings written before it goes.
CLOSING = {"save_settings", "ask_unsaved", "ask_save_failed"}


def window_members(source: str) -> set[str]:
    """The names `MainWindow` defines: its methods and the attributes it sets on self."""
    tree = ast.parse(source)
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "MainWindow")
    names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    for node in ast.walk(cls):
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        names |= {t.attr for t in targets if isinstance(t, ast.Attribute)
                  and isinstance(t.value, ast.Name) and t.value.id == "self"}
    return names


def _holds_window(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in HOLDERS
    if isinstance(node, ast.Attribute):  # self.window, and another's .window
        return (node.attr in SELF_HOLDERS if isinstance(node.value, ast.Name)
                and node.value.id == "self" else node.attr == "window")
    return False


def member_reads(source: str, members: set[str]) -> Counter[str]:
    """Each member of the window read in `source`, with how many times."""
    return Counter(n.attr for n in ast.walk(ast.parse(source))
                   if isinstance(n, ast.Attribute) and n.attr in members
                   and _holds_window(n.value))


def reads_by_module() -> dict[str, Counter[str]]:
    members = window_members(MAIN_WINDOW.read_text(encoding="utf-8"))
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path != MAIN_WINDOW:
            reads = member_reads(path.read_text(encoding="utf-8"), members)
            if reads:
                found[path.relative_to(PACKAGE).as_posix()] = reads
    return found


def test_the_layouts_and_the_file_side_read_no_member_of_the_window() -> None:
    found = reads_by_module()
    helpers = {m: r for m, r in found.items()
               if m.startswith(("views/layouts/", "views/window/files/"))}
    assert {m: set(r) for m, r in helpers.items()} == {"views/window/files/quitting.py": CLOSING}
    total = sum(found.values(), Counter())
    print(f"main window members read from outside it: {len(total)} names, "
          f"{sum(total.values())} reads: {dict(total.most_common())}")


def test_a_planted_read_is_found() -> None:
    members = window_members(MAIN_WINDOW.read_text(encoding="utf-8"))
    planted = ("class Helper:\n"
               "    def run(self):\n"
               "        w = self.window\n"
               "        w.docks['Designer'].show()\n"
               "        self.window.errors.show('x', 'y')\n"
               "        self.exports.window.document.path\n")
    assert member_reads(planted, members) == Counter(docks=1, errors=1, document=1)
