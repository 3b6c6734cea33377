"""How often each view is handed a snapshot: rate tiers over the controller's one frame.

The controller's frame timer (`SessionController._draw_frame`) hands each new snapshot
to its `snapshot_changed` subscribers at most once per display frame. Some views cost too
much to redraw that often while a fast Run goes on (a table of every parameter), or need
nothing until the run ends; they subscribe here with a `Rate` instead of pacing
themselves:

    EVERY_FRAME  every snapshot the frame shows
    TEN_HZ       while a Run goes faster than ten steps a second: at most every 100 ms,
                 in a turn of its own just after the frame (the frame and the view's
                 repaint are two short waits for the event loop, not one long one);
                 otherwise every snapshot, so a single Step shows at once
    ON_DEMAND    while a Run goes on, nothing (the view asks for what it needs itself);
                 otherwise every snapshot

All tiers share the end-of-run flush: when a Run stops, a view that skipped snapshots is
handed the last one, so every view ends on the run's last step. A snapshot of another
run (`Snapshot.run_id`: a new network, a reset) is handed at once, whatever the tier.
"""

from __future__ import annotations

import enum
import math
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, QTimer, Slot

from gradbox.training.snapshots import Snapshot

if TYPE_CHECKING:
    from gradbox.views.controller import SessionController


class Rate(enum.Enum):
    EVERY_FRAME = "every frame"
    TEN_HZ = "ten a second"
    ON_DEMAND = "on demand"


TEN_HZ_S = 0.1  # seconds between a TEN_HZ view's snapshots while a fast Run goes on


@dataclass
class _Subscriber:
    # A view's method, held weakly: the pacer must not keep a closed view alive (a
    # top-level widget lives as long as its Python wrapper).
    callback: weakref.WeakMethod
    rate: Rate
    shown_at: float = -math.inf  # time.monotonic() of the last hand-over (or its turn)
    behind: bool = False  # a snapshot was skipped while running
    turn_pending: bool = False
    run_id: int | None = None


class FramePacer(QObject):
    """Hands the controller's snapshots to views at the rate each asked for."""

    def __init__(self, controller: SessionController) -> None:
        super().__init__(controller)
        self.controller = controller
        self._subscribers: list[_Subscriber] = []
        controller.snapshot_changed.connect(self._on_frame)
        controller.running_changed.connect(self._on_running_changed)

    def subscribe(self, callback: Callable[[Snapshot], None], rate: Rate) -> None:
        """Hand `callback` (a view's method) the snapshots at `rate` (see the module's
        docstring); nothing once the view is gone."""
        self._subscribers.append(_Subscriber(weakref.WeakMethod(callback), rate))  # type: ignore[arg-type]

    def _fast(self) -> bool:
        """A Run is going faster than a TEN_HZ view is refreshed."""
        speed = self.controller.speed
        return self.controller.running and (speed is None or speed * TEN_HZ_S > 1)

    def _hand(self, sub: _Subscriber, snapshot: Snapshot) -> None:
        callback = sub.callback()
        if callback is None or not shiboken6.isValid(callback.__self__):
            if sub in self._subscribers:
                self._subscribers.remove(sub)
            return
        sub.shown_at, sub.behind, sub.run_id = time.monotonic(), False, snapshot.run_id
        callback(snapshot)

    @Slot(object)
    def _on_frame(self, snapshot: Snapshot) -> None:
        fast = self._fast()
        for sub in list(self._subscribers):
            new_run = sub.run_id is not None and snapshot.run_id != sub.run_id
            if sub.rate is Rate.EVERY_FRAME or new_run:
                self._hand(sub, snapshot)
            elif sub.rate is Rate.ON_DEMAND:
                if self.controller.running:
                    sub.behind = True
                else:
                    self._hand(sub, snapshot)
            elif not fast:
                self._hand(sub, snapshot)
            else:
                sub.behind = True  # (the run's end hands over the last snapshot)
                now = time.monotonic()
                if now - sub.shown_at >= TEN_HZ_S and not sub.turn_pending:
                    sub.shown_at, sub.turn_pending = now, True
                    QTimer.singleShot(0, self, lambda sub=sub: self._take_turn(sub))

    def _take_turn(self, sub: _Subscriber) -> None:
        sub.turn_pending = False
        if sub.behind:
            self._hand(sub, self.controller.snapshot)

    @Slot(bool)
    def _on_running_changed(self, running: bool) -> None:
        """The end-of-run flush: every view that skipped snapshots gets the last one."""
        if running:
            return
        for sub in list(self._subscribers):
            if sub.behind:
                self._hand(sub, self.controller.snapshot)
