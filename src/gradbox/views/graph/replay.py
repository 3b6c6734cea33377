"""Backward replayed on the level a graph view shows: which scene lights up, and how.

A `BackwardReplay` keeps the order, the position and the timer; this drives it for one
graph view: loads the shown level's steps (`Levels`), lights each step as it comes, keeps
it in sight in the Qt view it is given, and reports each step and the end through the
two callbacks it is given. The view's public replay methods are its verbs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtWidgets import QGraphicsView

from gradbox.views.graph.backward_replay import BackwardReplay
from gradbox.views.graph.items import TEXT_LOD
from gradbox.views.graph.levels import Levels
from gradbox.views.graph.net_scene import NetworkScene
from gradbox.views.graph.op_scene import OperationScene


class ReplayDriver:
    """Runs one view's backward replay on the level it was started on."""

    def __init__(self, view: QGraphicsView, levels: Levels,
                 stepped: Callable[[int, int], None], finished: Callable[[], None]) -> None:
        self.view = view
        self.levels = levels
        self._stepped, self._finished = stepped, finished
        self.replay = BackwardReplay(view)
        self.replay.advanced.connect(self._on_advanced)
        self.replay.finished.connect(self._on_finished)
        self.level = "operation"  # the level the loaded replay lights up
        self.follow = True  # scroll a step out of sight into view

    def scene(self) -> NetworkScene | OperationScene:
        """The scene the loaded replay lights up."""
        return self.levels.scene(self.level)

    def ensure(self, order: Sequence[int] | None, restart_finished: bool = True) -> bool:
        """Load a replay of the level shown, unless one is in progress there; returns
        whether there is anything to replay. (A custom `order` names operations: the
        view shows the operation level before it asks.)"""
        replay = self.replay
        if order is None and replay.is_loaded() and self.level == self.levels.shown \
                and not (replay.is_finished() and restart_finished):
            return True  # continue the replay in progress
        # a new replay replaces the old one: not a stop the caller must hear about
        replay.pause()
        if replay.is_loaded():
            self.scene().end_replay()
        self.level = self.levels.shown
        scene = self.scene()
        steps = scene.replay_steps(order)
        replay.load(steps)
        if not steps:
            return False
        scene.begin_replay()
        return True

    def step(self, order: Sequence[int] | None) -> int | None:
        """One step; the id the view reports for it, None when finished."""
        self.replay.pause()
        if not self.ensure(order, restart_finished=False):
            return None
        index = self.replay.step()
        if index is None:
            return None
        return self.scene().reported_id(self.replay.steps()[index])

    def stop(self) -> bool:
        """Stop and clear the replay; returns whether one was loaded."""
        self.replay.pause()
        if not self.replay.is_loaded():
            return False
        self.scene().end_replay()
        self.replay.stop()
        return True

    def _on_advanced(self, index: int, position: int) -> None:
        view = self.view
        steps = self.replay.steps()
        scene = self.scene()
        item = scene.light(steps[index], position, steps[index - 1] if index > 0 else ())
        if self.follow and view.transform().m11() >= TEXT_LOD:
            # follow a step out of sight; one in sight stays put (ensureVisible's margins
            # scrolled a fitted graph past its right edge: it looked clipped)
            box = view.mapFromScene(item.core_rect()).boundingRect()
            if not view.viewport().rect().contains(box):
                view.ensureVisible(item, 40, 40)
        self._stepped(scene.reported_id(steps[index]), position)
        view.viewport().update()

    def _on_finished(self) -> None:
        last = self.replay.current()
        if last:
            self.scene().unlight(last)
        self._finished()
