"""File → Export notebook: the run rebuilt in gradbox's own API, executed headless, gets
the run's losses bit for bit; a changed cell changes the run."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbclient import NotebookClient

from gradbox.files.notebook import LOSS_LINE, notebook, notebook_text
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer


def run_with_events(config: TrainingConfig) -> Trainer:
    """Steps, a weight typed in, steps that forget zero_grad, a new rate, more steps."""
    t = Trainer(config)
    for _ in range(4):
        t.step()
    t.set_parameter(t.param_names[3], 0.25)
    t.set_parameter(t.param_names[0], -1.5)
    for _ in range(3):
        t.step()
    t.set_forget_zero_grad(True)
    for _ in range(3):
        t.step()
    t.set_forget_zero_grad(False)
    t.set_lr(config.lr / 2)
    for _ in range(5):
        t.step()
    return t


def execute(book: nbformat.NotebookNode) -> str:
    NotebookClient(book, timeout=300, kernel_name="python3").execute()
    out = []
    for cell in book.cells:
        for output in cell.get("outputs", []):
            assert output.get("output_type") != "error", output
            if output.get("name") == "stdout":
                out.append(output["text"])
    return "".join(out)


def printed_losses(text: str) -> list[str]:
    return re.findall(rf"^{LOSS_LINE} \d+: (\S+)$", text, re.M)


@pytest.mark.parametrize("config", [
    TrainingConfig(batch_size=16, l2=0.001),
    TrainingConfig(dataset="spiral", classes=3, optimizer="adam", lr=0.02, hidden=(6,),
                   l1=0.0005, schedule="linear", steps=10),
    TrainingConfig(dataset="sine", loss="mse", hidden=(5,), lr=0.05),
], ids=["moons-sgd-batches-l2", "spiral-3-classes-adam-l1-linear-schedule", "sine-regression"])
def test_the_notebook_reproduces_the_run_bit_for_bit(tmp_path, config: TrainingConfig) -> None:
    trainer = run_with_events(config)
    path = tmp_path / "run.ipynb"
    path.write_text(notebook_text(trainer.state(), "run"), encoding="utf-8")
    book = nbformat.read(path, as_version=4)
    text = execute(book)
    assert printed_losses(text) == [repr(r.loss) for r in trainer.history]
    assert f"all {trainer.step_count} losses are the app's, bit for bit" in text
    images = [o for c in book.cells for o in c.get("outputs", [])
              if "image/png" in o.get("data", {})]
    assert len(images) == 2, "the loss curve and the decision boundary"


def test_a_changed_cell_changes_the_run() -> None:
    trainer = run_with_events(TrainingConfig())
    book = notebook(trainer.state())
    events = next(c for c in book.cells if "FORGET_ZERO_GRAD = [" in c.source)
    assert "FORGET_ZERO_GRAD = [(8, 10)]" in events.source
    assert f"RATE_CHANGES = {{10: {trainer.lr!r}}}" in events.source
    events.source = events.source.replace("FORGET_ZERO_GRAD = [(8, 10)]", "FORGET_ZERO_GRAD = []")
    text = execute(book)
    # Step 8's loss is measured before its update: the missing zero_grad shows from step 9.
    assert "the runs part at step 9" in text
    assert printed_losses(text)[:8] == [repr(r.loss) for r in trainer.history][:8]


def test_without_matplotlib_the_plot_cells_say_how_to_get_it() -> None:
    """issue 32, item 14: after the README's install (no matplotlib) the plot cells failed."""
    trainer = Trainer(TrainingConfig(hidden=(3,)))
    for _ in range(3):
        trainer.step()
    book = notebook(trainer.state())
    blocked = nbformat.v4.new_code_cell(
        "import sys\nsys.modules['matplotlib'] = None\nsys.modules['matplotlib.pyplot'] = None")
    book.cells.insert(0, blocked)
    text = execute(book)  # no cell ends in an error
    assert "The plots need matplotlib: pip install matplotlib" in text
    assert "all 3 losses are the app's, bit for bit" in text
