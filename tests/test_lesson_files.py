"""Lessons as TOML files: every built-in lesson round-trips; a broken file is a message
naming its line and field."""

from __future__ import annotations

import re
import tomllib

import pytest

from gradbox.teaching.lesson_files import LessonFileError, dump_lesson, field_lines, load_lesson
from gradbox.teaching.lessons import LESSONS, lesson


@pytest.mark.parametrize("item", LESSONS, ids=lambda x: x.key)
def test_every_built_in_lesson_round_trips(item) -> None:  # type: ignore[no-untyped-def]
    text = dump_lesson(item)
    tomllib.loads(text)  # plain TOML any reader takes
    assert load_lesson(text, f"{item.key}.toml") == item
    assert max(len(line) for line in text.splitlines()) <= 100, "readable without scrolling"


GOOD = dump_lesson(lesson("moons"))


def broken(old: str, new: str, text: str = GOOD) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def line_of(text: str, fragment: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)


CASES = [  # (what is broken, the text, the field, the line's fragment, words in the message)
    ("not TOML", broken('title = "6.', 'title = 6."'), "", 'title = 6."', "not valid TOML"),
    ("a misspelt field", broken("takeaway =", "take_away ="), "take_away", "take_away =",
     "unknown field 'take_away'"),
    ("a missing title", broken('title = "6. Training a network on moons"\n', ""), "title",
     None, "missing field 'title'"),
    ("an unknown panel", broken('panels = ["boundary"]', 'panels = ["lossCurve"]'),
     "steps[2].panels", 'panels = ["lossCurve"]', "unknown panel 'lossCurve'"),
    ("a dataset that does not exist", broken('dataset = "moons"', 'dataset = "moon"'),
     "setup.config.dataset", 'dataset = "moon"', "dataset must be one of"),
    ("text where a number goes", broken("lr = 0.5", 'lr = "fast"'), "setup.config.lr",
     'lr = "fast"', "must be a number"),
    ("a number where a switch goes", broken("ghost = false", "ghost = 0"), "setup.ghost",
     "ghost = 0", "must be true or false"),
    ("an unknown view", broken('view = "training"', 'view = "trainig"'), "setup.view",
     'view = "trainig"', "must be one of 'playground', 'training'"),
    ("a step without words", broken('do = "Look at the decision boundary."', 'do = ""'),
     "steps[2].do", 'do = ""', "must not be empty"),
    ("an unknown loop line", broken(
        'panels = ["training_toolbar", "training_loop"]',
        'panels = ["training_toolbar", "training_loop"]\nloop_line = "step"'),
     "steps[1].loop_line", 'loop_line = "step"', "must be one of"),
    ("a playground field in a training setup", broken(
        'main_tab = ""', 'main_tab = ""\nexpression = "a*b"'), "setup.expression",
     'expression = "a*b"', "unknown field 'expression'"),
    ("hidden layers as text", broken("hidden = [8, 8]", 'hidden = "8, 8"'),
     "setup.config.hidden", 'hidden = "8, 8"', "list of whole numbers"),
    ("65 hidden layers", broken("hidden = [8, 8]", f"hidden = {[2] * 65}"),
     "setup.config.hidden", "hidden = [2, 2, 2", "hidden has 65 layers; at most 64"),
    ("a layer of 5,000", broken("hidden = [8, 8]", "hidden = [8, 5000]"),
     "setup.config.hidden", "hidden = [8, 5000]", "hidden layer 2 has 5,000 neurons"),
]


