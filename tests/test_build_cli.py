"""`gradbox check [--stage N] [--json] FILE`: exit codes, the JSON shape, the text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gradbox.build.report import MISTAKE_IDS

SOLUTIONS = Path(__file__).parent / "build_solutions"
CORRECT = SOLUTIONS / "correct.py"
SRC = str(Path(__file__).resolve().parents[1] / "src")


def gradbox(*args: str) -> subprocess.CompletedProcess[str]:
    """The real command line, in a process of its own (as a terminal runs it)."""
    return subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                           "from gradbox.app import main; sys.exit(main(sys.argv[2:]))",
                           SRC, "check", "--timeout", "60", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_correct_engine_up_to_a_stage_exits_0_and_loads_no_qt(tmp_path: Path) -> None:
    done = gradbox("--stage", "2", str(CORRECT))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "passed  2. + and * build the graph" in done.stdout
    assert "All 3 stages checked pass." in done.stdout
    probe = subprocess.run(
        [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
         "from gradbox.app import main; main(['check', '--stage', '0', sys.argv[2]]);"
         "print('qt' if any(m.startswith('PySide6') for m in sys.modules) else 'no qt')",
         SRC, str(CORRECT)], capture_output=True, text=True, timeout=300, check=False)
    assert probe.stdout.strip().endswith("no qt"), probe.stdout + probe.stderr


def test_a_failing_case_exits_1_and_json_has_the_issues_shape(tmp_path: Path) -> None:
    wrong = tmp_path / "engine.py"
    wrong.write_text(CORRECT.read_text("utf-8").replace(
        "            self.grad += other.data * out.grad\n"
        "            other.grad += self.data * out.grad\n",
        "            self.grad = other.data * out.grad\n"
        "            other.grad = self.data * out.grad\n"), encoding="utf-8")
    done = gradbox("--json", str(wrong))
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert isinstance(report["passed"], bool) and report["passed"] is False
    for stage in report["stages"]:
        assert isinstance(stage["stage"], int) and isinstance(stage["title"], str)
        assert isinstance(stage["passed"], bool)
        for case in stage["cases"]:
            assert isinstance(case["name"], str) and isinstance(case["passed"], bool)
            assert isinstance(case["code"], str) and isinstance(case["message"], str)
            assert case["mistake"] is None or case["mistake"] in MISTAKE_IDS
    assert [s["stage"] for s in report["stages"]] == list(range(7))  # stops at stage 6
    failing = [c for c in report["stages"][-1]["cases"] if not c["passed"]]
    assert failing[0]["name"] == "a-times-a"
    assert failing[0]["mistake"] == "assign-not-accumulate"
    text = gradbox(str(wrong))
    assert text.returncode == 1
    assert "First failing case: a-times-a (stage 6)" in text.stdout
    assert "b = a * a" in text.stdout and "mistake: assign-not-accumulate" in text.stdout
    assert "first wrong" in text.stdout


@pytest.mark.parametrize(("content", "words"), [
    (None, "no such file"),
    ("def broken(:\n", "SyntaxError"),
    ("answer = 42\n", "defines none of the names"),
    (b"\xff\xfe not text", "not UTF-8"),
])
def test_a_file_that_cannot_be_used_exits_2(tmp_path: Path, content: str | bytes | None,
                                            words: str) -> None:
    path = tmp_path / "engine.py"
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    elif isinstance(content, bytes):
        path.write_bytes(content)
    done = gradbox(str(path))
    assert done.returncode == 2
    assert words in done.stdout
    as_json = json.loads(gradbox("--json", str(path)).stdout)
    assert as_json["passed"] is False and words in as_json["error"]


@pytest.mark.parametrize("args", [("--stage", "11"), ("--stage", "-1"), ("--timeout", "0")])
def test_an_option_out_of_range_exits_2_and_says_so(args: tuple[str, str]) -> None:
    done = gradbox(*args, str(CORRECT))
    assert done.returncode == 2
    assert "gradbox check: --" in done.stderr
