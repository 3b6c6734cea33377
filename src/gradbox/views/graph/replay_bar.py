"""The backward replay's controls and counter, floating at the bottom of the graph view.

Play/Pause, Step, a speed and "backward: 12 of 30", always next to the graph they move
(in the graph panel and in the Playground alike). A child widget of the view, like the
key (see `graph_legend`), so it never smears while the view pans.
"""

from __future__ import annotations

import qtawesome as qta
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from gradbox.views.graph.backward_replay import SPEEDS
from gradbox.views.palette import ON_HIGHLIGHT


class ReplayBar(QFrame):
    """Buttons that drive a `BackwardReplay`, and where it is."""

    play_clicked = Signal()
    pause_clicked = Signal()
    step_clicked = Signal()
    stop_clicked = Signal()
    speed_chosen = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("replayBar")
        # Dark text on its white ground, whatever the theme (a dark theme's light text
        # hid 'backward: 5 of 5 steps').
        self.setStyleSheet("#replayBar { background: rgba(255, 255, 255, 235); "
                           "border: 1px solid #cccccc; border-radius: 5px; } "
                           f"#replayBar QLabel {{ color: {ON_HIGHLIGHT}; }}")
        self.setAccessibleName("Backward replay")
        self.play = QToolButton(self)
        self.play.setAccessibleName("Play or pause the backward replay")
        self.play.clicked.connect(self._on_play)
        self.step = QToolButton(self)
        self.step.setIcon(qta.icon("fa5s.step-forward", color="#333333"))
        self.step.setAccessibleName("Replay one step")
        self.step.setToolTip("One more step of the backward replay (B)")
        self.step.clicked.connect(self.step_clicked)
        self.stop = QToolButton(self)
        self.stop.setIcon(qta.icon("fa5s.times", color="#555555"))
        self.stop.setAccessibleName("Stop the replay")
        self.stop.setToolTip("Stop the replay: every node shows its gradient again (Esc)")
        self.stop.clicked.connect(self.stop_clicked)
        self.speed = QComboBox(self)
        self.speed.setAccessibleName("Replay speed")
        self.speed.setToolTip("How fast the replay runs: 1× replays the whole graph in "
                              "about 10 seconds")
        for speed in SPEEDS:
            self.speed.addItem(f"{speed:g}×", speed)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.speed.currentIndexChanged.connect(
            lambda i: self.speed_chosen.emit(float(self.speed.itemData(i))))
        self.counter = QLabel(self)
        self.counter.setAccessibleName("Replay position")
        self.counter.setToolTip("How many steps of backward the replay has shown")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 2, 6, 2)
        layout.setSpacing(4)
        for widget in (self.play, self.step, self.speed, self.counter, self.stop):
            layout.addWidget(widget)
        for button in (self.play, self.step, self.stop):
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # keys stay with the graph
            button.setAutoRaise(True)
        self.play.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self._icons = (qta.icon("fa5s.play", color="#1b5e20"),
                       qta.icon("fa5s.pause", color="#333333"))
        self._playing = False
        self.compact = False  # in a small window: the play button without its words
        self._state: tuple | None = None
        self.show_state(playing=False, position=0, length=0, unit="nodes")

    def show_state(self, playing: bool, position: int, length: int, unit: str) -> None:
        """What the replay is doing: the play button's face, the counter, Stop."""
        state = (playing, position, length, unit, self.compact)
        if state == self._state:
            return  # called on every refresh: a layout pass each time is not free
        self._state = state
        self._playing = playing
        if playing:
            self.play.setIcon(self._icons[1])
            self.play.setText("")
            self.play.setToolTip("Pause the replay where it is")
        else:
            self.play.setIcon(self._icons[0])
            # the label says what a press does; once a replay is loaded the icon does
            self.play.setText("" if 0 < position < length or self.compact
                              else "Play backward")
            self.play.setToolTip("Replay backward: each step lights up as its gradient "
                                 "arrives, the output first")
        if length:
            self.counter.setText(f"{position} of {length} {unit}" if self.compact
                                 else f"backward: {position} of {length} {unit}")
        else:
            self.counter.setText("")
        self.counter.setVisible(bool(length))
        self.stop.setVisible(bool(length))
        self.adjustSize()

    def counter_text(self) -> str:
        return self.counter.text()

    def set_speed(self, speed: float) -> None:
        index = self.speed.findData(speed)
        if index >= 0:
            self.speed.setCurrentIndex(index)

    def _on_play(self) -> None:
        (self.pause_clicked if self._playing else self.play_clicked).emit()
