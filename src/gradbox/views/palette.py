"""The app's colours, each named once by what it means; plots, the graph and the panels
import them, so the same meaning has the same colour in every panel of the window."""

from __future__ import annotations

__all__ = [
    "ALARM",
    "ALARM_ON_DARK",
    "CAUTION",
    "CAUTION_ON_DARK",
    "CLASS_COLOURS",
    "CLASS_NAMES",
    "EDIT",
    "ERROR_BOX",
    "GHOST",
    "GRAD",
    "HIGHLIGHT",
    "NEGATIVE",
    "NEXT",
    "NEXT_ON_DARK",
    "NOTE_BOX",
    "ON_HIGHLIGHT",
    "POSITIVE",
    "QUIET",
    "QUIET_ON_DARK",
    "TEST",
    "TRAIN",
    "rgb",
]

# TensorFlow Playground's orange and blue for the two classes (negative score = class 0
# = orange, positive = class 1 = blue, its sign convention and ours), then well-separated
# hues for up to six blobs.
CLASS_COLOURS = ("#f59322", "#0877bd", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
CLASS_NAMES = ("orange", "blue", "green", "red", "purple", "brown")
# Signs use the classes' colours everywhere: a positive weight or gradient is blue like a
# positive score, a negative one orange.
NEGATIVE, POSITIVE = CLASS_COLOURS[0], CLASS_COLOURS[1]

# Curves: one colour per quantity, whichever plot shows it.
TRAIN, TEST, GHOST, GRAD = "#1f5fa8", "#e8710a", "#6b6b6b", "#8e44ad"
# Weights typed in by hand: a colour no curve uses, so a marker is never read as data.
EDIT = "#c2185b"

HIGHLIGHT = "#fff1b8"  # "this is what just happened": a lesson's step, the loop's line
# Text on HIGHLIGHT, whatever the theme (a dark theme's light text on it could not be read).
ON_HIGHLIGHT = "#1a1a1a"
NEXT = TRAIN  # what runs next (the loop's ▶, the phase bar): the app's blue
ALARM = "#b3261e"  # text that warns: a skipped zero_grad, a refused edit
# The same two as text on a dark theme's window, where the blue and red above are too
# dark to read (contrast under 2.5 on #2b2b2b; these are over 5).
NEXT_ON_DARK, ALARM_ON_DARK = "#8ab4f8", "#f28b82"
# Text that only informs (the Designer's notes on slow settings): a grey, lighter on a dark
# theme's window where #555 could not be read (contrast 1.9 on #2b2b2b; these are over 5).
QUIET, QUIET_ON_DARK = "#555555", "#b8b8b8"
# Text that cautions without refusing (a setting that will train slowly): an amber.
CAUTION, CAUTION_ON_DARK = "#8a5a00", "#f0b95b"
# Boxes that carry a message: (background, text, border).
ERROR_BOX = ("#fde7e4", "#8c1d18", "#e4a29b")
NOTE_BOX = ("#fff4d6", "#5c4200", "#e8c66a")


def rgb(colour: str) -> tuple[int, int, int]:
    """'#0877bd' -> (8, 119, 189)."""
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)
