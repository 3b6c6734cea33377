"""The members of a session zip, read as the writer writes them and nothing else.

gradbox writes stored (uncompressed) members with plain ASCII names and no flag bits, each
name once, each an .npy array with a version 1.0 header (or the manifest). So a reader
that accepts only that can bound everything by the file's own size before it reads a
byte: no compression means no bomb (a member's real size is its stored size, checked
against the archive), and an .npy header is parsed and checked -- dtype, shape, size --
before any array is made. Every refusal is a SessionError naming the member.
"""

from __future__ import annotations

import re
import struct
import zipfile
from typing import IO, Any

import numpy as np

from gradbox.files.session_json import SessionError

# Python's zipfile sets 0x800 for a non-ASCII name; gradbox's names are ASCII, but a
# session renamed by another tool may carry it harmlessly.
_ALLOWED_FLAGS = 0x800
_FLAG_NAMES = {0x1: "encrypted", 0x8: "sizes after the data", 0x40: "strongly encrypted",
               0x2000: "encrypted directory"}
_METHODS = {8: "deflate", 9: "deflate64", 12: "bzip2", 14: "lzma", 93: "zstandard", 95: "xz"}
_NAME = re.compile(r"^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*$")
_NPY_HEADER_MAX = 4096  # numpy writes 64-byte-aligned headers; ours are about 128 bytes
# What zipfile raises on damaged data, besides its own BadZipFile.
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
               struct.error, NotImplementedError, RuntimeError, OverflowError, KeyError)


class SessionZip:
    """A session zip's members, checked as a whole on opening, each read at most once."""

    def __init__(self, file: IO[bytes], file_size: int, max_total: int) -> None:
        try:
            self.z = zipfile.ZipFile(file)
        except UnicodeDecodeError:
            raise SessionError("a member's name is not UTF-8 text: this is not a file "
                               "gradbox wrote") from None
        except _ZIP_ERRORS as error:
            raise SessionError(f"not a session file, or truncated: {error}") from None
        self.infos: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in self.z.infolist():
            name = info.filename
            if not _NAME.match(name):
                raise SessionError(f"the member name {name[:60]!r} is not one gradbox writes")
            if name in self.infos:
                raise SessionError(f"{name} appears twice in the file")
            flags = info.flag_bits & ~_ALLOWED_FLAGS
            if flags:
                what = ", ".join(v for k, v in _FLAG_NAMES.items() if flags & k) or \
                    f"flag bits 0x{flags:x}"
                raise SessionError(f"{name} is stored with {what}; gradbox writes plain "
                                   "members only")
            if info.compress_type != zipfile.ZIP_STORED:
                method = _METHODS.get(info.compress_type, f"method {info.compress_type}")
                raise SessionError(f"{name} is compressed ({method}); gradbox stores members "
                                   "uncompressed and opens only such files")
            if info.file_size != info.compress_size or \
                    info.header_offset + info.compress_size > file_size:
                raise SessionError(f"{name} claims {info.file_size:,} bytes but the file "
                                   f"holds {min(info.compress_size, file_size):,} for it: it "
                                   "is damaged")
            total += info.file_size
            self.infos[name] = info
        if total > max_total:
            raise SessionError(f"the session unpacks to {total / 2**20:.0f} MB; at most "
                               f"{max_total // 2**20} MB can be opened")
        self.used: set[str] = set()

    def __enter__(self) -> SessionZip:
        return self

    def __exit__(self, *_: object) -> None:
        self.z.close()

    @property
    def names(self) -> set[str]:
        return set(self.infos)

    def has(self, name: str) -> bool:
        return name in self.infos

    def size(self, name: str) -> int:
        return self.infos[name].file_size

    def bytes(self, name: str, limit: int) -> bytes:
        """The member's bytes, at most `limit` of them (its real size is its stored size,
        checked on opening; the read is bounded anyway)."""
        if name not in self.infos:
            raise SessionError(f"the file has no {name}: it is incomplete")
        self.used.add(name)
        info = self.infos[name]
        if info.file_size > limit:
            raise SessionError(f"{name} is {info.file_size:,} bytes; at most {limit:,} are "
                               "expected")
        try:
            with self.z.open(info) as member:
                data = member.read(limit + 1)
        except _ZIP_ERRORS as error:
            raise SessionError(f"{name} cannot be read: {error}") from None
        if len(data) != info.file_size:
            raise SessionError(f"{name} holds {len(data):,} bytes, not the {info.file_size:,} "
                               "its header says: the file is damaged")
        return data

    def array(self, name: str, dtype: Any, shape: tuple[int, ...] | None,
              limit: int = 0) -> np.ndarray:
        """The array `name`, which must have this dtype and shape (None: any 1-D array of
        at most `limit` bytes). Its header is checked before the data is touched; the
        array is read-only."""
        want = np.dtype(dtype)
        if shape is not None:
            limit = int(np.prod(shape, dtype=object)) * want.itemsize
        if name not in self.infos:
            raise SessionError(f"the file has no {name}: it is incomplete")
        if self.size(name) > limit + _NPY_HEADER_MAX:
            expected = f"shape {shape}" if shape is not None else f"at most {limit:,} bytes"
            raise SessionError(f"{name} is {self.size(name):,} bytes, too large for "
                               f"{want.name} values of {expected}")
        raw = self.bytes(name, limit + _NPY_HEADER_MAX)
        got_dtype, got_shape, offset = _npy_header(name, raw)
        if got_dtype.kind != want.kind or got_dtype.itemsize != want.itemsize:
            raise SessionError(f"{name} must hold {want.name} values, got {got_dtype.name}"
                               f" ({got_dtype.str})")
        if shape is None:
            if len(got_shape) != 1 or got_shape[0] * want.itemsize > limit:
                raise SessionError(f"{name} must be a list of at most "
                                   f"{limit // want.itemsize:,} values, got shape {got_shape}")
            shape = got_shape
        if got_shape != shape:
            raise SessionError(f"{name} must have shape {shape}, got {got_shape}")
        count = int(np.prod(shape, dtype=np.int64))
        if len(raw) - offset != count * want.itemsize:
            raise SessionError(f"{name} holds {len(raw) - offset:,} bytes of data; shape "
                               f"{shape} needs {count * want.itemsize:,}")
        array = np.frombuffer(raw, got_dtype, count, offset).reshape(shape)
        if got_dtype != want:  # the other byte order, as a machine of that order writes it
            array = array.astype(want)
            array.flags.writeable = False
        return array


