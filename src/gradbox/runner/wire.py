"""A `Snapshot` across the process boundary: arrays in shared memory, the rest pickled.

The training process (`Publisher`) writes a snapshot's per-step arrays (parameters,
gradients, the batch...) into a *slot*, a shared block the window is not reading, and
sends a small message naming it; the history's columns go to an append-only block
(rows below the published length are never written again, so a reader's views of them
stay true); what rarely changes (the configuration, the parameter names, the points,
the pinned run, the graph's structure) is pickled only when it did. The window
(`Receiver`) rebuilds a `Snapshot` whose arrays are read-only views of the shared
blocks -- no copy, and no second copy of the history in the window's process.

Slots are versioned by ownership: the writer marks a slot held before it announces it,
and only the reader clears the mark, once no array of that snapshot is alive (a
`weakref.finalize` on the publication the arrays keep). The writer writes only to
slots not held, so a snapshot a view keeps never changes under it, and a reader never
sees a half-written one. With every slot held (views keeping many old snapshots), the
arrays travel in the message instead.

The control block (created by the window, so it outlives a crashed trainer) holds the
flags both sides read: a frame wanted, a Pause up to which run, whether a step is under
way and how many steps are done, and the slots' marks.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import weakref
from multiprocessing.reduction import ForkingPickler
from types import MappingProxyType
from typing import Any

import numpy as np

from gradbox.graph import Graph
from gradbox.runner.shared import (
    Layout,
    Segment,
    block_layout,
    pickled_parts,
    read_block,
    write_block,
)
from gradbox.training.history import BOOL_FIELDS, INT_FIELDS, RECORD_FIELDS, History
from gradbox.training.snapshots import Snapshot


def _mapping_proxy(items: dict[str, Any]) -> MappingProxyType:
    return MappingProxyType(items)


def _reduce_mapping_proxy(proxy: MappingProxyType) -> tuple[Any, ...]:
    return _mapping_proxy, (dict(proxy),)


# A run's optimizer state is a read-only mapping (gradbox.training.state); it crosses as
# one. (Registered for the pipe's pickler only, in both processes: both import this.)
ForkingPickler.register(MappingProxyType, _reduce_mapping_proxy)

# Control block: int64 cells.
WANTED, PAUSED_UPTO, STEPPING, STEPS, READY = range(5)
SLOTS = 32
HELD = 8  # first slot mark
CONTROL_CELLS = HELD + SLOTS

ARRAY_FIELDS = ("params", "grads", "ghost_grads", "step_grads", "batch", "graph_batch")
# Pickled only when changed (compared by identity: the trainer reuses these objects).
CACHED_FIELDS = ("config", "param_names", "points", "labels", "is_test", "targets",
                 "edits", "pinned", "layer_sizes", "ahead")
HISTORY_MIN_ROWS = 1024
GRAPH_ARRAYS = ("graph_data", "graph_grad", "graph_data_per_sample", "graph_grad_per_sample")


def _column_dtype(name: str) -> np.dtype:
    if name in INT_FIELDS:
        return np.dtype(np.int64)
    return np.dtype(np.bool_) if name in BOOL_FIELDS else np.dtype(np.float64)


def control_view(segment: Segment) -> np.ndarray:
    return segment.view(0, (CONTROL_CELLS,), np.int64, writeable=True)


CONTROL_BYTES = CONTROL_CELLS * 8


# --- the training process's side ---------------------------------------------------------
class _HistoryWriter:
    """The history's columns in an append-only block; a new generation after a rewind."""

    def __init__(self, prefix: str) -> None:
        self._prefix = prefix
        self._names = itertools.count()
        self._segment: Segment | None = None
        self._layout: Layout | None = None
        self._capacity = 0
        self._written = 0
        self._generation = 0
        self._last: History | None = None
        self._layer_shape: tuple[int, ...] | None = None

    def publish(self, history: History) -> dict[str, Any]:
        n = len(history)
        layers = history.layers()
        layer_shape = None if layers is None else tuple(layers.shape[1:])
        same = (self._last is not None and history.extends(self._last)
                and layer_shape == self._layer_shape)
        if not same:
            self._generation += 1
            self._written = 0
        if not same or n > self._capacity:
            self._grow(max(HISTORY_MIN_ROWS, 2 * n), layer_shape)
        assert self._segment is not None and self._layout is not None
        start = self._written
        if n > start:
            rows = slice(start, n)
            for name in RECORD_FIELDS:
                offset, _shape, dtype = self._layout.entries[name]
                self._segment.view(offset, (self._capacity,), dtype, writeable=True)[rows] = \
                    history.column(name)[rows]
            if layers is not None:
                offset, shape, dtype = self._layout.entries["layers"]
                self._segment.view(offset, shape, dtype, writeable=True)[rows] = layers[rows]
        self._written = n
        self._last = history
        self._layer_shape = layer_shape
        return {"segment": self._segment.name, "layout": self._layout.plain(), "rows": n,
                "generation": self._generation}

    def _grow(self, capacity: int, layer_shape: tuple[int, ...] | None) -> None:
        old, old_layout, kept = self._segment, self._layout, self._written
        layout_arrays: dict[str, np.ndarray] = {
            name: np.empty((capacity,), _column_dtype(name)) for name in RECORD_FIELDS}
        if layer_shape is not None:
            layout_arrays["layers"] = np.empty((capacity, *layer_shape))
        layout = Layout(layout_arrays)
        segment = Segment(f"{self._prefix}h{next(self._names)}", layout.nbytes, create=True)
        if old is not None and old_layout is not None and kept:
            # The same generation, grown: the rows written so far move along.
            for key, (offset, shape, dtype) in old_layout.entries.items():
                new_offset, new_shape, _ = layout.entries[key]
                source = old.view(offset, shape, dtype)
                segment.view(new_offset, new_shape, dtype, writeable=True)[:kept] = \
                    source[:kept]
        if old is not None:
            old.unlink()
        self._segment, self._layout, self._capacity = segment, layout, capacity

    def close(self) -> None:
        if self._segment is not None:
            self._segment.unlink()


