"""The two levels a graph view draws, and which one is shown.

The network level (units and their weights) and the operation level (every node of the
engine's graph) are two scenes; a `GraphView` owns one `Levels` and says which is shown.
Its helpers -- the framing, the overlays, the replay -- read the levels from here, not
from the view: they are given what they work on, and never reach back into the view.
"""

from __future__ import annotations

from gradbox.views.graph.net_scene import NetworkScene
from gradbox.views.graph.op_scene import OperationScene

LEVELS = ("network", "operation")


class Levels:
    """The operation scene, the network scene, and the level shown ("network" first)."""

    def __init__(self, operations: OperationScene, network: NetworkScene) -> None:
        self.operations = operations
        self.network = network
        self.shown = "network"

    def scene(self, level: str | None = None) -> OperationScene | NetworkScene:
        """The scene of `level` (default: the one shown)."""
        level = self.shown if level is None else level
        return self.operations if level == "operation" else self.network

    def is_empty(self) -> bool:
        """Whether the level shown has nothing to draw."""
        if self.shown == "operation":
            return not self.operations.nodes or self.operations.graph is None
        return self.network.network is None

    def font_scale(self) -> float:
        """How much the drawn text is scaled (teacher mode's larger text)."""
        return self.operations.style.scale
