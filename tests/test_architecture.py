"""The house shows its architecture: layers import one way, no circles, rooms of a readable size.

Every import counts -- at the top, inside a function, under `if TYPE_CHECKING:` -- since each
is an arrow a reader follows; a module has at most 700 lines and a folder at most 15
modules (its __init__ included), with no phrase that waives either.

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
import shutil
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


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package): p for p in package.rglob("*.py")}


def imports(path: Path, modules: dict[str, Path] | None = None,
            package: Path = PACKAGE) -> set[str]:
    """The gradbox modules `path` imports, wherever the import stands (`from gradbox.x
    import y` counts gradbox.x.y if that is a module, else gradbox.x)."""
    modules = all_modules(package) if modules is None else modules
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gradbox"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gradbox"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    found.discard(module_name(path, package))
    found.discard("gradbox")
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = all_modules(package)
    return {name: imports(path, modules, package) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
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
                        found.append(sorted(component))
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
        for target in imports(path):
            theirs = layer_of(target)
            if theirs == mine or target == "gradbox":
                continue
            if LAYERS[theirs] >= LAYERS[mine] and not (mine == "__init__" and theirs == "autograd"):
                wrong.append(f"{name} ({mine}) imports {target} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_no_import_circles() -> None:
    found = circles(import_graph())
    assert not found, "import circles (every import counts):\n" + "\n".join(
        " <-> ".join(circle) for circle in found)


def test_a_planted_circle_is_found_however_it_is_imported(tmp_path: Path) -> None:
    """Circles planted in a copy of the package, one through an import that only a type
    checker runs and one through an import inside a function, are each found."""
    copy = tmp_path / "gradbox"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert circles(import_graph(copy)) == circles(import_graph())
    history = copy / "training" / "history.py"
    history.write_text(history.read_text(encoding="utf-8") + (
        "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from gradbox.training.trainer import Trainer\n"), encoding="utf-8")
    engine = copy / "autograd" / "engine.py"
    engine.write_text(engine.read_text(encoding="utf-8") + (
        "\n\ndef _planted() -> object:\n    from gradbox.autograd.nn import MLP\n"
        "    return MLP\n"), encoding="utf-8")
    found = circles(import_graph(copy))
    assert any({"gradbox.training.history", "gradbox.training.trainer"} <= set(c)
               for c in found), found
    assert any({"gradbox.autograd.engine", "gradbox.autograd.nn"} <= set(c)
               for c in found), found


def test_no_module_is_longer_than_700_lines() -> None:
    long = {name: path.read_text(encoding="utf-8").count("\n")
            for name, path in all_modules().items()}
    assert {name: n for name, n in long.items() if n > MAX_LINES} == {}, "split along a seam"


def test_no_folder_holds_more_than_fifteen_modules() -> None:
    crowded = {}
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]:
        modules = list(folder.glob("*.py"))  # its __init__ is a module too
        if len(modules) > MAX_MODULES_PER_FOLDER:
            crowded[str(folder.relative_to(PACKAGE))] = len(modules)
    assert crowded == {}


def test_every_package_says_what_it_holds_and_may_import() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.parent.name}/__init__.py: say what the package holds"


def test_only_the_controller_imports_the_trainer_on_the_view_side() -> None:
    importers = sorted(
        name for name, path in all_modules().items()
        if layer_of(name) in ("port", "views", "app")
        and "gradbox.training.trainer" in imports(path)
    )
    assert importers == ["gradbox.port.controller"], importers
