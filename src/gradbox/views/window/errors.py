"""Error messages that stay on screen until read, from whichever thread found the error.

A QMessageBox without a parent and without a Python reference is deleted as soon as the
function that made it returns: the user sees nothing. Here every box is parented to the
window and held in a list until it is closed; a report from another thread (a writer,
the landscape's) crosses to the UI thread through a queued signal before any widget is made.
"""

from __future__ import annotations

import atexit
import logging
import logging.handlers
import os
import queue
import sys
import threading
import traceback
from pathlib import Path
from types import TracebackType

from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QMessageBox, QWidget

log = logging.getLogger("gradbox")

UNEXPECTED = "Unexpected error"


class ErrorReporter(QObject):
    """The one place a message that stays until read is shown: error dialogs over
    `window`. The file-side helpers and the window show theirs with `show` (UI thread);
    `report` may be called from any thread."""

    _reported = Signal(str, str, str)

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.log_path: Path | None = None  # where the details are written, if anywhere
        self.boxes: list[QMessageBox] = []  # open boxes, kept alive until closed
        self.last: QMessageBox | None = None  # the box shown last (the window's error_box)
        self._listed: dict[QMessageBox, list[str]] = {}  # an unexpected-error box's errors
        self._reported.connect(self.show, Qt.QueuedConnection)

    def report(self, title: str, text: str, detail: str = "") -> None:
        """Thread-safe: the dialog is made on the UI thread, after this returns."""
        self._reported.emit(title, text, detail)

    @Slot(str, str, str)
    def show(self, title: str, text: str, detail: str = "") -> QMessageBox:
        """A non-blocking dialog over the window; it stays until the user closes it. UI
        thread only. A repeat of an unexpected error already on screen is added to that
        box's details rather than stacking a new box on it."""
        if title != UNEXPECTED:  # (an unexpected one was logged with its traceback)
            log.warning("%s: %s", title, text)
        if title == UNEXPECTED:
            for box in self.boxes:
                if box.windowTitle() == UNEXPECTED and box.isVisible():
                    # Listed in the box's own text, each one: a second error hidden in
                    # the first one's collapsed details went unseen.
                    self._listed[box].append(_first_line(text))
                    box.setText(_listing(self._listed[box], text))
                    box.setDetailedText(f"{box.detailedText()}\n\n{detail}".strip())
                    self.last = box
                    return box
        box = QMessageBox(QMessageBox.Warning, title, text, QMessageBox.Ok, self.window)
        # What it says often came from a file (a lesson's claim, a file's name): as text,
        # never markup (an <img> was shown, a link was clickable).
        box.setTextFormat(Qt.TextFormat.PlainText)
        if title == UNEXPECTED:
            self._listed[box] = [_first_line(text)]
        if detail:
            box.setDetailedText(detail)
        box.setWindowModality(Qt.WindowModal)
        box.finished.connect(lambda _result, b=box: self._closed(b))
        self.boxes.append(box)
        box.open()
        self.last = box
        return box

    def _closed(self, box: QMessageBox) -> None:
        if box in self.boxes:
            self.boxes.remove(box)
        self._listed.pop(box, None)
        box.deleteLater()

    def excepthook(self, kind: type[BaseException], error: BaseException,
                   tb: TracebackType | None) -> None:
        """An exception nobody caught (in a Qt slot, in any thread): logged and shown; the
        app keeps running."""
        detail = "".join(traceback.format_exception(kind, error, tb))
        where = threading.current_thread().name
        log.error("unexpected error in thread %s:\n%s", where, detail)
        if os.environ.get("GRADBOX_NO_DIALOGS"):
            return
        where_logged = f" and in {self.log_path}" if self.log_path else ""
        self.report(UNEXPECTED, f"{kind.__name__}: {_short(str(error))}\n\nThe app is still "
                    f"running; the details are below{where_logged}.", detail)


LISTED = 8  # errors named in one box; later ones are counted


def _first_line(text: str) -> str:
    return text.split("\n\n", 1)[0]


def _listing(errors: list[str], text: str) -> str:
    """An unexpected-error box's text once it holds several: each one named."""
    shown = errors[:LISTED]
    more = len(errors) - len(shown)
    lines = "\n".join(f"{i}. {_short(e, 160)}" for i, e in enumerate(shown, 1))
    if more:
        lines += f"\n… and {more} more"
    rest = text.split("\n\n", 1)[1] if "\n\n" in text else ""
    return f"{len(errors)} unexpected errors:\n{lines}\n\n{rest}".strip()


def _short(text: str, keep: int = 400) -> str:
    return text if len(text) <= keep else text[:keep] + "…"


def install_excepthook(reporter: ErrorReporter) -> None:
    """Route uncaught exceptions, of the UI thread and of every other, to `reporter`."""
    sys.excepthook = reporter.excepthook
    threading.excepthook = lambda args: reporter.excepthook(
        args.exc_type, args.exc_value or args.exc_type(), args.exc_traceback)


def log_to_file(path: Path) -> bool:
    """Also write the log to `path` (1 MB, one old copy kept). The writing happens on a
    thread of its own: the UI thread never waits for the disk."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(path, maxBytes=1_000_000,
                                                       backupCount=1, encoding="utf-8")
    except OSError as error:
        log.warning("cannot log to %s: %s", path, error)
        return False
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    records: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
    listener = logging.handlers.QueueListener(records, handler)
    logging.getLogger().addHandler(logging.handlers.QueueHandler(records))
    listener.start()
    atexit.register(listener.stop)
    return True
