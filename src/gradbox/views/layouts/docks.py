"""The docks around the main views: their sizes for the window's size, and the panels a
tab puts away while it needs their room (the playground the whole width, the graph the
room the Designer and the panels below take)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from PySide6.QtCore import QSize, Qt, QTimer, Slot
from PySide6.QtWidgets import QDockWidget, QStyle, QWidget

from gradbox.views.layouts.host import Frame
from gradbox.views.panels.training_loop import TrainingLoopPanel

# The loss curve beside the training loop needs this much width of its own; less, and it
# goes under the Designer (see DockRoom.place_loss_curve), taking this share of its height.
LOSS_MIN_WIDTH = 340
LOSS_COLUMN_SHARE = 0.5


class DockRoom:
    """Sizes the main window's docks and puts away the ones a tab needs the room of."""

    def __init__(self, frame: Frame, training_loop: TrainingLoopPanel, headline: QWidget,
                 wide_pages: tuple[QWidget, ...], graph: QWidget | None,
                 arranged_elsewhere: Callable[[], bool]) -> None:
        """`wide_pages` need the whole width (the playground's page, Build), `graph` the
        room of the panels below and beside it; the `headline` shows over the training
        run's views only. While `arranged_elsewhere()` (teacher mode, a workspace being
        put in place) a tab puts nothing away."""
        self.frame = frame
        self.window = frame.window
        self.docks = frame.docks
        self.training_loop = training_loop
        self.headline = headline
        self.wide_pages = wide_pages
        self.graph = graph
        self.arranged_elsewhere = arranged_elsewhere
        # docks a tab put away for its room, to bring back when another tab shows
        self.put_away: list[QDockWidget] = []
        self._away_before_teacher: list[QDockWidget] = []
        self._kept_on_tab: dict[int, set[str]] = {}
        self._note = ""  # the message that said so, while it shows

    # --- sizes ------------------------------------------------------------------------
    def fit(self) -> None:
        """Dock sizes for this window size: the Designer as narrow as it can be without
        cutting anything off, the right-hand panels and the loss curve a share of the
        window, so the plot in the middle keeps room at 1024 x 700 as at 1920 x 1080."""
        w = self.window
        width, height = w.width(), w.height()
        designer = self.docks["Designer"]
        right = self.docks["Parameters && gradients"]
        w.resizeDocks([designer, right],
                      [designer.widget().minimumWidth(),
                       min(max(int(0.29 * width), 300), 480)], Qt.Horizontal)
        if self.place_loss_curve():
            w.layout().activate()  # the sizes below read the docks' new places
        loss, loop = self.docks["Loss curve"], self.docks["Training loop"]
        bottom = min(max(int(0.32 * height), 190), 320)
        if w.dockWidgetArea(loss) == Qt.BottomDockWidgetArea:
            w.resizeDocks([loss], [bottom], Qt.Vertical)
            # the code's width and the dock's own frame around it
            frame = max(loop.width() - self.training_loop.width(), 0)  # 0 until laid out
            code = self.training_loop.code_width() + frame
            # Sizes that do not add up to the room are scaled to it: leave out the handle.
            handle = w.style().pixelMetric(QStyle.PM_DockWidgetSeparatorExtent, None, w)
            rest = self._middle_width() - code - handle
            w.resizeDocks([loss, loop], [max(rest, 1), code], Qt.Horizontal)
        else:
            w.resizeDocks([loop], [bottom], Qt.Vertical)
            column = designer.height() + loss.height()
            share = max(int(LOSS_COLUMN_SHARE * column), 1)
            w.resizeDocks([designer, loss], [max(column - share, 1), share], Qt.Vertical)

    def _middle_width(self) -> int:
        """The width under the main views, between the left and right columns."""
        self.window.layout().activate()
        return self.window.centralWidget().width()

    def _loss_beside_loop(self) -> bool:
        """Does the middle column hold the loss curve and the training loop side by side,
        each readable? (The loop's code is not wrapped: it needs its widest line.)"""
        return self._middle_width() >= LOSS_MIN_WIDTH + self.training_loop.code_width()

    def place_loss_curve(self) -> bool:
        """The loss curve beside the training loop under the main views when both fit;
        in a narrow window (1024 x 700) under the Designer instead, where it gets the
        height its three plots and readout need, and the loop takes the middle's width.
        Docks the user moved elsewhere (floating, tabbed, another side) stay put.
        True if the loss curve moved."""
        w = self.window
        loss, loop = self.docks["Loss curve"], self.docks["Training loop"]
        designer = self.docks["Designer"]
        if any(d.isFloating() or w.tabifiedDockWidgets(d) for d in (loss, loop, designer)):
            return False
        if self.put_away:
            return False  # the middle is wider while a tab has panels away: decided on return
        places = (w.dockWidgetArea(loss), w.dockWidgetArea(loop))
        beside = (Qt.BottomDockWidgetArea, Qt.BottomDockWidgetArea)
        under = (Qt.LeftDockWidgetArea, Qt.BottomDockWidgetArea)
        if places not in (beside, under) or w.dockWidgetArea(designer) != under[0]:
            return False
        # With the Designer hidden (teacher mode) the left column would be the loss
        # curve's alone, a whole column's width taken from the rest: it goes beside the loop.
        wanted = beside if self._loss_beside_loop() or designer.isHidden() else under
        if places == wanted:
            return False
        if wanted == beside:
            w.addDockWidget(Qt.BottomDockWidgetArea, loss)
            w.splitDockWidget(loss, loop, Qt.Horizontal)
        else:
            w.splitDockWidget(designer, loss, Qt.Vertical)
        return True

    def loss_place_changes(self) -> bool:
        """Would the loss curve move (beside the loop, or under the Designer) on a refit?"""
        beside = self.window.dockWidgetArea(self.docks["Loss curve"]) \
            == Qt.BottomDockWidgetArea
        return beside != self._loss_beside_loop()

    def resized(self, old: QSize, new: QSize) -> None:
        """Shrunk a lot (a laptop screen, a projector): the docks would keep their size
        and squeeze the plot; give them their share of the new size instead. Across
        the width at which the loss curve changes place, refit too."""
        if old.isValid() and (new.width() < 0.85 * old.width()
                              or new.height() < 0.85 * old.height()
                              or (not self.put_away and self.loss_place_changes())):
            QTimer.singleShot(0, self.fit)

    # --- what a tab puts away -------------------------------------------------------------
    def _put_away_for(self, page: QWidget | None) -> list[QDockWidget]:
        """The docks a tab needs the room of: the playground needs the whole width and
        none of the training panels; the computation graph needs the room the Designer
        and the panels below take (at 1024 x 700 they left it 360 x 115 pixels)."""
        if page in self.wide_pages:  # the playground, Build it yourself
            names: tuple[str, ...] = ("Designer", "Parameters && gradients", "Loss curve",
                                      "Training loop")
        elif page is not None and page is self.graph:
            names = ("Designer", "Loss curve", "Training loop")
        else:
            names = ()
        # a panel the user brought back while this tab showed stays
        kept = self._kept_on_tab.get(id(page), set())
        return [self.docks[name] for name in names if name not in kept]

    @Slot(int)
    def on_tab_changed(self, _index: int) -> None:
        """Put away the panels the new tab needs the room of, and bring back as they were
        the ones an earlier tab put away that this one does not."""
        page = self.frame.tabs.currentWidget()
        # The big numbers are the training run's: the playground and Build need the height.
        self.headline.setVisible(page not in self.wide_pages)
        if self.arranged_elsewhere():
            return  # teacher mode or the workspace decides which panels show
        wanted = self._put_away_for(page)
        back = [d for d in self.put_away if d not in wanted]
        for dock in back:
            self.put_away.remove(dock)
            dock.show()
        if back and not self.put_away and self.loss_place_changes():
            QTimer.singleShot(0, self.fit)  # resized while they were away
        if back:
            self._dismiss_note()  # it said they were away: no longer true
        hidden = [d for d in wanted if d.isVisible() and d not in self.put_away]
        for dock in hidden:
            dock.hide()
        self.put_away.extend(hidden)
        if hidden:
            names = ", ".join(d.windowTitle().replace("&&", "&") for d in hidden)
            self._note = (f"Put away while this tab shows: {names} "
                          "(the View menu brings any of them back)")
            self.frame.messages.show_message(self._note, lambda: all(
                d.isHidden() and d in self.put_away for d in hidden))

    def put_away_now(self, docks: list[QDockWidget]) -> None:
        """Put `docks` away while this tab shows (a view asked for their room): they
        come back with the next tab, as the ones a tab puts away itself."""
        for dock in docks:
            if dock.isVisible():
                dock.hide()
                if dock not in self.put_away:
                    self.put_away.append(dock)

    def on_dock_toggled(self, dock: QDockWidget, checked: bool) -> None:
        """The user brought back a panel a tab had put away: it stays on that tab."""
        if checked and dock in self.put_away:
            self.put_away.remove(dock)
            page = self.frame.tabs.currentWidget()
            self._kept_on_tab.setdefault(id(page), set()).add(
                next(name for name, d in self.docks.items() if d is dock))

    def _dismiss_note(self) -> None:
        if self.frame.messages.text() == self._note:
            self.frame.messages.dismiss()

    def clear_put_away(self) -> None:
        """A workspace decides which panels show: forget what a tab put away."""
        self.put_away.clear()
        self._kept_on_tab.clear()
        self._dismiss_note()

    def before_teacher_mode(self) -> None:
        """Teacher mode decides which panels show: a tab's put-away ones come back to it,
        and are away again after (the layout given back has them hidden)."""
        self._away_before_teacher = list(self.put_away)
        for dock in self.put_away:
            dock.show()
        self.put_away.clear()
        self._dismiss_note()

    def after_teacher_mode(self) -> None:
        self.put_away = self._away_before_teacher
        self._away_before_teacher = []

    @contextmanager
    def all_shown(self) -> Iterator[None]:
        """The docks as the user has them, not as a tab put them away for its room (to
        save the layout: the next launch opens on the decision boundary)."""
        put_away = list(self.put_away)
        for dock in put_away:
            dock.setVisible(True)
        try:
            yield
        finally:
            for dock in put_away:
                dock.setVisible(False)
