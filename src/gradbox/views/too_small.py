"""A view given less room than it can be read in says so, and offers the room.

`TooSmall` is a band of its own (not painted in drawForeground: a widget takes clicks, a
screen reader reads it, and the view's own painting stays the view's). Where the view
sits in a box layout the band takes a row of that layout beside it, so it covers
nothing: laid over the view it hid what little there was to read (the parameter table's
rows, the Layers tab's readout line). Elsewhere it lies over the view's edge.
It shows while the view is smaller than its readable size, and its Enlarge button asks
for room (`enlarge_requested`); whoever arranges the window answers (see
gradbox.views.layouts.room).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QSize, Qt, Signal
from PySide6.QtWidgets import QBoxLayout, QFrame, QHBoxLayout, QPushButton, QWidget
from superqt import QElidingLabel

from gradbox.views.palette import NOTE_BOX

ENLARGE = "Enlarge"


def too_small_text(what: str, size: QSize, minimum: QSize) -> str:
    """What the overlay says: what is too small, how big it is and how big it needs to be."""
    return (f"{what}: too small to read here ({size.width()} × {size.height()} px; "
            f"needs {minimum.width()} × {minimum.height()})")


class TooSmall(QFrame):
    """Over `view` while it is smaller than `minimum`: "too small — enlarge"."""

    enlarge_requested = Signal(QWidget)  # the view that asks for room

    def __init__(self, view: QWidget, minimum: QSize, what: str, bottom: bool = False,
                 row: QBoxLayout | None = None) -> None:
        """`row`: the layout to take a row of (after its last, or beside the view if
        it holds it); by default the one the view sits in, if it is a box layout."""
        super().__init__(view)
        self.view = view
        self.bottom = bottom  # a band along the view's bottom edge, not its top
        self.minimum = QSize(minimum)
        self.what = what
        self.setObjectName("too_small")
        self.setAccessibleName(f"{what}: too small")
        self.setAutoFillBackground(True)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        # The note's own text colour on its light ground: a dark theme's light text on it
        # could not be read (seen in the real window).
        self.setStyleSheet("#too_small { background: rgba(255, 248, 220, 235); "
                           "border: 1px solid #c9a227; } "
                           f"#too_small QLabel {{ color: {NOTE_BOX[1]}; }}")
        # One line, elided, the whole sentence in its tooltip: wrapped in a band beside a
        # squeezed view, its lines were cut top and bottom (1024 x 700, lesson 4).
        self.label = QElidingLabel()
        self.label.setElideMode(Qt.TextElideMode.ElideRight)
        self.button = QPushButton(ENLARGE)
        self.button.setObjectName("too_small_enlarge")
        self.button.setToolTip(f"Give {what} the room it needs: the panels beside it are "
                               "put away (the View menu brings them back)")
        self.button.clicked.connect(lambda: self.enlarge_requested.emit(self.view))
        band = QHBoxLayout(self)
        band.setContentsMargins(6, 2, 6, 2)
        band.addWidget(self.label, 1)
        band.addWidget(self.button)
        self.hide()
        self.row = row if row is not None else _box_of(view)
        if self.row is not None:
            index = self.row.indexOf(view)
            self.row.insertWidget(index + (1 if bottom else 0) if index >= 0 else -1, self)
        view.installEventFilter(self)
        self.check()

    def set_minimum(self, minimum: QSize) -> None:
        self.minimum = QSize(minimum)
        self.check()

    def is_too_small(self) -> bool:
        view = self.view
        return view.width() < self.minimum.width() or view.height() < self.minimum.height()

    def check(self) -> None:
        """Shown over the view while it is too small (and the view shows)."""
        small = self.is_too_small()
        if small:
            self.label.setText(too_small_text(self.what, self.view.size(), self.minimum))
            self.label.setToolTip(self.label.text())
        if self.row is not None:  # a row of its own: the layout places it
            if small == self.isHidden():
                self.setVisible(small)
            return
        if small:
            # A band over the view's top (or bottom), as tall as its text needs; the
            # whole view when that is all there is.
            width, room = self.view.width(), self.view.height()
            layout = self.layout()
            wanted = max(self.sizeHint().height(), layout.heightForWidth(width)
                         if layout.hasHeightForWidth() else 0)
            height = min(wanted, room)
            self.setGeometry(0, room - height if self.bottom else 0, width, height)
            self.raise_()
        if small != self.isVisibleTo(self.view):
            self.setVisible(small)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if watched is self.view and event.type() in (QEvent.Type.Resize, QEvent.Type.Show):
            self.check()
        return False


def _box_of(view: QWidget) -> QBoxLayout | None:
    """The box layout `view` sits in, if any."""
    parent = view.parentWidget()
    layout = parent.layout() if parent is not None else None
    return layout if isinstance(layout, QBoxLayout) and layout.indexOf(view) >= 0 else None
