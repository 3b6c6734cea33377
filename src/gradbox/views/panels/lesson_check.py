"""The lesson checks itself on the learner's run: what the current step claims that the
run on screen does not show (gradbox.teaching.claim_checks), said in the step's own box, under
its look-for, so it is read with the sentence it qualifies and never cut off."""

from __future__ import annotations

import html

from gradbox.teaching.claim_checks import check_on_screen
from gradbox.teaching.lessons import Lesson
from gradbox.training.snapshots import Snapshot
from gradbox.views.palette import NOTE_BOX


class LessonCheck:
    """The notes for (lesson, step, run on screen), asked again only when one of them
    changed: the panel asks at every snapshot, and a frame must stay cheap."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self.notes: list[str] = []

    def update(self, lesson: Lesson | None, step: int, snapshot: Snapshot | None) -> bool:
        """Check again; True if the notes changed."""
        if lesson is None or snapshot is None:
            key: tuple[object, ...] | None = None
            notes: list[str] = []
        else:
            history = snapshot.history
            last = (history[-1].step, history[-1].loss) if len(history) else None
            key = (lesson.key, step, len(history), last, snapshot.config,
                   snapshot.pinned is not None, len(snapshot.edits))
            if key == self._key:
                return False
            notes = check_on_screen(lesson, step, snapshot)
        self._key = key
        changed = notes != self.notes
        self.notes = notes
        return changed

    def html(self) -> str:
        """The notes as a paragraph for the step's box ('' when there is none)."""
        if not self.notes:
            return ""
        _background, colour, border = NOTE_BOX
        lines = "<br>".join(html.escape(note) for note in self.notes)
        return (f"<p style='margin-top: 6px; color: {colour}; border-top: 1px solid {border}'>"
                f"<b>On screen:</b> {lines}</p>")
