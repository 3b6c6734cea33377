"""Every test runs without a display: Qt renders offscreen."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest


@pytest.fixture
def controller(qtbot):  # type: ignore[no-untyped-def]
    """A SessionController on the default configuration; its worker thread is stopped after."""
    from gradbox.training import Trainer, TrainingConfig
    from gradbox.views.session import SessionController

    session = SessionController(Trainer(TrainingConfig()))
    yield session
    session.shutdown()
