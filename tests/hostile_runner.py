"""Run hostile inputs where their memory can be measured: `python tests/hostile_runner.py
bombs FOLDER` or `... fuzz COUNT SEED`; prints one JSON report.

bombs: tests/hostile_corpus.py's files, each opened (as the app opens it) in a child
forked from this process once gradbox is imported, so each child's peak resident memory
above its start is that file's own cost (os.wait4's ru_maxrss).

fuzz COUNT SEED: COUNT mutations of valid session files and CSVs (byte flips, inserts, cuts, spliced
members, changed JSON values), each opened; reports how many ended how, the slowest, any
exception that is not SessionError/DatasetError (with what reproduces it), and the peak
memory of the whole run above its start.
"""

from __future__ import annotations

import json
import os
import random
import resource
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import hostile_corpus
from gradbox.files import points_csv, sessions
from gradbox.teaching.lesson_files import LessonFileError, read_lesson
from gradbox.training import datasets

EXPECTED = (sessions.SessionError, datasets.DatasetError, LessonFileError)


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def open_file(kind: str, path: Path, train: bool = False) -> str:
    """'loaded', or the expected error's class name; anything else raises. `train`: a
    loaded session also takes a step and starts afresh from its settings (as Reset
    does), which must not raise either."""
    try:
        if kind == "csv":
            points_csv.load_csv(path)
        elif kind.startswith("lesson"):
            read_lesson(path)  # (its claims are checked in a child of their own)
        else:
            trainer = sessions.load_session(path)
            if train:
                trainer.step()
                type(trainer)(trainer.config).step()
    except EXPECTED as error:
        return type(error).__name__
    return "loaded"


def bombs(folder: Path) -> list[dict[str, object]]:
    rows = []
    for case, path in hostile_corpus.build(folder, big=False):
        if case.name == "wide_990":  # legitimate and slow: the benchmark times it
            continue
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: open one file, report, leave without cleanup
            os.close(read)
            start_kb = _peak_kb()
            start = time.perf_counter()
            try:
                outcome = open_file(case.kind, path)
            except BaseException as error:
                outcome = f"!! {type(error).__name__}: {error}"[:300]
            info = {"seconds": time.perf_counter() - start, "outcome": outcome,
                    "start_kb": start_kb}
            os.write(write, json.dumps(info).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as f:
            text = f.read()
        _, _, usage = os.wait4(pid, 0)
        info = json.loads(text) if text else {"outcome": "!! the child died", "seconds": 0,
                                              "start_kb": 0}
        rows.append({"name": case.name, "bomb": case.bomb, "kind": case.kind,
                     "outcome": info["outcome"], "seconds": info["seconds"],
                     "peak_mb": (usage.ru_maxrss - info["start_kb"]) / 1024})
    return rows


# --- fuzzing ---------------------------------------------------------------------------------
def _mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 4, 16))):
        op = rng.randrange(6)
        i = rng.randrange(max(len(b), 1))
        if op == 0 and b:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[i] = rng.choice((0, 0xFF, 0x7F, 0x80, ord("["), ord("9"), ord(",")))
        elif op == 2:
            b[i:i] = rng.randbytes(rng.randrange(1, 16))
        elif op == 3 and b:
            del b[i:i + rng.randrange(1, 64)]
        elif op == 4 and b:
            # A 32-bit field set to a large or a small number: sizes, offsets, counts.
            value = rng.choice((0, 1, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, len(b) * 3))
            b[i:i + 4] = value.to_bytes(4, "little")
        elif op == 5:
            del b[i:]
    return bytes(b)


def _mutate_json(manifest: object, rng: random.Random) -> object:
    """A copy of the manifest with one value somewhere replaced."""
    data = json.loads(json.dumps(manifest))
    node, path = data, []
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        if not isinstance(node[key], (dict, list)):
            break
        node = node[key]
    if not path:
        return data
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = rng.choice((None, True, -1, 0, -0.0, 2**63, 10**6, 1e308, 0.5, "x",
                                   "nan", [], {}, [1] * 70, "inf", 7, list(range(5))))
    return data


def fuzz(total: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    manifest, members = hostile_corpus.seed_members(5)
    seeds = {"session": [hostile_corpus.session(manifest, members)],
             "csv": [("x,y,label\n" + "".join(f"{i / 7!r},{-i / 3!r},{i % 3}\n"
                                              for i in range(30))).encode(),
                     ("x,y,target\n" + "".join(f"{i / 7},{i / 5},{i / 9}\n"
                                               for i in range(30))).encode()]}
    folder = Path(tempfile.mkdtemp())
    outcomes: dict[str, int] = {}
    failures: list[dict[str, str]] = []
    slowest = (0.0, "")
    start_kb = _peak_kb()
    count = 0
    while count < total:
        kind = "csv" if count % 4 == 3 else "session"
        how = rng.randrange(3) if kind == "session" else 0
        if how == 2:
            data = hostile_corpus.session(_mutate_json(manifest, rng), members)  # type: ignore[arg-type]
        elif how == 1:  # a member's bytes changed, the zip itself intact
            name = rng.choice(sorted(members))
            changed = {**members, name: _mutate_bytes(members[name], rng)}
            data = hostile_corpus.session(manifest, changed)
        else:
            data = _mutate_bytes(rng.choice(seeds[kind]), rng)
        path = folder / f"f{count % 8}.{'csv' if kind == 'csv' else 'gradbox'}"
        path.write_bytes(data)
        t = time.perf_counter()
        try:
            outcome = open_file(kind, path, train=True)
        except BaseException as error:
            outcome = f"!! {type(error).__name__}"
            if len(failures) < 20:
                keep = folder / f"failure{len(failures)}.{path.suffix}"
                keep.write_bytes(data)
                failures.append({"kind": kind, "file": str(keep), "error": repr(error)[:300],
                                 "where": traceback.format_exc()[-1500:]})
        took = time.perf_counter() - t
        if took > slowest[0]:
            slowest = (took, f"{kind} #{count}")
        outcomes[f"{kind}: {outcome}"] = outcomes.get(f"{kind}: {outcome}", 0) + 1
        count += 1
    return {"count": count, "outcomes": outcomes, "failures": failures,
            "slowest_seconds": slowest[0], "slowest": slowest[1],
            "peak_mb": (_peak_kb() - start_kb) / 1024}


if __name__ == "__main__":
    if sys.argv[1] == "bombs":
        print(json.dumps(bombs(Path(sys.argv[2]))))
    else:
        print(json.dumps(fuzz(int(sys.argv[2]), int(sys.argv[3]))))
