"""Points as CSV: written back as `x,y,label` (or `x,y,target`), read strictly.

A file is read whole or refused with the line and the cell at fault; a plain body goes
through one regular expression and numpy's C parser, anything else row by row. Bounds
keep a hostile file from hanging or exhausting the app (MAX_CSV_BYTES, MAX_CSV_LINES,
MAX_LINE_CHARS), and reading reports progress and may be cancelled.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import os
import re
from array import array
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from gradbox.files.session_json import NotAFileError, open_plain_file
from gradbox.training.datasets import (
    MAX_CLASSES,
    MAX_COORDINATE,
    MAX_POINTS,
    Dataset,
    DatasetError,
    split,
)

# A CSV of MAX_POINTS points written with full float precision is ~45 MB; blank lines
# are skipped, but a file of nothing else is refused at once rather than read.
MAX_CSV_BYTES = 128 * 2**20
MAX_CSV_LINES = MAX_POINTS + 100_000


# --- CSV ------------------------------------------------------------------------------
CSV_HEADER = ("x", "y", "label")
# A regression dataset's file: a float target in place of the class.
REGRESSION_CSV_HEADER = ("x", "y", "target")


def to_csv(dataset: Dataset) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if dataset.targets is not None:
        writer.writerow(REGRESSION_CSV_HEADER)
        for (x, y), t in zip(dataset.points.tolist(), dataset.targets.tolist()):
            writer.writerow([repr(x), repr(y), repr(t)])
        return out.getvalue()
    writer.writerow(CSV_HEADER)
    for (x, y), label in zip(dataset.points.tolist(), dataset.labels.tolist()):
        writer.writerow([repr(x), repr(y), label])
    return out.getvalue()


# Numbers as a person writes them: no `1_0` (Python's digit separator), no Unicode digits,
# no hex; nan and inf are read so that the message can say they are not finite.
_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)",
                     re.IGNORECASE)
CSV_COLUMNS = {"label": CSV_HEADER, "target": REGRESSION_CSV_HEADER}
# Reading reports progress (and may be cancelled) every so many rows.
PROGRESS_ROWS = 20_000
Progress = Callable[[float], bool]  # fraction read -> go on?


class Cancelled(Exception):  # noqa: N818 (not an error: the person asked for it)
    """Reading was cancelled by its progress callback."""


# A whole body of plain rows (gradbox's own export, a spreadsheet's): checked by one
# regular expression and read by numpy's C parser, 1,000,000 rows in about a second
# where the row-by-row reader took 11-20 s. Anything else -- quotes, blank lines, a bad
# cell -- goes row by row, which names the line at fault.
# One way only to match a run of digits: `[0-9]+\.?[0-9]*` could split a run between its
# two quantifiers in every way, and a 20 MB line of digits never finished (cubic).
_CELL = r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*"
_FAST_ROW = {"label": re.compile(rf"^{_CELL},{_CELL},[ \t]*[0-9]{{1,9}}[ \t]*\r?$", re.M),
             "target": re.compile(rf"^{_CELL},{_CELL},{_CELL}\r?$", re.M)}


# The fast path reads about this many characters at a time (cut at a line's end) and
# asks `progress` between pieces, so Cancel stops it too (about 50,000 rows a piece).
FAST_CHUNK_CHARS = 1 << 20


# No row of three numbers is longer than this; a line that is is refused as soon as it is
# seen (the row-by-row reader's csv module refuses a cell past the same length). Matched
# against the row pattern, a 20 MB line of digits took 1.2-1.9 s before being refused.
MAX_LINE_CHARS = csv.field_size_limit()


def _pieces(text: str, start: int, size: int) -> list[str]:
    """`text` from `start` cut into pieces of about `size` characters, each ending at a
    line's end. A line longer than MAX_LINE_CHARS that ends a piece is refused before it
    is copied (one inside a piece is at most `size` long: the row pattern fails it fast)."""
    pieces = []
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        if end - start > size + MAX_LINE_CHARS:
            last = text.rfind("\n", start, start + size) + 1 or start
            length = end - last - text.endswith("\n", 0, end)
            if length > MAX_LINE_CHARS:
                raise DatasetError(f"line {text.count(chr(10), 0, last) + 1}: "
                                   f"{length:,} characters on one line; a row of points "
                                   f"is never that long (at most {MAX_LINE_CHARS:,})")
        pieces.append(text[start:end])
        start = end
    return pieces


def _lines(text: str) -> Iterator[str]:
    """The lines of `text`, each with its end, one at a time: what csv.reader reads.
    (Over io.StringIO(text) it held 4 bytes a character: 80 MB for a 20 MB file.)"""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def _fast_rows(text: str, kind: str, header: list[str], test_ratio: float, seed: int,
               progress: Progress | None = None) -> Dataset | None:
    """The dataset, if every row after the header is a plain row of three numbers that
    passes every check; else None (the row-by-row reader then finds what is wrong).
    Read a piece at a time, asking `progress` between pieces: False raises Cancelled."""
    if [cell.strip().lower() for cell in header] != list(CSV_COLUMNS[kind]):
        return None
    start = text.find("\n") + 1
    pieces = _pieces(text, start, FAST_CHUNK_CHARS) if start else []
    lines = sum(piece.count("\n") for piece in pieces) + (
        bool(pieces) and not pieces[-1].endswith("\n"))
    total = 2 * len(pieces)  # each piece is checked, then parsed
    rows = 0
    for i, piece in enumerate(pieces):  # every line a plain row?
        # (not before the first: a file that is not plain goes row by row from 0)
        if progress is not None and i and not progress(i / total):
            raise Cancelled
        rest, count = _FAST_ROW[kind].subn("", piece)
        if rest.strip("\r\n"):
            return None  # a line that is not a plain row (or is blank): read row by row
        rows += count
    if rows != lines or rows < 2:
        return None
    if rows > MAX_POINTS:  # every line a row: the first one too many is this one
        raise DatasetError(f"line {MAX_POINTS + 2}: the file has more than {MAX_POINTS:,} "
                           "points, the most a session can hold; split it or thin it out")
    parsed = []
    for i, piece in enumerate(pieces):
        if progress is not None and not progress((len(pieces) + i) / total):
            raise Cancelled
        try:
            parsed.append(np.loadtxt(io.StringIO(piece), delimiter=",", dtype=np.float64,
                                     ndmin=2))
        except ValueError:
            return None
    data = np.concatenate(parsed) if parsed else np.empty((0, 3))
    if data.shape != (rows, 3) or not np.all(np.isfinite(data)) or \
            np.abs(data[:, :2]).max() > MAX_COORDINATE:
        return None
    points, third = np.ascontiguousarray(data[:, :2]), data[:, 2].copy()
    if kind == "target":
        return Dataset(points, (third > 0).astype(np.int64), split(rows, test_ratio, seed),
                       2, third, bool(np.array_equal(third, points[:, 1])))
    if third.max() >= MAX_CLASSES:
        return None
    labels = third.astype(np.int64)
    present = np.unique(labels)
    if len(present) < 2:
        return None
    return Dataset(points, labels, split(rows, test_ratio, seed), int(present.max()) + 1)


def _number(cell: str) -> float | None:
    cell = cell.strip()
    return float(cell) if _NUMBER.fullmatch(cell) else None


def _header(row: list[str]) -> tuple[str, list[int]]:
    """('label' or 'target', the columns of x, y and the third), or a DatasetError."""
    header = [cell.strip().lower() for cell in row]
    while header and header[-1] == "":  # a spreadsheet's empty columns at the end
        header.pop()
    for i, name in enumerate(header):
        if name in header[:i]:
            raise DatasetError(f"line 1: the column {name!r} appears twice")
    kind = "target" if "target" in header and "label" not in header else "label"
    missing = [name for name in CSV_COLUMNS[kind] if name not in header]
    if missing:
        raise DatasetError(f"line 1: missing column {', '.join(missing)}; "
                           f"expected a header 'x,y,label', got {_clipped(','.join(row), 60)}")
    extra = [name for name in header if name not in CSV_COLUMNS[kind]]
    if extra:
        raise DatasetError(f"line 1: unknown column {_clipped(extra[0])}; gradbox reads "
                           f"{','.join(CSV_COLUMNS[kind])} and nothing else")
    return kind, [header.index(name) for name in CSV_COLUMNS[kind]]


def from_csv(text: str, test_ratio: float = 0.0, seed: int = 0,
             progress: Progress | None = None) -> Dataset:
    """Parse `x,y,label` (or `x,y,target`) rows under that header. Errors name the line
    at fault. `progress(fraction)` is called every PROGRESS_ROWS rows (plain rows: every
    piece of FAST_CHUNK_CHARS); False cancels (raises Cancelled)."""
    # Spreadsheet programs often start UTF-8 files with a byte-order mark.
    text = text.removeprefix("\ufeff")
    lines = text.count("\n") + (not text.endswith("\n"))
    if lines > MAX_CSV_LINES:
        raise DatasetError(f"the file has {lines:,} lines; at most {MAX_POINTS:,} points "
                           f"(and {MAX_CSV_LINES - MAX_POINTS:,} blank lines) can be imported")
    reader = csv.reader(_lines(text))
    try:
        first = next(reader, [])
    except csv.Error as error:
        raise DatasetError(f"line {reader.line_num}: not valid CSV ({error})") from None
    if not any(cell.strip() for cell in first):
        raise DatasetError("line 1: the file is empty; expected a header 'x,y,label'")
    kind, columns = _header(first)
    fast = _fast_rows(text, kind, first, test_ratio, seed, progress)
    if fast is not None:
        return fast
    width = len(columns)
    # Three arrays of doubles: 24 bytes a point (a list of tuples took 136).
    xs, ys, ts = array("d"), array("d"), array("d")
    last_line = 1
    for line, row in enumerate(_rows(reader), start=2):
        if progress is not None and line % PROGRESS_ROWS == 0 and not progress(line / lines):
            raise Cancelled
        if not any(cell.strip() for cell in row):
            continue
        last_line = line
        if len(xs) == MAX_POINTS:
            raise DatasetError(f"line {line}: the file has more than {MAX_POINTS:,} points, "
                               f"the most a session can hold; split it or thin it out")
        if len(row) < width:
            raise DatasetError(f"line {line}: expected {width} values, got {len(row)}")
        extra = [cell for cell in row[width:] if cell.strip()]
        if extra:
            raise DatasetError(f"line {line}: expected {width} values, got {len(row)} (an "
                               f"extra value {_clipped(extra[0])})")
        x, y = _number(row[columns[0]]), _number(row[columns[1]])
        third = row[columns[2]].strip()
        if kind == "target":
            t = _number(third)
            if x is None or y is None or t is None:
                raise DatasetError(f"line {line}: x, y and target must be numbers, got "
                                   f"{', '.join(_clipped(row[c]) for c in columns)}")
            if not all(math.isfinite(v) for v in (x, y, t)):
                raise DatasetError(f"line {line}: x, y and target must be finite")
        else:
            if x is None or y is None:
                raise DatasetError(f"line {line}: x and y must be numbers, got "
                                   f"{_clipped(row[columns[0]])}, {_clipped(row[columns[1]])}")
            if not (math.isfinite(x) and math.isfinite(y)):
                raise DatasetError(f"line {line}: x and y must be finite, got {x}, {y}")
            # isdigit alone accepts '²' and other digits int() cannot read; a label of
            # thousands of digits is no class either (and int() refuses past 4,300 digits).
            if not (third.isascii() and third.isdigit() and len(third) <= 9) or (
                    int(third) >= MAX_CLASSES):
                raise DatasetError(f"line {line}: label must be a class number "
                                   f"0..{MAX_CLASSES - 1}, got {_clipped(third)}")
            t = float(third)
        if max(abs(x), abs(y)) > MAX_COORDINATE:
            raise DatasetError(f"line {line}: x and y must lie within ±{MAX_COORDINATE:g}, "
                               f"got {x:g}, {y:g}")
        xs.append(x)
        ys.append(y)
        ts.append(t)
    if len(xs) < 2:
        raise DatasetError(f"line {last_line + 1}: the file has {len(xs)} data rows; "
                           "at least 2 are needed")
    points = np.column_stack([np.frombuffer(xs), np.frombuffer(ys)])
    third_column = np.frombuffer(ts).copy()
    if kind == "target":
        return Dataset(points, (third_column > 0).astype(np.int64),
                       split(len(points), test_ratio, seed), 2, third_column,
                       bool(np.array_equal(third_column, points[:, 1])))
    labels = third_column.astype(np.int64)
    present = sorted(set(labels.tolist()))
    if len(present) < 2:
        raise DatasetError(f"lines 2-{last_line}: every row has label {present[0]}; "
                           "at least two classes are needed")
    return Dataset(points, labels, split(len(labels), test_ratio, seed), max(present) + 1)


def _rows(reader: Iterator[list[str]]) -> Iterator[list[str]]:
    """The rows after the header, one at a time (a huge file is refused part way)."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            raise DatasetError(f"line {getattr(reader, 'line_num', '?')}: not valid CSV "
                               f"({error})") from None
        yield row


