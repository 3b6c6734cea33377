"""Build it yourself: the stages as files, the report as plain data, the reference engine."""

from __future__ import annotations

import math
import operator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradbox.autograd import engine
from gradbox.build import reference
from gradbox.build.cases import CASES
from gradbox.build.report import (
    MISTAKE_IDS,
    MISTAKES,
    CaseGraph,
    CaseResult,
    CheckReport,
    GraphNode,
    StageResult,
)
from gradbox.build.stages import StageFileError, load_stage, load_stage_file, load_stages

DOC = Path(__file__).resolve().parents[1] / "docs" / "build-it-yourself.md"


def test_the_builtin_stages_follow_the_article_from_0_to_10() -> None:
    stages = load_stages()
    assert [s.number for s in stages] == list(range(11))
    for s in stages:
        assert s.title.startswith(f"{s.number}. ")
        assert s.text and s.hints and s.cases
        assert all(case in CASES for case in s.cases)
    # Every built-in case is run by some stage, once.
    used = [c for s in stages for c in s.cases]
    assert sorted(used) == sorted(CASES)
    # The two stages that ask for a prediction are accumulation and zero_grad.
    assert [s.key for s in stages if s.predict] == ["accumulate", "zero-grad"]


def test_each_predict_answer_is_what_gradboxs_engine_says() -> None:
    for s in load_stages():
        if s.predict is None:
            continue
        for value_class in (engine.Value, reference.Value):
            ns: dict[str, object] = {"Value": value_class}
            exec(s.predict.code, ns)
            assert eval(s.predict.expression, ns) == s.predict.answer, (s.key, value_class)


@pytest.mark.parametrize(("text", "line", "field", "words"), [
    ('number = 1\nkey = "x"\ntitle = "t"\ntext = "t"\ncases = ["nope"]\n', 5, "cases",
     "unknown case 'nope'"),
    ('number = 1\nkey = "x"\ntitle = "t"\ntext = "t"\ncases = ["a-plus-a"]\ncolour = 1\n', 6,
     "colour", "unknown field 'colour'"),
    ('number = -1\nkey = "x"\n', 1, "number", "whole number"),
    ('number = 1\nkey = "x"\ntitle = "t"\n\ntext = 3\ncases = ["a-plus-a"]\n', 5, "text",
     "text in quotes"),
    ('number = 1\nkey = "x\n', 2, "", "not valid TOML"),
    ('number = 1\nkey = "x"\ntitle = "t"\ntext = "t"\ncases = ["a-plus-a"]\n[predict]\n'
     'question = "q"\ncode = "c"\nanswer = "two"\n', 9, "predict.answer", "finite number"),
])
def test_a_stage_file_that_is_wrong_says_its_line_and_field(text: str, line: int, field: str,
                                                           words: str) -> None:
    with pytest.raises(StageFileError) as caught:
        load_stage(text, "mine.toml")
    assert (caught.value.line, caught.value.field) == (line, field)
    assert words in caught.value.message and str(caught.value).startswith("mine.toml")


def test_a_teacher_can_write_and_reorder_stages(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        'number = 2\nkey = "second"\ntitle = "Second"\ntext = "t"\ncases = ["a-plus-a"]\n',
        encoding="utf-8")
    (tmp_path / "a.toml").write_text(
        'number = 1\nkey = "first"\ntitle = "First"\ntext = "t"\nstarter = "x = 1\\n"\n'
        'hints = ["one", "two"]\ncases = ["diamond", "a-times-a"]\n', encoding="utf-8")
    stages = load_stages(tmp_path)
    assert [s.key for s in stages] == ["first", "second"]
    assert stages[0].cases == ("diamond", "a-times-a") and stages[0].hints == ("one", "two")
    (tmp_path / "c.toml").write_text((tmp_path / "b.toml").read_text("utf-8"), "utf-8")
    with pytest.raises(StageFileError, match="two stages are number 2"):
        load_stages(tmp_path)
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 300_000)
    with pytest.raises(StageFileError, match="larger than"):
        load_stage_file(big)


