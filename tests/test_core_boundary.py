"""The core (engine, nn, losses, optim, datasets, training, graph layout) never imports Qt."""

import ast
from pathlib import Path

import gradbox

PACKAGE = Path(gradbox.__file__).parent
QT_MODULES = ("PySide6", "pyqtgraph", "shiboken6", "PyQt5", "PyQt6")


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def core_modules() -> list[Path]:
    return [
        p for p in PACKAGE.rglob("*.py")
        if p.name not in ("app.py", "__main__.py")
        and not {"views", "port"} & set(p.relative_to(PACKAGE).parts)
    ]


def test_core_modules_exist() -> None:
    names = {p.stem for p in core_modules()}
    assert {"engine", "nn", "losses", "optim", "datasets"} <= names


def test_no_core_module_imports_qt() -> None:
    for path in core_modules():
        for module in _imported_modules(path):
            assert not module.startswith(QT_MODULES), f"{path.name} imports {module}"


def test_the_port_uses_qt_core_but_no_widget() -> None:
    # The views' port (gradbox.port) is Qt's event loop and signals, never a widget: a
    # test or a benchmark can drive a session through it without drawing anything.
    for path in (PACKAGE / "port").glob("*.py"):
        for module in _imported_modules(path):
            assert not module.startswith(("PySide6.QtWidgets", "PySide6.QtGui", "pyqtgraph")), (
                f"{path.name} imports {module}")
