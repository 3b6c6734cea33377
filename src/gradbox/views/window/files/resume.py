"""Pick up where you left off: a normal quit keeps the session, the next start reopens it.

On quit the whole run (to its end, with the timeline's place in it) and the run controls
-- speed, stop condition, the tab on show, teacher mode -- are written to
`last-session.gradbox` beside the autosave, by the session writer thread (the app waits
for it, as it does for a save on exit). The settings remember which of the user's files
it was (if any) and whether it had unsaved changes. The next start without a file to open
reopens it and says so in one line; File → New starts afresh, and a setting (File ▸
"Reopen the last session at start") turns the reopening off. With it off, quitting asks
about unsaved changes as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QTabWidget

from gradbox.files import sessions as persistence
from gradbox.files.session_controls import SessionControls
from gradbox.formatting import counted
from gradbox.port.protocol import SessionPort
from gradbox.views.background import BackgroundTask, Progress
from gradbox.views.layouts.workspaces import WORKSPACES, Workspaces
from gradbox.views.panels.lesson_panel import LessonPanel
from gradbox.views.window.errors import ErrorReporter
from gradbox.views.window.files.autosave import Autosaver, set_aside
from gradbox.views.window.files.document import SessionDocument
from gradbox.views.window.files.saving import SessionSaver
from gradbox.views.window.message_bar import MessageBar
from gradbox.views.window.run_controls import RunControls, speed_text

log = logging.getLogger(__name__)

class _Reading(Protocol):
    """What Resume asks of the File menu's side (a SessionFiles)."""

    def read(self, label: str, work: Callable[[Progress], object],
             done: Callable[..., None]) -> BackgroundTask: ...
    def hand_over(self, task: BackgroundTask, path: Path, what: str,
                  shown: Callable[[], None], cannot: Callable[[str], None],
                  said: bool = True) -> None: ...
    def expect_saved(self, controls: SessionControls | None, end: int,
                     saved: bool) -> None: ...
    def show_controls(self, controls: SessionControls | None, end: int,
                      mark: bool = True) -> None: ...


LAST_SESSION_NAME = "last-session.gradbox"
START_FRESH_KEY = "start_fresh"  # settings: True -> every start is a fresh run
FILE_KEY = "last_session/file"  # the user's file the kept session was, "" if untitled
DIRTY_KEY = "last_session/unsaved"  # it had changes not saved to that file


def last_session_path(autosave_path: Path) -> Path:
    return autosave_path.with_name(LAST_SESSION_NAME)


def starts_fresh(settings: QSettings | None) -> bool:
    return settings is None or _flag(settings.value(START_FRESH_KEY, False))


def _flag(value: object) -> bool:
    # QSettings gives back "true"/"false" strings from an INI file, bools elsewhere.
    return value is True or str(value).lower() == "true"


class KeptControls:
    """The run controls a session file keeps, where the window shows them: the
    toolbar's speed and stop condition, the tab, teacher mode, the workspace, the
    timeline's place (through the port)."""

    def __init__(self, port: SessionPort, run: RunControls, tabs: QTabWidget,
                 lessons: LessonPanel, workspaces: Workspaces) -> None:
        self.port = port
        self.run = run
        self.tabs = tabs
        self.lessons = lessons
        self.workspaces = workspaces

    def current(self) -> SessionControls:
        """What the controls show now (the position is the saver's to fill)."""
        return SessionControls(
            speed=self.run.speed.currentData(), stop=self.run.kind(),
            stop_value=float(self.run.stop_value.value()),
            tab=self.tabs.currentWidget().objectName(),
            teacher=self.lessons.teacher.isChecked(),
            workspace=self.workspaces.current.key if self.workspaces.current else "")

    def show(self, controls: SessionControls) -> None:
        """Show the controls a file kept; the timeline goes to its step once the run is in."""
        self.run.set_controls(controls.speed, controls.stop, controls.stop_value)
        current = self.workspaces.current
        if controls.workspace and (current is None or current.key != controls.workspace) \
                and controls.workspace in {space.key for space in WORKSPACES}:
            self.workspaces.switch(controls.workspace)  # then the tab the user had on it
        # Teacher mode before the tab: presenting puts panels (and tabs) where it wants them.
        if self.lessons.teacher.isChecked() != controls.teacher:
            self.lessons.set_teacher_mode(controls.teacher)
        tabs = self.tabs
        for index in range(tabs.count()):
            # by the page's name (a tab's title changes with the data: 'Fit' for regression)
            if controls.tab in (tabs.widget(index).objectName(), tabs.tabText(index)):
                tabs.setCurrentIndex(index)
        if controls.position is not None:
            self.port.move_timeline(controls.position)


def describe(controls: SessionControls | None, end: int, name: str) -> str:
    """The one line that says what came back (`end`: the steps the run holds)."""
    at = (f"step {controls.position} of {end}" if controls is not None
          and controls.position is not None else counted(end, "step"))
    parts = [f"Picked up where you left off: {name}, {at}"]
    if controls is not None:
        parts.append(speed_text(controls.speed))
        if controls.teacher:
            parts.append("teacher mode")
    return " · ".join(parts) + " (File → New starts afresh)"


