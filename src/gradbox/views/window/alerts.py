"""The one place the run's alarms are said: a diverging or non-finite run, and a hidden
layer whose neurons are all alike (the symmetry guard).

An alarm describes a state, so it is said again from each snapshot while that state
lasts (with the step on screen, never the step it was first seen at) and goes with it:
a rewind before it, a new run, a new learning rate, a random initializer. It is said
here only: the message bar does not repeat it.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtWidgets import QLabel, QWidget

from gradbox.training.goals import SYMMETRY_WHY, divergence, symmetry
from gradbox.training.history import StepRecord
from gradbox.training.snapshots import Snapshot
from gradbox.views.palette import ERROR_BOX

_STYLE = ("background: {}; color: {}; padding: 6px; border: 1px solid {}; "
          "font-weight: bold;").format(*ERROR_BOX)


def _last_key(history: Sequence[StepRecord]) -> tuple[int, float] | None:
    """Tells one run's last step from another's."""
    return (history[-1].step, history[-1].loss) if history else None


class AlertBanner(QLabel):
    """Red text in the status bar while the run on screen is in an alarming state."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Alert")
        self.setWordWrap(True)
        self.setStyleSheet(_STYLE)
        self.hide()
        # The stop being described: (step, lr, the run's last record) when the Run paused.
        self._stop: tuple[int, float, tuple[int, float] | None] | None = None
        self._stop_reason = ""
        self._symmetry_key: tuple[object, ...] | None = None
        self._symmetry = ""

    # --- what the window tells it ---------------------------------------------------------
    def run_stopped(self, reason: str, snapshot: Snapshot) -> None:
        """A Run paused on a problem (a non-finite loss, a diverging one)."""
        self._stop = (snapshot.step, snapshot.lr, _last_key(snapshot.history))
        self._stop_reason = reason
        self.show_state(snapshot)

    def show_state(self, snapshot: Snapshot) -> None:
        """Say what still holds on this snapshot, and nothing that no longer does."""
        lines = []
        stop = self._stop_text(snapshot)
        if stop:
            lines.append(stop)
        else:
            self._stop = None
        sym = self._symmetry_text(snapshot)
        if sym:
            lines.append(sym)
        text = "\n".join(lines)
        if text != self.text():
            self.setText(text)
            self.setToolTip(SYMMETRY_WHY if sym else "")
        self.setVisible(bool(text))

    # --- the two alarms -------------------------------------------------------------------
    def _stop_text(self, snapshot: Snapshot) -> str:
        """The paused-on state is still the one on screen: not rewound past, not a new run,
        no new learning rate, and no successful step since a non-finite one. After more
        steps of a still-diverging run, today's numbers (not those of the step it paused
        at)."""
        if self._stop is None:
            return ""
        step, lr, key = self._stop
        history = snapshot.history
        if snapshot.lr != lr or len(history) < step or _last_key(history[:step]) != key:
            return ""
        if len(history) == step:
            return f"Training paused: {self._stop_reason}"
        if snapshot.stop_reason:
            return f"Training paused: {snapshot.stop_reason}"
        still = divergence(history, snapshot.forget_zero_grad)
        return f"Still diverging: {still}" if still else ""

    def _symmetry_text(self, snapshot: Snapshot) -> str:
        """Asked once per step shown (a comparison of each hidden layer's rows)."""
        key = (snapshot.step, _last_key(snapshot.history), len(snapshot.edits), snapshot.config)
        if key != self._symmetry_key:
            self._symmetry_key = key
            self._symmetry = symmetry(snapshot.params, snapshot.layer_sizes,
                                      snapshot.config.init, len(snapshot.history))
        return self._symmetry
