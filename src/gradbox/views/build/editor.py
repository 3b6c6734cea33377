"""The learner's code editor: line numbers, Python colours, Tab indenting, a marked line.

A `QPlainTextEdit` with a line-number area beside it (Qt for Python's Code Editor
example) and superqt's `CodeSyntaxHighlight` (pygments, one line at a time; measured in
benchmarks/bench_build_editor.py). Tab and Shift+Tab indent and dedent the line, or
every line the selection touches, by four spaces: Python's own indent, never a tab
character. The failing line of a check is marked by a background the learner's typing
does not disturb (an extra selection, not a format in the text).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QTextCursor,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget
from superqt.utils import CodeSyntaxHighlight

from gradbox.views.palette import ERROR_BOX

INDENT = "    "
THEME = "default"  # pygments' light theme: the window is light
NUMBERS_BACK, NUMBERS_TEXT = QColor("#f0f0f0"), QColor("#888888")
FAILING_BACK = QColor(ERROR_BOX[0])


class LineNumbers(QWidget):
    """The strip at the editor's left that shows each visible line's number."""

    def __init__(self, editor: CodeEditor) -> None:
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(self.editor.numbers_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        self.editor.paint_numbers(event)


class CodeEditor(QPlainTextEdit):
    """Python source with line numbers; `mark_line(n)` marks line n (1-based) as failing."""

    marked_line_changed = Signal(int)  # 0: none

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(self.fontMetrics().horizontalAdvance(" ") * len(INDENT))
        self.setAccessibleName("Your code")
        self.highlighter = CodeSyntaxHighlight(self.document(), "python", THEME)
        self.numbers = LineNumbers(self)
        self._marked = 0
        self.blockCountChanged.connect(self._fit_numbers)
        self.updateRequest.connect(self._scroll_numbers)
        self._fit_numbers()

    # --- the failing line ------------------------------------------------------------
    def mark_line(self, line: int) -> None:
        """Mark `line` (1-based; 0 or past the end: none) and bring it into view."""
        line = line if 0 < line <= self.blockCount() else 0
        self._marked = line
        selections = []
        if line:
            block = self.document().findBlockByNumber(line - 1)
            mark = QTextEdit.ExtraSelection()
            mark.format.setBackground(FAILING_BACK)
            mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            mark.cursor = QTextCursor(block)
            selections.append(mark)
            # scrolled into view, the cursor left where the learner is typing
            shown = self.viewport().height() // max(1, self.fontMetrics().height())
            bar = self.verticalScrollBar()
            if not bar.value() <= line - 1 < bar.value() + shown:
                bar.setValue(max(0, line - 1 - shown // 2))
        self.setExtraSelections(selections)
        self.marked_line_changed.emit(line)

    def marked_line(self) -> int:
        return self._marked

    # --- indenting -----------------------------------------------------------------------
    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        key = event.key()
        ctrl = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
        if key in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab) and ctrl:
            # Tab indents, so Ctrl+Tab is the way out for the keyboard (Esc too, in the
            # window: it leaves any text field)
            self.setTabChangesFocus(True)  # (an editable one refuses to let go otherwise)
            try:
                self.focusNextPrevChild(key == Qt.Key.Key_Tab)
            finally:
                self.setTabChangesFocus(False)
            return
        if key == Qt.Key.Key_Tab:
            self.indent()
            return
        if key == Qt.Key.Key_Backtab:
            self.dedent()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not event.modifiers():
            self._new_line()
            return
        if key == Qt.Key.Key_Backspace and not event.modifiers() and self._back_to_stop():
            return
        if key == Qt.Key.Key_Home and event.modifiers() in (
                Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.ShiftModifier):
            self._home(bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
            return
        super().keyPressEvent(event)

    def _selected_blocks(self) -> range:
        cursor = self.textCursor()
        doc = self.document()
        first = doc.findBlock(cursor.selectionStart()).blockNumber()
        end = cursor.selectionEnd()
        last_block = doc.findBlock(end)
        last = last_block.blockNumber()
        # a selection ending at the very start of a line does not take that line
        if cursor.hasSelection() and last > first and end == last_block.position():
            last -= 1
        return range(first, last + 1)

    def indent(self) -> None:
        """Four spaces: at the cursor (to the next multiple of four), or before every
        line the selection touches."""
        cursor = self.textCursor()
        if not cursor.hasSelection():
            column = cursor.positionInBlock()
            cursor.insertText(" " * (len(INDENT) - column % len(INDENT)))
            return
        self._edit_lines(lambda text: INDENT + text if text.strip() else text)

    def dedent(self) -> None:
        """Up to four leading spaces off the cursor's line or every selected line."""
        def less(text: str) -> str:
            spaces = len(text) - len(text.lstrip(" "))
            return text[min(spaces, len(INDENT)):]
        self._edit_lines(less)

    def _edit_lines(self, change: object) -> None:
        blocks = self._selected_blocks()
        doc = self.document()
        cursor = self.textCursor()
        had_selection = cursor.hasSelection()
        edit = QTextCursor(doc)
        edit.beginEditBlock()  # one Undo takes the whole indent back
        for number in blocks:
            block = doc.findBlockByNumber(number)
            text = block.text()
            new = change(text)  # type: ignore[operator]
            if new == text:
                continue
            edit.setPosition(block.position())
            edit.setPosition(block.position() + len(text), QTextCursor.MoveMode.KeepAnchor)
            edit.insertText(new)
        edit.endEditBlock()
        if had_selection:  # the lines stay selected, for another Tab
            start = doc.findBlockByNumber(blocks.start)
            stop = doc.findBlockByNumber(blocks.stop - 1)
            cursor.setPosition(start.position())
            cursor.setPosition(stop.position() + stop.length() - 1,
                               QTextCursor.MoveMode.KeepAnchor)
            self.setTextCursor(cursor)

    def _back_to_stop(self) -> bool:
        """Backspace in a line's leading spaces goes back to the previous indent (four
        spaces at once), as Enter's indent came; True if it did."""
        cursor = self.textCursor()
        column = cursor.positionInBlock()
        before = cursor.block().text()[:column]
        if cursor.hasSelection() or not before or before.strip(" "):
            return False
        cursor.movePosition(QTextCursor.MoveOperation.Left, QTextCursor.MoveMode.KeepAnchor,
                            (column - 1) % len(INDENT) + 1)
        cursor.removeSelectedText()
        return True

    def _home(self, select: bool) -> None:
        """Home goes to the line's first character past its indent (again: column 0),
        so Shift+Home selects the code and leaves the indent."""
        cursor = self.textCursor()
        text = cursor.block().text()
        indent = len(text) - len(text.lstrip(" "))
        column = cursor.positionInBlock()
        target = 0 if column == indent else indent
        mode = QTextCursor.MoveMode.KeepAnchor if select else QTextCursor.MoveMode.MoveAnchor
        cursor.setPosition(cursor.block().position() + target, mode)
        self.setTextCursor(cursor)

    def _new_line(self) -> None:
        """Enter keeps the line's indent, one more after a line ending in ':'."""
        cursor = self.textCursor()
        text = cursor.block().text()[:cursor.positionInBlock()]
        indent = text[:len(text) - len(text.lstrip(" "))]
        if text.rstrip().endswith(":"):
            indent += INDENT
        cursor.insertText("\n" + indent)
        self.ensureCursorVisible()

    # --- the line-number area --------------------------------------------------------------
    def numbers_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 10 + self.fontMetrics().horizontalAdvance("9") * max(3, digits)

    def _fit_numbers(self, _count: int = 0) -> None:
        self.setViewportMargins(self.numbers_width(), 0, 0, 0)

    def _scroll_numbers(self, rect: QRect, dy: int) -> None:
        if dy:
            self.numbers.scroll(0, dy)
        else:
            self.numbers.update(0, rect.y(), self.numbers.width(), rect.height())
        if rect.contains(self.viewport().rect()):
            self._fit_numbers()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        area = self.contentsRect()
        self.numbers.setGeometry(QRect(area.left(), area.top(), self.numbers_width(),
                                       area.height()))

    def paint_numbers(self, event: QPaintEvent) -> None:
        painter = QPainter(self.numbers)
        painter.fillRect(event.rect(), NUMBERS_BACK)
        block = self.firstVisibleBlock()
        number = block.blockNumber()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        bottom = top + round(self.blockBoundingRect(block).height())
        height = self.fontMetrics().height()
        width = self.numbers.width() - 5
        while block.isValid() and top <= event.rect().bottom():
            if block.isVisible() and bottom >= event.rect().top():
                failing = number + 1 == self._marked
                if failing:
                    painter.fillRect(0, top, self.numbers.width(), height, FAILING_BACK)
                painter.setPen(QColor(ERROR_BOX[1]) if failing else NUMBERS_TEXT)
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight,
                                 str(number + 1))
            block = block.next()
            top = bottom
            bottom = top + round(self.blockBoundingRect(block).height())
            number += 1
        painter.end()
