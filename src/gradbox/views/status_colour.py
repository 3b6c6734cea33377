"""A status line's colour that follows the palette: the warning red (or the quiet grey)
on a light window, its lighter twin on a dark theme's, again whenever the palette changes.

The red that reads on white is too dark on a dark window (the alarm red on #2b2b2b: contrast
2.2), so a label never spells the colour itself: it says what its text is ("alarm",
"caution", "quiet" or plain) and this module picks the colour for the ground it stands on.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel

from gradbox.views.palette import (
    ALARM,
    ALARM_ON_DARK,
    CAUTION,
    CAUTION_ON_DARK,
    QUIET,
    QUIET_ON_DARK,
)

# What the text is -> (its colour on a light window, on a dark one).
TONES = {"alarm": (ALARM, ALARM_ON_DARK), "caution": (CAUTION, CAUTION_ON_DARK),
         "quiet": (QUIET, QUIET_ON_DARK)}
_PROPERTY = "gradbox_status_tone"


def is_dark(widget: QLabel) -> bool:
    """Whether the widget stands on a dark theme's window."""
    return widget.palette().color(QPalette.ColorRole.Window).lightness() < 128


class _Follower(QObject):
    """Paints its label again when the label's palette changes (see set_tone)."""

    def __init__(self, label: QLabel) -> None:
        super().__init__(label)
        self.label = label

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            _paint(self.label)
        return False


def _paint(label: QLabel) -> None:
    tone, bold = label.property(_PROPERTY) or ("", False)
    parts = []
    if tone:
        light, dark = TONES[tone]
        parts.append(f"color: {dark if is_dark(label) else light};")
    if bold:
        parts.append("font-weight: bold;")
    style = " ".join(parts)
    if label.styleSheet() != style:  # (a style sheet changes the palette: no loop)
        label.setStyleSheet(style)


def set_tone(label: QLabel, tone: str = "", *, bold: bool = False) -> None:
    """Show the label's text as `tone` ("alarm", "caution", "quiet", or "" for the theme's own text
    colour), readable on a light or a dark window, now and after every palette change."""
    if tone and tone not in TONES:
        raise ValueError(f"unknown tone {tone!r}")
    if label.findChild(_Follower) is None:
        label.installEventFilter(_Follower(label))
    label.setProperty(_PROPERTY, (tone, bold))
    _paint(label)
