"""Taking a run to class: File → Export → Animation… and Notebook…, File → Open lesson….

Both take the run's immutable state from the training process and do the slow part off
the UI thread, so the window stays usable and the UI thread never touches the disk. The
notebook is written on a background thread (`Job`). The animation is replayed, drawn and
encoded in a process of its own (gradbox.runner.worker) that a `Job` thread only waits on
and relays progress from: that work holds the interpreter lock for up to hundreds of
milliseconds at a time, which the window would wait for if it ran on a thread here. The
run is handed on still pickled, never read in this process. The animation dialog shows
its progress and can be cancelled; a cancelled or failed export leaves no file (the
export writes to a temporary name and renames it when complete).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QProgressDialog,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gradbox.files import animation, export_torch
from gradbox.files.notebook import notebook_text
from gradbox.formatting import counted
from gradbox.port.protocol import SessionPort
from gradbox.runner import lesson_check
from gradbox.runner.wire import LazyAnswer
from gradbox.runner.worker import WorkerCancelledError, WorkerProcess
from gradbox.teaching.claim_checks import ChecksCancelledError
from gradbox.teaching.lesson_files import LessonFileError, read_lesson
from gradbox.teaching.lessons import Lesson
from gradbox.training.session import Session
from gradbox.training.state import TrainingState
from gradbox.views.panels.lesson_panel import LessonPanel
from gradbox.views.plots.animation_frames import recording
from gradbox.views.window.errors import ErrorReporter
from gradbox.views.window.files.autosave import failure_reason
from gradbox.views.window.files.dialogs import ask_open, ask_save
from gradbox.views.window.files.document import SessionDocument

log = logging.getLogger(__name__)

SIZES = ((640, 400), (800, 500), (1024, 640), (1280, 720), (1920, 1080))
DEFAULT_SIZE = (800, 500)
DEFAULT_FPS = 10
MOST_FRAMES_BY_DEFAULT = 200  # the default 'every' keeps a long run's recording short


class Job(QObject):
    """`work(progress, cancelled)` on a thread of its own; `progress(done, total)` and
    `finished(result, error)` arrive on the UI thread."""

    progress = Signal(int, int)
    finished = Signal(object, object)

    def __init__(self, work: Callable[[Callable[[int, int], None], Callable[[], bool]], Any],
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._work = work
        self._cancel = threading.Event()
        self.thread = threading.Thread(target=self._run, name="gradbox-export", daemon=True)
        # The window closed under it: the work is cancelled (a process of its own ends),
        # and nothing is told to a window that is gone.
        self.destroyed.connect(self._cancel.set)

    def start(self) -> None:
        self.thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def _report(self, done: int, total: int) -> None:
        if not self._cancel.is_set():
            with contextlib.suppress(RuntimeError):  # (deleted meanwhile)
                self.progress.emit(done, total)

    def _run(self) -> None:
        try:
            result, error = self._work(self._report, self._cancel.is_set), None
        except BaseException as failure:  # reported on the UI thread, never lost
            result, error = None, failure
        with contextlib.suppress(RuntimeError):  # the window is gone: no one to tell
            self.finished.emit(result, error)


class ClassExports(QObject):
    """The window's animation and notebook exports."""

    def __init__(self, window: QWidget, port: SessionPort, document: SessionDocument,
                 reporter: ErrorReporter, lessons: LessonPanel, lesson_dock: QDockWidget,
                 ) -> None:
        """`window`: the dialogs' parent, whose close stops what is under way; a lesson
        file opened goes to `lessons`, shown in `lesson_dock`."""
        super().__init__(window)
        self.window = window
        self.port = port
        self.document = document
        self.reporter = reporter
        self.lessons = lessons
        self.lesson_dock = lesson_dock
        self.dialog: AnimationDialog | None = None
        self.jobs: set[Job] = set()  # running: a job with no reference would be collected
        self.claims_progress: QProgressDialog | None = None  # a lesson's claims being checked
        window.installEventFilter(self)  # its close cancels what is under way

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        """The window closed: the checks and exports under way stop (their processes
        end) and the progress line goes with the window."""
        if watched is self.window and event.type() == QEvent.Type.Close:
            # (once the window's own handler has decided: a quit may be cancelled)
            QTimer.singleShot(0, self, self._closed)
        return False

    def _closed(self) -> None:
        if self.window.isVisible():
            return
        for job in list(self.jobs):
            job.cancel()
        if self.claims_progress is not None:
            self.claims_progress.close()

    def add_menu_entries(self, m: Callable[..., object], file: QMenu) -> None:
        opened = m("&File", "Open &lesson…", self.open_lesson_dialog, None,
                   "Open a lesson file (.toml) a teacher wrote: docs/lessons.md says how")
        # beside Open session…, not at the end of the menu
        after = next((a for a in file.actions() if a.text() == "&Open session…"), None)
        if after is not None:
            actions = file.actions()
            before = actions[actions.index(after) + 1]
            file.removeAction(opened)  # type: ignore[arg-type]
            file.insertAction(before, opened)  # type: ignore[arg-type]
        m("Export", "&Animation (GIF, MP4, PNG frames)…", self.show_animation_dialog, None,
          "Record the decision boundary and the loss curve over a range of steps")
        m("Export", "&Notebook…", self.export_notebook_dialog, None,
          "A Jupyter notebook that rebuilds this run in gradbox's Python API and trains it "
          "step by step, with the same losses")

    # --- lesson files ----------------------------------------------------------------------
    @Slot()
    def open_lesson_dialog(self) -> None:
        path = ask_open(self.window, "Open lesson", "gradbox lessons (*.toml)",
                        self.document.path)
        if path:
            self.open_lesson(path)

    def open_lesson(self, path: Path, done: Callable[[Lesson | None, str], None] | None = None,
                    checked: Callable[[list[str]], None] | None = None) -> None:
        """Read and check a lesson file off the UI thread, then set the lesson up; a file
        that is not a lesson is a message naming its line and field, and nothing changes.
        Then its claims are checked on its own setup, in the background: any that does
        not hold is shown to the teacher (`checked(false claims)` after)."""
        def work(_progress: object, _cancelled: object) -> Lesson:
            lesson = read_lesson(path)
            problem = lesson_check.too_big(lesson)  # refused as the Designer refuses
            if problem:
                raise LessonFileError(path.name, None, problem[0], problem[1])
            return lesson

        def finished(lesson: Any, error: BaseException | None) -> None:
            if error is not None:
                text = str(error) if isinstance(error, LessonFileError) else \
                    f"{path.name} could not be read: {failure_reason(error)}"
                self.reporter.show("Could not open the lesson",
                                       f"{text}\n\nThe lesson on screen is unchanged.")
                if done is not None:
                    done(None, text)
                return
            self.lessons.apply(lesson)
            self.lesson_dock.show()
            claims = sum(len(step.claims) for step in lesson.steps)
            text = f"Opened the lesson {path.name}: {lesson.title}"
            self._say(text + (f" · checking its {counted(claims, 'claim')} on its setup…"
                              if claims else ""))
            if done is not None:
                done(lesson, text)
            if claims:
                self._check_claims(lesson, path, claims, checked)
        self._start(work, finished)

    def _check_claims(self, lesson: Lesson, path: Path, claims: int,
                      checked: Callable[[list[str]], None] | None) -> None:
        """Train the runs the claims speak of in a capped process of their own
        (runner.lesson_check), with a progress line and Cancel; say what does not hold."""
        progress = QProgressDialog(self.window)
        progress.setWindowTitle("Checking the lesson's claims")
        label = QLabel()
        label.setTextFormat(Qt.TextFormat.PlainText)  # it names the file
        progress.setLabel(label)  # (the dialog owns it)
        progress.setLabelText(f"Checking the {counted(claims, 'claim')} of {path.name} on "
                              "its setup…")
        progress.setCancelButtonText("Cancel")
        progress.setRange(0, 0)
        progress.setWindowModality(Qt.WindowModality.NonModal)  # the window stays usable
        # Shown without taking the keyboard from the window (a teacher may be typing).
        progress.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        progress.setMinimumDuration(1000)  # a check of a second or less shows nothing
        progress.setAutoClose(False)
        progress.setAutoReset(False)
        self.claims_progress = progress

        def finished(false: Any, error: BaseException | None) -> None:
            progress.close()
            self.claims_progress = None
            if isinstance(error, (WorkerCancelledError, ChecksCancelledError)):
                self._say(f"{path.name}: checking its claims was cancelled; the lesson is "
                          "open, its claims not checked")
                if checked is not None:
                    checked(["cancelled"])
                return
            if error is not None:
                false = [f"The claims could not be checked: {failure_reason(error)}"]
            if false:
                self.lessons.mark_false_claims(lesson.key, list(false))
                self.reporter.show(
                    "A lesson claim does not hold",
                    f"{path.name}: {len(false)} of its {counted(claims, 'claim')} did not hold "
                    "on the lesson's own setup. Change the sentence (and its claim) or the "
                    "setup before class:\n\n" + "\n".join(false))
            else:
                self._say(f"{lesson.title}: all {counted(claims, 'claim')} hold on its setup "
                          f"(seed {lesson.setup.config.seed if lesson.setup.config else 0})")
            if checked is not None:
                checked(list(false))

        def shown(done: int, total: int) -> None:
            if progress.wasCanceled():  # a report sent before Cancel: setValue would show
                return                  # the dialog the person just closed, again
            progress.setMaximum(total)
            progress.setValue(min(done, total))
            progress.setLabelText(f"Checking the {counted(claims, 'claim')} of {path.name} on "
                                  f"its setup: step {done:,} of {total:,} trained")

        def work(report: Callable[[int, int], None], stop: Callable[[], bool]) -> list[str]:
            return lesson_check.start(lesson).wait(report, stop)  # type: ignore[no-any-return]
        job = self._start(work, finished, shown)
        progress.canceled.connect(job.cancel)

    # --- PyTorch script --------------------------------------------------------------------
    def export_pytorch(self, path: Path, done: Callable[[Path | None], None] | None = None,
                       ) -> None:
        """Write the run as a PyTorch script: the run's state goes still pickled to a
        process of its own that builds and writes the script (a 1000x1000 network's took
        3.95 s of the UI thread when built here)."""
        def taken(answer: LazyAnswer) -> None:
            def work(report: Callable[[int, int], None], stop: Callable[[], bool]) -> int:
                worker = WorkerProcess(
                    partial(export_torch.write_pytorch_script, path=str(path)),
                    answer.pickled(), name="gradbox-export")
                return worker.wait(report, stop)  # type: ignore[no-any-return]

            def finished(steps: Any, error: BaseException | None) -> None:
                if error is not None:
                    self.reporter.show("Could not export",
                                           f"{path.name} was not saved: {failure_reason(error)}")
                else:
                    self._say(f"Exported {path.name}: a PyTorch script that retrains the "
                              f"run's {counted(steps, 'step')}")
                if done is not None:
                    done(path if error is None else None)
            self._start(work, finished)
        self.port.ask_lazily(Session.whole_state, callback=taken)

    # --- notebook ------------------------------------------------------------------------
    @Slot()
    def export_notebook_dialog(self) -> None:
        path = ask_save(self.window, "Export notebook", "Jupyter notebooks (*.ipynb)",
                        self.document.path, (".ipynb",))
        if path:
            self.export_notebook(path)

    def export_notebook(self, path: Path, done: Callable[[Path | None], None] | None = None,
                        ) -> None:
        """Write the run on screen as a notebook, off the UI thread; says when written."""
        title = self.document.path.stem if self.document.path else "untitled"

        def taken(state: TrainingState) -> None:
            def work(_progress: object, _cancelled: object) -> int:
                path.write_text(notebook_text(state, title), encoding="utf-8")
                return state.step

            def finished(steps: Any, error: BaseException | None) -> None:
                if error is not None:
                    self.reporter.show("Could not export the notebook",
                                           f"{path.name} was not written: {failure_reason(error)}")
                else:
                    self._say(f"Exported {path.name}: rebuilds the run's "
                              f"{counted(steps, 'step')} in gradbox's Python API")
                if done is not None:
                    done(path if error is None else None)
            self._start(work, finished)
        self.port.ask(Session.state, callback=taken)

    def _start(self, work: Callable[..., Any],
               finished: Callable[[Any, BaseException | None], None],
               progress: Callable[[int, int], None] | None = None) -> Job:
        job = Job(work, self)
        self.jobs.add(job)

        def end(result: object, error: BaseException | None) -> None:
            self.jobs.discard(job)
            finished(result, error)
        job.finished.connect(end)
        if progress is not None:
            job.progress.connect(progress)
        job.start()
        return job

    def _say(self, text: str) -> None:
        self.port.message.emit(text)

    # --- animation -----------------------------------------------------------------------
    @Slot()
    def show_animation_dialog(self) -> None:
        if self.dialog is None:
            self.dialog = AnimationDialog(self)
        self.dialog.refresh(self.port.snapshot.step,
                            len(self.port.ahead or ()))
        self.dialog.show()
        self.dialog.raise_()
        self.dialog.activateWindow()  # the keys go to its fields, not the window behind

    def record(self, path: Path, kind: str, first: int, last: int, every: int,
               size: tuple[int, int], fps: int, progress: Callable[[int, int], None],
               done: Callable[[Path | None, str], None]) -> Callable[[], None]:
        """Export an animation; returns what cancels it. `done(path or None, message)`."""
        width, height = animation.even_size(*size)
        steps = animation.frame_steps(first, last, every)
        export = partial(animation.record, frames=partial(recording, width=width, height=height),
                         steps=steps, path=str(path), kind=kind, fps=fps)
        cancel: list[Callable[[], None]] = []
        cancelled_early = threading.Event()

        def taken(answer: LazyAnswer) -> None:
            if cancelled_early.is_set():
                done(None, "Cancelled: nothing was written")
                return

            def work(report: Callable[[int, int], None], stop: Callable[[], bool]) -> Path:
                # The run goes on still pickled: this process never reads it, the
                # export's own process replays, draws and encodes it.
                worker = WorkerProcess(export, answer.pickled(), name="gradbox-export")
                try:
                    return worker.wait(report, stop)
                finally:  # (a process killed in the middle leaves its temporary file)
                    animation.remove_partials(path, worker.pid)

            def finished(_written: object, error: BaseException | None) -> None:
                if isinstance(error, (animation.ExportCancelledError, WorkerCancelledError)):
                    done(None, "Cancelled: nothing was written")
                elif isinstance(error, animation.RunTooShortError):
                    done(None, str(error))
                elif error is not None:
                    text = f"{path.name} was not written: {failure_reason(error)}"
                    self.reporter.show("Could not export the animation", text)
                    done(None, text)
                else:
                    text = (f"Saved {path.name}: {counted(len(steps), 'frame')} (steps "
                            f"{first}–{last}), {width} × {height}, {fps} frames/s")
                    self._say(text)
                    done(path, text)

            job = self._start(work, finished, progress)
            cancel.append(job.cancel)
            if cancelled_early.is_set():
                job.cancel()

        self.port.ask_lazily(Session.whole_state, callback=taken)

        def cancel_all() -> None:
            cancelled_early.set()
            for c in cancel:
                c()
        return cancel_all


