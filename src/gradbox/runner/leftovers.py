"""What a step abandoned by Pause leaves behind, freed a piece at a time.

A 1000x1000 network's half-built graph is millions of nodes, held by the frames of the
step that Pause cut short (the traceback keeps them, so the graph outlives the answer to
the Pause). Dropped at once, it is freed in one C-level deallocation cascade of 0.25-1.9
s, during which the training process reads no message: a question asked right after a
Pause waited that long (benchmarks/bench_pause.py --ask). Here the frames' locals are
taken out of the frames and taken apart in pieces -- each node let go of its inputs
(`gradbox.autograd.engine.cut_inputs`) before it dies, so it frees itself alone -- and the
training process answers messages between the pieces (see `gradbox.runner.child`).

Only what the abandoned frames held is taken apart, and a container (list, set, dict)
is emptied only when nothing else holds it: the model's own lists, reached from those
frames, are read, never changed. A node let go keeps its number but loses its inputs and
its backward step: nothing walks the abandoned graph again (the step was rewound).
"""

from __future__ import annotations

import contextlib
import sys
from types import TracebackType

from gradbox.autograd.engine import Value, cut_inputs

# Objects handled per piece: a few milliseconds (a node let go and freed takes ~0.5-1
# µs). A count, not a clock: the same pieces on a fast or a loaded machine.
PIECE = 4000
_CONTAINERS = (list, set, dict, tuple)


class AbandonedGraph:
    """The locals of an abandoned step's frames, to free in pieces (`free_piece`)."""

    def __init__(self, traceback: TracebackType | None) -> None:
        todo: list[object] = []
        tb = traceback.tb_next if traceback is not None else None  # (the catcher's frame
        while tb is not None:                                      # runs on: skip it)
            frame = tb.tb_frame
            held = frame.f_locals  # (a dict the frame keeps, as long as it lives)
            todo.extend(held.values())
            # Without its locals the frame frees nothing when it goes, nor holds what
            # is taken apart here (a list nobody else holds is emptied in pieces).
            with contextlib.suppress(RuntimeError):  # (a frame still running keeps all)
                frame.clear()
                held.clear()
            tb = tb.tb_next
        self._todo = todo
        # What is neither a node nor a container (an iterator, a generator, a frame...)
        # may hold nodes out of reach: it is dropped last, when every node is let go.
        self._last: list[object] = []

    @property
    def done(self) -> bool:
        return not self._todo

    def free_piece(self, piece: int = PIECE) -> bool:
        """Let go of and free about `piece` objects; True once all is freed."""
        try:
            return self._free_piece(piece)
        except Exception:  # (unforeseen in what the frames held: free it all, as before)
            self.free_all()
            return True

    def _free_piece(self, piece: int) -> bool:
        todo, last, size = self._todo, self._last, piece
        while todo and piece > 0:
            piece -= 1
            item = todo.pop()
            kind = type(item)
            if kind is Value or isinstance(item, Value):
                todo.extend(cut_inputs(item))  # its inputs wait their turn here
            elif kind in _CONTAINERS:
                # Two references: `item` and getrefcount's own. Ours alone: take a piece
                # out of it and come back for the rest; else read it, change nothing.
                if kind is not tuple and sys.getrefcount(item) == 2 and len(item) > size:
                    todo.append(item)
                    todo.extend(_take(item, size))
                    piece = 0
                else:
                    todo.extend(item.values() if kind is dict else item)  # type: ignore[union-attr]
            elif not isinstance(item, (int, float, str, bool, bytes)) and item is not None:
                last.append(item)
            del item  # (freed here, while its inputs are still held by `todo`)
        if not todo:
            last.clear()
        return not todo

    def free_all(self) -> None:
        """Free the rest now, at once (before work that builds a new graph)."""
        self._todo.clear()
        self._last.clear()


def _take(container: list | set | dict, n: int) -> list[object]:  # type: ignore[type-arg]
    """Remove up to `n` entries from a container nobody else holds; the entries (a
    dict's values)."""
    if type(container) is list:
        taken = container[-n:]
        del container[-n:]
        return taken
    if type(container) is set:
        return [container.pop() for _ in range(min(n, len(container)))]
    return [container.popitem()[1] for _ in range(min(n, len(container)))]  # type: ignore[union-attr]