class Publisher:
    """Writes snapshots for the window (see the module's docstring)."""

    def __init__(self, prefix: str, control: np.ndarray) -> None:
        self.prefix = self._prefix = prefix
        self.control = control
        self._slots: list[tuple[Segment, int] | None] = [None] * SLOTS
        self._names = itertools.count()
        self._history = _HistoryWriter(prefix)
        self._sent: dict[str, Any] = {}
        self._graph_structure: object = None
        self._numbers: tuple[Graph | None, tuple[np.ndarray, ...]] = (None, ())
        self._graph_version = 0  # one more for each new graph traced
        self.published = 0

    def message(self, snapshot: Snapshot) -> dict[str, Any]:
        """Write `snapshot`'s arrays to shared memory; the message that announces them."""
        arrays = {name: getattr(snapshot, name) for name in ARRAY_FIELDS
                  if getattr(snapshot, name) is not None}
        arrays = {k: np.ascontiguousarray(v) for k, v in arrays.items()}
        meta: dict[str, Any] = {"scalars": {
            f.name: getattr(snapshot, f.name) for f in dataclasses.fields(Snapshot)
            if f.name not in ARRAY_FIELDS and f.name not in CACHED_FIELDS
            and f.name not in ("history", "graph")}}
        meta["absent"] = [name for name in ARRAY_FIELDS if getattr(snapshot, name) is None]
        changed = {}
        for name in CACHED_FIELDS:
            value = getattr(snapshot, name)
            if name not in self._sent or self._sent[name] is not value:
                changed[name] = value
                self._sent[name] = value
        meta["changed"] = changed
        meta["history"] = self._history.publish(snapshot.history)
        meta["graph"] = self._graph(snapshot.graph, arrays)
        layout = Layout(arrays)
        slot = self._free_slot(layout.nbytes)
        if slot is None:
            meta["arrays"] = arrays  # every slot held: pickled (see the module's docstring)
        else:
            segment, _ = self._slots[slot]  # type: ignore[misc]
            layout.write(segment, arrays)
            self.control[HELD + slot] = 1
            meta["slot"] = (slot, segment.name, layout.plain())
        self.published += 1
        return meta

    def _graph(self, graph: Graph | None, arrays: dict[str, np.ndarray]) -> Any:
        """The graph's numbers join the slot's arrays (every time: a reader may skip a
        message); its structure is pickled once per network shape, else 'numbers'."""
        if graph is None:
            return None
        if self._numbers[0] is not graph:
            self._numbers = (graph, graph.numbers())
            self._graph_version += 1
        arrays["graph_version"] = np.array([self._graph_version])
        for key, array in zip(GRAPH_ARRAYS, self._numbers[1]):
            arrays[key] = array
        if self._graph_structure == graph.structure_key:
            return "numbers"
        self._graph_structure = graph.structure_key
        return graph.without_numbers()

    def _free_slot(self, nbytes: int) -> int | None:
        for slot in range(SLOTS):
            if self.control[HELD + slot]:
                continue
            current = self._slots[slot]
            if current is None or current[1] < nbytes:
                if current is not None:
                    current[0].unlink()
                size = max(nbytes, 4096)
                self._slots[slot] = (Segment(f"{self._prefix}s{next(self._names)}", size,
                                             create=True), size)
            return slot
        return None

    def known(self) -> dict[str, Any]:
        """The objects of `NAMED_FIELDS` the window has been sent (for `put_answer`)."""
        return {name: self._sent[name] for name in NAMED_FIELDS if name in self._sent}

    def close(self) -> None:
        """Unlink every name this side created (the window may hold the memory on)."""
        for entry in self._slots:
            if entry is not None:
                entry[0].unlink()
        self._history.close()


