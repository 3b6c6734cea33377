"""Hostile session files, CSVs and lesson files, built from valid seeds: the corpus behind
issues 23 and 31.

`build(folder)` writes every file and returns what each one is; `python
benchmarks/bench_hostile.py` loads each in a fresh process and tabulates outcome, time and
peak memory; tests/test_hostile_files.py loads the bombs and fuzzes mutations of the seeds.

Zips are written by hand (`zip_bytes`), not with zipfile, so that a member can lie: a
size that is not the real one, a compression method or flag gradbox never writes, a name
that is not UTF-8, the same name twice.
"""

from __future__ import annotations

import bz2
import io
import json
import lzma
import os
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

STORED, DEFLATED, BZIP2, LZMA = 0, 8, 12, 14


@dataclass
class Member:
    name: bytes
    data: bytes  # as stored in the zip (compressed, if method says so)
    method: int = STORED
    flags: int = 0
    size: int | None = None  # the uncompressed size the headers declare (None: real)
    crc: int | None = None


def zip_bytes(members: list[Member]) -> bytes:
    """A zip of `members` exactly as given: no size, flag or method is checked."""
    out = io.BytesIO()
    central = []
    for m in members:
        crc = m.crc if m.crc is not None else zlib.crc32(m.data) if m.method == STORED else 0
        size = m.size if m.size is not None else len(m.data)
        offset = out.tell()
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, m.flags, m.method, 0, 0,
                              crc, len(m.data), size, len(m.name), 0))
        out.write(m.name)
        out.write(m.data)
        central.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, m.flags,
                                   m.method, 0, 0, crc, len(m.data), size, len(m.name), 0, 0,
                                   0, 0, 0, offset) + m.name)
    start = out.tell()
    for c in central:
        out.write(c)
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(central), len(central),
                          out.tell() - start, start, 0))
    return out.getvalue()


def npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.lib.format.write_array(out, np.ascontiguousarray(array), allow_pickle=False)
    return out.getvalue()


def npy_header(descr: str, shape: tuple[int, ...]) -> bytes:
    """Only the header of an .npy file: what a file claiming `shape` starts with."""
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": descr, "fortran_order": False,
                                               "shape": shape})
    return out.getvalue()


def seed_members(steps: int = 5, **config: object) -> tuple[dict, dict[str, bytes]]:
    """The manifest and the members' bytes of a valid session saved by gradbox."""
    import tempfile
    import zipfile

    from gradbox.files.sessions import save_session
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer

    trainer = Trainer(TrainingConfig(**{"n_samples": 40, **config}))  # type: ignore[arg-type]
    for _ in range(steps):
        trainer.step()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "seed.gradbox"
        save_session(trainer, path)
        with zipfile.ZipFile(path) as z:
            members = {name: z.read(name) for name in z.namelist()}
    return json.loads(members["manifest.json"]), members


def session(manifest: dict, members: dict[str, bytes], **change: Callable[[bytes], Member]
            ) -> bytes:
    items = {**members, "manifest.json": json.dumps(manifest).encode()}
    return zip_bytes([Member(name.encode(), data) for name, data in items.items()])


