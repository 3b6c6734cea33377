"""The session as the window's document: which file it is, its title, whether it has
unsaved changes, and the files opened lately.

One `SessionDocument` per window. The file-side helpers (Open, Save, resume, quitting,
the class exports) read and set it instead of the window's attributes; the window
shows its title whenever it changes.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal

RECENT_KEY = "recent_sessions"  # settings: the sessions opened or saved lately, newest first
RECENT_COUNT = 8


class SessionDocument(QObject):
    """The session's file (`path`, None until it has one), its `title`, its unsaved mark
    (`dirty`, kept by the autosaver) and the `recent` files."""

    changed = Signal()  # the path or the unsaved mark changed: the title follows

    def __init__(self, settings: QSettings | None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self._path: Path | None = None
        self._dirty = False

    @property
    def path(self) -> Path | None:
        return self._path

    @path.setter
    def path(self, path: Path | None) -> None:
        if path != self._path:
            self._path = path
            self.changed.emit()

    def title(self) -> str:
        """What the window's title calls the session ("untitled" before it has a file)."""
        return self._path.name if self._path else "untitled"

    @property
    def dirty(self) -> bool:
        """Whether the session has changes not saved to a file."""
        return self._dirty

    def set_dirty(self, dirty: bool) -> None:
        if bool(dirty) != self._dirty:
            self._dirty = bool(dirty)
            self.changed.emit()

    def recent(self) -> list[str]:
        """The sessions opened or saved lately, newest first."""
        if self.settings is None:
            return []
        value = self.settings.value(RECENT_KEY, [])
        return [str(v) for v in (value if isinstance(value, list) else [value]) if v]

    def remember(self, path: Path) -> None:
        """`path` was opened or saved: first among the recent files."""
        if self.settings is None:
            return
        here = str(path.resolve())
        recent = [here] + [p for p in self.recent() if p != here]
        self.settings.setValue(RECENT_KEY, recent[:RECENT_COUNT])
