"""A backward replay's progress: the order, where it is, and the timer that moves it on.

Shared by the graph panel and the Playground (both through `GraphView`). It knows
nothing about scenes: each step is a group of ids the current level lights up when
`advanced` fires, so the same replay drives the operation level (nodes) and the
network level (units).
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, QTimer, Signal

# The default pace: a whole replay takes about this long, whatever its length (the
# demo graph's ~300 steps as well as the Playground's six), within these bounds per
# step: faster than 30 ms nobody can follow; slower than 400 ms a small graph drags.
WHOLE_REPLAY_MS = 10_000
STEP_MS = (30, 400)
SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0)  # multiples of the default pace offered to the user


class BackwardReplay(QObject):
    """Steps through an order with Play/Pause, Step and a speed."""

    advanced = Signal(int, int)  # step index (into `steps`), position (1 = first)
    finished = Signal()
    stopped = Signal()  # stopped before the end (Esc, Stop, a new graph)
    state_changed = Signal()  # started, paused, resumed, stopped or finished

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._steps: list[tuple[int, ...]] = []
        self._position = 0
        self._speed = 1.0
        self._timer = QTimer(self)
        self._fixed_ms: int | None = None  # a caller's own pace for this run
        self._timer.timeout.connect(self.step)

    # --- the order ------------------------------------------------------------------
    def load(self, steps: Sequence[Sequence[int]]) -> None:
        """A new replay of `steps` (each a group of ids lit together), at its start."""
        self._timer.stop()
        self._steps = [tuple(s) for s in steps]
        self._position = 0
        self._fixed_ms = None
        self._timer.setInterval(self.interval())
        self.state_changed.emit()

    def steps(self) -> list[tuple[int, ...]]:
        return list(self._steps)

    def current(self) -> tuple[int, ...]:
        """The ids the replay reached last (empty before the first step)."""
        return self._steps[self._position - 1] if self._position else ()

    def position(self) -> int:
        """How many steps have been taken."""
        return self._position

    def length(self) -> int:
        """How many steps the replay has (0 when there is none)."""
        return len(self._steps)

    def is_loaded(self) -> bool:
        return bool(self._steps)

    def is_finished(self) -> bool:
        return bool(self._steps) and self._position >= len(self._steps)

    def is_playing(self) -> bool:
        return self._timer.isActive()

    # --- moving ---------------------------------------------------------------------
    def play(self, interval_ms: int | None = None) -> None:
        """Run on by itself; `interval_ms` overrides the speed's pace for this run."""
        if not self._steps:
            return
        if interval_ms is not None:
            self._fixed_ms = max(1, int(interval_ms))
        self._timer.setInterval(self.interval())
        self._timer.start()
        self.state_changed.emit()

    def pause(self) -> None:
        if self._timer.isActive():
            self._timer.stop()
            self.state_changed.emit()

    def step(self) -> int | None:
        """Take one step; returns its index in `steps`, None at the end."""
        if self._position >= len(self._steps):
            self._timer.stop()
            return None
        index = self._position
        self._position += 1
        self.advanced.emit(index, self._position)
        if self._position >= len(self._steps):
            self._timer.stop()
            self.finished.emit()
            self.state_changed.emit()
        return index

    def stop(self) -> None:
        """Forget the replay; `stopped` tells listeners if it had not finished."""
        self._timer.stop()
        if not self._steps:
            return
        unfinished = self._position < len(self._steps)
        self._steps = []
        self._position = 0
        if unfinished:
            self.stopped.emit()
        self.state_changed.emit()

    # --- speed ----------------------------------------------------------------------
    def set_speed(self, speed: float) -> None:
        """A multiple of the default pace (2 = twice as fast); takes effect at once."""
        self._speed = max(0.05, float(speed))
        self._fixed_ms = None
        self._timer.setInterval(self.interval())

    def speed(self) -> float:
        return self._speed

    def interval(self) -> int:
        """Milliseconds between two steps: the whole replay in about WHOLE_REPLAY_MS at
        speed 1, each step within STEP_MS, divided by the speed."""
        if self._fixed_ms is not None:
            return self._fixed_ms
        low, high = STEP_MS
        pace = min(max(WHOLE_REPLAY_MS / max(len(self._steps), 1), low), high)
        return max(1, round(pace / self._speed))
