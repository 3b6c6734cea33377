"""Labels get the room their text needs, and no more layouts than that. A held label's
text changes without laying out the window unless it needs more room: then it asks once
(the toolbar's step counter read "step 9090 · 382 step" at 1400 px, its room set from
"step 0"). Step labels along a plot's bottom never run together."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from gradbox.views.label_holder import LabelHolder
from qt_waits import settle


class LayoutCount(QObject):
    """Counts the layouts asked of a widget."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False


def test_a_longer_text_gets_its_room_and_a_shorter_one_lays_out_nothing(qtbot) -> None:  # type: ignore[no-untyped-def]
    bar = QWidget()
    qtbot.addWidget(bar)
    row = QHBoxLayout(bar)
    counter = QLabel("step 0")
    counter.setMinimumWidth(60)
    row.addWidget(LabelHolder(counter))
    row.addWidget(QSlider(Qt.Orientation.Horizontal), 1)  # the rest, as the timeline has
    bar.resize(700, 40)
    bar.show()
    qtbot.waitExposed(bar)
    settle()
    layouts = LayoutCount()
    bar.installEventFilter(layouts)
    assert counter.width() < 100
    counter.setText("step 9090  ·  382 steps/s")
    settle()
    assert counter.width() >= counter.sizeHint().width()
    assert layouts.count >= 1
    assert counter.width() >= counter.sizeHint().width()
    assert layouts.count >= 1
    layouts.count = 0
    for text in ("step 9091  ·  381 steps/s", "step 9092", "step 9093  ·  1 steps/s"):
        counter.setText(text)
        settle()
        assert counter.width() >= counter.sizeHint().width()
    assert layouts.count == 0  # no wider than before: the window is not laid out again


@pytest.mark.parametrize("steps", [9, 150, 2_500, 8_000, 123_456])
@pytest.mark.parametrize("width", [60, 105, 300])
def test_step_labels_along_the_bottom_stand_apart(qtbot, steps: int, width: int) -> None:  # type: ignore[no-untyped-def]
    """The loss curve's small plots are ~100 px wide at 1024x700: "2000", "4000" and
    "6000" ran together there."""
    from PySide6.QtGui import QFontMetricsF

    from gradbox.views.plots.plotting import StepAxis

    axis = StepAxis("bottom")
    metrics = QFontMetricsF(axis.font())
    drawn = 0
    for spacing, values in axis.tickValues(0, steps, width)[:axis.style["maxTextLevel"]]:
        assert spacing >= 1 and spacing == int(spacing)
        labels = axis.tickStrings(values, axis.scale, spacing)
        drawn += len(values)
        if len(values) < 2:
            continue
        apart = spacing * width / steps
        widest = max(metrics.horizontalAdvance(t) for t in labels)
        assert apart >= widest, (spacing, labels)
    assert drawn >= 1  # at least one step is labelled
