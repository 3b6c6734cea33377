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
