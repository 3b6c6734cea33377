"""Shared memory between the window and the training process, with numpy views.

The training process (the writer) creates every segment; the window (the reader) maps
each one once and unlinks its name at once, so nothing outlives the two processes in
`/dev/shm` (POSIX keeps the memory until both have unmapped it). A segment the reader
never saw is unlinked by the writer when it retires it, and after a crash by the reader
from the names' common prefix (`remove_leftovers`).

Lifetimes follow the arrays: a reader's array keeps its mapping alive through its
`base` chain (`Segment.view`), so a snapshot a view still holds stays valid after newer
ones came, and the mapping goes with the last array that reads it. Python's resource
tracker is kept out of it (it would unlink names still in use, or warn about names
already gone): the two processes own the names between them.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import io
import os
import pickle
import queue
import threading
from collections.abc import Mapping
from functools import partial
from multiprocessing import resource_tracker
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

SHM_FOLDER = "/dev/shm"  # where POSIX shared memory shows as files (Linux)


def _untracked(shm: SharedMemory) -> SharedMemory:
    # Python 3.11 registers every segment, created or attached, with the resource
    # tracker, which then unlinks (or warns about) it when the *tracker* exits.
    if os.name == "posix":
        resource_tracker.unregister(f"/{shm.name}", "shared_memory")
    return shm


def _unlink(shm: SharedMemory) -> bool:
    if os.name == "posix":
        # unlink() unregisters the name: register it first, so the tracker has it to
        # forget (it prints a KeyError otherwise).
        resource_tracker.register(f"/{shm.name}", "shared_memory")
    try:
        shm.unlink()
    except FileNotFoundError:  # (then unlink() did not unregister it)
        if os.name == "posix":
            resource_tracker.unregister(f"/{shm.name}", "shared_memory")
        return False
    return True


def unlink(name: str) -> bool:
    """Remove a segment's name (its memory stays while mapped); False if already gone."""
    try:
        shm = _untracked(SharedMemory(name=name))
    except FileNotFoundError:
        return False
    try:
        return _unlink(shm)
    finally:
        shm.close()


def remove_leftovers(prefix: str) -> list[str]:
    """Unlink every segment whose name starts with `prefix` (after the writer died)."""
    removed = []
    for path in glob.glob(os.path.join(SHM_FOLDER, glob.escape(prefix) + "*")):
        name = os.path.basename(path)
        try:
            os.unlink(path)
            removed.append(name)
        except FileNotFoundError:
            pass
    return removed


class Segment:
    """One shared memory block mapped into this process.

    `view()` gives numpy arrays over it whose `base` chain ends at this object, so the
    mapping stays while any of them lives (an array made by `np.frombuffer` would let
    the block be closed under it, or make closing it fail).
    """

    def __init__(self, name: str, size: int = 0, create: bool = False) -> None:
        if create:
            self._shm = _untracked(SharedMemory(name=name, create=True, size=max(1, size)))
        else:
            self._shm = _untracked(SharedMemory(name=name))
        self.name = name
        self.size = self._shm.size
        # One export of the buffer, held here for as long as the mapping lives: every
        # array is made from its address through `__array_interface__`.
        self._anchor = ctypes.c_char.from_buffer(self._shm.buf)
        self._address = ctypes.addressof(self._anchor)

    def view(self, offset: int, shape: tuple[int, ...], dtype: np.dtype | type | str,
             writeable: bool = False, keep: object = None) -> np.ndarray:
        """An array of `shape` and `dtype` at byte `offset`, read-only unless asked; it
        keeps this mapping alive, and `keep` too (see gradbox.runner.wire)."""
        dtype = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        nbytes = count * dtype.itemsize
        if offset < 0 or offset + nbytes > self.size:
            raise ValueError(f"{nbytes} bytes at {offset} do not fit in {self.size}")
        window = _Window(self, keep, self._address + offset, nbytes, not writeable)
        return np.asarray(window).view(dtype).reshape(shape)

    def unlink(self) -> None:
        """Remove the name; the memory stays while this or another process maps it."""
        _unlink(self._shm)

    def __del__(self) -> None:
        if not hasattr(self, "_anchor"):
            return  # __init__ failed (no block of that name): nothing is mapped
        # The anchor's export first, or closing the block raises BufferError.
        self._anchor = None
        if self.size >= CLOSE_ELSEWHERE and _close_elsewhere(self._shm):
            return
        with contextlib.suppress(OSError, BufferError):
            self._shm.close()


# Unmapping a block whose name is gone frees its pages: ~24 ms of CPU for 100 MB, on the
# thread that dropped the last view -- the UI thread, when it let go of an autosave's
# whole run. A block this big is unmapped on a thread of its own instead.
CLOSE_ELSEWHERE = 4 * 2**20  # bytes
_to_close: queue.SimpleQueue[SharedMemory] = queue.SimpleQueue()
_closer: threading.Thread | None = None
_closer_lock = threading.RLock()  # (a collection inside it may drop another block)


def _close_elsewhere(shm: SharedMemory) -> bool:
    """Hand `shm` to the closing thread; False if there can be none (at exit)."""
    global _closer
    try:
        with _closer_lock:
            if _closer is None or not _closer.is_alive():
                _closer = threading.Thread(target=_close_forever, name="gradbox-unmap",
                                           daemon=True)
                _closer.start()
    except RuntimeError:  # the interpreter is shutting down: no new threads
        return False
    _to_close.put(shm)
    return True


