"""The fonts gradbox draws its text with, shipped in the package (resources/fonts/).

Text metrics decide the layout, and at 1024x700 there is no slack left: with the
machine's own fonts a desktop with GTK 3 and ghostscript's fonts installed picked Noto
Sans Mono for the code, and Windows (Segoe UI) or macOS (SF) would pick other faces
again. So the app brings its own faces (DejaVu Sans 2.37 and DejaVu Sans Mono, freely
licensed: resources/fonts/LICENSE.txt) and one style (Fusion), and sets the size itself:
the window is laid out the same on every desktop. A glyph the faces lack (a learner's
emoji, CJK) still falls back to the machine's fonts.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QApplication

from gradbox import resource

UI_FAMILY = "DejaVu Sans"
CODE_FAMILY = "DejaVu Sans Mono"
# The size every layout was measured at: Qt's default on Linux, 9 pt at 96 dpi. The app
# asks for those 12 (logical) pixels everywhere, as points at the screen's logical dpi:
# macOS counts 72 dpi (9 pt would be 9 px there), a desktop may set 120.
UI_PIXELS = 12.0
UI_POINTS = 9.0
STYLE = "Fusion"
FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf",
         "DejaVuSans-BoldOblique.ttf", "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf")


def install_fonts(app: QApplication) -> None:
    """Register the shipped faces and make them the application's (text and code), in the
    Fusion style. Call once, right after the QApplication exists; the tests do too."""
    if not app.property("gradbox_fonts"):
        for name in FILES:
            if QFontDatabase.addApplicationFont(str(resource(f"fonts/{name}"))) < 0:
                raise RuntimeError(f"gradbox: cannot load its font {resource(f'fonts/{name}')}")
        # Rich text's <code> and <pre> ask for the generic "monospace" (and old HTML for
        # Courier), which each machine's fontconfig answers with a face of its own.
        for generic in ("monospace", "Monospace", "Courier New", "Courier", "courier"):
            QFont.insertSubstitution(generic, CODE_FAMILY)
        app.setProperty("gradbox_fonts", True)
    app.setStyle(STYLE)
    screen = app.primaryScreen()
    dpi = screen.logicalDotsPerInchY() if screen is not None else 96.0
    app.setFont(ui_font(UI_PIXELS * 72.0 / dpi if dpi > 0 else UI_POINTS))


def ui_font(points: float = UI_POINTS) -> QFont:
    """The text face at `points`."""
    font = QFont(UI_FAMILY)
    font.setPointSizeF(points)
    return font


def code_font(points: float = UI_POINTS) -> QFont:
    """The fixed-width face code is shown in, at `points` (the panel's own size)."""
    font = QFont(CODE_FAMILY)
    font.setStyleHint(QFont.StyleHint.TypeWriter)
    font.setPointSizeF(points)
    return font
