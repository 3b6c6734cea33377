"""Hostile session files and CSVs (issue 23): every one a SessionError/DatasetError with a
message naming what is wrong, or a valid load; bombs refused without the memory they ask
for. Memory is measured in child processes (tests/hostile_runner.py); the time each takes
is in benchmarks/bench_hostile.py (no test fails on a timing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hostile_corpus
from gradbox.files import points_csv, sessions
from gradbox.files.session_json import SessionError
from gradbox.training.datasets import DatasetError

RUNNER = Path(__file__).with_name("hostile_runner.py")
BOMB_MB = 100  # the most a refused bomb may cost, above the process's start


def _run(*args: str, timeout: float = 1200) -> object:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, str(RUNNER), *args], capture_output=True,
                         text=True, env=env, timeout=timeout, check=True)
    return json.loads(out.stdout)


# What each refusal must say (a part of it): the member, and why.
MESSAGES = {
    "deep_1000": "config.hidden has 1,000 hidden layers; at most 64",
    "deep_100k": "config.hidden has 100,000 hidden layers",
    "deflate_member": "history/loss.npy is compressed (deflate)",
    "bzip2_member": "history/loss.npy is compressed (bzip2)",
    "lzma_member": "history/loss.npy is compressed (lzma)",
    "unknown_method": "history/loss.npy is compressed (method 99)",
    "encrypted_flag": "history/loss.npy is stored with encrypted",
    "descriptor_flag": "history/loss.npy is stored with sizes after the data",
    "bad_utf8_name": "not UTF-8",
    "duplicate_name": "history/loss.npy appears twice",
    "stored_size_lie": "history/loss.npy claims 1,073,741,824 bytes",
    "npy_shape_1e13": "datasets/0/labels.npy",
    "npy_object": "history/loss.npy: its .npy header is not one numpy writes",
    "manifest_4m_objects": "manifest.json would take about",
    "manifest_deflated_60mb": "manifest.json is compressed (deflate)",
    "events_200k": "manifest.json would take about",
    "v1_10m_objects": "would take about",
    "v1_nested": "nested too deeply",
    "csv_utf16": None, "csv_valid": None, "valid": None,  # these load
    "csv_latin1": "line 1: unknown column 'note'",
    "csv_underscore": "line 2: x and y must be numbers, got '1_0'",
    "csv_extra_column": "line 3: expected 3 values, got 4 (an extra value '9')",
    "csv_duplicate_column": "line 1: the column 'x' appears twice",
    "csv_nul": "line 3: not a text file",
    "csv_too_many_points": "has 1,000,002 rows after its header (blank lines not counted): "
                           "more than 1,000,000 points",
    "csv_long_line": "line 2: 20,000,000 characters on one line; a row of points is never "
                     "that long",
}


def test_every_hostile_file_is_refused_by_name_and_bombs_cost_under_100_mb(tmp_path) -> None:
    rows = _run("bombs", str(tmp_path))
    assert len(rows) >= 40
    problems = []
    for row in rows:
        outcome, name = row["outcome"], row["name"]
        if outcome.startswith("!!"):
            problems.append(f"{name}: {outcome}")
        elif row["bomb"] and outcome == "loaded":
            problems.append(f"{name} loaded")
        elif row["bomb"] and row["peak_mb"] > BOMB_MB:
            problems.append(f"{name} took {row['peak_mb']:.0f} MB")
    assert not problems, problems
    by_name = {row["name"]: row for row in rows}
    assert by_name["valid"]["outcome"] == "loaded"
    assert by_name["csv_utf16"]["outcome"] == "loaded"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, tuple[hostile_corpus.Case, Path]]:
    folder = tmp_path_factory.mktemp("hostile")
    return {case.name: (case, path) for case, path in hostile_corpus.build(folder, big=False)}


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_hostile_file_message_names_the_part_at_fault(corpus, name: str) -> None:
    case, path = corpus[name]
    expected = MESSAGES[name]
    load = points_csv.load_csv if case.kind == "csv" else sessions.load_state
    if expected is None:
        load(path)
        return
    with pytest.raises((SessionError, DatasetError)) as info:
        load(path)
    assert expected in str(info.value)


def test_big_endian_arrays_read_as_their_values(tmp_path) -> None:
    """A machine of the other byte order writes '>f8': read it, don't call it wrong."""
    manifest, members = hostile_corpus.seed_members(5)
    path = tmp_path / "be.gradbox"
    loss = np.load(__import__("io").BytesIO(members["history/loss.npy"]))
    members["history/loss.npy"] = hostile_corpus.npy(loss.astype(">f8"))
    path.write_bytes(hostile_corpus.session(manifest, members))
    state = sessions.load_state(path)
    assert np.array_equal(state.history.column("loss"), loss)