class AnimationDialog(QDialog):
    """Which steps, how big, how fast, which format; progress and Cancel while it works.
    Not modal: the window stays usable while a recording is made."""

    def __init__(self, exports: ClassExports) -> None:
        super().__init__(exports.window)
        self.exports = exports
        self.setWindowTitle("Export animation")
        self.setAccessibleName("Export animation")
        self._cancel: Callable[[], None] | None = None
        self.last_result = ""

        form = QFormLayout()
        steps = QWidget()
        row = QHBoxLayout(steps)
        row.setContentsMargins(0, 0, 0, 0)
        self.first = QSpinBox()
        self.first.setAccessibleName("First step")
        self.last = QSpinBox()
        self.last.setAccessibleName("Last step")
        self.every = QSpinBox()
        self.every.setAccessibleName("Every how many steps")
        self.every.setRange(1, 1_000_000)
        self.every.setPrefix("every ")
        for widget, text in ((self.first, "from"), (self.last, "to")):
            row.addWidget(QLabel(text))
            row.addWidget(widget)
        row.addWidget(self.every)
        form.addRow("Steps", steps)

        size = QWidget()
        row = QHBoxLayout(size)
        row.setContentsMargins(0, 0, 0, 0)
        self.width_box, self.height_box = QSpinBox(), QSpinBox()
        for box, name, value in ((self.width_box, "Width", DEFAULT_SIZE[0]),
                                 (self.height_box, "Height", DEFAULT_SIZE[1])):
            box.setAccessibleName(f"{name} in pixels")
            box.setRange(animation.MIN_SIDE, animation.MAX_SIDE)
            box.setSingleStep(2)
            box.setValue(value)
        self.presets = QComboBox()
        self.presets.setAccessibleName("Size")
        self.presets.addItem("custom")
        for w, h in SIZES:
            self.presets.addItem(f"{w} × {h}", (w, h))
        self.presets.setCurrentIndex(SIZES.index(DEFAULT_SIZE) + 1)
        row.addWidget(self.presets)
        row.addWidget(self.width_box)
        row.addWidget(QLabel("×"))
        row.addWidget(self.height_box)
        form.addRow("Size", size)

        self.fps = QSpinBox()
        self.fps.setAccessibleName("Frames per second")
        self.fps.setRange(1, animation.MAX_FPS)
        self.fps.setValue(DEFAULT_FPS)
        self.fps.setSuffix(" frames/s")
        form.addRow("Speed", self.fps)
        self.kind = QComboBox()
        self.kind.setAccessibleName("Format")
        for key, text in animation.FORMATS.items():
            self.kind.addItem(text, key)
        form.addRow("Format", self.kind)
        self.summary = QLabel()
        self.summary.setAccessibleName("What will be recorded")
        form.addRow("", self.summary)

        self.progress = QProgressBar()
        self.progress.setAccessibleName("Export progress")
        self.progress.hide()
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setAccessibleName("Export status")
        self.buttons = QDialogButtonBox()
        self.export_button = QPushButton("Export…")
        self.export_button.setDefault(True)
        self.buttons.addButton(self.export_button, QDialogButtonBox.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.Cancel)
        self.export_button.clicked.connect(self.choose_file)
        self.cancel_button.clicked.connect(self.cancel_or_close)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

        for box in (self.first, self.last, self.every, self.fps):
            box.valueChanged.connect(self._update_summary)
        self.presets.currentIndexChanged.connect(self._on_preset)
        self.width_box.valueChanged.connect(self._on_custom_size)
        self.height_box.valueChanged.connect(self._on_custom_size)

    def refresh(self, step: int, end: int) -> None:
        """The run's steps (to its end, even with the timeline moved back)."""
        if self.running:
            return
        self.status.setText("")  # the last recording's result: read already
        end = max(end, step)
        for box in (self.first, self.last):
            box.setRange(0, end)
        self.first.setValue(0)
        self.last.setValue(end)
        self.every.setValue(max(1, -(-end // MOST_FRAMES_BY_DEFAULT)))
        self._update_summary()

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def settings(self) -> tuple[str, int, int, int, tuple[int, int], int]:
        return (str(self.kind.currentData()), self.first.value(), self.last.value(),
                self.every.value(), (self.width_box.value(), self.height_box.value()),
                self.fps.value())

    @Slot()
    def _update_summary(self) -> None:
        first, last = self.first.value(), self.last.value()
        if first > last:
            self.summary.setText("The first step must not be after the last.")
            self.export_button.setEnabled(False)
            return
        try:
            frames = len(animation.frame_steps(first, last, self.every.value()))
        except ValueError as error:  # more frames than a recording may have: said
            self.summary.setText(f"{str(error)[0].upper()}{str(error)[1:]}.")
            self.export_button.setEnabled(False)
            return
        seconds = frames / self.fps.value()
        self.summary.setText(f"{counted(frames, 'frame')}, {seconds:.1f} s")
        self.export_button.setEnabled(not self.running)

    @Slot(int)
    def _on_preset(self, index: int) -> None:
        size = self.presets.itemData(index)
        if size is None:
            return
        for box, value in zip((self.width_box, self.height_box), size):
            box.blockSignals(True)
            box.setValue(value)
            box.blockSignals(False)

    @Slot()
    def _on_custom_size(self) -> None:
        size = (self.width_box.value(), self.height_box.value())
        index = self.presets.findData(size)
        self.presets.blockSignals(True)
        self.presets.setCurrentIndex(max(index, 0))
        self.presets.blockSignals(False)

    @Slot()
    def choose_file(self) -> None:
        kind = str(self.kind.currentData())
        suffix = animation.SUFFIXES[kind]
        near = self.exports.document.path
        if kind == "png":
            path = ask_save(self, "Export PNG frames into a new folder",
                            "Folder of PNG frames (*)", near)
        else:
            path = ask_save(self, "Export animation", f"{animation.FORMATS[kind]} (*{suffix})",
                            near, (suffix,) if suffix else ())
        if path:
            self.start(path)

    def start(self, path: Path) -> None:
        """Record into `path` with the settings shown."""
        kind, first, last, every, size, fps = self.settings()
        self.progress.setRange(0, len(animation.frame_steps(first, last, every)))
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText(f"Recording {path.name}…")
        self.export_button.setEnabled(False)
        self.cancel_button.setText("Cancel")
        self._cancel = self.exports.record(path, kind, first, last, every, size, fps,
                                           self._on_progress, self._on_done)

    @Slot(int, int)
    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setMaximum(total)
        self.progress.setValue(done)
        self.status.setText(f"Frame {done} of {total}")

    def _on_done(self, path: Path | None, text: str) -> None:
        self._cancel = None
        self.last_result = text
        self.progress.hide()
        self.status.setText(text)
        self.cancel_button.setText("Close")
        self._update_summary()

    @Slot()
    def cancel_or_close(self) -> None:
        if self._cancel is not None:
            self.status.setText("Cancelling…")
            self._cancel()
        else:
            self.hide()

    def reject(self) -> None:  # Esc, the title bar's close: cancel a recording under way
        if self._cancel is not None:
            self.cancel_or_close()
            return
        super().reject()