def _close_forever() -> None:
    while True:
        shm = _to_close.get()
        with contextlib.suppress(OSError, BufferError):
            shm.close()
        del shm


class _Window:
    """Bytes of a segment as seen by numpy; holds the segment (see `Segment.view`)."""

    __slots__ = ("__array_interface__", "keep", "segment")

    def __init__(self, segment: Segment, keep: object, address: int, nbytes: int,
                 readonly: bool) -> None:
        self.segment = segment
        self.keep = keep
        self.__array_interface__ = {"data": (address, readonly), "shape": (nbytes,),
                                    "typestr": "|u1", "version": 3}


def aligned(n: int, to: int = 64) -> int:
    return (n + to - 1) // to * to


class Layout:
    """Where each named array sits in a block: offsets (64-byte aligned), shapes, dtypes."""

    def __init__(self, arrays: dict[str, np.ndarray]) -> None:
        self.entries: dict[str, tuple[int, tuple[int, ...], str]] = {}
        offset = 0
        for key, array in arrays.items():
            self.entries[key] = (offset, tuple(array.shape), array.dtype.str)
            offset = aligned(offset + array.nbytes)
        self.nbytes = max(offset, 64)

    def write(self, segment: Segment, arrays: dict[str, np.ndarray]) -> None:
        for key, array in arrays.items():
            offset, shape, dtype = self.entries[key]
            segment.view(offset, shape, dtype, writeable=True)[...] = array

    def read(self, segment: Segment) -> dict[str, np.ndarray]:
        return {key: segment.view(offset, shape, dtype)
                for key, (offset, shape, dtype) in self.entries.items()}

    def plain(self) -> dict[str, tuple[int, tuple[int, ...], str]]:
        return dict(self.entries)


# --- a pickle whose arrays lie beside it ------------------------------------------------
# A large answer (a whole run) crosses as one block: a header of int64 cells (the
# stream's offset and length, then each buffer's), the pickle stream (protocol 5), then
# every contiguous array's bytes out of band, 64-byte aligned. Unpickling it makes the
# arrays views of the block: no copy, so a reader on a thread of the window holds the
# interpreter lock for the few objects around them, not for the megabytes in them
# (`pickle.loads` of a 1000x1000 run's 74 MB held it 120-200 ms on the autosave's
# writer thread, and the window stalled that long).
def pickled_parts(value: Any, pickler: type[pickle.Pickler] = pickle.Pickler,
                  ) -> tuple[bytes, list[memoryview]]:
    """`value` pickled (protocol 5): the stream, and the arrays' bytes out of band."""
    buffers: list[pickle.PickleBuffer] = []
    stream = io.BytesIO()
    pickler(stream, 5, True, buffers.append).dump(value)
    return stream.getvalue(), [buffer.raw() for buffer in buffers]


def block_layout(stream: bytes, buffers: list[memoryview]) -> tuple[list[int], int]:
    """The header's cells and the block's size for `pickled_parts`' output."""
    header = [0, len(stream), len(buffers)]
    offset = aligned(8 * (3 + 2 * len(buffers)))
    header[0] = offset
    offset = aligned(offset + len(stream))
    for buffer in buffers:
        header += [offset, buffer.nbytes]
        offset = aligned(offset + buffer.nbytes)
    return header, max(offset, 64)


def write_block(target: np.ndarray, header: list[int], stream: bytes,
                buffers: list[memoryview]) -> None:
    """Lay out a `block_layout` into `target` (uint8, writeable, large enough)."""
    target[:8 * len(header)] = np.array(header, np.int64).view(np.uint8)
    target[header[0]:header[0] + len(stream)] = np.frombuffer(stream, np.uint8)
    for i, buffer in enumerate(buffers):
        offset, nbytes = header[3 + 2 * i], header[4 + 2 * i]
        target[offset:offset + nbytes] = np.frombuffer(buffer, np.uint8)


def read_block(block: np.ndarray | bytes | memoryview,
               known: Mapping[str, Any] | None = None) -> Any:
    """Unpickle a block `write_block` laid out; its arrays are read-only views of `block`
    (which they keep alive), not copies. `known` resolves the persistent ids the pickler
    gave objects the reader already has."""
    data = np.frombuffer(block, np.uint8) if not isinstance(block, np.ndarray) else block
    count = int(data[16:24].view(np.int64)[0])
    header = data[:8 * (3 + 2 * count)].view(np.int64)
    start, length = int(header[0]), int(header[1])
    buffers = [data[int(header[3 + 2 * i]):int(header[3 + 2 * i]) + int(header[4 + 2 * i])]
               for i in range(count)]
    for buffer in buffers:
        buffer.flags.writeable = False
    unpickler = pickle.Unpickler(io.BytesIO(memoryview(data[start:start + length])),
                                 buffers=buffers)
    unpickler.persistent_load = partial(_known, known or {})  # type: ignore[method-assign]
    return unpickler.load()


def _known(known: Mapping[str, Any], pid: Any) -> Any:
    if pid not in known:
        raise pickle.UnpicklingError(f"the pickle names {pid!r}, which this reader lacks")
    return known[pid]
