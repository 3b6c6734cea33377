"""Waiting for conditions, not times (the `settle` and `drained` fixtures use these)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent


def settle() -> None:
    """What is already queued on the UI thread (signals from other threads, layout
    requests, deferred deletes, zero-time timers such as a queued fit) is handled now. A
    condition, not a time: a test that asserts "nothing more happens" calls it instead of
    waiting N ms."""
    for _ in range(10):  # what one round handles may queue more (fits chain a few deep)
        QCoreApplication.sendPostedEvents(None, 0)
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