def _deflate_stream(total: int, chunk: bytes = b"\0" * (1 << 20)) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    parts = [c.compress(chunk) for _ in range(total // len(chunk))]
    parts.append(c.flush())
    return b"".join(parts)


def _empty_run_arrays(p: int, optimizer: list[str], prefix: str, count: int
                      ) -> dict[str, bytes]:
    out = {f"{prefix}/params.npy": npy(np.zeros((count, p))),
           f"{prefix}/grads.npy": npy(np.zeros((count, p)))}
    for key in optimizer:
        out[f"{prefix}/optimizer.{key}.npy"] = (npy(np.zeros(count, np.int64)) if key == "steps"
                                                else npy(np.zeros((count, p))))
    return out


def network_session(hidden: list[int]) -> bytes:
    """A consistent, stored session of a fresh (step 0) network with these hidden layers."""
    from gradbox.autograd.nn import parameter_count
    from gradbox.training.history import BOOL_FIELDS, INT_FIELDS, RECORD_FIELDS

    manifest, members = seed_members(0)
    manifest["config"]["hidden"] = hidden
    sizes = [2, *hidden, 1]
    p = parameter_count(sizes)
    manifest.update(parameters=p, steps=0, checkpoints=1, ghosts=0)
    out = {k: v for k, v in members.items() if k.startswith("datasets/")}
    out["initial_params.npy"] = npy(np.zeros(p))
    for name in RECORD_FIELDS:
        dtype = np.int64 if name in INT_FIELDS else np.bool_ if name in BOOL_FIELDS else float
        out[f"history/{name}.npy"] = npy(np.zeros(0, dtype))
    out["checkpoints/step.npy"] = npy(np.zeros(1, np.int64))
    out["checkpoints/lr.npy"] = npy(np.full(1, 0.5))
    out["checkpoints/has_ghost.npy"] = npy(np.zeros(1, bool))
    out.update(_empty_run_arrays(p, manifest["optimizer"], "checkpoints", 1))
    out.update(_empty_run_arrays(p, manifest["optimizer"], "ghosts", 0))
    manifest["events"] = manifest["events"][:1]
    return session(manifest, out)


def long_history_session(steps: int, method: int) -> bytes:
    """A consistent session claiming `steps` steps of zeros (a valid run's shape): with
    deflate, ~1 GB unpacks from a few MB."""
    from gradbox.training.history import BOOL_FIELDS, INT_FIELDS, RECORD_FIELDS

    manifest, members = seed_members(0)
    manifest["steps"] = steps
    out = []
    for name, data in members.items():
        if name.startswith("history/") or name == "manifest.json":
            continue
        out.append(Member(name.encode(), data))
    for name in RECORD_FIELDS:
        dtype = np.dtype(np.int64 if name in INT_FIELDS else np.bool_ if name in BOOL_FIELDS
                         else float)
        head = npy_header(dtype.str, (steps,))
        body_size = steps * dtype.itemsize
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        stream = c.compress(head) + b"".join(
            c.compress(b"\0" * (1 << 20)) for _ in range(body_size >> 20))
        stream += c.compress(b"\0" * (body_size & ((1 << 20) - 1))) + c.flush()
        crc = zlib.crc32(head)
        zeros = b"\0" * (1 << 20)
        for _ in range(body_size >> 20):
            crc = zlib.crc32(zeros, crc)
        crc = zlib.crc32(b"\0" * (body_size & ((1 << 20) - 1)), crc)
        out.append(Member(f"history/{name}.npy".encode(), stream, method, crc=crc,
                          size=len(head) + body_size))
    out.insert(0, Member(b"manifest.json", json.dumps(manifest).encode()))
    return zip_bytes(out)


def _with(members: dict[str, bytes], manifest: dict, replace: dict[str, Member],
          extra: list[Member] | None = None) -> bytes:
    items = {**members, "manifest.json": json.dumps(manifest).encode()}
    out = [replace.get(name, Member(name.encode(), data)) for name, data in items.items()]
    return zip_bytes(out + (extra or []))


@dataclass
class Case:
    name: str
    kind: str  # "session", "csv", "lesson" (opened) or "lesson-claims" (opened, checked)
    what: str
    bomb: bool = False  # refused within 1 s and 100 MB, after the fix
    expect: str = ""  # a part of the message it must give (after issue 31's fixes)


def lesson_text() -> str:
    """A valid lesson file's text: the moons lesson as File > Open lesson reads it."""
    from gradbox.teaching.lesson_files import dump_lesson
    from gradbox.teaching.lessons import lesson

    return dump_lesson(lesson("moons"))


def padded_header(spaces: int) -> str:
    """A valid TOML lesson with one table header padded with spaces (`[   x   ."y"]`):
    the header patterns of issue 31 took cubic time on it."""
    pad = " " * spaces
    return lesson_text() + f'\n[{pad}x{pad}."y"]\nz = 1\n'


def lesson_cases() -> list[tuple[Case, bytes | None]]:
    """Lesson files from a stranger (issue 31, items 1-7): each Case with its bytes (None:
    a FIFO is made in its place)."""
    good = lesson_text()
    end = len(good.splitlines())
    out: list[tuple[Case, bytes | None]] = []

    def add(name: str, what: str, text: str | bytes | None, bomb: bool = True,
            expect: str = "", kind: str = "lesson") -> None:
        data = text.encode() if isinstance(text, str) else text
        out.append((Case(name, kind, what, bomb, expect), data))

    add("lesson_valid", "a valid lesson (control)", good, False)
    for spaces, size in ((500, "1 KB"), (2000, "4 KB"), (6000, "12 KB")):
        add(f"lesson_header_{spaces}", f"a header padded with {spaces:,} spaces ({size} of "
            "padding)", padded_header(spaces), expect=f"line {end + 2}")
    add("lesson_inline_400", "400 nested inline tables",
        good + "deep = " + "{ b = " * 400 + "1" + " }" * 400, expect=f"line {end + 1}")
    add("lesson_arrays_2000", "2,000 nested arrays", good + "deep = " + "[" * 2000 +
        "]" * 2000, expect=f"line {end + 1}")
    add("lesson_headers_2000", "a table header of 2,000 nested tables",
        good + "[" + ".".join(["a"] * 2000) + "]\nb = 1\n", expect=f"line {end + 1}")
    misspelt = good.replace("[[steps.claims]]", "[[step.claims]]", 1)
    line = next(i for i, row in enumerate(misspelt.splitlines(), 1) if "[[step.claims]]" in row)
    add("lesson_misspelt_table", f"[[step.claims]] misspelt on line {line}", misspelt, False,
        expect=f"line {line}, step: unknown field 'step'")
    add("lesson_fifo", "a FIFO named lesson.toml", None, expect="pipe")
    out.append((Case("session_fifo", "session", "a FIFO named .gradbox", True, "pipe"), None))
    out.append((Case("csv_fifo", "csv", "a FIFO named .csv", True, "pipe"), None))
    add("lesson_2mb", "2 MB of comments", good + "# padding\n" * 200_000, expect="over 1024 KB")
    add("lesson_long_line", "one line of 200,000 characters",
        good + 'note = "' + "x" * 200_000 + '"\n', expect=f"line {end + 1}")
    add("lesson_seed_1e29", "seed = 1e29", good.replace("seed = 0", "seed = " + "1" + "0" * 29,
                                                        1), expect="seed must be")
    payload = '<img src="/etc/passwd"> <a href="https://example.com">click</a>'
    add("lesson_rich_text", "HTML in the title and a claim (shown as plain text)",
        good.replace('title = "', f'title = "{payload.replace(chr(34), chr(39))} ', 1), False)
    claim = good.replace("at_step = 100\n", "at_step = 1000000000\n", 1)
    add("lesson_claim_1e9", "a claim read at step 1,000,000,000 (opened and checked)", claim,
        expect="at_step", kind="lesson-claims")
    heavy = good.replace("n_samples = 100", "n_samples = 40000", 1).replace(
        "hidden = [8, 8]", "hidden = [48, 48]", 1)
    add("lesson_claims_heavy", "40,000 points on a 48x48 network (opened and checked)",
        heavy, False, kind="lesson-claims")  # a lesson: its check runs capped, cancellable
    return out


def build(folder: Path, big: bool = True) -> list[tuple[Case, Path]]:
    """Write the corpus to `folder`. `big=False` leaves out the slow-to-build files (a
    1 GB deflate stream, 100 MB of text) for the test suite."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest, members = seed_members(5)
    cases: list[tuple[Case, bytes]] = []

    def add(name: str, kind: str, what: str, data: bytes, bomb: bool = False) -> None:
        cases.append((Case(name, kind, what, bomb), data))

    add("valid", "session", "a valid session (control)", session(manifest, members))
    add("deep_1000", "session", "1,000 hidden layers of 1", network_session([1] * 1000), True)
    add("deep_100k", "session", "100,000 hidden layers of 1", network_session([1] * 100_000),
        True)
    add("wide_990", "session", "a 990x990 network (legitimate, heavy)",
        network_session([990, 990]))
    add("wide_1e6", "session", "one layer of 300,000", network_session([300_000]), True)
    # Compression: gradbox writes stored members only.
    loss = "history/loss.npy"
    raw = members[loss]
    d = zlib.compressobj(9, zlib.DEFLATED, -15)
    add("deflate_member", "session", "one member deflated (honest sizes)", _with(
        members, manifest, {loss: Member(loss.encode(), d.compress(raw) + d.flush(), DEFLATED,
                                         crc=zlib.crc32(raw), size=len(raw))}), True)
    add("bzip2_member", "session", "one member bzip2", _with(members, manifest, {
        loss: Member(loss.encode(), bz2.compress(raw), BZIP2, crc=zlib.crc32(raw),
                     size=len(raw))}), True)
    lz = lzma.compress(raw, lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA1}])
    props = lzma._encode_filter_properties({"id": lzma.FILTER_LZMA1})  # type: ignore[attr-defined]
    add("lzma_member", "session", "one member lzma", _with(members, manifest, {
        loss: Member(loss.encode(), struct.pack("<BBH", 9, 4, len(props)) + props + lz, LZMA,
                     crc=zlib.crc32(raw), size=len(raw))}), True)
    add("lzma_garbage", "session", "an lzma member of garbage", _with(members, manifest, {
        loss: Member(loss.encode(), b"\x09\x04\x05\x00" + b"\xff" * 64, LZMA, size=len(raw))}),
        True)
    add("deflate_garbage", "session", "a deflate member of garbage", _with(members, manifest, {
        loss: Member(loss.encode(), b"\xff" * 64, DEFLATED, size=len(raw))}), True)
    add("unknown_method", "session", "compression method 99", _with(members, manifest, {
        loss: Member(loss.encode(), raw, 99)}), True)
    add("encrypted_flag", "session", "the encrypted flag on a member", _with(members, manifest, {
        loss: Member(loss.encode(), raw, STORED, flags=1)}), True)
    add("descriptor_flag", "session", "the data-descriptor flag", _with(members, manifest, {
        loss: Member(loss.encode(), raw, STORED, flags=8)}), True)
    add("bad_utf8_name", "session", "a member name that is not UTF-8 (flag set)", _with(
        members, manifest, {}, [Member(b"history/\xff\xfe.npy", raw, STORED, flags=0x800)]),
        True)
    add("duplicate_name", "session", "the same member twice (the last would win)", _with(
        members, manifest, {}, [Member(loss.encode(), raw)]), True)
    add("stored_size_lie", "session", "a stored member declaring 1 GB", _with(
        members, manifest, {loss: Member(loss.encode(), raw, size=2**30)}), True)
    add("stored_size_small", "session", "a stored member declaring 10 bytes", _with(
        members, manifest, {loss: Member(loss.encode(), raw, size=10)}), True)
    # .npy headers that lie
    add("npy_shape_1e13", "session", "an .npy header claiming 1e13 values (50 KB file)", _with(
        members, manifest, {"datasets/0/labels.npy": Member(
            b"datasets/0/labels.npy", npy_header("<i8", (10**13,)) + b"\0" * 50_000)}), True)
    add("npy_big_endian", "session", "a big-endian float64 array", _with(members, manifest, {
        loss: Member(loss.encode(), npy(np.zeros(5, ">f8")))}))
    add("npy_fortran", "session", "an .npy header that is not a dict", _with(
        members, manifest, {loss: Member(loss.encode(), raw[:10] + b"[1,2,3]".ljust(
            len(raw) - 10))}), True)
    add("npy_object", "session", "an object (pickle) array", _with(members, manifest, {
        loss: Member(loss.encode(), npy_header("|O", (5,)) + b"\0" * 40)}), True)
    # JSON: nesting, counts, memory
    deep = {**manifest, "stop_reason": json.loads("[" * 50 + "]" * 50)}
    add("manifest_nested_50", "session", "a manifest nested 50 deep", session(deep, members),
        True)
    nest = b"[" * 200_000 + b"]" * 200_000
    add("manifest_nested_200k", "session", "a manifest nested 200,000 deep", zip_bytes(
        [Member(b"manifest.json", nest)]), True)
    many = ("[" + ",".join(["{}"] * 4_000_000) + "]").encode()
    add("manifest_4m_objects", "session", "a 12 MB manifest of 4,000,000 empty objects",
        zip_bytes([Member(b"manifest.json", many)]), True)
    d = zlib.compressobj(9, zlib.DEFLATED, -15)
    big_events = {**manifest, "events": [[]] * 20_000_000}
    text = json.dumps(big_events, separators=(",", ":")).encode()
    add("manifest_deflated_60mb", "session", "a deflated 60 MB manifest of 20M lists (100 KB)",
        zip_bytes([Member(b"manifest.json", d.compress(text) + d.flush(), DEFLATED,
                          crc=zlib.crc32(text), size=len(text))]), True)
    events = {**manifest, "events": manifest["events"] * 200_000}
    add("events_200k", "session", "200,000 events (stored)", session(events, members), True)
    sets = {**manifest, "datasets": [manifest["datasets"][0]] * 200_000}
    add("datasets_200k", "session", "200,000 datasets listed", session(sets, members), True)
    v1 = ("[" + ",".join(["{}"] * 10_000_000) + "]").encode()
    add("v1_10m_objects", "session", "version-1 JSON: 30 MB of 10,000,000 empty objects", v1,
        True)
    v1_nest = b'{"format":"gradbox-session","version":1,"config":' + b"[" * 100_000
    add("v1_nested", "session", "version-1 JSON nested 100,000 deep", v1_nest, True)
    add("v1_long_int", "session", "version-1 JSON with a 100,000-digit number",
        b'{"version":' + b"9" * 100_000 + b"}", True)
    add("truncated", "session", "a session cut in half", session(manifest, members)[:12_000],
        True)
    add("empty", "session", "an empty file", b"", True)
    add("random", "session", "64 KB of random bytes", np.random.default_rng(0).bytes(65536),
        True)
    add("bad_crc", "session", "a member whose CRC is wrong", _with(members, manifest, {
        loss: Member(loss.encode(), raw, crc=1)}), True)
    if big:
        add("deflate_1gb_lying", "session", "a member declaring 168 bytes whose deflate "
            "stream runs on for 1 GB", _with(members, manifest, {loss: Member(
                loss.encode(), _deflate_stream(2**30), DEFLATED, crc=zlib.crc32(raw),
                size=len(raw))}), True)
        add("deflate_consistent_1gb", "session", "10M steps of history deflated: a 1 GB "
            "session in a few MB, sizes honest", long_history_session(10_000_000, DEFLATED),
            True)

    # CSV
    good = "x,y,label\n" + "".join(f"{i / 10},{-i / 10},{i % 2}\n" for i in range(40))
    add("csv_valid", "csv", "a valid CSV (control)", good.encode())
    add("csv_utf16", "csv", "UTF-16 with BOM (Excel 'Unicode text')", good.encode("utf-16"))
    add("csv_latin1", "csv", "Latin-1 with an accented header comment column",
        ("x,y,label,note\n" + "".join(f"{i},{i},{i % 2},café\n" for i in range(10))
         ).encode("latin-1"))
    add("csv_underscore", "csv", "a number written 1_0",
        b"x,y,label\n1_0,2,0\n3,4,1\n5,6,0\n")
    add("csv_extra_column", "csv", "a row with an extra value",
        b"x,y,label\n1,2,0\n3,4,1,9\n5,6,0\n")
    add("csv_duplicate_column", "csv", "a header naming x twice",
        b"x,y,label,x\n1,2,0,7\n3,4,1,8\n")
    add("csv_nul", "csv", "NUL bytes in a cell", b"x,y,label\n1,2,0\n3\x00,4,1\n")
    add("csv_too_many_points", "csv", "1,000,001 points",
        b"x,y,label\n" + b"1,2,0\n3,4,1\n" * 500_001, True)
    add("csv_long_line", "csv", "one 20 MB line", b"x,y,label\n" + b"1" * 20_000_000, True)
    if big:
        add("csv_blank_100mb", "csv", "100 MB of blank lines", b"x,y,label\n" +
            b"\n" * 100_000_000, True)

    # Sessions of issue 31: a seed past the Designer's range, a parameter name the
    # network does not make
    seeded = json.loads(json.dumps(manifest))
    seeded["config"]["seed"] = 2**40
    add("seed_2e40", "session", "a seed of 2**40 (the Designer's spin box stops at 2**31)",
        session(seeded, members), True)
    manifest_edit, members_edit = edited_members()
    for label, name in (("newline", "layers.0.neurons.1.w.0\n"),
                        ("zeros", "layers.00.neurons.1.w.0")):
        named = json.loads(json.dumps(manifest_edit))
        next(e for e in named["events"] if e["kind"] == "edit")["name"] = name
        add(f"param_name_{label}", "session", f"an edit of parameter {name!r}",
            session(named, members_edit), True)

    out = []
    suffixes = {"csv": ".csv", "session": ".gradbox"}
    for case, data in [*cases, *lesson_cases()]:
        path = folder / (case.name + suffixes.get(case.kind, ".toml"))
        if data is None:
            os.mkfifo(path)
        else:
            path.write_bytes(data)
        out.append((case, path))
    return out


def edited_members() -> tuple[dict, dict[str, bytes]]:
    """A valid session with a weight typed in between two steps."""
    import tempfile
    import zipfile

    from gradbox.files.sessions import save_session
    from gradbox.training.trainer import Trainer, TrainingConfig

    trainer = Trainer(TrainingConfig(n_samples=40))
    trainer.step()
    trainer.set_parameter("layers.0.neurons.1.w.0", 0.25)
    trainer.step()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "edited.gradbox"
        save_session(trainer, path)
        with zipfile.ZipFile(path) as z:
            members = {name: z.read(name) for name in z.namelist()}
    return json.loads(members["manifest.json"]), members
