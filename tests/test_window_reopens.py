"""A window that filled the screen reopens filling it (issue 32, cosmetic): Qt's
restoreGeometry made it 2 px smaller than the screen ("an exact fit would be full
screen") and a guessed title bar's height shorter still: 1022x674 on a 1024x700 screen
with no title bars, in the real window.

Run in a process of its own: the offscreen screen is 800x800 (narrower than the window
can be) unless configured before the application starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REOPEN = """
import json
import sys
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from gradbox.port.in_process import InProcessPort
from gradbox.views.fonts import install_fonts
from gradbox.views.window.main_window import MainWindow

app = QApplication([])
install_fonts(app)
settings = QSettings(sys.argv[1], QSettings.IniFormat)
screen = app.primaryScreen().availableGeometry()
shown = []
for _ in range(2):
    port = InProcessPort()
    win = MainWindow(port, settings, None)
    if not shown:
        win.setGeometry(screen)
    win.show()
    for _ in range(5):
        app.processEvents()
    shown.append(win.geometry().getRect())
    win.save_settings()
    win.hide()
    port.shutdown()
print(json.dumps([list(screen.getRect()), *shown]))
"""


def test_a_window_that_filled_the_screen_reopens_filling_it(tmp_path: Path) -> None:
    config = tmp_path / "screen.json"
    config.write_text(json.dumps({"windowFrameMargins": False, "screens": [{
        "name": "S", "x": 0, "y": 0, "width": 1024, "height": 700,
        "logicalDpi": 96, "logicalBase": 96, "dpr": 1}]}))
    env = dict(os.environ, QT_QPA_PLATFORM=f"offscreen:configfile={config}")
    done = subprocess.run([sys.executable, "-c", REOPEN, str(tmp_path / "settings.ini")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    screen, first, again = json.loads(done.stdout.strip().splitlines()[-1])
    assert first == screen == [0, 0, 1024, 700]
    assert again == screen
