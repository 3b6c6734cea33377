"""The file dialogs: where they open (beside the session's file, else the home folder),
and the file name they return, with its suffix added when the person left it out."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget


def start_directory(session_path: Path | None) -> str:
    """Where a file dialog opens: the folder of the session's file, else the home folder."""
    return str(session_path.parent) if session_path else str(Path.home())


def ask_open(parent: QWidget, title: str, pattern: str, near: Path | None) -> Path | None:
    """The file to read, or None if the dialog was cancelled."""
    path, _ = QFileDialog.getOpenFileName(parent, title, start_directory(near), pattern)
    return Path(path) if path else None


def ask_save(parent: QWidget, title: str, pattern: str, near: Path | None,
             suffixes: tuple[str, ...] = ()) -> Path | None:
    """The file to write, or None if the dialog was cancelled; a name that ends with
    none of `suffixes` gets the first."""
    path, _ = QFileDialog.getSaveFileName(parent, title, start_directory(near), pattern)
    if not path:
        return None
    if suffixes and not path.endswith(suffixes):
        path += suffixes[0]
    return Path(path)
