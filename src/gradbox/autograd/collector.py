"""Python's cyclic garbage collector and the engine's graphs: when it may run.

The engine's graphs contain no reference cycles (closures receive the gradient as an
argument instead of holding their output), so reference counting frees every node; the
cyclic collector would only re-scan thousands of fresh nodes for nothing. A training step
pauses it (`cyclic_gc_paused`), and a big network's leftover young objects are frozen out
of its way (`freeze_big_young_generation`) rather than scanned.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

# Young objects beyond this many (a big network's graph) are frozen rather than scanned by
# the cyclic collector; W1's step leaves a few thousand.
FREEZE_YOUNG_ABOVE = 100_000


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one training step.

    A big network's step leaves millions of young objects: re-enabled as they are, the
    collector would scan them all at the next allocation (seconds for a 1000x1000
    network, and inside a Pause that abandons a step). They are frozen instead
    (`gc.freeze()`, constant time; reference counting still frees them).

    A step cut short by an exception (Pause abandons a step that way) is frozen whatever
    its count: its half-built graph lives on in the traceback until the caller has
    answered, held by a few young containers of millions of entries (the backward walk's
    node list and visited set), which the next young collection traversed whole: 140-195
    ms of a 1000x1000 network's Pause in the backward pass (benchmarks/bench_pause.py).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if was_enabled:
            gc.freeze()
        raise
    finally:
        if was_enabled:
            if gc.get_count()[0] > FREEZE_YOUNG_ABOVE:
                gc.freeze()
            gc.enable()


def in_a_training_process() -> None:
    """This process trains and does little else (`gradbox.runner.child`): what lives now
    (modules, dataset, network) lives for good, and each step's young objects -- the graph
    the trainer keeps until the next step, thousands of nodes -- are frozen as a big
    network's are, rather than scanned by a young collection after every step (W1: ~0.4 ms
    of a 4-5 ms step, at load 12). Only where no cyclic garbage is made between steps: a
    window's process makes plenty (Qt's and pyqtgraph's objects), and frozen, it would
    never be collected."""
    global FREEZE_YOUNG_ABOVE
    FREEZE_YOUNG_ABOVE = 0
    gc.freeze()


def freeze_big_young_generation() -> None:
    """After a step or command: put a big network's live nodes out of the collector's way
    (`gc.freeze()`, constant time; reference counting still frees them)."""
    if gc.get_count()[0] > FREEZE_YOUNG_ABOVE:
        gc.freeze()
