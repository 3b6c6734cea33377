"""How a Run goes: its speed, and when it stops by itself. Sits in the training toolbar."""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QComboBox, QDoubleSpinBox, QHBoxLayout, QWidget

from gradbox.port.protocol import SessionPort
from gradbox.training.goals import MAX_RUN_STEPS, RunGoal

# Steps per second a Run can take; None: as fast as the machine allows.
SPEEDS: tuple[float | None, ...] = (1, 2, 5, 10, 30, None)
WATCHABLE_SPEED = 10  # the default: each step's change can be followed by eye

# kind: (menu text, the value box's decimals, minimum, maximum, default, suffix)
STOPS = {
    "never": ("until paused", 0, 0, 0, 0, ""),
    "steps": ("for N steps", 0, 1, MAX_RUN_STEPS, 100, " steps"),
    "loss": ("until loss ≤", 4, 0, 1e6, 0.05, ""),
    "accuracy": ("until accuracy ≥", 1, 0, 100, 95, " %"),
}


def speed_text(speed: float | None) -> str:
    if speed is None:
        return "max speed"
    return f"{speed:g} step/s" if speed == 1 else f"{speed:g} steps/s"


class RunControls(QWidget):
    """A speed menu and a stop condition; both apply to the controller at once (a change
    while running takes effect from the next step)."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)

        self.speed = QComboBox()
        self.speed.setAccessibleName("Run speed")
        self.speed.setToolTip("How many steps per second Run takes. Slow enough to watch "
                              "each step land, or as fast as the machine allows")
        for speed in SPEEDS:
            self.speed.addItem(speed_text(speed), speed)
        self.speed.setCurrentIndex(SPEEDS.index(WATCHABLE_SPEED))

        self.stop_kind = QComboBox()
        self.stop_kind.setAccessibleName("Run stops")
        self.stop_kind.setToolTip("When Run stops by itself: never (until you pause), after "
                                  "a number of steps, or once the training loss or accuracy "
                                  "reaches a target")
        for kind, (text, *_rest) in STOPS.items():
            self.stop_kind.addItem(text, kind)
        self.stop_value = QDoubleSpinBox()
        self.stop_value.setAccessibleName("Run stop value")
        self.stop_value.setToolTip("The number of steps, the loss or the accuracy (in %) at "
                                   "which Run stops")
        self.stop_value.setKeyboardTracking(False)
        for widget in (self.speed, self.stop_kind, self.stop_value):
            layout.addWidget(widget)

        self.speed.currentIndexChanged.connect(self._on_speed)
        self.stop_kind.currentIndexChanged.connect(self._on_stop_kind)
        self.stop_value.valueChanged.connect(self._on_stop_value)
        self._on_speed()
        self._on_stop_kind()

    def set_controls(self, speed: float | None, stop: str, value: float) -> None:
        """Show (and apply) a speed and a stop condition, as a session file kept them. A
        speed not on the menu takes the nearest one that is."""
        known = [s for s in SPEEDS if s is not None]
        choice = None if speed is None else min(known, key=lambda s: abs(s - speed))
        self.speed.setCurrentIndex(SPEEDS.index(choice))
        if stop in STOPS:
            self.stop_kind.setCurrentIndex(list(STOPS).index(stop))
            self.stop_value.setValue(value)  # clamped to the kind's range

    def controls(self) -> tuple[float | None, str, float]:
        """(speed, stop kind, stop value) as shown: what `set_controls` takes back."""
        return self.speed.currentData(), self.kind(), float(self.stop_value.value())

    def kind(self) -> str:
        return str(self.stop_kind.currentData())

    def goal(self) -> RunGoal:
        """The stop condition the controls describe."""
        value, kind = self.stop_value.value(), self.kind()
        if kind == "steps":
            return RunGoal(steps=round(value))
        if kind == "loss":
            return RunGoal(loss=value)
        if kind == "accuracy":
            return RunGoal(accuracy=value / 100)
        return RunGoal()

    @Slot()
    def _on_speed(self) -> None:
        self.controller.set_speed(self.speed.currentData())

    @Slot()
    def _on_stop_kind(self) -> None:
        _text, decimals, low, high, default, suffix = STOPS[self.kind()]
        self.stop_value.blockSignals(True)
        self.stop_value.setDecimals(decimals)
        self.stop_value.setRange(low, high)
        self.stop_value.setSuffix(suffix)
        self.stop_value.setValue(default)
        self.stop_value.blockSignals(False)
        self.stop_value.setVisible(self.kind() != "never")
        self._on_stop_value()

    @Slot()
    def _on_stop_value(self) -> None:
        self.controller.goal = self.goal()
