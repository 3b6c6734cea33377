"""The window is laid out the same whatever fonts and platform theme the machine has: it
draws with the faces it ships (gradbox.views.fonts). The default window at 1024 x 700 is
built in a process of its own under each font set -- fontconfig reads the machine's fonts
once per process -- and every visible widget's geometry is compared.

The font sets: DejaVu alone (a bare Debian), the machine's own with a GNOME desktop's
platform theme (GTK 3 when installed: CI installs it, with ghostscript's and Noto's fonts),
a desktop that sets 120 dpi for its fonts, and the machine's fonts without DejaVu (as on
Windows or macOS, whose faces differ again).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = Path(__file__).with_name("layout_probe.py")
FONT_ROOT = Path("/usr/share/fonts")
SIZE = "1024x700"


def font_config(folder: Path, dirs: list[Path]) -> Path:
    """A fontconfig file that sees only `dirs` (and the system's aliases and rendering
    rules), with a cache of its own."""
    lines = [f"<dir>{d}</dir>" for d in dirs]
    path = folder / "fonts.conf"
    path.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        + "\n".join(lines)
        + f"\n<cachedir>{folder / 'cache'}</cachedir>\n"
        '<include ignore_missing="yes">/etc/fonts/conf.d</include>\n</fontconfig>\n',
        encoding="utf-8")
    return path


def layout(tmp_path: Path, name: str, env: dict[str, str]) -> dict:
    folder = tmp_path / name
    folder.mkdir()
    # A real X server where there is one to start: GTK's theme needs a display.
    prefix = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24"] \
        if env.get("QT_QPA_PLATFORM") == "xcb" else []
    done = subprocess.run(
        [*prefix, sys.executable, str(PROBE), SIZE, str(folder / "window.png")],
        capture_output=True, text=True, timeout=240, check=False,
        env={**os.environ, "XDG_CONFIG_HOME": str(folder), "XDG_DATA_HOME": str(folder),
             **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def font_dirs(without: str) -> list[Path]:
    """The machine's font folders, less those whose path names `without`."""
    if not FONT_ROOT.is_dir():
        return []
    return [p for p in sorted(FONT_ROOT.glob("*/*")) if p.is_dir()
            and without not in str(p).lower() and any(p.rglob("*.[to]tf"))]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fontconfig (Linux)")
def test_the_default_window_has_the_same_geometry_under_every_font_set(tmp_path) -> None:  # type: ignore[no-untyped-def]
    sets: dict[str, dict[str, str]] = {}
    dejavu = [p for p in FONT_ROOT.glob("truetype/dejavu") if p.is_dir()]
    if dejavu:
        sets["DejaVu alone"] = {"FONTCONFIG_FILE": str(font_config(
            tmp_path, dejavu))}
    if shutil.which("xvfb-run"):  # CI installs it, and GTK 3
        sets["the machine's fonts, GTK's theme, X"] = {
            "QT_QPA_PLATFORM": "xcb", "QT_QPA_PLATFORMTHEME": "gtk3",
            "XDG_CURRENT_DESKTOP": "GNOME"}
    sets["the machine's fonts, GNOME's name"] = {"XDG_CURRENT_DESKTOP": "GNOME"}
    sets["a desktop's fonts at 120 dpi"] = {"QT_FONT_DPI": "120"}
    others = font_dirs(without="dejavu")
    if others:
        (tmp_path / "others").mkdir()
        sets["no DejaVu on the machine"] = {"FONTCONFIG_FILE": str(font_config(
            tmp_path / "others", others))}
    assert len(sets) >= 2, "this machine has no second font set to compare"
    layouts = {name: layout(tmp_path, f"set{i}", env) for i, (name, env) in
               enumerate(sets.items())}
    (first, reference), *rest = layouts.items()
    assert reference["style"] == "fusion"
    assert len(reference["widgets"]) > 100  # (the whole window was measured)
    for name, other in rest:
        moved = {key: (reference["widgets"].get(key), other["widgets"].get(key))
                 for key in reference["widgets"].keys() | other["widgets"].keys()
                 if reference["widgets"].get(key) != other["widgets"].get(key)}
        assert not moved, f"{name} against {first}: {len(moved)} widgets differ, e.g. " \
            + "; ".join(f"{k}: {a} -> {b}" for k, (a, b) in sorted(moved.items())[:8])
        assert (other["font"], other["style"]) == (reference["font"], reference["style"])