# Snapshot fields a large answer names instead of carrying, when its object is the one
# the window already has from the snapshots (compared by identity): a 1000x1000
# network's parameter names are a million strings, 29 MB of pickle that took the
# window's reader ~95 ms of holding the interpreter lock to make again.
NAMED_FIELDS = ("param_names",)


def put_answer(prefix: str, number: int, answer: Any,
               known: dict[str, Any] | None = None) -> tuple[str, int]:
    """Pickle a large answer into a shared block of its own (the training process's side
    of `LazyAnswer`): the window maps it and reads it on whichever thread needs it,
    rather than unpickling a whole run on the UI thread as it comes off the pipe. Its
    arrays go out of band (`shared.read_block`): copied once, into the block. An object
    of `known` (name: object the window has) is pickled as its name."""
    names = {id(value): name for name, value in (known or {}).items()}

    class Pickler(ForkingPickler):
        def persistent_id(self, obj: Any) -> str | None:
            return names.get(id(obj))

    stream, buffers = pickled_parts(answer, Pickler)
    header, nbytes = block_layout(stream, buffers)
    name = f"{prefix}b{number}"
    segment = Segment(name, nbytes, create=True)
    write_block(segment.view(0, (nbytes,), np.uint8, writeable=True), header, stream,
                buffers)
    return name, nbytes


class LazyAnswer:
    """An answer left pickled in shared memory until `load()` (any thread; once). What
    `load()` gives views the block for its arrays (read-only, no copy: the block lives
    as long as they do); `known` gives the objects the pickle names (`NAMED_FIELDS`)."""

    def __init__(self, name: str, nbytes: int, known: dict[str, Any] | None = None) -> None:
        self._segment: Segment | None = Segment(name)
        self._segment.unlink()  # mapped here: the name can go, the memory stays
        self.nbytes = nbytes
        self._known = known or {}
        self._lock = threading.Lock()
        self._value: Any = None

    def load(self) -> Any:
        with self._lock:
            if self._segment is not None:
                self._value = read_block(self._segment.view(0, (self.nbytes,), np.uint8),
                                         self._known)
                self._segment = None  # (the mapping goes with the last view of it)
            return self._value

    def pickled(self) -> np.ndarray:
        """The answer still pickled: its block in shared memory, to hand on to another
        process (an animation export: `shared.read_block` reads it there) without
        unpickling it here. Before `load()` only."""
        with self._lock:
            if self._segment is None:
                raise RuntimeError("the answer was read already")
            return self._segment.view(0, (self.nbytes,), np.uint8)


