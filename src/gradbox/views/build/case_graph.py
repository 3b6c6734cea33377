"""Your graph, drawn: the failing case's graph, your numbers and the expected ones per node.

The graph the learner's engine built arrives as plain node records (`CaseGraph`); it is
drawn by gradbox's own graph view (`GraphView` at operation level, its items, its
layered layout). Each node is one line taller than usual and writes the expected value
and gradient under the learner's; a node whose numbers differ has a red frame and its
expected line in red; the first wrong node in backward order -- where the wrong number
was made, the place to look -- has a thick frame and a "look here" tag.
"""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6.QtCore import QEvent, QObject, QRectF, Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QFont, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QGraphicsSimpleTextItem,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gradbox.build.report import CaseGraph
from gradbox.formatting import counted, fmt
from gradbox.graph import Graph
from gradbox.graph.core import consumers_of, structure_key
from gradbox.views.graph.view import GraphView
from gradbox.views.palette import ALARM, ERROR_BOX

WRONG = QColor(ALARM)
FIRST = QColor("#d81b60")  # the replay's colour: "here"
SAME = QColor("#2e7d32")
TAGGED_NODES = 80  # past this many nodes only the wrong ones get their expected line


def graph_of(case: CaseGraph) -> Graph:
    """The records as a `Graph` of the graph package: ids renumbered in the records'
    (topological) order, the learner's numbers as its numbers."""
    index = {node.id: k for k, node in enumerate(case.nodes)}
    children = tuple(tuple(index[p] for p in node.parents if p in index)
                     for node in case.nodes)
    ops = tuple(node.op if children[k] else "" for k, node in enumerate(case.nodes))
    data = np.array([[node.data] for node in case.nodes], dtype=np.float64).reshape(-1, 1)
    grad = np.array([[node.grad] for node in case.nodes], dtype=np.float64).reshape(-1, 1)
    flags = np.zeros(len(case.nodes), dtype=np.bool_)
    bare = Graph(ops=ops, labels=tuple(node.label for node in case.nodes),
                 names=(None,) * len(ops), children=children,
                 consumers=consumers_of(children), structure_key=structure_key(ops, children),
                 _source=())
    return bare.with_numbers(data, grad, flags, flags)


def expected_line(mine: float, expected: float | None) -> tuple[str, bool]:
    """What a node writes under its own numbers, and whether it differs."""
    if expected is None:
        return "", False
    same = (math.isnan(mine) and math.isnan(expected)) or (
        math.isfinite(mine) and math.isfinite(expected)
        and abs(mine - expected) <= 1e-6 * max(1.0, abs(expected))) or mine == expected
    return fmt(expected), not same


