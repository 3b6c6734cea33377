"""Build it yourself: the checks pass a correct engine and name each wrong one's mistake.

Each wrong solution is the correct one (tests/build_solutions/correct.py) with one edit,
as a learner would make it; each must fail at the stage that checks that rule, with the
mistake id the issue's list gives it. Every check runs in the sandbox's child.
"""

from __future__ import annotations

from pathlib import Path

from gradbox.build.sandbox import check_source

SOLUTIONS = Path(__file__).parent / "build_solutions"
CORRECT = (SOLUTIONS / "correct.py").read_text(encoding="utf-8")
TIMEOUT = 20.0  # generous: the machine is shared; a check takes 2-5 s here


def test_a_correct_engine_passes_every_stage_up_to_the_network() -> None:
    report = check_source(CORRECT, up_to_stage=9, timeout=TIMEOUT)
    assert report.error is None
    assert [s.stage for s in report.stages] == list(range(10))
    failures = [(s.stage, c.name, c.message) for s in report.stages for c in s.cases
                if not c.passed]
    assert not failures
    assert report.passed
