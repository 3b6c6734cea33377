"""The lesson checks itself on the learner's run: what the current step claims that the
run on screen does not show (gradbox.teaching.claim_checks), said in the step's own box, under
its look-for, so it is read with the sentence it qualifies and never cut off."""

from __future__ import annotations

import html

from gradbox.teaching.claim_checks import check_on_screen, claim_step
from gradbox.teaching.lessons import Lesson
from gradbox.training.snapshots import Snapshot
from gradbox.views.palette import NOTE_BOX


class LessonCheck:
    """The notes for (lesson, step, run on screen), asked again only when one of them
    changed: the panel asks at every snapshot, and a frame must stay cheap."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self.notes: list[str] = []
        # What the check of an opened lesson found false on its own setup, by (lesson,
        # step): kept in the step's box after the error box is closed (it was shown once).
        self.false_on_setup: dict[tuple[str, int], list[str]] = {}
        self._at: tuple[str, int] | None = None

    def mark_false(self, lesson_key: str, sentences: list[str]) -> None:
        """Keep `false_claims`' sentences beside the steps they name."""
        for sentence in sentences:
            step = claim_step(sentence)
            if step is not None:
                self.false_on_setup.setdefault((lesson_key, step), []).append(sentence)

    def update(self, lesson: Lesson | None, step: int, snapshot: Snapshot | None) -> bool:
        """Check again; True if the notes changed."""
        self._at = (lesson.key, step) if lesson is not None else None
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
        """The notes as a paragraph for the step's box ('' when there is none), after
        what the lesson's check found false on its setup (escaped: they quote the file)."""
        _background, colour, border = NOTE_BOX
        out = ""
        false = self.false_on_setup.get(self._at, []) if self._at is not None else []
        if false:
            lines = "<br>".join(html.escape(sentence) for sentence in false)
            out += (f"<p style='margin-top: 6px; color: {colour}; border-top: 1px solid "
                    f"{border}'><b>✗ Does not hold:</b> {lines}</p>")
        if self.notes:
            lines = "<br>".join(html.escape(note) for note in self.notes)
            out += (f"<p style='margin-top: 6px; color: {colour}; border-top: 1px solid "
                    f"{border}'><b>On screen:</b> {lines}</p>")
        return out
