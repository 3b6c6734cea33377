"""The window's frames: one display-paced timer hands each new snapshot to the views, at
the rate each view asked for, and heavy numpy work runs off the UI thread.

The port (its `FrameHost`) offers every snapshot that arrives (`offer`); the pacer draws a frame as
soon as the last one is a frame old -- at once after a pause, so a single Step shows
without waiting for a tick, else at the display's rate; while running, the next frame
also waits until the UI thread has been idle as long as it worked (four times as long
at the fastest speed: `FASTEST_RUN_SHARE`). A frame sets the
host's `snapshot`, emits its `snapshot_changed` (the views that redraw every frame
listen there) and hands the snapshot to the subscribers of each tier; the window's
repaint follows in the event loop's next turn (the frame's handlers and its repaint are
two shorter waits for clicks and timers, not one long one):

    EVERY_FRAME    every snapshot a frame shows
    TEN_HZ         while a Run goes faster than ten steps a second: at most every 100 ms
                   (and not before BUSY_SHARE times what the view's last turn cost, at
                   most MAX_WAIT_S: a graph that takes 30 ms to draw leaves the other
                   views their frames), in a turn of its own just after the frame's
                   repaint; otherwise every snapshot, so a single Step shows at once
    ONCE_A_SECOND  the same, at most once a second (a loss landscape)
    ON_DEMAND      while a Run goes on, nothing (the view asks for what it needs itself);
                   otherwise every snapshot

All tiers share the end-of-run flush: when a Run stops, a view that skipped snapshots is
handed the last one, so every view ends on the run's last step. A snapshot of another
run (`Snapshot.run_id`: a new network, a reset) is handed at once, whatever the tier.
Views decide what to redraw from the snapshot's revision numbers (`run_id`,
`params_rev`, `graph_rev`, `history_len`), not by comparing arrays.

Off the UI thread: `off_thread(owner, work, done)` runs `work()` (plain numpy, no Qt) on
the pacer's worker threads and calls `done(result)` back on the UI thread; while one of
an owner's jobs runs, only its newest request waits (a big network's heat map, a loss
landscape: an image late by a step is better than a frozen window).
"""

from __future__ import annotations

import enum
import logging
import math
import time
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import shiboken6
from PySide6.QtCore import QObject, Qt, QTimer, Signal, SignalInstance, Slot

from gradbox.training.snapshots import Snapshot

log = logging.getLogger(__name__)

FRAME_MS = 16  # one display frame at 60 Hz: the views are redrawn at most this often
SLOWEST_FRAME_S = 0.1  # while running, a frame at least this often, however busy
# While a Run goes at the fastest speed, the UI thread's frames take at most this share
# of a core (a frame waits until the thread has been idle four times what it worked):
# training comes first when it was asked to go flat out. On this 2-core machine at load
# 8, W1 on the boundary tab (1400x900, frames of 15-19 ms of CPU): at half a core the
# window drew 21-24 frames a second and the Run went at 0.74-0.83x the bare step rate;
# at a fifth, 12-13 frames and 0.85-0.95x (benchmarks/bench_speed_app.py). Clicks and
# keys are not paced: the thread is idle most of the time.
FASTEST_RUN_SHARE = 0.2
TURN_DELAY_MS = 2  # a paced view's turn comes this long after the frame that was due
TEN_HZ_S = 0.1  # seconds between a TEN_HZ view's snapshots while a fast Run goes on
BUSY_SHARE = 3.0  # a paced view's next turn waits at least this many times its last
MAX_WAIT_S = 1.0  # ... but never longer than this (or its own interval)


class Rate(enum.Enum):
    EVERY_FRAME = "every frame"
    TEN_HZ = "ten a second"
    ONCE_A_SECOND = "once a second"
    ON_DEMAND = "on demand"


_INTERVAL_S = {Rate.TEN_HZ: TEN_HZ_S, Rate.ONCE_A_SECOND: 1.0}


@dataclass
class _Subscriber:
    # A view's method, held weakly: the pacer must not keep a closed view alive (a
    # top-level widget lives as long as its Python wrapper).
    callback: weakref.WeakMethod
    rate: Rate
    shown_at: float = -math.inf  # time.monotonic() of the last hand-over (or its turn)
    cost: float = 0.0  # the UI thread's CPU seconds in the view's last paced turn
    behind: bool = False  # a snapshot was skipped while running
    turn_pending: bool = False
    run_id: int | None = None


class FrameHost(Protocol):
    """What the pacer draws frames for (a `SessionPort`): it reads the run's state and
    hands each frame's snapshot back through `present`."""

    running: bool
    speed: float | None  # a Run's steps per second (None: as fast as it can)
    snapshot: Snapshot  # the one on screen
    running_changed: SignalInstance

    def present(self, snapshot: Snapshot) -> None:
        """A frame: `snapshot` goes on screen."""

    def frame_drawn(self) -> None:
        """A frame is over (while running, the next snapshot may come)."""


