"""Build it yourself: the checks pass a correct engine and name each wrong one's mistake.

Each wrong solution (tests/build_solutions/wrong.py) is the correct one
(tests/build_solutions/correct.py) with one edit, as a learner makes the mistake; each
must fail at the stage that checks that rule, with the mistake id the documented list
gives it. Every check runs in the sandbox's child (one per test: xdist spreads them).
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import pytest

from gradbox.build.report import MISTAKE_IDS, CheckReport
from gradbox.build.sandbox import check_source, start_check
from gradbox.build.stages import Stage

SOLUTIONS = Path(__file__).parent / "build_solutions"
CORRECT = (SOLUTIONS / "correct.py").read_text(encoding="utf-8")
TIMEOUT = 60.0  # generous: the machine is shared; a check takes 1-5 s here
sys.path.insert(0, str(SOLUTIONS))
from wrong import WRONG, apply  # noqa: E402

sys.path.remove(str(SOLUTIONS))


@pytest.mark.parametrize("solution", ["correct.py", "correct_alt.py"])
def test_a_correct_engine_passes_every_stage(solution: str) -> None:
    # correct_alt.py is written differently: - / neg as ops of their own, Kahn's walk,
    # freed nodes' _backward set to None, relu reading its input.
    report = check_source((SOLUTIONS / solution).read_text("utf-8"), timeout=TIMEOUT)
    assert report.error is None
    assert [s.stage for s in report.stages] == list(range(11))
    failures = [(s.stage, c.name, c.message) for s in report.stages for c in s.cases
                if not c.passed]
    assert not failures
    assert report.passed


def test_there_are_at_least_thirty_wrong_solutions_each_a_known_mistake() -> None:
    assert len(WRONG) >= 30
    assert len({name for name, *_ in WRONG}) == len(WRONG)
    assert {mistake for *_, mistake in WRONG} <= set(MISTAKE_IDS)


@pytest.mark.parametrize(("name", "stage", "mistake"),
                         [(name, stage, mistake) for name, _e, stage, mistake in WRONG])
def test_each_wrong_solution_fails_at_its_stage_with_its_mistake_named(
        name: str, stage: int, mistake: str) -> None:
    edits = next(e for n, e, *_ in WRONG if n == name)
    report = check_source(apply(CORRECT, edits), timeout=TIMEOUT)
    assert report.error is None, report.error
    assert not report.passed
    failing_stage, case = report.first_failure  # type: ignore[misc]
    assert (failing_stage.stage, case.mistake) == (stage, mistake), case.message
    # Every stage before it passed: the check stopped at the first that fails.
    assert [s.passed for s in report.stages] == [True] * stage + [False]
    assert case.message and case.code


# The learner's walk iterates `_prev`, a set of Values hashed by identity: the order it
# fires two consumers of one value in changes from process to process. These engines fix
# that order (each Value numbered as it is made; the walk visits the inputs by number, up or
# down), so both orders are run on every machine, every time.
ORDERED_WALK = [
    ("class Value:\n    def __init__(self, data, _children=(), _op=''):\n",
     "MADE = itertools.count()\n\n\nclass Value:\n"
     "    def __init__(self, data, _children=(), _op=''):\n        self._n = next(MADE)\n"),
    ("import math\n", "import itertools\nimport math\n"),
    ("            for child in node._prev:\n",
     "            for child in sorted(node._prev, key=lambda v: v._n, reverse=REVERSE):\n"),
]


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", ["mul-assigns-self", "mul-assigns-other", "add-assigns-self",
                                  "add-assigns-other", "tanh-assigns"])
def test_an_assign_on_one_operand_is_caught_and_named_whatever_order_backward_fires_in(
        name: str, reverse: bool) -> None:
    # `self.grad = other.data * out.grad` in * alone (the issue-30 defect): the diamond
    # passed when the walk happened to fire the * node first, and the reused intermediate
    # failed with no mistake named ("a.grad is 16 where it should be 18").
    edits = next(e for n, e, *_ in WRONG if n == name)
    source = apply(apply(CORRECT, edits), ORDERED_WALK).replace(
        "MADE = itertools.count()", f"REVERSE = {reverse}\nMADE = itertools.count()")
    report = check_source(source, timeout=TIMEOUT)
    assert report.error is None, report.error
    assert [s.passed for s in report.stages] == [True] * 6 + [False]
    failing = [(c.name, c.mistake) for c in report.stages[6].cases if not c.passed]
    # The same cases fail in both orders (the other order is the other parametrisation),
    # and every failing case names the mistake.
    expected = {"mul-assigns-self": ["diamond", "reused-intermediate"],
                "mul-assigns-other": ["a-times-a", "reused-intermediate"],
                "add-assigns-self": ["diamond-of-sums"],
                "add-assigns-other": ["a-plus-a"],
                "tanh-assigns": ["used-by-every-op"]}[name]
    assert failing == [(case, "assign-not-accumulate") for case in expected]


def test_the_numbers_of_an_assign_in_one_closure_are_named_in_any_firing_order() -> None:
    # The naming alone, on the mixed diamond whose result depends on the order: `=` for
    # `self.grad` in * gives 18 (the * node fired last) or 24 (right); in + it gives 6.
    from gradbox.build.explain import assign_variants

    code = "a = Value(2.0)\nb = a * 3\nc = a + 4\nd = b * c\nd.backward()"
    found = {(tuple(sorted(slots)), values["a.grad"])
             for slots, values in assign_variants(code, ("a.grad",))}
    assert ((("*", 0),), 18.0) in found and ((("*", 0),), 24.0) in found
    assert ((("+", 0),), 6.0) in found and ((("+", 0),), 24.0) in found


def test_the_failing_case_shows_the_learners_and_the_expected_gradient_at_each_node() -> None:
    # `=` for `+=` in *: a * a gives 3 where it should give 6 (the example).
    edits = next(w[1] for w in WRONG if w[0] == "mul-assigns")
    report = check_source(apply(CORRECT, edits), timeout=TIMEOUT)
    stage, case = report.first_failure  # type: ignore[misc]
    assert (stage.stage, case.name, case.mistake) == (6, "a-times-a", "assign-not-accumulate")
    assert "3" in case.message and "6" in case.message and "+=" in case.message
    graph = case.graph
    assert graph is not None
    by_label = {n.label: n for n in graph.nodes}
    a, b = by_label["a"], by_label["b"]
    assert (a.data, a.grad, a.expected_grad) == (3.0, 3.0, 6.0)
    assert (b.op, b.grad, b.expected_grad, b.parents) == ("*", 1.0, 1.0, (a.id,))
    assert graph.first_wrong == a.id and a.wrong and not b.wrong
    # Every node carries both numbers, and the report crosses as plain data intact.
    assert all(n.expected_grad is not None and n.expected_data is not None
               for n in graph.nodes)
    assert CheckReport.from_json(report.to_json()) == report
    # The line to look at: the first line of the closure that handed `a` its gradient
    # (found through its op's method: backward has freed the closure itself).
    assert apply(CORRECT, edits).splitlines()[case.line - 1].strip() == \
        "self.grad = other.data * out.grad"
    # The Playground can show it beside the broken variant it matches.
    assert (case.playground, case.playground_variant) == ("a = 3.0\nb = a * a", "assign")


def test_a_random_expression_that_fails_is_shrunk_to_a_small_one() -> None:
    # exp's slope from the input: found by the random search over every op when the named
    # exp case is left out; the expression shown is the smallest Hypothesis found.
    wrong = CORRECT.replace("self.grad += e * out.grad", "self.grad += self.data * out.grad")
    stage = (Stage(4, "more-ops", "4. more ops", "", "", (), ("random-all-ops",)),)
    report = check_source(wrong, timeout=TIMEOUT, stages=stage)
    _stage, case = report.first_failure  # type: ignore[misc]
    assert case.name == "random-all-ops"
    assert "exp" in case.code and case.code.count("\n") <= 4, case.code
    assert "smallest failing expression" in case.message
    assert case.graph is not None and case.graph.first_wrong is not None


# --- the sandbox's limits ----------------------------------------------------------------------
ONE_STAGE = (Stage(5, "backward", "5. backward", "", "", (), ("backward-chain",)),)


def test_an_endless_loop_ends_in_a_message_saying_where_it_was() -> None:
    looping = CORRECT.replace(
        "        topo, visited, stack = [], set(), [(self, False)]\n",
        "        topo, visited, stack = build_topo(self)\n").replace(
        "class Value:", "def build_topo(root):\n    stack = [root]\n    while stack:\n"
        "        pass\n    return [], set(), []\n\n\nclass Value:")
    started = time.monotonic()
    report = check_source(looping, timeout=3.0, stages=ONE_STAGE)
    assert time.monotonic() - started < 3.0 + 5.0
    _stage, case = report.first_failure  # type: ignore[misc]
    assert case.mistake == "timeout"
    assert case.message.startswith("stopped after 3 s: your `backward` never returned; it "
                                   "was in `build_topo`, line ")
    assert case.line is not None
    assert looping.splitlines()[case.line - 1].strip() in ("while stack:", "pass")


def test_runaway_recursion_is_named() -> None:
    edits = next(w[1] for w in WRONG if w[0] == "recursive-topological-sort")
    report = check_source(apply(CORRECT, edits), timeout=TIMEOUT)
    _stage, case = report.first_failure  # type: ignore[misc]
    assert (case.name, case.mistake) == ("deep-chain", "recursion")
    assert "explicit stack" in case.message and "build_topo" in case.message


def test_a_two_gigabyte_allocation_ends_in_a_memory_message() -> None:
    hungry = CORRECT.replace("        t = math.tanh(self.data)\n",
                             "        t = math.tanh(self.data)\n"
                             "        junk = bytearray(2 * 1024 ** 3)\n")
    stage = (Stage(4, "more-ops", "4. more ops", "", "", (), ("tanh-backward",)),)
    started = time.monotonic()
    report = check_source(hungry, timeout=20.0, stages=stage)
    assert time.monotonic() - started < 20.0 + 5.0
    _stage, case = report.first_failure  # type: ignore[misc]
    assert case.mistake == "memory" and "memory" in case.message
    assert case.line is not None and "bytearray" in hungry.splitlines()[case.line - 1]


def test_os_exit_in_the_learners_code_ends_in_a_message() -> None:
    leaving = CORRECT.replace("        self.grad = 1.0\n        for node in reversed(topo)",
                              "        import os\n        os._exit(3)\n"
                              "        for node in reversed(topo)")
    report = check_source(leaving, timeout=10.0, stages=ONE_STAGE)
    _stage, case = report.first_failure  # type: ignore[misc]
    assert case.mistake == "crashed" and "exit code 3" in case.message


def test_a_check_says_how_far_it_has_got() -> None:
    handle = start_check(CORRECT, up_to_stage=2, timeout=TIMEOUT)
    assert handle.progress[1] == 3 + 2 + 5  # the cases of stages 0, 1 and 2
    handle.wait()
    assert handle.progress == (10, 10)


def test_a_cancelled_check_says_so_at_once() -> None:
    handle = start_check(CORRECT + "\nwhile True:\n    pass\n", timeout=30.0)
    assert handle.poll() is None
    handle.cancel()
    report = handle.poll()
    assert report is not None and not report.passed and "cancelled" in (report.error or "")


def test_the_learners_prints_are_kept_apart_and_capped() -> None:
    noisy = CORRECT.replace("        self.grad = 1.0\n        for node in reversed(topo)",
                            "        print('backward!' * 1000)\n        self.grad = 1.0\n"
                            "        for node in reversed(topo)")
    report = check_source(noisy, timeout=TIMEOUT, stages=ONE_STAGE)
    case = report.stages[0].cases[0]
    assert case.passed
    assert case.output.startswith("backward!") and len(case.output) < 4200
    assert "more characters not shown" in case.output


def test_a_file_that_cannot_be_used_is_an_error_not_a_failed_case() -> None:
    report = check_source("def broken(:\n    pass\n", timeout=TIMEOUT)
    assert report.error is not None and report.mistake == "syntax-error" and report.line == 1
    assert check_source("x = 1\n", timeout=TIMEOUT).mistake == "missing-name"
    raising = check_source("import math\nmath.nope()\n", timeout=TIMEOUT)
    assert raising.error is not None and raising.line == 2


def test_numbers_that_json_cannot_hold_cross_as_text() -> None:
    wrong = CORRECT.replace("        self.grad = 0.0\n        self._backward",
                            "        self.grad = float('nan')\n        self._backward")
    stage = (Stage(6, "acc", "6. acc", "", "", (), ("a-plus-a",)),)
    report = check_source(wrong, timeout=TIMEOUT, stages=stage)
    _stage, case = report.first_failure  # type: ignore[misc]
    assert case.graph is not None
    assert any(math.isnan(n.grad) for n in case.graph.nodes)


# --- a file part of the way through the stages ---------------------------------------------
def _without(source: str, *pieces: str) -> str:
    for piece in pieces:
        assert source.count(piece) == 1, piece
        source = source.replace(piece, "")
    return source


NN = CORRECT[CORRECT.index("class Module:"):]
FREEING = ("        if not retain_graph:\n            for node in topo:\n"
           "                if node._prev and node._op != '+':\n"
           "                    node._backward = _freed\n")
ZERO_GRAD = "def zero_grad(values):\n    for v in values:\n        v.grad = 0.0\n"
BACKWARD = CORRECT[CORRECT.index("    def backward(self"):CORRECT.index("    def __repr__")]


@pytest.mark.parametrize(("source", "fails_at", "mistake"), [
    (_without(CORRECT, NN, ZERO_GRAD, BACKWARD), 5, "missing-name"),
    (_without(CORRECT, NN, FREEING, ZERO_GRAD), 7, "missing-name"),
    (_without(CORRECT, NN, FREEING), 8, "backward-twice-silent"),
    (_without(CORRECT, NN), 9, "missing-name"),
], ids=["after stage 4", "after stage 6", "after stage 7", "after stage 8"])
def test_a_file_part_of_the_way_passes_every_stage_before_its_next(source: str, fails_at: int,
                                                                  mistake: str) -> None:
    report = check_source(source, timeout=TIMEOUT)
    assert [s.stage for s in report.stages if s.passed] == list(range(fails_at))
    _stage, case = report.first_failure  # type: ignore[misc]
    assert (_stage.stage, case.mistake) == (fails_at, mistake), case.message


def test_what_the_learners_code_forks_is_ended_with_the_check() -> None:
    forking = CORRECT.replace(
        "        self.grad = 1.0\n        for node in reversed(topo)",
        "        import os, time\n        if os.fork() == 0:\n            time.sleep(1000)\n"
        "        self.grad = 1.0\n        for node in reversed(topo)")
    handle = start_check(forking, timeout=10.0, stages=ONE_STAGE)
    report = handle.wait()  # returns: the sleeping fork held the pipes, and was killed
    assert report.passed


def test_a_hang_after_much_writing_to_stderr_still_says_where_it_was() -> None:
    noisy = CORRECT.replace(
        "        self.grad = 1.0\n        for node in reversed(topo)",
        "        import os\n        os.write(2, b'x' * 200000)\n        while True:\n"
        "            pass\n        for node in reversed(topo)")
    report = check_source(noisy, timeout=2.0, stages=ONE_STAGE)
    case = report.stages[0].cases[0]
    assert case.mistake == "timeout"
    assert case.message.startswith("stopped after 2 s: your `backward` never returned")
    assert case.line is not None and noisy.splitlines()[case.line - 1].strip() in (
        "while True:", "pass")


def test_numbers_that_differ_are_written_so_that_they_differ() -> None:
    # Seen in the real window: a one-sided difference 'gives 6 where it should give 6'.
    edits = next(w[1] for w in WRONG if w[0] == "forward-difference")
    report = check_source(apply(CORRECT, edits), timeout=TIMEOUT, up_to_stage=0)
    case = report.first_failure[1]  # type: ignore[index]
    assert "gives 6.000001 where it should give 6 " in case.message, case.message  # 6 + h


@pytest.mark.parametrize("filename", ["hypothesis.py", "json.py"])
def test_a_learners_file_named_like_a_module_the_checker_uses_is_checked(filename: str) -> None:
    # hypothesis.py registered as the module 'hypothesis' broke the random cases: "gradbox's
    # checker failed: cannot import name 'HealthCheck' from 'hypothesis'".
    report = check_source(CORRECT, up_to_stage=4, timeout=TIMEOUT, filename=filename)
    assert report.passed, report.first_failure


def test_a_report_the_learners_code_writes_itself_is_not_believed() -> None:
    forged = b'{"event": "report", "report": {"passed": true, "stages": []}}\n'
    cheating = apply(CORRECT, next(w[1] for w in WRONG if w[0] == "mul-assigns")).replace(
        "def numerical_derivative(f, x, h=1e-6):",
        "import os\nfor fd in range(3, 16):\n    try:\n"
        f"        os.write(fd, {forged!r})\n    except OSError:\n        pass\n\n\n"
        "def numerical_derivative(f, x, h=1e-6):")
    report = check_source(cheating, timeout=TIMEOUT)
    assert not report.passed and report.first_failure is not None
    assert report.first_failure[1].mistake == "assign-not-accumulate"


def test_a_value_that_raises_when_read_is_the_learners_error_not_the_checkers() -> None:
    # A data that raises when read crashed the checker ("gradbox's checker failed").
    odd = CORRECT.replace(
        "        self._op = _op\n",
        "        self._op = _op\n\n"
        "    def __getattribute__(self, name):\n"
        "        if name == 'data':\n"
        "            raise ValueError('no data for you')\n"
        "        return object.__getattribute__(self, name)\n", 1)
    report = check_source(odd, up_to_stage=1, timeout=TIMEOUT)
    case = report.first_failure[1]  # type: ignore[index]
    assert "checker failed" not in case.message
    assert "no data for you" in case.message and case.line is not None
