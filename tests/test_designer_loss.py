"""The Loss box shows the loss in use: softmax cross-entropy for more than two classes."""

from __future__ import annotations

import pytest

from gradbox.views.panels.designer import DesignerPanel

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


def test_more_than_two_classes_show_softmax_and_say_why(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    designer = DesignerPanel(controller)
    qtbot.addWidget(designer)
    designer.loss.setCurrentIndex(designer.loss.findData("mse"))
    designer.kind.setCurrentText("blobs")
    designer.classes.setValue(3)
    assert designer.loss.currentText() == "Softmax cross-entropy"
    assert not designer.loss.isEnabled()
    assert "3 classes need one score per class" in designer.loss.toolTip()
    assert designer.status.text().startswith("Loss: softmax cross-entropy, because 3 classes")
    config = designer.config()
    assert config.loss == "mse" and config.effective_loss == "softmax"
    designer.apply()
    qtbot.waitUntil(lambda: controller.snapshot.config.classes == 3, timeout=5000)
    assert designer.loss.currentText() == "Softmax cross-entropy"
    designer.classes.setValue(2)  # back to two: the choice made for two comes back
    assert designer.loss.currentText() == "Mean squared error"
    assert designer.loss.isEnabled()
    assert designer.config().loss == "mse"