@pytest.mark.parametrize(("text", "field", "fragment", "words"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_a_broken_file_names_its_line_and_field(text: str, field: str, fragment: str | None,
                                                words: str) -> None:
    with pytest.raises(LessonFileError) as caught:
        load_lesson(text, "broken.toml")
    error = caught.value
    assert words in str(error)
    assert error.field == field
    assert str(error).startswith("broken.toml, ")
    # the line of the field, or of the table a missing field belongs in (1: the lesson's)
    assert error.line == (line_of(text, fragment) if fragment is not None else 1)
    assert re.search(rf"line {error.line}[,:] ", str(error))


def test_field_lines_follow_tables_arrays_and_long_strings() -> None:
    lines = field_lines(GOOD)
    assert lines["title"] == line_of(GOOD, "title = ")
    assert lines["setup.config.lr"] == line_of(GOOD, "lr = 0.5")
    # the third step's 'look' comes after two multi-line strings and a list
    third = GOOD.splitlines().index("[[steps]]", line_of(GOOD, 'do = "Open the Computation'))
    assert lines["steps[3]"] < lines["steps[3].look"]
    assert third  # the text has the tables in order


def test_the_documented_example_opens() -> None:
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "example-lesson.toml"
    example = load_lesson(path.read_text(encoding="utf-8"), path.name)
    assert example.key == "step-size" and len(example.steps) == 3
    assert load_lesson(dump_lesson(example)) == example


def test_the_docs_name_every_quantity_and_panel() -> None:
    from pathlib import Path

    from gradbox.teaching.claims import QUANTITIES
    from gradbox.teaching.lessons import ALL_CONTROLS

    text = (Path(__file__).resolve().parents[1] / "docs" / "lessons.md").read_text("utf-8")
    assert all(f"`{name}`" in text for name in [*QUANTITIES, *ALL_CONTROLS])


# --- files from strangers (issue 31, items 1, 2, 3, 5) ---------------------------------------
@pytest.fixture
def deadline():  # type: ignore[no-untyped-def]
    """Fail (not hang) if reading takes minutes: the regular expressions this replaces
    needed 37 s for a header padded with 3,000 spaces (cubic), a FIFO blocked forever."""
    import signal

    def late(*_: object) -> None:
        raise TimeoutError("still reading after 20 s")
    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def test_a_header_padded_with_spaces_is_read_at_once_and_named_at_its_line(deadline) -> None:  # type: ignore[no-untyped-def]
    pad = " " * 3000
    text = GOOD + f'\n[{pad}x{pad}."y"]\nz = 1\n'
    with pytest.raises(LessonFileError) as caught:
        load_lesson(text, "padded.toml")
    assert caught.value.field == "x" and "unknown field 'x'" in str(caught.value)
    assert caught.value.line == len(GOOD.splitlines()) + 2
    lines = field_lines(text)
    assert lines["x"] == lines["x.y"] == lines["x.y.z"] - 1 == caught.value.line


END = len(GOOD.splitlines())


@pytest.mark.parametrize(("text", "line"), [
    (GOOD + "deep = " + "{ b = " * 400 + "1" + " }" * 400, END + 1),
    (GOOD + "deep = " + "[" * 2000 + "]" * 2000, END + 1),
    (GOOD + "deep = [\n" + "[\n" * 2000 + "]\n" * 2001, END + 17),  # the 17th level's line
    (GOOD + "[" + ".".join(["a"] * 2000) + "]\nb = 1\n", END + 1),
    (GOOD + "\n" + ".".join(["a"] * 2000) + " = 1\n", END + 2),
], ids=["400 nested inline tables", "2,000 nested arrays", "arrays nested over lines",
        "a header of 2,000 tables", "a key of 2,000 parts"])
def test_deep_nesting_is_refused_with_its_line_not_a_recursion_error(text: str,
                                                                      line: int) -> None:
    with pytest.raises(LessonFileError, match="deep") as caught:
        load_lesson(text, "deep.toml")
    assert caught.value.line == line


def test_long_lines_and_big_files_are_refused_before_parsing() -> None:
    with pytest.raises(LessonFileError, match="a line of 20,009 characters") as caught:
        load_lesson(GOOD + 'note = "' + "x" * 20_000 + '"\n', "long.toml")
    assert caught.value.line == len(GOOD.splitlines()) + 1
    with pytest.raises(LessonFileError, match="over 1024 KB"):
        load_lesson(GOOD + "# padding\n" * 200_000, "big.toml")


def test_a_misspelt_or_unknown_table_is_named_at_its_own_line() -> None:
    """`[[step.claims]]` on line 43 was reported at line 1; an unknown table's own line
    was never named."""
    for header, field in (("[[step.claims]]", "step"), ("[setup.colours]", "setup.colours"),
                          ('[setup."config".extra]', "setup.config.extra"),
                          ("[[steps.claim]]", "steps[4].claim")):
        text = GOOD.replace('[[steps.claims]]', f"{header}", 1) if "claims" in header \
            else GOOD + f"\n{header}\nq = 1\n"
        if header == "[[steps.claim]]":
            text = GOOD.replace("[[steps.claims]]", header, 1)
        with pytest.raises(LessonFileError) as caught:
            load_lesson(text, "misspelt.toml")
        assert caught.value.field == field, (header, str(caught.value))
        assert caught.value.line == line_of(text, header), (header, str(caught.value))


def test_every_header_and_key_of_every_built_in_lesson_is_found_at_its_line() -> None:
    for item in LESSONS:
        text = dump_lesson(item)
        lines = field_lines(text)
        rows = text.splitlines()
        for path, number in lines.items():
            last = path.rpartition(".")[2].partition("[")[0]
            assert last in rows[number - 1], (item.key, path, number, rows[number - 1])
        assert sum(p.count("claims[") and p.endswith("]") for p in lines) == \
            sum(len(s.claims) for s in item.steps)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="FIFOs")
def test_a_pipe_is_refused_at_once(tmp_path, deadline) -> None:  # type: ignore[no-untyped-def]
    import os

    from gradbox.teaching.lesson_files import read_lesson

    pipe = tmp_path / "lesson.toml"
    os.mkfifo(pipe)
    with pytest.raises(LessonFileError, match="pipe"):
        read_lesson(pipe)
    (tmp_path / "ok.toml").write_text(GOOD, encoding="utf-8")
    assert read_lesson(tmp_path / "ok.toml") == lesson("moons")


def test_a_strangers_long_name_is_cut_short_in_the_message() -> None:
    """Messages in the user's words (issue 31, item 16): an unknown key of 5,000
    characters was quoted whole in the error box."""
    with pytest.raises(LessonFileError) as caught:
        load_lesson(GOOD + "\n" + "k" * 5000 + " = 1\n", "long-key.toml")
    assert len(str(caught.value)) < 400 and "(5,000 characters)" in str(caught.value)
