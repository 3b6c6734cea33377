"""The Build workspace's editor, its code kept on disk, and Watch a file: keys sent to the
focused editor, files written as editors write them."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from gradbox.views.build.code_store import CodeStore, stage_file
from gradbox.views.build.editor import CodeEditor
from gradbox.views.build.watch import FileWatch

SHIFT = Qt.KeyboardModifier.ShiftModifier


def _focused_editor(qtbot, show_widget, text: str = "") -> CodeEditor:  # type: ignore[no-untyped-def]
    editor = show_widget(CodeEditor())
    editor.setPlainText(text)
    editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is editor)
    return editor


def _select_lines(editor: CodeEditor, first: int, last: int) -> None:
    doc = editor.document()
    cursor = editor.textCursor()
    cursor.setPosition(doc.findBlockByNumber(first).position() + 1)
    end = doc.findBlockByNumber(last)
    cursor.setPosition(end.position() + 2, QTextCursor.MoveMode.KeepAnchor)
    editor.setTextCursor(cursor)


def test_tab_indents_the_selected_lines_and_shift_tab_takes_it_back(qtbot, show_widget  # type: ignore[no-untyped-def]
                                                                   ) -> None:
    editor = _focused_editor(qtbot, show_widget, "def f():\nreturn 1\nx = 2\n\ny = 3")
    _select_lines(editor, 1, 2)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert editor.toPlainText() == "def f():\n    return 1\n    x = 2\n\ny = 3"
    assert editor.hasFocus()  # Tab indents here; the focus stays
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert editor.toPlainText() == "def f():\n        return 1\n        x = 2\n\ny = 3"
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab, SHIFT)
    assert editor.toPlainText() == "def f():\n    return 1\n    x = 2\n\ny = 3"
    editor.undo()  # one Undo per indent
    assert editor.toPlainText() == "def f():\n        return 1\n        x = 2\n\ny = 3"


def test_ctrl_tab_leaves_the_editor(qtbot, show_widget) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

    page = QWidget()
    column = QVBoxLayout(page)
    editor, button = CodeEditor(), QPushButton("next")
    column.addWidget(editor)
    column.addWidget(button)
    show_widget(page)
    editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is editor)
    QTest.keyClick(editor, Qt.Key.Key_Tab, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is button and editor.toPlainText() == ""


def test_tab_without_a_selection_indents_to_the_next_four_and_enter_keeps_the_indent(  # type: ignore[no-untyped-def]
        qtbot, show_widget) -> None:
    editor = _focused_editor(qtbot, show_widget)
    QTest.keyClicks(QApplication.focusWidget(), "def f(x):")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    QTest.keyClicks(QApplication.focusWidget(), "y = x")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    QTest.keyClicks(QApplication.focusWidget(), "if y:")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    QTest.keyClicks(QApplication.focusWidget(), "return y")
    assert editor.toPlainText() == "def f(x):\n    y = x\n    if y:\n        return y"
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backspace)  # one indent back
    QTest.keyClicks(QApplication.focusWidget(), "z = 1")
    assert editor.toPlainText().endswith("return y\n    z = 1")
    editor.undo()
    editor.undo()
    editor.undo()
    assert editor.toPlainText().endswith("return y"), editor.toPlainText()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_End)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Home, SHIFT)  # the code, not
    assert editor.textCursor().selectedText() == "return y"  # its indent
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Home)  # at the code: column 0
    assert editor.textCursor().positionInBlock() == 0
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Home)  # and back to the code
    assert editor.textCursor().positionInBlock() == 8
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab, SHIFT)
    assert editor.toPlainText().endswith("\n    return y")
    editor.setPlainText("ab")
    cursor = editor.textCursor()
    cursor.setPosition(1)
    editor.setTextCursor(cursor)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert editor.toPlainText() == "a   b"  # to column 4, in spaces


def test_the_failing_line_is_marked_and_its_number_painted(qtbot, show_widget) -> None:  # type: ignore[no-untyped-def]
    editor = _focused_editor(qtbot, show_widget, "\n".join(f"x{i} = {i}" for i in range(80)))
    editor.mark_line(60)
    assert editor.marked_line() == 60
    [mark] = editor.extraSelections()
    assert mark.cursor.blockNumber() == 59
    first = editor.firstVisibleBlock().blockNumber()
    assert first <= 59 < first + 40  # scrolled to it
    assert editor.textCursor().blockNumber() == 0  # where the learner was, kept
    editor.mark_line(500)  # past the end (the code changed since): no mark
    assert editor.marked_line() == 0 and not editor.extraSelections()
    assert editor.numbers.width() >= editor.fontMetrics().horizontalAdvance("999")


def test_the_code_is_written_atomically_off_the_ui_thread_and_read_back(qtbot, tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = CodeStore(tmp_path / "build")
    store.keep(3, "class Value:\n    pass\n")
    store.keep(3, "class Value:\n    pass  # more\n")
    assert not stage_file(tmp_path / "build", 3).exists()  # not yet: on a debounce
    qtbot.waitUntil(lambda: stage_file(tmp_path / "build", 3).exists(), timeout=3000)
    assert store.flush()
    assert stage_file(tmp_path / "build", 3).read_text() == "class Value:\n    pass  # more\n"
    assert not [p for p in (tmp_path / "build").iterdir() if p.name.startswith(".")]
    store.keep(4, "x = 1\n")
    assert store.flush()  # at quit: written now, whatever the debounce
    again = CodeStore(tmp_path / "build")
    assert again.load(4) == "x = 1\n" and again.load(3).endswith("# more\n")
    assert again.load(7) is None
    store.close()
    again.close()


def test_a_watched_file_is_seen_again_after_an_atomic_save(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "engine.py"
    path.write_text("v = 1\n")
    watch = FileWatch()
    seen: list[str] = []
    watch.changed.connect(seen.append)
    assert watch.watch(path) == "v = 1\n"
    for n in (2, 3, 4):  # each save by rename replaces the inode the watcher watched
        tmp = tmp_path / f".engine.py.{n}.tmp"
        tmp.write_text(f"v = {n}\n")
        os.replace(tmp, path)
        qtbot.waitUntil(lambda n=n: bool(seen) and seen[-1] == f"v = {n}\n", timeout=5000)
    assert seen == ["v = 2\n", "v = 3\n", "v = 4\n"]
    path.write_text("v = 5\n")  # and a plain write in place
    qtbot.waitUntil(lambda: seen[-1] == "v = 5\n", timeout=5000)
    watch.stop()
