"""The Build workspace's editor: keystroke to repaint on a 300-line file, with and without
Python highlighting (superqt's CodeSyntaxHighlight, pygments one line at a time).

A key is sent to the focused editor (a character typed in the middle of the file, then
Enter, which splits a line and re-highlights both halves), and the viewport is repainted
at once; the time from the key to the end of that repaint is what the learner waits for.
Also the cost of loading the whole file (setPlainText, which highlights every line).

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_build_editor.py [--keys N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from gradbox.views.build.editor import CodeEditor

ENGINE = '''class Value:
    """A scalar and the gradient that has arrived at it."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0.0
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')
        def _backward():
            self.grad += out.grad       # d(a+b)/da = 1
            other.grad += out.grad
        out._backward = _backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')
        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward
        return out

'''


def source(lines: int = 300) -> str:
    text = ""
    while text.count("\n") < lines:
        text += ENGINE
    return "\n".join(text.split("\n")[:lines])


def keystrokes(editor: CodeEditor, keys: int) -> list[float]:
    """ms from a key sent to the editor to the end of the repaint that shows it."""
    app = QApplication.instance()
    cursor = editor.textCursor()
    cursor.setPosition(editor.document().findBlockByNumber(150).position() + 8)
    editor.setTextCursor(cursor)
    editor.centerCursor()
    app.processEvents()
    times = []
    for i in range(keys):
        t0 = time.perf_counter()
        if i % 10 == 9:
            QTest.keyClick(editor, Qt.Key.Key_Return)
        else:
            QTest.keyClick(editor, Qt.Key.Key_X)
        editor.viewport().repaint()
        editor.numbers.repaint()
        times.append((time.perf_counter() - t0) * 1000)
    editor.moveCursor(QTextCursor.MoveOperation.Start)
    return times


def run(highlight: bool, keys: int) -> tuple[float, list[float]]:
    editor = CodeEditor()
    if not highlight:
        editor.highlighter.setDocument(None)
    editor.resize(600, 500)
    editor.show()
    editor.setFocus()
    QApplication.instance().processEvents()
    t0 = time.perf_counter()
    editor.setPlainText(source())
    editor.viewport().repaint()
    load = (time.perf_counter() - t0) * 1000
    times = keystrokes(editor, keys)
    editor.close()
    return load, times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=200)
    args = parser.parse_args()
    QApplication.instance() or QApplication([])
    print(f"300-line file, {args.keys} keystrokes each (every tenth an Enter), 600x500 editor")
    results = {}
    for highlight in (False, True, False, True):  # twice each, interleaved
        load, times = run(highlight, args.keys)
        results.setdefault(highlight, []).append((load, times))
    for highlight, runs in results.items():
        loads = [r[0] for r in runs]
        times = [t for r in runs for t in r[1]]
        times.sort()
        name = "highlighted (CodeSyntaxHighlight)" if highlight else "plain"
        print(f"{name:34s} load {min(loads):6.1f} ms   keystroke->repaint median "
              f"{statistics.median(times):5.2f} ms, p95 {times[int(0.95 * len(times))]:5.2f} "
              f"ms, max {times[-1]:5.2f} ms")


if __name__ == "__main__":
    main()