def test_a_report_crosses_as_plain_data_and_comes_back_equal() -> None:
    graph = CaseGraph((GraphNode(0, "", "a", (), 3.0, 3.0, 3.0, 6.0),
                       GraphNode(1, "*", "b", (0,), 9.0, 1.0, 9.0, 1.0),
                       GraphNode(2, "tanh", "", (1,), math.nan, math.inf, None, None)), 0)
    case = CaseResult("a-times-a", False, "b = a * a", "3 where 6", "assign-not-accumulate", 14,
                      "printed", graph)
    report = CheckReport(False, (StageResult(6, "6. Gradients accumulate", False, (case,)),))
    plain = report.to_json()
    import json
    again = CheckReport.from_json(json.loads(json.dumps(plain, allow_nan=False)))
    node = again.stages[0].cases[0].graph.nodes[2]  # type: ignore[union-attr]
    assert math.isnan(node.data) and node.grad == math.inf
    assert again.stages[0].cases[0].graph.nodes[:2] == graph.nodes[:2]  # type: ignore[union-attr]
    assert again.first_failure is not None and again.first_failure[1].line == 14
    assert graph.nodes[0].wrong and not graph.nodes[1].wrong


def test_every_mistake_id_is_documented() -> None:
    assert len(set(MISTAKE_IDS)) == len(MISTAKES)
    for required in ("assign-not-accumulate", "not-topological", "missing-radd",
                     "number-not-wrapped", "tanh-slope-from-input", "wrong-local-derivative",
                     "grad-not-reset", "backward-twice-silent", "retain-graph-ignored",
                     "timeout", "recursion", "memory"):
        assert required in MISTAKE_IDS
    doc = DOC.read_text(encoding="utf-8")
    for mistake in MISTAKE_IDS:
        assert f"`{mistake}`" in doc, mistake


# --- the reference, against gradbox's engine ----------------------------------------------
OPS = ("+", "*", "-", "/", "tanh", "exp", "relu", "**2", "**-1")


def apply(op: str, a: Any, b: Any) -> Any:
    if op in ("tanh", "exp", "relu"):
        return getattr(a, op)()
    if op.startswith("**"):
        return a ** int(op[2:])
    return {"+": operator.add, "*": operator.mul, "-": operator.sub,
            "/": operator.truediv}[op](a, b)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0.3, 2.0) | st.floats(-2.0, -0.3), min_size=2, max_size=3),
       st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 9), st.integers(0, 9)),
                min_size=1, max_size=6))
def test_the_reference_agrees_with_gradboxs_engine(leaves: list[float],
                                                   steps: list[tuple[str, int, int]]) -> None:
    def build(value: type) -> tuple[object, list[object]]:
        xs = [value(x) for x in leaves]
        vals = list(xs)
        for op, i, j in steps:
            a, b = vals[i % len(vals)], vals[j % len(vals)]
            if op in ("/", "**-1") and abs(b.data if op == "/" else a.data) < 0.3:
                op = "+"
            if op == "exp" and a.data > 5:
                op = "tanh"
            vals.append(apply(op, a, b))
        return vals[-1], xs

    mine, my_leaves = build(reference.Value)
    theirs, their_leaves = build(engine.Value)
    if abs(theirs.data) > 1e6:
        return
    assert math.isclose(mine.data, theirs.data, rel_tol=1e-12, abs_tol=1e-12)
    mine.backward()
    theirs.backward()
    for m, t in zip(my_leaves, their_leaves, strict=True):
        assert math.isclose(m.grad, t.grad, rel_tol=1e-9, abs_tol=1e-9)


def test_the_reference_frees_the_graph_as_gradboxs_engine_does() -> None:
    for value in (reference.Value, engine.Value):
        a, b = value(2.0), value(3.0)
        product = a * b
        product.backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            product.backward()
        total = a + b
        total.backward()
        total.backward()  # + saved nothing: allowed, and it adds
        assert a.grad == 3.0 + 2.0
        kept = a * b
        kept.backward(retain_graph=True)
        kept.backward()


def test_the_starters_appended_stage_after_stage_stay_valid_python() -> None:
    # The Build workspace opens a stage with its starter added at the end of the
    # learner's code: the starters alone, in order, must always compile.
    source = ""
    for stage in load_stages():
        source += ("\n" if source else "") + stage.starter
        compile(source, "engine.py", "exec")
