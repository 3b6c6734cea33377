"""The latest message, in the status bar until it is dismissed or replaced."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QToolButton, QWidget
from superqt import QElidingLabel

from gradbox.views.named import plain_tip
from gradbox.views.window.toolbar import icon


class _RowLabel(QElidingLabel):
    """Wraps in the height its row gives it, and asks for none: a wrapped QLabel asks its
    layout for the height of all its lines (QLabel turns height-for-width back on with
    every text), and the status bar grew by a line with a long message."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        return False


class MessageBar(QWidget):
    """What the app has to say: what a change replaced and how to get it back, why a
    network was refused, where a file was saved.

    Kept on screen until its × is clicked or another message takes its place. (A status
    bar message that vanished after 8 seconds, or as soon as the mouse passed over a
    button and its tip took the place, could go unread.) A long one wraps within the
    status bar's row, which is two lines high at the window's font (28 px), and elides
    past that; its tooltip holds all of it. The row's height never follows the message:
    one that grew the bar by a line moved every dock (tests/test_teacher_presentation.py),
    and elided on one line the slow-step warning lost its 'Edit → Undo (Ctrl+Z)' at
    1024x700. (Teacher mode's larger type fits one line in the row.)

    A message may say what keeps it true (`holds`): the window asks again whenever the
    run, the lesson, the docks or teacher mode change, and a message no longer true goes
    ("Not applied: learning rate 1e999" outlived the valid rate typed after it).
    """

    shown = Signal(str)  # each message, as it is put up

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("Message")
        self.label = _RowLabel()
        # Messages carry file names, lesson titles and claims: never markup.
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setElideMode(Qt.TextElideMode.ElideRight)
        self.label.setWordWrap(True)
        # The row's height is the status bar's, whatever the message: the text asks for none.
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton()
        self.close_button.setIcon(icon("close"))
        self.close_button.setAutoRaise(True)
        self.close_button.setToolTip("Dismiss this message")
        self.close_button.setAccessibleName("Dismiss the message")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.close_button)
        layout.addWidget(self.label, 1)
        self.close_button.clicked.connect(self.dismiss)
        self._holds: Callable[[], bool] | None = None
        self.hide()

    def show_message(self, text: str, holds: Callable[[], bool] | None = None) -> None:
        """Put `text` up until dismissed, replaced, or (given `holds`) no longer true."""
        self._holds = holds
        self.label.setText(text)
        self.label.setToolTip(plain_tip(text))
        self.show()
        self.shown.emit(text)

    @Slot()
    def recheck(self) -> None:
        """Take the message down if what it says is no longer so."""
        if self._holds is not None and not self.isHidden() and not self._holds():
            self.dismiss()

    @Slot()
    def dismiss(self) -> None:
        self._holds = None
        self.label.setText("")
        self.label.setToolTip("")
        self.hide()

    def text(self) -> str:
        """The message on screen ('' when there is none)."""
        return "" if self.isHidden() else self.label.text()
