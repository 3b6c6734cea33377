"""Teacher mode's phase indicator: step, phase just run and next, large, on a row of its own.

In the training toolbar the indicator is two small lines; at projector size it would push
the Forget zero_grad switch and the step counter off the toolbar, so teacher mode shows
this bar instead, under the toolbar, where a whole row is free.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QToolBar, QWidget

from gradbox.port.protocol import SessionPort
from gradbox.teaching.loop_code import phase_summary
from gradbox.training.snapshots import Snapshot
from gradbox.views.palette import ALARM, ALARM_ON_DARK, NEXT, NEXT_ON_DARK

STYLE = "QLabel {{ font-size: 20pt; font-weight: bold; color: {}; padding: 0px 8px; }}"


class PhaseBar(QToolBar):
    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__("Phase", parent)
        self.setObjectName("phase_bar")
        self.setMovable(False)
        self.label = QLabel()
        self.label.setObjectName("phase_bar_label")
        self.label.setAccessibleName("Phase just run and next phase")
        self.label.setToolTip("The phase the last Sub-step ran, and the one the next runs")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self._alarm = ALARM
        self._snapshot = controller.snapshot
        self._restyle()
        self.addWidget(self.label)
        controller.snapshot_changed.connect(self._on_snapshot)
        self._on_snapshot(controller.snapshot)

    def _restyle(self) -> None:
        """The app's blue and red where the window is light; lighter ones on a dark
        theme's window, where the back of the room could not read them."""
        dark = self.palette().color(QPalette.ColorRole.Window).lightness() < 128
        self._alarm = ALARM_ON_DARK if dark else ALARM
        self.label.setStyleSheet(STYLE.format(NEXT_ON_DARK if dark else NEXT))

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._restyle()
            self._on_snapshot(self._snapshot)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        done_text, next_text = phase_summary(snapshot)
        if "skipped" in next_text:
            next_text = f"<span style='color:{self._alarm}'>{next_text}</span>"
        # The step number too: lessons say "press Step until step 10", and the toolbar's
        # counter is small.
        self.label.setText(f"step {snapshot.step} · {done_text}  →  {next_text}")