# The header numpy writes, exactly: no other dict, no expression, nothing to evaluate.
_NPY_DICT = re.compile(r"\{'descr': '(?P<descr>[<>|=][fib][1248])', 'fortran_order': "
                       r"(?P<fortran>True|False), 'shape': \((?P<shape>(?:\d{1,12}, ?)*"
                       r"(?:\d{1,12})?)\), \} *\n")


def _npy_header(name: str, raw: bytes) -> tuple[np.dtype, tuple[int, ...], int]:
    """(dtype, shape, data offset) of an .npy member, from its header alone."""
    if raw[:6] != b"\x93NUMPY" or len(raw) < 10:
        raise SessionError(f"{name} is not a numpy array (no .npy header)")
    major = raw[6]
    if major == 1:
        length, start = int.from_bytes(raw[8:10], "little"), 10
    elif major in (2, 3) and len(raw) >= 12:
        length, start = int.from_bytes(raw[8:12], "little"), 12
    else:
        raise SessionError(f"{name}: version {major} of the .npy format is not one gradbox "
                           "writes")
    if length > _NPY_HEADER_MAX or start + length > len(raw):
        raise SessionError(f"{name}: its .npy header is damaged ({length:,} bytes long)")
    header = raw[start:start + length]
    m = _NPY_DICT.fullmatch(header.decode("latin-1"))
    if m is None:
        raise SessionError(f"{name}: its .npy header is not one numpy writes: "
                           f"{header[:80].decode('latin-1')!r}")
    dtype = np.dtype(m["descr"])
    shape = tuple(int(n) for n in m["shape"].replace(" ", "").split(",") if n)
    if m["fortran"] == "True" and len(shape) > 1:
        raise SessionError(f"{name} is stored column by column (Fortran order); gradbox "
                           "writes rows")
    return dtype, shape, start + length
