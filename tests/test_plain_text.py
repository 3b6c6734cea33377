"""Every string that came from a file is shown as plain text (issue 31, item 4): a
lesson's title, a claim's sentence or a file's name was rendered as rich text -- an
<img> of a local file shown in the message bar, a clickable link in the error box. A
lesson and its file name carry an <img> and a link here; after opening it (its claims
checked, one false), opening a broken one and saving a session under such a name, no
label, message, dialog or tooltip anywhere renders them."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtGui
from PySide6.QtWidgets import QApplication, QLabel

from gradbox.views.window.main_window import MainWindow

IMG = "<img src='/usr/share/pixmaps/debian-logo.png'>"
LINK = "<a href='https://example.com/x'>click me</a>"
NAME = "<img src=photo.png> <a href=https:example.com>link<a>.toml"


def rendered_as_rich(text: str, fmt: Qt.TextFormat) -> bool:
    return fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText
                                             and QtGui.mightBeRichText(text))


def payloads_rendered() -> list[str]:
    """Each widget that would render a payload (or a file name's tags) as markup."""
    found = []
    for widget in QApplication.allWidgets():
        texts: list[tuple[str, bool]] = []
        if isinstance(widget, QLabel):
            texts.append((widget.text(), rendered_as_rich(widget.text(), widget.textFormat())))
        tip = widget.toolTip()
        texts.append((tip, QtGui.mightBeRichText(tip)))
        for text, rich in texts:
            if rich and any(p in text for p in ("<img", "<a href", "<a>")):
                found.append(f"{type(widget).__name__} {widget.objectName()!r}: {text[:120]!r}")
    return found


def test_file_strings_are_shown_as_plain_text(qtbot, window: MainWindow,
                                              tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "docs" / "example-lesson.toml"
    text = example.read_text(encoding="utf-8")
    hostile = (text.replace('title = "', f'title = "{IMG} {LINK} ', 1)
               .replace("value = 0.1\n", "value = 0.3\n", 1)  # a false claim: the box
               .replace('says = "', f'says = "{LINK} {IMG} ', 1)
               .replace('do = "', f'do = "{IMG} ', 1))
    assert hostile.count("<img") == 3
    path = tmp_path / NAME
    path.write_text(hostile, encoding="utf-8")
    checked: list[list[str]] = []
    window.class_exports.open_lesson(path, checked=checked.append)
    qtbot.waitUntil(lambda: bool(checked), timeout=120000)
    assert checked[0] and IMG in checked[0][0]
    assert window.error_box is not None and IMG in window.error_box.text()
    assert NAME in window.messages.text() or IMG in window.messages.text() or \
        NAME in window.error_box.text()
    assert not payloads_rendered(), payloads_rendered()

    broken = tmp_path / ("broken " + NAME)
    broken.write_text(hostile.replace("title =", "titel =", 1), encoding="utf-8")
    opened: list[tuple[object, str]] = []
    window.class_exports.open_lesson(broken, lambda *a: opened.append(a))
    qtbot.waitUntil(lambda: bool(opened), timeout=10000)
    assert "broken <img" in window.error_box.text()
    assert not payloads_rendered(), payloads_rendered()

    window.messages.show_message(f"Saved {NAME}: {IMG}")  # as a save would say it
    assert not payloads_rendered(), payloads_rendered()
