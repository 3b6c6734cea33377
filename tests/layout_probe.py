"""Run as a script: build the default window offscreen at a size, print every visible
widget's geometry as JSON, and optionally save a picture of it.

    python tests/layout_probe.py WIDTHxHEIGHT [PICTURE.png]

tests/test_same_layout_everywhere.py runs it under several font sets (FONTCONFIG_FILE) and
platform themes, in a process of its own each, since the machine's fonts are read once.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def widget_key(widget, window) -> str:  # type: ignore[no-untyped-def]
    """A name for `widget` that is the same in every process: its path of object names
    (or class names and the index among same-class siblings) up to the window."""
    parts = []
    while widget is not None and widget is not window:
        name = widget.objectName()
        if not name:
            parent = widget.parentWidget()
            kind = type(widget).__name__
            siblings = [w for w in (parent.findChildren(type(widget)) if parent else [])
                        if w.parentWidget() is parent]
            name = f"{kind}[{siblings.index(widget) if widget in siblings else 0}]"
        parts.append(name)
        widget = widget.parentWidget()
    return "/".join(reversed(parts))


def main() -> None:
    import pyqtgraph as pg
    from PySide6.QtCore import QPoint, QSettings
    from PySide6.QtWidgets import QApplication, QWidget

    from gradbox.port.controller import SessionController
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer
    from gradbox.views.fonts import install_fonts
    from gradbox.views.window.main_window import MainWindow

    width, height = (int(v) for v in sys.argv[1].lower().split("x"))
    pg.setConfigOptions(antialias=True, background="w", foreground="k")  # as app.main
    app = QApplication([])
    install_fonts(app)
    with tempfile.TemporaryDirectory() as folder:
        settings = QSettings(os.path.join(folder, "settings.ini"), QSettings.Format.IniFormat)
        controller = SessionController(Trainer(TrainingConfig()))
        try:
            window = MainWindow(controller, settings, None)
            window.resize(width, height)
            window.show()
            for _ in range(10):  # layouts settle over a few passes
                app.processEvents()
            shown = {}
            for widget in window.findChildren(QWidget):
                if widget.isVisible():
                    corner = widget.mapTo(window, QPoint(0, 0))
                    shown[widget_key(widget, window)] = [corner.x(), corner.y(),
                                                         widget.width(), widget.height()]
            if len(sys.argv) > 2:
                window.grab().save(sys.argv[2])
            print(json.dumps({"font": app.font().family(), "style": app.style().name(),
                              "widgets": shown}))
            window.close()
        finally:
            controller.shutdown()


if __name__ == "__main__":
    main()
