"""The File menu and what it does: sessions (new, open, save, recent, the autosaved copy
offered at launch), dataset CSV import and export, and the exports of plots, graph,
history, parameters, model and PyTorch script. Every dialog is parented to the window; a
file that cannot be read or written is a message naming it, and loses nothing."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QSettings, Qt, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from gradbox.files import exports, points_csv
from gradbox.files import sessions as persistence
from gradbox.port.protocol import SessionPort
from gradbox.training import datasets
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.views.background import BackgroundTask, Progress, run_in_background
from gradbox.views.named import plain_tip
from gradbox.views.window.errors import ErrorReporter
from gradbox.views.window.files.autosave import Autosaver, describe, set_aside
from gradbox.views.window.files.class_exports import ClassExports
from gradbox.views.window.files.dialogs import ask_open, ask_save
from gradbox.views.window.files.document import SessionDocument
from gradbox.views.window.files.resume import KeptControls, Resume
from gradbox.views.window.files.saving import SessionSaver
from gradbox.views.window.message_bar import MessageBar

log = logging.getLogger(__name__)

TEXT_EXPORTS = {  # kind: (dialog title, file filter, suffix)
    "history": ("Export loss history", "CSV files (*.csv)", ".csv"),
    "parameters": ("Export parameters", "CSV files (*.csv)", ".csv"),
    "model": ("Export model", "JSON files (*.json)", ".json"),
    "pytorch": ("Export as PyTorch script", "Python files (*.py)", ".py"),
}

MenuAction = Callable[..., QAction]  # MainWindow._menu_action: (menu, text, slot, keys, tip)


class SessionFiles(QObject):
    """The window's files: which session is open, and every dialog that reads or writes."""

    def __init__(self, window: QWidget, port: SessionPort, *, document: SessionDocument,
                 reporter: ErrorReporter, saver: SessionSaver, autosaver: Autosaver | None,
                 messages: MessageBar, controls: KeptControls, class_exports: ClassExports,
                 plots: tuple[QWidget, QWidget], graph: QWidget | None,
                 ending: Callable[[], bool], settings: QSettings | None,
                 autosave_path: Path | None) -> None:
        """`window`: the dialogs' parent; `plots`: the decision boundary and the loss
        curve, as File → Export saves them; `ending()`: a signal is ending the app (no
        question may wait for an answer)."""
        super().__init__(window)
        self.window = window
        self.controller = port
        self.document = document
        self.reporter = reporter
        self.saver = saver
        self.autosaver = autosaver
        self.messages = messages
        self.controls = controls
        self.class_exports = class_exports
        self.plots = plots
        self.graph = graph
        self.ending = ending
        self.settings = settings
        # A normal quit keeps the session for the next start (only where the launcher
        # gives the window its settings and data directory; tests and screenshots don't).
        self.resume = (Resume(self, document, saver, autosaver, messages, reporter, settings,
                              autosave_path)
                       if settings is not None and autosave_path is not None else None)
        self.recent_menu: QMenu | None = None
        # The autosaved copy is being offered: it must outlive an end while the question is up.
        self.offering_restore = False
        self.reading: list[BackgroundTask] = []  # files being read, off the UI thread
        # Once a snapshot at this step arrives, the session on screen is the file's.
        self._mark_saved_at: int | None = None
        self.controller.snapshot_changed.connect(self._on_snapshot)

    def add_menu_entries(self, menus: dict[str, QMenu], m: MenuAction) -> None:
        """The File menu's entries (Quit is the window's) and its Export submenu."""
        file = menus["&File"]
        m("&File", "&New", self.new_session, "Ctrl+N", "Start again from the default settings")
        m("&File", "&Open session…", self.open_session_dialog, "Ctrl+O", "Open a saved session")
        self.recent_menu = file.addMenu("Open &recent")
        self.recent_menu.setToolTip("Sessions opened or saved lately")
        self._refresh_recent_menu()
        m("&File", "&Save session", self.save_session, "Ctrl+S", "Save this session")
        m("&File", "Save session &as…", self.save_session_as, "Ctrl+Shift+S",
          "Save this session to a new file")
        file.addSeparator()
        m("&File", "&Import dataset CSV…", self.import_csv_dialog, None,
          "Load points from a CSV file with columns x,y,label")
        m("&File", "&Export dataset CSV…", self.export_csv_dialog, None,
          "Save the points as a CSV file with columns x,y,label")
        export = file.addMenu("E&xport")
        menus["Export"] = export
        m("Export", "&Decision boundary image…",
          lambda: self.export_plot_dialog(self.plots[0]), None,
          "Save the plot as PNG or SVG")
        m("Export", "&Loss curve image…",
          lambda: self.export_plot_dialog(self.plots[1]), None,
          "Save the plot as PNG or SVG")
        if self.graph is not None:
            m("Export", "Computation &graph…", self.export_graph_dialog, None,
              "Save the computation graph as PNG, SVG or Graphviz DOT")
        export.addSeparator()
        m("Export", "Loss &history as CSV…", lambda: self.export_text_dialog("history"), None,
          "Every step's losses, accuracies, gradient norm and learning rate")
        m("Export", "&Parameters as CSV…", lambda: self.export_text_dialog("parameters"), None,
          "Every parameter's value and gradient now")
        m("Export", "&Model as JSON…", lambda: self.export_text_dialog("model"), None,
          "The architecture and weights")
        m("Export", "As &PyTorch script…", lambda: self.export_text_dialog("pytorch"), None,
          "A standalone script that trains the same network from the same weights with "
          "torch, and checks it gets the same losses")

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        """An opened session is the saved state: the first snapshot after it is marked so."""
        if self._mark_saved_at == snapshot.step and self.autosaver is not None:
            self._mark_saved_at = None
            self.autosaver.mark_saved(snapshot)

    @Slot()
    def new_session(self) -> None:
        self.document.path = None
        self.controller.send(Session.new_run, TrainingConfig(),
                             "New session with the default settings")

    @Slot()
    def open_session_dialog(self) -> None:
        path = ask_open(self.window, "Open session",
                        "gradbox sessions (*.gradbox *.gradbox.json *.json)",
                        self.document.path)
        if path:
            self.open_session(path)

    def open_at_start(self, named: Path | None, crashed: Path | None,
                      ended_by: str = "") -> None:
        """What a start opens, read off the UI thread while the window is already up (a
        progress bar with Cancel past half a second; the window fills in when the run
        arrives): the file named on the command line; else the crash copy, offered; else
        the session kept at the last quit, unless the user starts fresh always."""
        if named is not None:
            self.open_session(named, at_start=True)
        elif crashed is not None:
            self.offer_restore(crashed, ended_by=ended_by)
        elif self.resume is not None and self.resume.enabled:
            self.resume.reopen()

    def open_session(self, path: Path, at_start: bool = False) -> None:
        """Check a session file on a thread of its own (a progress bar with Cancel shows
        past half a second), then have the training process open it; on any problem,
        show why and keep the current one. `at_start`: the file named on the command
        line (what a killed save left beside it goes). The window keeps only the run's
        length and controls: the training process reads and builds the run itself."""
        instead = ("A fresh session is open instead." if at_start
                   else "Your current session is unchanged.")

        def cannot(why: object) -> None:
            self._mark_saved_at = None
            self.reporter.show("Could not open the session",
                                   f"{path.name} could not be opened: {why}\n\n{instead}")

        def work(_progress: Progress) -> tuple[int, persistence.SessionControls | None]:
            if at_start:
                persistence.remove_stale_temp_files(path)
            state, controls = persistence.load_state_with_controls(path)
            return state.step, controls

        def done(result: tuple[int, persistence.SessionControls | None] | None,
                 error: BaseException | None) -> None:
            if isinstance(error, (persistence.SessionError, OSError)):
                log.warning("cannot open %s: %s", path, error)
                cannot(error)
                return
            if error is not None:
                raise error  # a bug: the unexpected-error dialog, with its traceback
            assert result is not None
            steps, controls = result

            def opened() -> None:
                self.document.path = path
                self._remember_recent(path)
                self.show_controls(controls, steps, mark=False)
            self.expect_saved(controls, steps)  # before its snapshot can arrive
            self.hand_over(task, path, f"Opened {path.name}", opened, cannot)
        task = self.read(f"Opening {path.name}…", work, done)

    def hand_over(self, task: BackgroundTask, path: Path, what: str,
                  opened: Callable[[], None], cannot: Callable[[str], None],
                  said: bool = True) -> None:
        """`path` is checked: the training process opens it, as `what`, while `task`'s
        progress dialog stays (a 1000x1000 network takes seconds to build). Then
        `opened()`, or `cannot(why)`. Cancel meanwhile takes the run before back once
        the file's is in, as Undo does (Redo opens it again). Not `said`: only `opened`
        says it (the session's line about what it replaced is not put up)."""
        task.keep_open(f"{task.label} building its network")

        def landed(_steps: int) -> None:
            try:
                if task.cancel_pressed:
                    self._mark_saved_at = None
                    self.controller.send(Session.undo)
                elif not task.cancelled:  # (cancelled, not pressed: the window is closing)
                    opened()
            finally:  # after: whoever waits for the task's end sees it whole
                task.end()

        def refused(why: str) -> None:
            try:
                if not task.cancel_pressed:
                    cannot(why)
            finally:
                task.end()
        self.controller.open_file(path, what, landed, refused, said)

    def read(self, label: str, work: Callable[[Progress], object],
             done: Callable[[Any, BaseException | None], None]) -> BackgroundTask:
        """`work` on a thread of its own, `done(result, error)` back here unless the
        progress dialog's Cancel was pressed; `reading` holds it until it ends."""
        task = run_in_background(self.window, label, work, done)
        self.reading.append(task)
        task.finished.connect(lambda: self.reading.remove(task))
        return task

    def cancel_reading(self) -> None:
        """Drop every file still being read (the window is closing): none arrives."""
        for task in list(self.reading):
            if not task.cancelled:
                task.cancel()

    def show_controls(self, controls: persistence.SessionControls | None, end: int,
                      saved: bool = True, mark: bool = True) -> None:
        """A run from a file is coming in: show the run controls it kept, and (if the file
        is the user's own, `saved`) count the run saved once it shows at the step the
        file's timeline stood at (`mark`: not counted yet, see `expect_saved`)."""
        if mark:
            self.expect_saved(controls, end, saved)
        if controls is not None:
            self.controls.show(controls)

    def expect_saved(self, controls: persistence.SessionControls | None, end: int,
                     saved: bool = True) -> None:
        """Count the run about to come in saved (if `saved`) once it shows at the step the
        file's timeline stood at (`end`: the run's length, if the controls name none)."""
        position = controls.position if controls is not None else None
        self._mark_saved_at = (end if position is None else position) if saved else None

    @Slot()
    def save_session(self) -> None:
        if self.document.path is None:
            self.save_session_as()
        else:
            self._save_to(self.document.path)

    @Slot()
    def save_session_as(self) -> None:
        path = ask_save(self.window, "Save session", "gradbox sessions (*.gradbox)",
                        self.document.path, (".gradbox", ".json"))
        if path:
            self._save_to(path)

    def _save_to(self, path: Path) -> None:
        self.document.path = path
        self._remember_recent(path)

        def done(written: Snapshot, error: BaseException | None) -> None:
            if error is not None:
                reason = error if isinstance(error, persistence.SessionError) else (
                    "there was not enough memory" if isinstance(error, MemoryError)
                    else getattr(error, "strerror", None) or error)
                self.reporter.show("Could not save the session",
                                f"{path.name} was not saved: {reason}\n\nThe session is "
                                "still open; any earlier copy of the file is unchanged.")
                return
            if self.autosaver is not None:
                self.autosaver.mark_saved(written)
            self.controller.message.emit(f"Saved {path.name}")
        self.saver.save(path, done)

    def _remember_recent(self, path: Path) -> None:
        self.document.remember(path)
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        for text in self.document.recent():
            action = self.recent_menu.addAction(Path(text).name)
            action.setToolTip(plain_tip(text))
            action.triggered.connect(lambda _=False, t=text: self.open_session(Path(t)))
        self.recent_menu.setEnabled(bool(self.recent_menu.actions()))

    def offer_restore(self, path: Path, ask: Callable[[str], bool | None] | None = None,
                      ended_by: str = "", answered: Callable[[bool], None] | None = None
                      ) -> None:
        """At launch, with a crash copy found: read it off the UI thread, say what it
        holds, and offer it (`ask(text)`: True restores, False does not, None -- Later,
        Escape -- keeps the copy aside, as Cancel while it is read does). A copy that
        cannot be read is a message (and is set aside); the app goes on. `ended_by` names
        the signal that ended the last run, if one did; `answered(restored)` is called once
        it is decided. Until then the copy is kept whatever happens (an end, a quit) and no
        autosave replaces it."""
        self.offering_restore = True
        autosaver = self.autosaver
        if autosaver is not None:
            autosaver.enabled = False

        def work(_progress: Progress) -> tuple[datetime, str, int,
                                               persistence.SessionControls | None]:
            saved_at = datetime.fromtimestamp(path.stat().st_mtime)
            state, controls = persistence.load_state_with_controls(path)
            return saved_at, describe(state, saved_at), state.step, controls

        def cannot(why: object) -> None:
            aside = set_aside(path)  # nor may an autosave write over it
            kept = f"\n\nThe file was kept as {aside}." if aside else ""
            self.reporter.show("Could not restore",
                                   f"The autosaved session could not be read: {why}{kept}")

        def done(result: tuple[datetime, str, int, persistence.SessionControls | None]
                 | None, error: BaseException | None) -> None:
            if isinstance(error, (persistence.SessionError, OSError, ValueError,
                                  MemoryError)):
                cannot(error)
                return
            if error is not None:
                raise error  # a bug: the unexpected-error dialog, with its traceback
            assert result is not None
            saved_at, what, steps, controls = result
            why = (f"gradbox was ended by {ended_by} before this session was saved."
                   if ended_by else "gradbox did not close normally last time.")
            text = f"{why}\n\n{what}\n\nRestore it?"
            if self.ending():
                return
            answer = (ask or self.ask_restore)(text)
            if task.cancelled or self.ending():  # the window closed meanwhile: offered
                return                           # again next time
            if answer is None:  # not a No: kept, as when its reading is cancelled
                later.append(True)
            if not answer:
                return

            def opened() -> None:
                self.show_controls(controls, steps, mark=False)
                restored.append(True)
            self.expect_saved(controls, steps, saved=False)
            self.hand_over(task, path, f"Restored the session autosaved at {saved_at:%H:%M}",
                           opened, cannot)

        restored: list[bool] = []
        later: list[bool] = []

        def finished() -> None:
            if task.cancel_pressed or later:  # not restored, nor thrown away at the next quit
                aside = set_aside(path, "not-restored")
                if aside is not None:
                    def say(_answer: object = None) -> None:
                        self.messages.show_message(
                            f"The autosaved session was not restored; it is kept as "
                            f"{aside} (File → Open session… opens it)")
                    if task.kept_open:  # cancelled while built: said after "Undid: …"
                        self.controller.ask_lazily(Session.timeline_view, callback=say,
                                                   failed=say)
                    else:
                        say()
            self.offering_restore = False
            if autosaver is not None and not self.ending():
                autosaver.enabled = True
            if answered is not None:
                answered(bool(restored))
        task = self.read("Reading the autosaved session…", work, done)
        task.finished.connect(finished)

    def ask_restore(self, text: str) -> bool | None:
        """The question that offers the crash copy: True (Yes), False (No), or None
        (Later, Escape, the box closed): a reflex Escape must not throw the copy away."""
        box = QMessageBox(QMessageBox.Question, "Restore the last session?", text,
                          QMessageBox.Yes | QMessageBox.No, self.window)
        box.setTextFormat(Qt.TextFormat.PlainText)  # it describes a file
        later = box.addButton("&Later", QMessageBox.ButtonRole.RejectRole)
        later.setToolTip("Keep the autosaved session as a file of its own, to open "
                         "with File → Open session… when you like")
        box.setDefaultButton(QMessageBox.Yes)
        box.setEscapeButton(later)
        box.exec()
        clicked = box.clickedButton()
        answer = {box.button(QMessageBox.Yes): True, box.button(QMessageBox.No): False}.get(
            clicked)
        box.deleteLater()
        return answer

    @Slot()
    def import_csv_dialog(self) -> None:
        path = ask_open(self.window, "Import dataset", "CSV files (*.csv)",
                        self.document.path)
        if path:
            self.import_csv(path)

    def import_csv(self, path: Path) -> None:
        """Read points from a CSV file on a thread of its own (a progress bar with Cancel
        shows past half a second); on any problem, show why and keep the current points."""
        test_ratio = self.controller.snapshot.config.test_ratio

        def done(dataset: datasets.Dataset | None, error: BaseException | None) -> None:
            if isinstance(error, points_csv.Cancelled):
                return
            if isinstance(error, (datasets.DatasetError, OSError)):
                self.reporter.show("Could not import the points",
                                       f"{path.name}: {error}\n\nYour current points are "
                                       "unchanged.")
                return
            if error is not None:
                raise error  # a bug: the unexpected-error dialog, with its traceback
            assert dataset is not None
            self.controller.send(Session.import_points, dataset, f"Imported {len(dataset)} points "
                                          f"from {path.name}")
        self.read(f"Reading {path.name}…", lambda progress: points_csv.load_csv(
            path, test_ratio, progress=progress), done)

    @Slot()
    def export_csv_dialog(self) -> None:
        path = ask_save(self.window, "Export dataset", "CSV files (*.csv)",
                        self.document.path)
        if path:
            self.export_csv(path)

    def export_csv(self, path: Path) -> None:
        s = self.controller.snapshot
        try:
            points_csv.save_csv(datasets.Dataset(
                s.points, s.labels, s.is_test, s.classes, s.targets,
                s.config.dataset in datasets.ONE_D_KINDS), path)
        except OSError as error:
            self.reporter.show("Could not export the points",
                                   f"{path.name} was not saved: {error}")
            return
        self.controller.message.emit(f"Exported {len(s.labels)} points to {path.name}")

    def export_plot_dialog(self, view: QWidget) -> None:
        path = ask_save(self.window, "Export image", "PNG image (*.png);;SVG image (*.svg)",
                        self.document.path)
        if path:
            self.export_plot(view, path)

    def export_plot(self, view: QWidget, path: Path) -> bool:
        """Save a plot's image; on failure say so, naming the file. True if written."""
        try:
            view.export_image(path)  # type: ignore[attr-defined]
        except (OSError, ValueError) as error:
            self.reporter.show("Could not export the image",
                                   f"{path.name} was not saved: {error}")
            return False
        self.controller.message.emit(f"Saved {path.name}")
        return True

    def export_text_dialog(self, kind: str) -> None:
        title, pattern, suffix = TEXT_EXPORTS[kind]
        path = ask_save(self.window, title, pattern, self.document.path, (suffix,))
        if path:
            self.export_text(kind, path)

    def export_text(self, kind: str, path: Path) -> None:
        """Write one of the text exports; the PyTorch script from the run's whole state,
        asked of the training process."""
        s = self.controller.snapshot

        def write(text: str) -> None:
            try:
                path.write_text(text, encoding="utf-8")
            except OSError as error:
                self.reporter.show("Could not export", f"{path.name} was not saved: {error}")
                return
            self.controller.message.emit(f"Exported {path.name}")

        if kind == "pytorch":
            self.class_exports.export_pytorch(path)
        elif kind == "history":
            write(exports.history_csv(s.history))
        elif kind == "parameters":
            write(exports.parameters_csv(s.param_names, s.params, s.grads))
        else:
            write(exports.model_json(s))

    def export_graph_dialog(self) -> None:
        path = ask_save(self.window, "Export computation graph",
                        "PNG image (*.png);;SVG image (*.svg);;Graphviz DOT (*.dot)",
                        self.document.path)
        if path and self.graph is not None:
            suffix = path.suffix.lower()
            exporter = {".svg": "export_svg", ".dot": "export_dot"}.get(suffix, "export_png")
            try:
                getattr(self.graph, exporter)(path)
            except (OSError, ValueError) as error:
                self.reporter.show("Could not export the graph",
                                f"{Path(path).name} was not saved: {error}")
                return
            self.controller.message.emit(f"Saved {Path(path).name}")