def load_kept(path: Path) -> tuple[tuple[int, SessionControls | None] | None, str]:
    """The session kept at the last quit, checked at start (off the UI thread, see
    Resume.reopen): ((its steps, controls), "") or (None, why not) -- (None, "") when
    there is none. One that cannot be read is set aside, not offered again and not
    thrown away. (The training process reads the run itself: see `Resume.reopen`.)"""
    if not path.is_file():
        return None, ""
    try:
        state, controls = persistence.load_state_with_controls(path)
        return (state.step, controls), ""
    except (persistence.SessionError, OSError, MemoryError) as error:
        return None, unreadable(path, error)


def unreadable(path: Path, error: object) -> str:
    """The kept session cannot be reopened: set it aside and say why, in words."""
    log.warning("the last session %s cannot be reopened: %s", path, error)
    aside = set_aside(path)
    kept = f" The file was kept as {aside}." if aside else ""
    return (f"The session kept at the last quit could not be read: {error}. "
            f"A fresh run is open instead.{kept}")


class Resume:
    """Keeps the session on quit and brings it back at the next start."""

    def __init__(self, files: _Reading, document: SessionDocument, saver: SessionSaver,
                 autosaver: Autosaver | None, messages: MessageBar, reporter: ErrorReporter,
                 settings: QSettings, autosave_path: Path) -> None:
        self.files = files  # the File menu's side: it reads the file and hands it over
        self.document = document
        self.saver = saver
        self.autosaver = autosaver
        self.messages = messages
        self.reporter = reporter
        self.settings = settings
        self.path = last_session_path(autosave_path)
        self.reopening = False  # the kept session is being read: a quit must not replace it

    def add_menu_entry(self, menu: QMenu) -> None:
        reopen = QAction("Reopen the last session at start", menu, checkable=True)
        reopen.setChecked(self.enabled)
        reopen.setToolTip("On: quitting keeps this session and the next start brings it "
                          "back as it was. Off: every start is a fresh run")
        reopen.setStatusTip(reopen.toolTip())
        reopen.toggled.connect(self.set_enabled)
        menu.addAction(reopen)

    @property
    def enabled(self) -> bool:
        return not starts_fresh(self.settings)

    def set_enabled(self, on: bool) -> None:
        self.settings.setValue(START_FRESH_KEY, not on)
        self.settings.sync()

    def reopen(self) -> None:
        """At start, the window already up on a fresh run: read the kept session off the
        UI thread (a progress bar with Cancel past half a second) and show it when it
        arrives, or say why it cannot be. Until it arrives, a quit leaves the file as it
        is; Cancel starts afresh, as File → New does."""
        if not self.path.is_file():
            return
        self.reopening = True
        what = "Reopened the session kept at the last quit"

        def done(result: tuple[tuple[int, SessionControls | None] | None, str] | None,
                 error: BaseException | None) -> None:
            if error is not None:
                raise error  # load_kept answers every expected failure in words
            assert result is not None
            kept, why = result
            if kept is None:
                if why:
                    self.reporter.show("Could not reopen the last session", why)
                return
            end, controls = kept
            unsaved = _flag(self.settings.value(DIRTY_KEY, False))
            self.files.expect_saved(controls, end, saved=not unsaved)

            def cannot(reason: str) -> None:
                self.reporter.show("Could not reopen the last session",
                                       unreadable(self.path, reason))
            # One line says it: `reopened`'s (the session's own came first, in a row).
            self.files.hand_over(task, self.path, what,
                                 lambda: self.reopened(end, controls), cannot, said=False)

        def finished() -> None:
            self.reopening = False
        task = self.files.read("Reopening the last session…",
                                      lambda _progress: load_kept(self.path), done)
        task.finished.connect(finished)

    def keep(self) -> BaseException | None:
        """At quit, with the run paused and the training process still there: write the
        session for the next start. The error (also logged) if it could not be written:
        the window then stays, so that nothing is lost. While the kept session is still
        being read at start, the file stays as it is (it is that session)."""
        if self.reopening:
            return None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            log.error("keeping the session in %s failed: %s", self.path, error)
            return error
        failure = self.saver.save_and_wait(self.path)
        if failure is not None:
            log.error("keeping the session in %s failed: %s", self.path, failure)
            return failure
        path = self.document.path
        self.settings.setValue(FILE_KEY, str(path) if path else "")
        self.settings.setValue(DIRTY_KEY, self.document.dirty)
        self.settings.sync()
        return None

    def reopened(self, end: int, controls: SessionControls | None) -> None:
        """The kept run (`end` steps long) is in: put the controls, the title and the
        unsaved mark back as they were, and say so."""
        file = str(self.settings.value(FILE_KEY, "") or "")
        self.document.path = Path(file) if file else None
        unsaved = _flag(self.settings.value(DIRTY_KEY, False))
        self.files.show_controls(controls, end, mark=False)
        if unsaved and self.autosaver is not None:
            self.autosaver.mark_unsaved()
        self.messages.show_message(describe(controls, end, self.document.title()))
