"""The house shows its architecture: layers import one way, no circles, rooms of a readable size.

Layers, lowest first. A module may import its own layer and the layers below it:

    formatting        how a number is printed (no gradbox imports)
    autograd          the engine and the module library
    graph             the computation graph as data (a run's snapshot carries one)
    training          a run of a network
    files, teaching   what leaves the app; lessons and the wrong variants (side by side:
                      neither imports the other)
    runner            the trainer in its own process, which opens session files itself
                      (so the window never builds or holds a second copy of a run)
    build             Build it yourself: the learner's engine checked in a sandboxed child
                      (beside runner: neither imports the other)
    port              the views' port onto a session (Qt, no widget): over the training
                      process, or in this process for widget tests
    views             Qt
    app               main(): the application, the window, the command line
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import gradbox

PACKAGE = Path(gradbox.__file__).parent
LAYERS: dict[str, int] = {
    "formatting": 0,
    "autograd": 1,
    "graph": 2,
    "training": 3,
    "files": 4,
    "teaching": 4,
    "runner": 5,
    "build": 5,
    "port": 6,
    "views": 7,
    "app": 8,
    "__main__": 9,
    "__init__": 1,
}
MAX_LINES = 700
MAX_MODULES_PER_FOLDER = 15


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(path: Path, *, top_level_only: bool) -> set[str]:
    """gradbox modules `path` imports (`from gradbox.x import y` counts gradbox.x.y if a module)."""
    modules = all_modules()
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and _is_type_checking(node):
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("gradbox"))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradbox"):
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add(sub if sub in modules else node.module)
            # A function-level import runs later, so it cannot close a circle at import
            # time; it still counts for the layer direction.
            if top_level_only and not isinstance(node, (ast.If, ast.Try)):
                continue
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    visit([c for c in children if isinstance(c, ast.stmt)])

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    found.discard(module_name(path))
    return found


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_module_has_a_layer() -> None:
    for name in all_modules():
        assert layer_of(name) in LAYERS, f"{name}: put it in a layer (tests/test_architecture.py)"


def test_layers_import_downwards_only() -> None:
    wrong = []
    for name, path in all_modules().items():
        mine = layer_of(name)
        for target in imports(path, top_level_only=False):
            theirs = layer_of(target)
            if theirs == mine or target == "gradbox":
                continue
            if LAYERS[theirs] >= LAYERS[mine] and not (mine == "__init__" and theirs == "autograd"):
                wrong.append(f"{name} ({mine}) imports {target} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    for name, path in all_modules().items():
        graph[name] = {t for t in imports(path, top_level_only=True) if t != "gradbox"}
    # Tarjan's strongly connected components, iteratively.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []
    counter = 0
    for start in list(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    assert not cycles, f"import circles: {cycles}"


def test_long_modules_say_why() -> None:
    for name, path in all_modules().items():
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > MAX_LINES:
            doc = ast.get_docstring(ast.parse(text)) or ""
            assert ("lines" in doc and "why" in doc.lower()) or "one module" in doc.lower(), (
                f"{name} has {text.count(chr(10))} lines: split it, or say at its top why not")


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]:
        if folder.name == "__pycache__":
            continue
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= MAX_MODULES_PER_FOLDER, f"{folder}: {len(modules)} modules"


def test_every_package_says_what_it_holds_and_may_import() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.parent.name}/__init__.py: say what the package holds"


def test_only_the_controller_imports_the_trainer_on_the_view_side() -> None:
    importers = sorted(
        name for name, path in all_modules().items()
        if layer_of(name) in ("port", "views", "app")
        and "gradbox.training.trainer" in imports(path, top_level_only=False)
    )
    assert importers == ["gradbox.port.controller"], importers