# --- the window's side -------------------------------------------------------------------
class _Publication:
    """What one snapshot's arrays keep alive; its end frees the slot for the writer."""

    __slots__ = ("__weakref__",)


class Receiver:
    """Turns the training process's messages back into `Snapshot`s (views, no copies)."""

    def __init__(self, control: np.ndarray) -> None:
        self.control = control
        self._segments: dict[str, Segment] = {}
        self._slot_names: dict[int, str] = {}
        self._history_name = ""
        self._cached: dict[str, Any] = {}
        self._origin: tuple[int, object] = (0, object())
        self._structure: Graph | None = None
        self._graph: tuple[int, Graph] | None = None  # the last graph built, by version

    def _segment(self, name: str) -> Segment:
        segment = self._segments.get(name)
        if segment is None:
            segment = Segment(name)
            # Mapped here now: the name can go, the memory stays while mapped.
            segment.unlink()
            self._segments[name] = segment
        return segment

    def _replaced(self, old: str, new: str) -> None:
        """The writer moved to a new block (grown, or a new history): forget the old
        mapping (arrays still viewing it keep it)."""
        if old and old != new:
            self._segments.pop(old, None)

    def absorb(self, meta: dict[str, Any]) -> None:
        """Take in what a message changed, whether or not its snapshot is shown."""
        self._cached.update(meta["changed"])
        if isinstance(meta["graph"], Graph):
            self._structure = meta["graph"]

    def drop(self, meta: dict[str, Any]) -> None:
        """A message absorbed but not shown (a newer one came): free its slot."""
        if "slot" in meta:
            _release(self.control, meta["slot"][0])

    def known(self) -> dict[str, Any]:
        """The objects of `NAMED_FIELDS` as of the last message absorbed: what an answer
        that came after it names (`LazyAnswer`)."""
        return {name: self._cached[name] for name in NAMED_FIELDS if name in self._cached}

    def snapshot(self, meta: dict[str, Any]) -> Snapshot:
        """The snapshot of an absorbed message, its arrays viewing shared memory."""
        fields: dict[str, Any] = dict(meta["scalars"])
        fields.update({name: self._cached[name] for name in CACHED_FIELDS})
        for name in meta["absent"]:
            fields[name] = None
        arrays: dict[str, np.ndarray] = {}
        if "slot" in meta:
            slot, name, entries = meta["slot"]
            self._replaced(self._slot_names.get(slot, ""), name)
            self._slot_names[slot] = name
            segment = self._segment(name)
            publication = _Publication()
            weakref.finalize(publication, _release, self.control, slot)
            for key, (offset, shape, dtype) in entries.items():
                arrays[key] = segment.view(offset, shape, dtype, keep=publication)
        else:
            for key, array in meta["arrays"].items():
                array.flags.writeable = False
                arrays[key] = array
        graph = None
        if meta["graph"] is not None:
            assert self._structure is not None
            numbers = [arrays.pop(k) for k in GRAPH_ARRAYS]
            version = int(arrays.pop("graph_version")[0])
            if self._graph is not None and self._graph[0] == version:
                graph = self._graph[1]  # the same trace: the same object, as views expect
            else:
                graph = self._structure.with_numbers(*numbers)
                self._graph = (version, graph)
        else:
            self._graph = None
        fields.update(arrays)
        fields["history"] = self._history(meta["history"])
        fields["graph"] = graph
        return Snapshot(**fields)

    def _history(self, info: dict[str, Any]) -> History:
        name = info["segment"]
        self._replaced(self._history_name, name)
        self._history_name = name
        segment = self._segment(name)
        if self._origin[0] != info["generation"]:
            # A new generation (a rewind, a new run): not an extension of the last one.
            self._origin = (info["generation"], object())
        rows = info["rows"]
        columns = {}
        layers = None
        for key, (offset, shape, dtype) in info["layout"].items():
            array = segment.view(offset, shape, dtype)[:rows]
            if key == "layers":
                layers = array
            else:
                columns[key] = array
        return History(columns, self._origin[1], layers)


def _release(control: np.ndarray, slot: int) -> None:
    control[HELD + slot] = 0
