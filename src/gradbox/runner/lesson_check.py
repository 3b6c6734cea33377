"""A lesson's claims checked where the training process's caps apply: in a process of
its own, its address space capped as the training process's is, at a lower priority,
with progress and Cancel (gradbox.runner.worker).

Checking trains the runs the claims speak of. A lesson from a file decides how long and
how big: a claim read at step 1e9 trained in the window's process for good (+32 MB a
minute, stalls to 0.5 s, no Cancel), and 40,000 points on a 48x48 network grew the
window's process by 1.66 GB. Here the window only waits on a thread for the answer (a
list of sentences), and Cancel or the window's end stops the child.

No Qt.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradbox.runner.shared import block_layout, pickled_parts, write_block
from gradbox.runner.worker import Cancelled, Progress, WorkerProcess
from gradbox.teaching.claim_checks import false_claims
from gradbox.teaching.lesson_model import Lesson
from gradbox.training import limits


def too_big(lesson: Lesson) -> tuple[str, str] | None:
    """(field, why) if a run the lesson sets up or its claims train would not fit in
    memory -- refused as the Designer refuses such a network -- else None."""
    config = lesson.setup.config
    if config is None:
        return None
    runs = [("setup.config", config)]
    for number, step in enumerate(lesson.steps, start=1):
        for index, claim in enumerate(step.claims, start=1):
            for name, settings in (("run", claim.run), ("pinned", claim.pinned)):
                if settings:
                    runs.append((f"steps[{number}].claims[{index}].{name}",
                                 config.with_changes(**settings)))
    for field, run in runs:
        problem = limits.fits_in_memory(run)
        if problem:
            return field, f"not opened: {problem}"
    return None


def check_capped(lesson: Lesson, progress: Progress, cancelled: Cancelled) -> list[str]:
    """In the child: cap this process as the training process is capped, then check."""
    limits.cap_this_process()
    return false_claims(lesson, progress, cancelled)


def payload(value: Any) -> np.ndarray:
    """`value` as the block a WorkerProcess hands its child."""
    stream, buffers = pickled_parts(value)
    header, size = block_layout(stream, buffers)
    block = np.zeros(size, np.uint8)
    write_block(block, header, stream, buffers)
    return block


def start(lesson: Lesson) -> WorkerProcess:
    """The check under way in its own process; `wait(progress, cancelled)` gives the
    false claims' sentences (or raises: WorkerCancelledError, MemoryError, ...)."""
    return WorkerProcess(check_capped, payload(lesson), name="gradbox-claims")


def check_in_child(lesson: Lesson, progress: Progress | None = None,
                   cancelled: Cancelled | None = None) -> list[str]:
    """`false_claims(lesson)` in a capped child, waited for here (a script, a test)."""
    return start(lesson).wait(progress, cancelled)  # type: ignore[no-any-return]
