"""Each colour that carries a meaning is written once, in gradbox.views.palette."""

from __future__ import annotations

from pathlib import Path

import gradbox
from gradbox.views import palette

SRC = Path(gradbox.__file__).parent


def test_meaningful_colours_are_spelled_only_in_the_palette() -> None:
    colours = {palette.POSITIVE, palette.NEGATIVE, palette.HIGHLIGHT, palette.ALARM,
               *palette.ERROR_BOX, palette.TRAIN, palette.TEST,
               palette.GHOST, palette.GRAD, palette.EDIT}
    # (the blobs' other class hues are plain hues: a red elsewhere need not be class 3)
    found = [(path.relative_to(SRC).as_posix(), colour)
             for path in SRC.rglob("*.py") if path.name != "palette.py"
             for colour in colours if colour.lower() in path.read_text().lower()]
    assert found == []


def test_rgb_reads_a_hex_colour() -> None:
    assert palette.rgb(palette.POSITIVE) == (8, 119, 189)