def _clipped(cell: str, keep: int = 24) -> str:
    """A cell quoted for a message, cut short: a message must fit on screen."""
    if len(cell) <= keep:
        return repr(cell)
    return f"{cell[:keep]!r}… ({len(cell):,} characters)"


def save_csv(dataset: Dataset, path: str | Path) -> None:
    Path(path).write_text(to_csv(dataset), encoding="utf-8")


def csv_text(data: bytes, name: str = "the file") -> str:
    """A CSV file's bytes as text: UTF-8 (with or without a byte-order mark), UTF-16 or
    UTF-32 with one (Excel's "Unicode text"), UTF-16 without one, else Windows-1252 /
    Latin-1 (every byte is a character there; a stray one is then named in a cell)."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"),
                       (codecs.BOM_UTF8, "utf-8-sig")):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as error:
                raise DatasetError(f"{name} starts as {codec.upper()} text but byte "
                                   f"{error.start:,} is not") from None
    head = data[:4096]
    if head.count(b"\0") * 3 > len(head):  # every other byte: UTF-16 without a mark
        codec = "utf-16-le" if head[1::2].count(0) > head[::2].count(0) else "utf-16-be"
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            raise DatasetError(f"{name}: not a text file") from None
    if b"\0" in data:
        line = data[:data.index(b"\0")].count(b"\n") + 1
        raise DatasetError(f"line {line}: not a text file (it holds a NUL byte)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def load_csv(path: str | Path, test_ratio: float = 0.0, seed: int = 0,
             progress: Progress | None = None) -> Dataset:
    """Read a CSV file of points (see from_csv), at most MAX_CSV_BYTES of it."""
    path = Path(path)
    try:
        plain = open_plain_file(path)
    except NotAFileError as error:
        raise DatasetError(str(error)) from None
    with plain as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_CSV_BYTES:
            raise DatasetError(f"{path.name} is {size / 2**20:,.0f} MB; at most "
                               f"{MAX_CSV_BYTES // 2**20} MB ({MAX_POINTS:,} points) can be "
                               "imported")
        # Counted a megabyte at a time before the file is held whole, and refused at the
        # first megabyte past the limit: 100 MB of blank lines is refused without 100 MB
        # of bytes and text in memory, after reading 2 MB of it.
        lines = 0
        for chunk in iter(lambda: f.read(1 << 20), b""):
            lines += chunk.count(b"\n")
            if lines > MAX_CSV_LINES:
                raise DatasetError(f"{path.name} has more than {MAX_CSV_LINES:,} lines; at "
                                   f"most {MAX_POINTS:,} points (and "
                                   f"{MAX_CSV_LINES - MAX_POINTS:,} blank lines) can be "
                                   "imported")
        f.seek(0)
        data = f.read(min(size, MAX_CSV_BYTES) + 1)  # (asking for more reserves it)
    if len(data) > MAX_CSV_BYTES:
        raise DatasetError(f"{path.name} is over {MAX_CSV_BYTES // 2**20} MB")
    if lines > MAX_POINTS + 1 and b'"' not in data and b"\0" not in data:
        # Past the header, every line that is not blank is a point or an error: more of
        # them than a session holds is refused before a row is read (1,000,001 plain rows
        # were all checked first: 0.35 s quiet, 1.25 s at load 8). Quotes can put one
        # row on two lines, and UTF-16 has other line ends: those files are read.
        rows = _lines_not_blank(data) - 1
        if rows > MAX_POINTS:
            raise DatasetError(f"{path.name} has {rows:,} rows after its header (blank "
                               f"lines not counted): more than {MAX_POINTS:,} points, the "
                               "most a session can hold; split it or thin it out")
    return from_csv(csv_text(data, path.name), test_ratio, seed, progress)


# Bytes a blank line may hold (every cell empty once stripped): ASCII white space and
# commas, and any byte of a non-ASCII character (some are spaces, as U+00A0 is).
_MAYBE_BLANK = bytes([9, 11, 12, 13, 32, 44]) + bytes(range(128, 256))


def _lines_not_blank(data: bytes, chunk: int = 1 << 20) -> int:
    """How many lines of `data` hold a byte no blank line holds (a megabyte at a time)."""
    count, after_newline = 0, True
    for start in range(0, len(data), chunk):
        kept = data[start:start + chunk].translate(None, _MAYBE_BLANK)
        if not kept:
            continue
        newline = np.frombuffer(kept, np.uint8) == 10
        before = np.empty_like(newline)
        before[0], before[1:] = after_newline, newline[:-1]
        count += int(np.count_nonzero(newline & ~before))  # a line's end after its text
        after_newline = bool(newline[-1])
    return count + (not after_newline)  # a last line without its end
