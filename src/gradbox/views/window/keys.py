"""Keys that always work: where a key press goes when a field has the focus.

Qt offers a key to the focused widget first (a ShortcutOverride event); a spin box or
a line edit claims every printable key, so Space, N and R stop stepping the moment a
learner has typed into the Seed box. This module sets one rule for every field of the
window, including the ones panels add later:

- A **button or switch** with the focus keeps Space: Space presses it (it ran a Step
  through the window's shortcut, leaving the focused check box as it was).
- A **text field** (a line edit, the expression editor, a cell being edited) keeps its
  keys: Space types a space. Esc leaves the field, keeping what was typed.
- A field gets the keys only when chosen: when Qt hands the focus on to a field because
  the widget that had it was hidden, the keys go back to the window.
- A **number box** (spin box, editable combo of numbers) keeps only what a number can
  contain. Any other key (Space, N, R, ...) commits the box and goes to the window's
  shortcuts. Enter commits and gives the keys back; Esc puts back the value the box had
  before typing and gives the keys back; Tab commits and moves on, as always.

"Gives the keys back" means the focus leaves the field, so the next digit does not land
in it. The filter is installed on a field when it first gets the focus (Qt reports focus
changes), so it costs nothing for the many widgets that never take typing.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

# What a typed number may contain (parse_number also takes the typographic minus).
NUMBER_CHARACTERS = frozenset("0123456789.,+-−eE")
_ENTER = (Qt.Key_Return, Qt.Key_Enter)


def number_box(widget: QWidget) -> QWidget | None:
    """The number box `widget` belongs to (itself, or the spin box/combo around its line
    edit), or None if it is not part of one."""
    for candidate in (widget, widget.parentWidget()):
        if isinstance(candidate, QAbstractSpinBox):
            return candidate
        if isinstance(candidate, QComboBox) and candidate.isEditable():
            return candidate
    return None


def is_text_field(widget: QWidget) -> bool:
    """A widget where printable keys are text: they must not trigger shortcuts."""
    if number_box(widget) is not None:
        return False
    if isinstance(widget, QLineEdit):
        return not widget.isReadOnly()
    if isinstance(widget, QPlainTextEdit | QTextEdit):
        return not widget.isReadOnly()
    return False


def _in_item_view(widget: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractItemView):
            return True
        parent = parent.parentWidget()
    return False


def _text(box: QWidget) -> str:
    if isinstance(box, QAbstractSpinBox):
        return box.text()
    return box.currentText()  # type: ignore[attr-defined]


def _set_text(box: QWidget, text: str) -> None:
    edit = box.findChild(QLineEdit)
    if edit is not None:
        edit.setText(text)


def give_keys_back(widget: QWidget) -> None:
    """Leave the field: it commits on focus-out, and keys go to the window again."""
    widget.clearFocus()
    window = widget.window()
    if window is not None and QApplication.focusWidget() is None:
        window.activateWindow()


class FieldKeys(QObject):
    """The event filter that applies the rule above to whichever field has the focus."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._watched: set[int] = set()
        self._before: dict[int, str] = {}  # a number box's text when it got the focus
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_focus_changed)

    def _on_focus_changed(self, old: QWidget | None, new: QWidget | None) -> None:
        if new is None or _in_item_view(new):
            return  # a cell's editor: its delegate already commits on Enter, cancels on Esc
        window = self.parent()
        if isinstance(window, QWidget) and new.window() is not window:
            return
        box = number_box(new)
        if (old is not None and old.window() is new.window() and not old.isVisible()
                and (box is not None or is_text_field(new))):
            # Qt passed the focus on because the widget that had it was hidden (a lesson
            # set up, teacher mode, another tab): nobody chose this field, and the next N
            # or R would be typed into it (lesson 4's Sub-step filled the parameters'
            # filter with 'nnnn'). The keys stay the window's.
            give_keys_back(new)
            return
        target = box or (new if is_text_field(new) or isinstance(new, QAbstractButton)
                         else None)
        if target is None:
            return
        if box is not None:
            self._before[id(box)] = _text(box)
        key = id(target)
        if key not in self._watched:
            self._watched.add(key)
            target.installEventFilter(self)
            target.destroyed.connect(lambda _=None: self._forget(key))

    def _forget(self, key: int) -> None:
        self._watched.discard(key)
        self._before.pop(key, None)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        assert isinstance(event, QKeyEvent) and isinstance(watched, QWidget)
        box = number_box(watched)
        key = event.key()
        if kind == QEvent.Type.ShortcutOverride:
            if isinstance(watched, QAbstractButton):
                if key == Qt.Key_Space and event.modifiers() == Qt.NoModifier:
                    event.accept()  # the button's own: it presses it
                    return True
                return False
            if box is not None and self._goes_to_window(event):
                # Not accepted: Qt now looks for a shortcut. Commit first, so a Step
                # taken with this key already uses the typed value.
                give_keys_back(box)
                event.ignore()
                return True
            return False
        if isinstance(watched, QAbstractButton):
            return False
        if key == Qt.Key_Escape:
            if box is not None:
                _set_text(box, self._before.get(id(box), _text(box)))
            give_keys_back(watched)
            return True
        if box is not None and key in _ENTER:
            give_keys_back(box)
            return True
        return False

    @staticmethod
    def _goes_to_window(event: QKeyEvent) -> bool:
        """A key a number cannot contain, with no modifier but Shift (Ctrl+Z and friends
        stay the field's own while it has the focus)."""
        modifiers = event.modifiers() & ~Qt.KeypadModifier & ~Qt.ShiftModifier
        if modifiers != Qt.NoModifier:
            return False
        text = event.text()
        return bool(text) and text.isprintable() and text not in NUMBER_CHARACTERS
