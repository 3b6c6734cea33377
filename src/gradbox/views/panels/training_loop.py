"""The training loop as code, live: the line just run highlighted, figures beside each line.

The code and the figures come from `gradbox.teaching.loop_code`; this widget only draws them.
`optimizer.zero_grad()` is struck through while Forget zero_grad skips it, so the bug is
visible in the very line a learner would otherwise type without thinking.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, Slot
from PySide6.QtGui import QFontMetricsF, QShowEvent
from PySide6.QtWidgets import QLabel, QTextBrowser, QVBoxLayout, QWidget

from gradbox.autograd.phases import Phase
from gradbox.port.protocol import SessionPort
from gradbox.teaching.loop_code import CodeLine, LoopState, loop_lines, loop_state, phase_summary
from gradbox.training.snapshots import Snapshot
from gradbox.views.fonts import code_font
from gradbox.views.palette import (
    ALARM,
    ALARM_ON_DARK,
    HIGHLIGHT,
    NEXT,
    NEXT_ON_DARK,
    ON_HIGHLIGHT,
)

DONE_BACKGROUND = HIGHLIGHT  # the lesson panel's highlight: "this is what just happened"
# (next ▶, struck-out zero_grad, a phase's figure, a figure still to come), on a light
# panel and on a dark theme's, where the first three were too dark to read (lesson 4
# quotes the figures: '# step size |Δw| = 2.145' at contrast 2.4).
LIGHT_COLOURS = (NEXT, ALARM, "#6b3fa0", "#999999")
DARK_COLOURS = (NEXT_ON_DARK, ALARM_ON_DARK, "#c9a6f2", "#999999")
# Beside a phase not run yet in this step: what its figure will be.
PENDING = {Phase.FORWARD: "loss = …", Phase.ZERO_GRAD: "…", Phase.BACKWARD: "|grad| = …",
           Phase.UPDATE: "step size |Δw| = …"}


class TrainingLoopPanel(QWidget):
    """PyTorch-shaped code of the loop the app runs, following every sub-step."""

    def __init__(self, controller: SessionPort, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.setObjectName("training_loop_panel")
        self.setAccessibleName("Training loop as code")
        self.lines: tuple[CodeLine, ...] = ()
        self.state: LoopState | None = None
        self._html = ""
        self._caption: tuple[str, str] = ("", "")
        self._stale = False  # snapshots came while hidden: the code is drawn when shown

        self.code = QTextBrowser()
        self.code.setObjectName("training_loop_code")
        self.code.setAccessibleName("Training loop code")
        self.code.setToolTip("The loop the app runs, as you would write it with PyTorch. "
                             "The highlighted line is the phase just run; ▶ marks the "
                             "next. Figures on the right are this step's.")
        self.code.setLineWrapMode(QTextBrowser.LineWrapMode.WidgetWidth)
        self.caption = QLabel()
        self.caption.setObjectName("training_loop_caption")
        self.caption.setAccessibleName("Phase just run and next")
        self.caption.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.code, 1)
        layout.addWidget(self.caption)

        controller.snapshot_changed.connect(self._on_snapshot)
        self._on_snapshot(controller.snapshot)

    # --- what the panel shows, for tests and the lesson ------------------------------------------
    def highlighted(self) -> list[str]:
        """The code of the lines highlighted as just run."""
        done = self.state.done if self.state else ""
        return [line.code.strip() for line in self.lines if done and line.phase == done]

    def next_lines(self) -> list[str]:
        upcoming = self.state.next if self.state else ""
        return [line.code.strip() for line in self.lines if line.phase == upcoming]

    def struck_through(self) -> list[str]:
        skipping = self.state is not None and self.state.skipping_zero_grad
        return [line.code.strip() for line in self.lines
                if skipping and line.phase == Phase.ZERO_GRAD]

    def figure(self, phase: str) -> str:
        return self.state.figures[phase] if self.state else ""

    def content_height(self) -> int:
        """The height that shows every line and the caption without scrolling."""
        self._catch_up()
        code = self.code.document().size().height() + 2 * self.code.frameWidth()
        margins = self.layout().contentsMargins()
        return int(code + self.caption.sizeHint().height() + self.layout().spacing()
                   + margins.top() + margins.bottom() + 4)

    def show_line(self, phase: str) -> None:
        """Scroll just enough that `phase`'s lines and the figure under them are in view
        (a lesson step that quotes a line of the loop brings it into sight)."""
        self._catch_up()
        blocks = self._phase_blocks(phase)
        if not blocks:
            return
        layout = self.code.document().documentLayout()
        top = min(layout.blockBoundingRect(b).top() for b in blocks)
        bottom = max(layout.blockBoundingRect(b).bottom() for b in blocks)
        bar = self.code.verticalScrollBar()
        height = self.code.viewport().height()
        if top < bar.value():
            bar.setValue(int(top))
        elif bottom > bar.value() + height:
            bar.setValue(int(min(top, bottom - height)))

    def _phase_blocks(self, phase: str) -> list:  # list[QTextBlock]
        """The text blocks of `phase`'s lines and of its figure comment."""
        wanted = {f"phase-{phase}"}
        found = []
        block = self.code.document().begin()
        inside = False
        while block.isValid():
            names: set[str] = set()
            it = block.begin()
            while not it.atEnd():
                names.update(it.fragment().charFormat().anchorNames())
                it += 1
            if names & wanted:
                inside = True
            elif names:
                inside = False
            if inside:
                found.append(block)
            block = block.next()
        return found

    # --- drawing ----------------------------------------------------------------------------------
    def _indent(self) -> float:
        """Six characters of the code's font at the panel's size (teacher mode scales it)."""
        font = code_font(self.code.font().pointSizeF())
        return 6 * QFontMetricsF(font).horizontalAdvance(" ")

    def code_width(self) -> int:
        """The width that shows the longest line of code whole, without scrolling sideways
        (code is not wrapped: its indentation is its meaning)."""
        font = code_font(self.code.font().pointSizeF())
        metrics = QFontMetricsF(font)
        widest = max(metrics.horizontalAdvance("▶ " + line.code) for line in self.lines)
        frame = 2 * self.code.frameWidth() + 2 * self.code.document().documentMargin()
        scroll = self.code.verticalScrollBar().sizeHint().width()
        margins = self.layout().contentsMargins()
        # + a cell's padding and spacing on each side of the table
        return int(widest + frame + scroll + margins.left() + margins.right() + 8)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange,  # teacher mode: indent at the new size
                            QEvent.Type.PaletteChange):  # a light or dark theme's colours
            self._html = ""
            self._on_snapshot(self.controller.snapshot)

    @Slot(object)
    def _on_snapshot(self, snapshot: Snapshot) -> None:
        self.lines = loop_lines(snapshot.config)
        self.state = loop_state(snapshot)
        self._caption = phase_summary(snapshot)
        if self.isVisible() or not self._html:
            self._draw()
        else:
            # Another tab or workspace shows (the graph tab hides this dock): the rich
            # text's layout (W1: 0.2-0.6 ms a frame while running, 1.3 ms for a single
            # Step) waits until the panel is shown.
            self._stale = True

    def _draw(self) -> None:
        self._stale = False
        assert self.state is not None
        dark = self.code.palette().color(self.code.backgroundRole()).lightness() < 128
        text = self._render(self.lines, self.state, self._indent(),
                            DARK_COLOURS if dark else LIGHT_COLOURS)
        if text != self._html:  # unchanged while paused: no relayout, no flicker
            self._html = text
            self.code.setHtml(text)
            # The line just run, and its figure, in view: in a short panel (1366 x 768,
            # teacher mode) loss.backward() was below the visible part.
            if self.state.done:
                self.show_line(self.state.done)
        done_text, next_text = self._caption
        self.caption.setText(f"{done_text} · <b>{next_text}</b>")

    def _catch_up(self) -> None:
        if self._stale:
            self._draw()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._catch_up()

    @staticmethod
    def _render(lines: tuple[CodeLine, ...], state: LoopState, indent: float,
                colours: tuple[str, str, str, str] = LIGHT_COLOURS) -> str:
        """One row per line of code; under each phase's last line, its figure as a
        comment (on a row of its own: beside a long loss line it would be cut off)."""
        next_colour, skipped_colour, figure_colour, pending_colour = colours
        rows = []
        for k, line in enumerate(lines):
            code = html.escape(line.code).replace(" ", "&nbsp;")
            style = ""
            marker = "&nbsp;&nbsp;"
            if line.phase and line.phase == state.done:
                style = (f"background:{DONE_BACKGROUND}; color:{ON_HIGHLIGHT}; "
                         "font-weight:bold;")
            if line.phase and line.phase == state.next:
                marker = f"<span style='color:{next_colour}'>▶</span>&nbsp;"
            if line.phase == Phase.ZERO_GRAD and state.skipping_zero_grad:
                code = f"<s style='color:{skipped_colour}'>{code}</s>"
            # Code never wraps (its indentation is its meaning); the comments below may.
            # Each line carries an anchor: its phase's name, or "line" (show_line reads
            # a phase's rows as those from its anchor to the next other one).
            anchor = f"phase-{line.phase}" if line.phase else "line"
            rows.append(f"<tr><td style='{style} white-space:pre'><a name='{anchor}'>"
                        f"<code>{marker}{code}</code></a></td></tr>")
            last_of_phase = line.phase and (k + 1 == len(lines)
                                            or lines[k + 1].phase != line.phase)
            if last_of_phase:
                figure = state.figures.get(line.phase, "")
                colour = figure_colour if figure else pending_colour
                text = html.escape(figure or PENDING[line.phase])
                # Indented like the code, in pixels, so that a wrapped comment stays
                # indented too.
                rows.append(f"<tr><td style='color:{colour}; padding-left:{indent:.0f}px'>"
                            f"<code># {text}</code></td></tr>")
        return "<table cellspacing='0' cellpadding='1'>" + "".join(rows) + "</table>"
