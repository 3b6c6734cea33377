"""Every test runs without a display: Qt renders offscreen."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