class FramePacer(QObject):
    """Draws the host's frames and hands snapshots to views by tier."""

    # (owner's key, done, result): a job finished on a worker thread; queued to this one
    _finished = Signal(object, object, object)

    def __init__(self, host: FrameHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self._subscribers: list[_Subscriber] = []
        self.frames = 0  # frames drawn: each hands one snapshot to every view
        self._next_frame = 0.0  # time.perf_counter() before which no frame is drawn
        self._drawing = False
        self._cpu_at_frame = time.thread_time()
        self._pending: Snapshot | None = None
        # The display-paced timer: the only thing that hands snapshots to the views.
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._draw_frame)
        # The paced views' turns: a timer, not a posted call (which a sendPostedEvents
        # inside the frame would run there), a little after the frame so that its
        # repaint (posted) and input come first.
        self._turns = QTimer(self)
        self._turns.setSingleShot(True)
        self._turns.setTimerType(Qt.TimerType.PreciseTimer)
        self._turns.setInterval(TURN_DELAY_MS)
        self._turns.timeout.connect(self._take_turns)
        host.running_changed.connect(self._on_running_changed)
        self._pool: ThreadPoolExecutor | None = None
        self._jobs: dict[int, tuple[Callable[[], Any], Callable[[Any], None]] | None] = {}
        self._finished.connect(self._on_finished, Qt.ConnectionType.QueuedConnection)

    # --- subscribing ----------------------------------------------------------------------
    def subscribe(self, callback: Callable[[Snapshot], None], rate: Rate) -> None:
        """Hand `callback` (a view's method) the snapshots at `rate` (see the module's
        docstring); nothing once the view is gone."""
        self._subscribers.append(_Subscriber(weakref.WeakMethod(callback), rate))  # type: ignore[arg-type]

    # --- frames ---------------------------------------------------------------------------
    @property
    def pending(self) -> Snapshot | None:
        """A snapshot offered and not drawn yet."""
        return self._pending

    def offer(self, snapshot: Snapshot) -> None:
        """A new snapshot: drawn at the next frame, at once if the last frame is a frame
        old."""
        self._pending = snapshot
        self._schedule()

    def _schedule(self) -> None:
        if self._timer.isActive() or self._drawing:
            return  # (a frame being drawn looks for a newer snapshot when it ends)
        wait = self._next_frame - time.perf_counter()
        if wait <= 0:
            self._draw_frame()
        else:
            self._timer.start(int(wait * 1000) + 1)

    def flush_then(self, then: Callable[[], None]) -> None:
        """Draw the snapshot offered, if any, now; then call `then` (a run's end is heard
        with its last snapshot on screen). Reached from inside a frame's own event pass,
        both wait for that frame to end."""
        if self._pending is not None:
            if self._drawing:
                QTimer.singleShot(0, self, lambda: self.flush_then(then))
                return
            self._timer.stop()
            self._draw_frame()
        then()

    @Slot()
    def _draw_frame(self) -> None:
        if self._drawing or self._pending is None:
            return  # reached from inside a frame's event pass: that frame goes on
        snapshot, self._pending = self._pending, None
        host = self.host
        start = time.perf_counter()
        # The UI thread's CPU time since the last frame began: that frame's handlers,
        # its repaint, and whatever else ran (clicks, paced views' turns).
        cpu = time.thread_time()
        worked, self._cpu_at_frame = cpu - self._cpu_at_frame, cpu
        self._drawing = True
        try:
            self.frames += 1
            host.present(snapshot)
            # The window's repaint is the event loop's next turn, not this one: two
            # shorter waits for clicks and timers, not one long one.
            self._hand_out(snapshot)
        finally:
            self._drawing = False
        # While running, the next frame waits until the UI thread has been idle a frame,
        # and at least as long as it worked since the last frame began (that frame's
        # handlers and repaint, and anything else), so clicks, timers and training get
        # their share however heavy the views are; at the fastest speed, until the
        # frames are FASTEST_RUN_SHARE of its time. (At most SLOWEST_FRAME_S: the work
        # counted may have been a dialog's.)
        if not host.running:
            period = FRAME_MS / 1000
        elif host.speed is None:
            period = min(max(FRAME_MS / 1000, worked / FASTEST_RUN_SHARE), SLOWEST_FRAME_S)
        else:
            period = min(worked + max(FRAME_MS / 1000, worked), SLOWEST_FRAME_S)
        self._next_frame = max(start + period, time.perf_counter())
        host.frame_drawn()
        if self._pending is not None:
            self._schedule()

    # --- tiers ----------------------------------------------------------------------------
    def _fast(self, interval: float) -> bool:
        """A Run is going faster than a view paced at `interval` is refreshed."""
        speed = self.host.speed
        return self.host.running and (speed is None or speed * interval > 1)

    def paces(self, rate: Rate) -> bool:
        """Views of tier `rate` are handed fewer snapshots than the frames show now (a
        Run goes faster than the tier)."""
        if rate is Rate.EVERY_FRAME:
            return False
        if rate is Rate.ON_DEMAND:
            return bool(self.host.running)
        return self._fast(_INTERVAL_S[rate])

    def _hand(self, sub: _Subscriber, snapshot: Snapshot) -> bool:
        callback = sub.callback()
        if callback is None or not shiboken6.isValid(callback.__self__):
            if sub in self._subscribers:
                self._subscribers.remove(sub)
            return False
        sub.shown_at, sub.behind, sub.run_id = time.monotonic(), False, snapshot.run_id
        callback(snapshot)
        return True

    def _hand_out(self, snapshot: Snapshot) -> None:
        for sub in list(self._subscribers):
            new_run = sub.run_id is not None and snapshot.run_id != sub.run_id
            if sub.rate is Rate.EVERY_FRAME or new_run:
                self._hand(sub, snapshot)
            elif sub.rate is Rate.ON_DEMAND:
                if self.host.running:
                    sub.behind = True
                else:
                    self._hand(sub, snapshot)
            else:
                interval = _INTERVAL_S[sub.rate]
                if not self._fast(interval):
                    self._hand(sub, snapshot)
                    continue
                sub.behind = True  # (the run's end hands over the last snapshot)
                now = time.monotonic()
                wait = min(max(interval, BUSY_SHARE * sub.cost), max(MAX_WAIT_S, interval))
                if now - sub.shown_at >= wait and not sub.turn_pending:
                    sub.shown_at, sub.turn_pending = now, True
                    self._turns.start()

    @Slot()
    def _take_turns(self) -> None:
        """One paced view's turn; the next view's in a turn of its own after it."""
        waiting = [s for s in self._subscribers if s.turn_pending]
        if not waiting:
            return
        sub = waiting[0]
        sub.turn_pending = False
        if len(waiting) > 1:
            self._turns.start()
        if not sub.behind:
            return
        start = time.thread_time()
        if self._hand(sub, self.host.snapshot):
            # Its repaint is the event loop's next turn, as a frame's is (forced here, it
            # took the window's other pending repaints along: 16-25 ms blocks, W1).
            sub.cost = time.thread_time() - start

    @Slot(bool)
    def _on_running_changed(self, running: bool) -> None:
        """The end-of-run flush: every view that skipped snapshots gets the last one."""
        if running:
            return
        for sub in list(self._subscribers):
            sub.cost = 0.0
            if sub.behind:
                self._hand(sub, self.host.snapshot)

    # --- off the UI thread ---------------------------------------------------------------
    def off_thread(self, owner: QObject, work: Callable[[], Any],
                   done: Callable[[Any], None]) -> None:
        """Run `work()` on a worker thread, then `done(result)` on the UI thread (`done`
        gets the exception instead if `work` raised); nothing if `owner` is gone by
        then. While one of `owner`'s jobs runs, a newer request replaces any waiting."""
        key = id(owner)
        if key in self._jobs:
            self._jobs[key] = (work, done)  # replaces an older one still waiting
            return
        self._jobs[key] = None
        self._start(key, owner, work, done)

    def _start(self, key: int, owner: QObject, work: Callable[[], Any],
               done: Callable[[Any], None]) -> None:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="gradbox-frames")
        alive = weakref.ref(owner)

        def run() -> None:
            try:
                result: Any = work()
            except Exception as error:  # the owner must learn it is done, whatever happened
                log.debug("off-thread work failed", exc_info=True)
                result = error
            if shiboken6.isValid(self):
                self._finished.emit((key, alive), done, result)
        try:
            self._pool.submit(run)
        except RuntimeError:  # shut down: the window is closing, nobody to show it to
            self._jobs.pop(key, None)

    @Slot(object, object, object)
    def _on_finished(self, owner: tuple[int, weakref.ref], done: Callable[[Any], None],
                     result: Any) -> None:
        key, alive = owner
        waiting = self._jobs.pop(key, None)
        obj = alive()
        if obj is None or not shiboken6.isValid(obj):
            return
        done(result)
        if waiting is not None and key not in self._jobs:
            self._jobs[key] = None
            self._start(key, obj, *waiting)

    def shutdown(self, wait: bool = True) -> None:
        """No more off-thread work: what waits is dropped, what runs is waited for."""
        self._timer.stop()
        self._jobs.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=True)
