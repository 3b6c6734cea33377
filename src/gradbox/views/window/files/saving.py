"""Saving a session without making anyone wait: the Qt side of `SessionWriter`.

The training process is asked for the whole run between two steps (with the snapshot it
corresponds to); it pickles it into shared memory (`LazyAnswer`), and the writer thread
reads it there and writes it; the answer comes back to the UI thread as a queued signal.
Neither the UI thread nor training touches the disk, and the UI thread never unpickles
a whole run (tens of megabytes for a 1000x1000 network).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QObject, Signal, Slot

from gradbox.files.session_controls import SessionControls
from gradbox.files.session_writer import SessionWriter
from gradbox.port.protocol import SessionPort
from gradbox.runner.wire import LazyAnswer
from gradbox.training.session import Session
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import TrainingState
from gradbox.training.timeline import Timeline

# done(snapshot written, error or None), called on the UI thread.
SaveDone = Callable[[Snapshot, BaseException | None], None]


class TrainingDiedError(RuntimeError):
    """The training process died before it answered: nothing was written (the death is
    said, and Continue offered, by the window)."""


class SessionSaver(QObject):
    """Saves the controller's session to files, from a writer thread."""

    # (callback, snapshot, error, (answer, path, run) written or None), any thread
    _written = Signal(object, object, object, object)

    def __init__(self, controller: SessionPort, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.writer = SessionWriter()
        self._closed = False
        self._written_runs: dict[Path, list[Any]] = {}  # path: the last run read for it
        self._runs_lock = threading.Lock()  # (read on the writer thread, let go here)
        # The window's run controls, read on the UI thread when a save is asked for
        # (None: files keep no controls).
        self.controls: Callable[[], SessionControls] | None = None
        self._written.connect(self._on_written)
        controller.destroyed.connect(lambda *_: self.writer.close())

    def save(self, path: Path, done: SaveDone) -> None:
        """Write the session as it is when the worker next reads it: the whole run, the
        timeline's place in it and the run controls."""
        controls = self.controls() if self.controls is not None else None

        def taken(answer: LazyAnswer) -> None:
            if self._closed:  # answered after the window closed: its close kept what lasts
                return
            # The whole run is read (unpickled) on the writer thread, not this one: a
            # 1000x1000 network's is tens of megabytes.
            run: list[Any] = []

            def read() -> TrainingState:
                run.extend(answer.load())  # (state, position, snapshot)
                # What this path's job writes: a job not started yet takes a newer
                # state instead of its own, and its callers hear of the newer one.
                with self._runs_lock:
                    self._written_runs[path] = run
                return run[0]

            def placed() -> SessionControls | None:  # (after read(), on the writer thread)
                return _placed(controls, run[1])

            def written(error: BaseException | None) -> None:  # (right after the write)
                with self._runs_lock:
                    last = self._written_runs.get(path)
                mine = (answer, path, run) if run and error is None else None
                self._written.emit(done, last[2] if last else None, error, mine)
            self.writer.submit(read, path, written, placed)

        def failed(why: str) -> None:
            if not self._closed:
                done(None, TrainingDiedError(why))  # type: ignore[arg-type]
        self.controller.ask_lazily(Session.whole_run, callback=taken, failed=failed)

    @Slot(object, object, object, object)
    def _on_written(self, done: SaveDone, snapshot: Snapshot, error: BaseException | None,
                    written: tuple[LazyAnswer, Path, list[Any]] | None) -> None:
        done(snapshot, error)
        if written is None:
            return
        # The file holds the run now: the window keeps no copy of it (its checkpoints,
        # history and data; a death continues from the file). The snapshot's numbers go
        # with it: they view the same shared block.
        answer, path, run = written
        with self._runs_lock:
            if self._written_runs.get(path) is run:
                del self._written_runs[path]
        if not self._closed:
            self.controller.whole_run_written(answer, path, run[0].step)

    def save_and_wait(self, path: Path) -> BaseException | None:
        """Save as `save` does and wait for the answer in a local event loop: for
        quitting, with the window hidden and the run paused, while the training process
        is still there to go on with if the write fails. Returns the error, if any."""
        try:  # the training process has already stopped: the timeline is ours to read
            timeline = self.controller.stopped_timeline()
        except RuntimeError:
            pass
        else:
            try:
                self.write_stopped(timeline, path)
            except Exception as error:  # what the writer thread reports, as below
                return error
            return None
        result: list[BaseException | None] = []
        loop = QEventLoop()

        def done(_snapshot: Snapshot, error: BaseException | None) -> None:
            result.append(error)
            loop.quit()
        self.save(path, done)
        if not result:
            loop.exec()
        return result[0]

    def write_stopped(self, timeline: Timeline, path: Path) -> None:
        """Write a timeline whose worker has stopped (the app is ending) from the writer
        thread, and wait for it: the one writer, with its atomic replace, writes every
        file. Raises what the write raised."""
        errors: list[BaseException | None] = []
        controls = self.controls() if self.controls is not None else None
        state, position = timeline.whole_run()
        self.writer.submit(state, path, errors.append, _placed(controls, position))
        self.writer.wait()
        if errors and errors[0] is not None:
            raise errors[0]

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every submitted write is on disk (for quitting and tests)."""
        return self.writer.wait(timeout)

    def close(self) -> None:
        """Finish the writes under way and end the writer's thread; a save answered later
        is dropped."""
        self._closed = True
        self.writer.close()


def _placed(controls: SessionControls | None, position: int | None) -> SessionControls | None:
    return None if controls is None else replace(controls, position=position)
