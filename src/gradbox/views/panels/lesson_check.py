"""The lesson checks itself on the learner's run: what the current step claims that the
run on screen does not show, said under the step (gradbox.teaching.claims)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from gradbox.teaching.claims import check_on_screen
from gradbox.teaching.lessons import Lesson
from gradbox.training.snapshots import Snapshot
from gradbox.views.palette import NOTE_BOX


class LessonCheck(QLabel):
    """Hidden while every claim of the step holds on the run on screen (or cannot be read
    yet); otherwise one line per claim that does not, with what this run shows instead."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("lesson_check")
        self.setAccessibleName("On this run")
        self.setToolTip("The lesson's claims, checked on the run on screen: with another "
                        "seed or setting a number can come out differently, and the lesson "
                        "says so here rather than insist")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setStyleSheet("QLabel {{ background: {}; color: {}; padding: 6px; "
                           "border: 1px solid {}; }}".format(*NOTE_BOX))
        self._key: tuple[object, ...] | None = None
        self.notes: list[str] = []
        self.hide()

    def show_check(self, lesson: Lesson | None, step: int, snapshot: Snapshot | None) -> None:
        if lesson is None or snapshot is None:
            self._key = None
            self.notes = []
        else:
            # Asked again only when the run or the step changed, not at every frame.
            history = snapshot.history
            last = (history[-1].step, history[-1].loss) if len(history) else None
            key = (lesson.key, step, len(history), last, snapshot.config,
                   snapshot.pinned is not None, len(snapshot.edits))
            if key == self._key:
                return
            self._key = key
            self.notes = check_on_screen(lesson, step, snapshot)
        text = "\n".join(self.notes)
        if text != self.text():
            self.setText(text)
        self.setVisible(bool(text))
