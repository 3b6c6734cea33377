"""The README's Python examples run as written and print what they claim."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples_run(capsys) -> None:  # type: ignore[no-untyped-def]
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 3
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "Value(data=0.999329, grad=1)" in out
    assert "4.0" in out
    assert "accuracy 100%" in out


def test_readme_opens_with_a_venv_then_the_two_commands() -> None:
    commands = re.findall(r"```sh\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    assert commands[:3] == ["python3 -m venv .venv && . .venv/bin/activate",
                            "pip install . && gradbox",
                            "pip install -e '.[test]' && python -m pytest"]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[2] in ci


# --- numbers the README quotes come from the code ---------------------------------------------
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                "seventeen", "eighteen", "nineteen", "twenty")


def _bullet(title: str) -> str:
    """The README's bullet that starts with **title**, joined into one line."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^- \*\*{re.escape(title)}\*\*(.*?)(?=^- |\Z)", text, re.S | re.M)
    assert match, f"no bullet for {title}"
    return " ".join(match.group(1).split())


def test_readme_counts_the_lessons_the_menu_has() -> None:
    from gradbox.teaching.lessons import LESSONS
    bullet = _bullet("Lessons")
    counted = re.search(r"(\w+) guided lessons", bullet)
    assert counted, bullet
    assert counted.group(1) == NUMBER_WORDS[len(LESSONS)]
    # "from the chain rule to momentum on the loss landscape": the first and the last.
    assert "chain rule" in LESSONS[0].title.lower() and "chain rule" in bullet
    assert "momentum" in LESSONS[-1].title.lower() and "momentum" in bullet


def test_readme_names_every_dataset_the_designer_offers() -> None:
    from gradbox.training import datasets
    bullet = _bullet("Designer")
    named = re.findall(r"`([a-z_]+)`", bullet[:bullet.index("points, noise")])
    assert tuple(named) == datasets.KINDS
    assert f"2–{datasets.MAX_CLASSES} classes" in bullet