class CaseGraphView(QWidget):
    """The failing case's graph with yours vs expected at every node."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = GraphView(lines=4)
        self.view.set_level("operation")
        self.view.set_replay_bar_visible(False)
        # the key's colours are the graph tab's; here it only covered the small graphs
        self.view.set_legend_visible(False)
        self.view.set_placeholder_text("Check your code: the graph of the first failing "
                                       "case is drawn here, your numbers beside the right ones.")
        self.caption = QLabel()
        self.caption.setTextFormat(Qt.TextFormat.PlainText)
        self.caption.setWordWrap(True)
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.caption)
        column.addWidget(self.view, 1)
        self.view.installEventFilter(self)
        self.case: CaseGraph | None = None
        self.marks: list[QGraphicsItem] = []
        self.wrong: list[int] = []  # record indices whose numbers differ
        self.texts: dict[int, str] = {}  # per record index, its expected line as drawn
        self.set_case(None)

    def set_case(self, case: CaseGraph | None, what: str = "") -> None:
        """Draw `case` (None: nothing yet); `what` names the case in the caption."""
        self.case = case
        self.marks, self.wrong, self.texts = [], [], {}
        if case is None or not case.nodes:
            self.view.clear_graph()
            self.caption.setText("")
            self.caption.hide()
            return
        self.caption.show()
        self.caption.setText(self._caption(case, what))
        self.layout().activate()  # the view at its size now: framed for it, not the old
        self.view.set_graph(graph_of(case))
        self._mark(case)
        self.view.fit()
        self.show_first_wrong()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's)
        if watched is self.view and event.type() == QEvent.Type.Resize:
            # the view refits itself on a resize (on its output); then the place to look
            QTimer.singleShot(0, self.show_first_wrong)
        return False

    def show_first_wrong(self) -> None:
        """Bring the first wrong node into view: a graph too big to fit at a readable
        zoom is framed on its output (the right), and the place to look may be off it."""
        case = self.case
        if case is None or case.first_wrong is None:
            return
        pos = self.view.node_scene_pos(case.first_wrong)
        if pos is None:
            return
        shown = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        if not shown.contains(pos):  # its middle off screen (a fitted graph is left be)
            self.view.centerOn(pos)

    def _caption(self, case: CaseGraph, what: str) -> str:
        name = f"“{what}”: " if what else ""
        if case.first_wrong is None:
            return (f"{name}the graph your engine built; every node's numbers agree with "
                    "gradbox's (the case failed elsewhere).")
        node = case.nodes[case.first_wrong]
        title = node.label or node.op or "a leaf"
        wrong = sum(n.wrong for n in case.nodes)
        return (f"{name}yours in each box, the expected under them. {wrong} of "
                f"{counted(len(case.nodes), 'node')} differ; look at “{title}” first "
                "(backward reaches it first).")

    def _mark(self, case: CaseGraph) -> None:
        scene = self.view.operations
        style = scene.style
        tag_all = len(case.nodes) <= TAGGED_NODES
        small = QFont(style.font)
        for k, node in enumerate(case.nodes):
            pos = self.view.node_scene_pos(k)
            if pos is None:
                continue  # drawn inside a box (a very large graph)
            item = scene.nodes[scene.to_shown(k)]
            # the learner's labels are plain text in the tooltip too (Qt guesses rich text)
            item.setToolTip(f"<p>{html.escape(node.label or node.op or 'leaf')}</p>")
            data_text, data_wrong = expected_line(node.data, node.expected_data)
            grad_text, grad_wrong = expected_line(node.grad, node.expected_grad)
            wrong = data_wrong or grad_wrong
            if wrong:
                self.wrong.append(k)
            if not (tag_all or wrong) or not (data_text or grad_text):
                continue
            line = ("want " + (f"data {data_text}" if data_wrong else "")
                    + (" " if data_wrong and grad_wrong else "")
                    + (f"grad {grad_text}" if grad_wrong or not data_wrong else ""))
            if not wrong:
                line = f"✓ want grad {grad_text}" if grad_text else f"✓ want data {data_text}"
            self.texts[k] = line
            text = QGraphicsSimpleTextItem(line)
            text.setFont(small)
            text.setBrush(QBrush(WRONG if wrong else SAME))
            rect = style.free_rect
            width = text.boundingRect().width()
            if width > rect.width():  # the node's own width: squeeze, never overflow
                text.setScale(rect.width() / width)
            text.setPos(pos.x() + rect.center().x() - min(width, rect.width()) / 2,
                        pos.y() + rect.top())
            text.setZValue(5)
            # on white: a node's fill is its gradient's colour, dark blue or orange
            back = QGraphicsRectItem(rect.adjusted(2, 1, -2, 0))
            back.setPos(pos)
            back.setBrush(QBrush(QColor("#ffffff")))
            back.setPen(QPen(WRONG if wrong else QColor("#cccccc"), 1.0))
            back.setZValue(4.5)
            scene.addItem(back)
            scene.addItem(text)
            self.marks += [back, text]
            if wrong:
                self._frame(pos.x(), pos.y(), k == case.first_wrong)

    def _frame(self, x: float, y: float, first: bool) -> None:
        scene = self.view.operations
        r = scene.style.rect.adjusted(-5, -5, 5, 5) if first else scene.style.rect.adjusted(
            -2, -2, 2, 2)
        frame = QGraphicsRectItem(r)
        frame.setPos(x, y)
        frame.setPen(QPen(FIRST if first else WRONG, 5.0 if first else 2.5))
        frame.setBrush(Qt.BrushStyle.NoBrush)
        frame.setZValue(4)
        scene.addItem(frame)
        self.marks.append(frame)
        if first:
            tag = QGraphicsSimpleTextItem("look here first")
            tag.setFont(scene.style.bold)
            tag.setBrush(QBrush(FIRST))
            # astride the frame's top edge, as the replay's badge sits: half in the gap
            # (12 units: a tag above it covered the node over it), half on the title's
            # left, which a centred title leaves free
            tag.setPos(x + r.left() + 6, y + r.top() - tag.boundingRect().height() / 2)
            tag.setZValue(6)
            back = QGraphicsRectItem(QRectF(tag.boundingRect()).adjusted(-3, -1, 3, 1))
            back.setPos(tag.pos())
            back.setBrush(QBrush(QColor(ERROR_BOX[0])))
            back.setPen(QPen(FIRST, 1.0))
            back.setZValue(6)
            scene.addItem(back)
            scene.addItem(tag)
            self.marks += [back, tag]