def test_csv_in_utf16_without_a_mark_and_in_latin1_is_read(tmp_path) -> None:
    text = "x,y,label\n1,2,0\n3,4,1\n"
    for data in (text.encode("utf-16-le"), text.encode("utf-16-be"), text.encode("utf-32"),
                 ("x,y,label\n1,2,0\n3,4,1\n").encode("latin-1")):
        path = tmp_path / "p.csv"
        path.write_bytes(data)
        assert points_csv.load_csv(path).labels.tolist() == [0, 1]
    path.write_bytes("x,y,label\n1,2,0\n3,4é,1\n".encode("latin-1"))
    with pytest.raises(DatasetError, match="line 3: x and y must be numbers, got '3', '4é'"):
        points_csv.load_csv(path)


def test_csv_over_the_size_cap_is_refused_before_reading(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(points_csv, "MAX_CSV_BYTES", 1000)
    path = tmp_path / "big.csv"
    path.write_bytes(b"x,y,label\n" + b"1,2,0\n" * 200)
    with pytest.raises(DatasetError, match=r"big\.csv is 0 MB; at most 0 MB"):
        points_csv.load_csv(path)


def test_csv_of_blank_lines_is_refused_by_its_line_count() -> None:
    with pytest.raises(DatasetError, match="1,100,002 lines"):
        points_csv.from_csv("x,y,label\n" + "\n" * (points_csv.MAX_CSV_LINES + 1))


def test_csv_reading_reports_progress_and_can_be_cancelled() -> None:
    # A blank line: read row by row (plain rows go at C speed, with nothing to report).
    text = "x,y,label\n\n" + "1,2,0\n3,4,1\n" * 30_000
    seen: list[float] = []
    points_csv.from_csv(text, progress=lambda f: seen.append(f) or True)
    assert len(seen) == 3 and seen == sorted(seen) and 0 < seen[0] < seen[-1] < 1
    with pytest.raises(points_csv.Cancelled):
        points_csv.from_csv(text, progress=lambda f: False)


def test_plain_rows_are_read_a_piece_at_a_time_and_can_be_cancelled(monkeypatch) -> None:
    """The C-speed path for plain rows asks progress between pieces: Cancel stops it."""
    text = "x,y,label\n" + "".join(f"{i / 8},{-i / 4},{i % 3}\n" for i in range(5_000))
    whole = points_csv.from_csv(text)
    monkeypatch.setattr(points_csv, "FAST_CHUNK_CHARS", 4096)
    seen: list[float] = []
    pieces = points_csv.from_csv(text, progress=lambda f: seen.append(f) or True)
    assert np.array_equal(pieces.points, whole.points)
    assert np.array_equal(pieces.labels, whole.labels) and pieces.classes == 3
    assert len(seen) > 20 and seen == sorted(seen) and 0 < seen[0] < seen[-1] < 1
    asked: list[float] = []
    with pytest.raises(points_csv.Cancelled):
        points_csv.from_csv(text, progress=lambda f: asked.append(f) or len(asked) < 3)
    assert len(asked) == 3  # stopped at the first answer of no


def test_too_many_rows_are_counted_without_reading_them_and_blank_lines_are_not(  # type: ignore[no-untyped-def]
        tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(points_csv, "MAX_POINTS", 5)
    path = tmp_path / "p.csv"
    blank = " \n,,\r\n\t\n\xa0\n"  # lines the row-by-row reader skips
    path.write_bytes(f"x,y,label\n1,2,0\n{blank}3,4,1\n5,6,0\n{blank}7,8,1\n9,1,0".encode(
        "latin-1"))
    assert len(points_csv.load_csv(path)) == 5  # 14 lines, 5 points: read
    path.write_bytes(b"x,y,label\n" + b"1,2,0\n\n3,4,1\n" * 3)
    with pytest.raises(DatasetError, match="has 6 rows after its header"):
        points_csv.load_csv(path)
    # A quote can hold a line's end: such a file is read row by row, not counted.
    path.write_bytes(b'x,y,label\n' + b'1,2,"\n0"\n' * 4 + b"3,4,1\n")
    assert len(points_csv.load_csv(path)) == 5


def test_strict_csv_numbers() -> None:
    for cell in ("1_0", "0x10", "١", "1e", "--1", "1,0"):
        with pytest.raises(DatasetError):
            points_csv.from_csv(f'x,y,label\n"{cell}",2,0\n3,4,1\n')
    data = points_csv.from_csv("x,y,label\n+1.5e2,-.5,0\n 3. ,4E-1,1\n")
    assert data.points.tolist() == [[150.0, -0.5], [3.0, 0.4]]


def test_fuzzed_sessions_and_csvs_end_in_a_clear_error_or_a_load_in_bounded_memory() -> None:
    """3,000 mutations of valid files (bytes flipped, inserted, cut; members changed
    inside an intact zip; manifest values replaced): ~15 s on an idle machine."""
    report = _run("fuzz", "3000", "23")
    assert not report["failures"], report["failures"][:3]
    assert report["count"] == 3000, report
    outcomes = report["outcomes"]
    assert outcomes.get("session: loaded", 0) > 0 and outcomes.get("session: SessionError", 0)
    assert outcomes.get("csv: DatasetError", 0) > 0
    assert report["peak_mb"] < 200, report


@pytest.mark.parametrize("name", ["encrypted_flag", "deflate_garbage", "npy_shape_1e13",
                                  "bad_utf8_name"])
def test_a_damaged_crash_copy_is_set_aside_with_a_message(qtbot, corpus, window,  # type: ignore[no-untyped-def]
                                                          tmp_path, name: str) -> None:
    """Before, these raised RuntimeError, zlib.error, MemoryError, UnicodeDecodeError:
    'Unexpected error', and the copy was deleted at the next clean exit."""
    crash = tmp_path / "autosave.gradbox"
    crash.write_bytes(corpus[name][1].read_bytes())
    before = window.controller.snapshot
    answers: list[bool] = []
    window.files.offer_restore(crash, ask=lambda text: True, answered=answers.append)
    qtbot.waitUntil(lambda: answers == [False], timeout=5000)
    aside = tmp_path / "autosave.unreadable.gradbox"
    assert aside.exists() and not crash.exists()
    assert window.error_box is not None and window.error_box.isVisible()
    assert f"The file was kept as {aside}" in window.error_box.text()
    assert window.controller.snapshot is before


@pytest.mark.parametrize("kind", ["label", "target"])
def test_plain_csv_rows_read_at_c_speed_equal_the_row_by_row_reading(kind: str) -> None:
    """The fast path (one regular expression, numpy's parser) gives exactly what the
    row-by-row reader gives; a blank line sends a file to the row-by-row reader."""
    rng = np.random.default_rng(3)
    xy = rng.normal(0, 10, (500, 2))
    third = rng.integers(0, 4, 500) if kind == "label" else rng.normal(0, 1, 500)
    cells = [" +1.5e1 ,-.25,1", "3.,4E-2 , 0"] if kind == "label" else []
    rows = [f"{x!r},{y!r},{t!r}" for (x, y), t in zip(xy.tolist(), third.tolist())]
    text = f"x,y,{kind}\n" + "\n".join(cells + rows) + "\n"
    fast = points_csv.from_csv(text, 0.2, 1)
    slow = points_csv.from_csv(text.replace("\n", "\n\n", 1), 0.2, 1)  # a blank line
    for a, b in ((fast.points, slow.points), (fast.labels, slow.labels),
                 (fast.is_test, slow.is_test)):
        np.testing.assert_array_equal(a, b)
    assert fast.classes == slow.classes
    if kind == "target":
        np.testing.assert_array_equal(fast.targets, slow.targets)


@pytest.mark.parametrize("name", ["layers.0.neurons.1.w.0\n", "layers.00.neurons.1.w.0",
                                  "layers.0.neurons.1.w.\u0660", "layers.0.neurons.\uff11.b",
                                  " layers.0.neurons.1.b", "layers.0.neurons.1.w.0.b"])
def test_a_parameter_name_the_network_does_not_make_is_refused(tmp_path: Path,
                                                               name: str) -> None:
    """Issue 31 item 8: names the reader took and the trainer did not (a trailing
    newline, 'layers.00', other scripts' digits: the pattern ended in $ and read \\d) made
    the PyTorch export write a script that was not Python or fail with 'tuple.index(x): x
    not in tuple', and the notebook raise KeyError. Names are compared with the network's
    own, exactly."""
    from gradbox.autograd.nn import parameter_names, parse_parameter_name
    from gradbox.files.export_torch import pytorch_script
    from gradbox.training.trainer import Trainer, TrainingConfig

    trainer = Trainer(TrainingConfig(n_samples=40))
    trainer.step()
    trainer.set_parameter("layers.0.neurons.1.w.0", 0.25)
    trainer.step()
    good = tmp_path / "good.gradbox"
    sessions.save_session(trainer, good)
    compile(pytorch_script(sessions.load_session(good)), "export.py", "exec")
    with __import__("zipfile").ZipFile(good) as z:
        members = {n: z.read(n) for n in z.namelist()}
    manifest = json.loads(members["manifest.json"])
    edit = next(e for e in manifest["events"] if e["kind"] == "edit")
    edit["name"] = name
    bad = tmp_path / "bad.gradbox"
    bad.write_bytes(hostile_corpus.session(manifest, members))
    with pytest.raises(SessionError, match="this network has no parameter"):
        sessions.load_session(bad)
    names = parameter_names([2, 8, 8, 1])
    assert all(parse_parameter_name(n) is not None for n in names)
    assert parse_parameter_name(name) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
def test_a_pipe_named_like_a_session_or_a_csv_is_refused_at_once(tmp_path: Path) -> None:
    """Issue 31 item 5, for every file the app opens: a FIFO blocked the open for good
    (a lesson's "Open" never answered; a session or a CSV blocked the same way)."""
    import signal

    def late(*_: object) -> None:
        raise TimeoutError("still opening after 20 s")
    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(20)
    try:
        for name, load, error in (("s.gradbox", sessions.load_session, SessionError),
                                  ("p.csv", points_csv.load_csv, DatasetError)):
            os.mkfifo(tmp_path / name)
            with pytest.raises(error, match="not a file"):
                load(tmp_path / name)  # type: ignore[operator]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
