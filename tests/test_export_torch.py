"""The PyTorch export: a standalone script that retrains a run and matches its losses.

The first tests read the script without torch: it parses, imports only torch, and the
data, weights, learning rates, batches and skipped zero_grads it embeds are the run's,
exactly. The last ones run the scripts with torch, where it is installed (torch is not
a dependency of gradbox), and compare every printed loss with the app's history.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gradbox.autograd import features
from gradbox.files import points_csv
from gradbox.files.export_torch import TOLERANCE, pytorch_script
from gradbox.files.sessions import load_session, save_session
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

MICROGRAD_DEMO = TrainingConfig(test_ratio=0.0, hidden=(16, 16), activation="relu", lr=1.0,
                                schedule="linear", steps=100)


def _forget_some_steps(trainer: Trainer) -> None:
    """3 plain steps, 3 with zero_grad forgotten, rewind to 4, then a new rate for 6."""
    trainer.run_steps(3)
    trainer.set_forget_zero_grad(True)
    trainer.run_steps(3)
    trainer.rewind(4)
    trainer.set_forget_zero_grad(False)
    trainer.set_lr(0.2)
    trainer.run_steps(6)


def _edit_weights_by_hand(trainer: Trainer) -> None:
    """Edits before step 1 and step 4; one after step 4 is undone by a rewind."""
    trainer.set_parameter("layers.0.neurons.1.w.0", 0.75)
    trainer.run_steps(3)
    trainer.set_parameter("layers.2.neurons.0.b", -0.3)
    trainer.run_steps(1)
    trainer.set_parameter("layers.1.neurons.2.w.4", 9.0)  # undone by the rewind below
    trainer.run_steps(2)
    trainer.rewind(3)
    trainer.set_parameter("layers.1.neurons.2.w.4", 1.25)
    trainer.run_steps(4)


@dataclass(frozen=True)
class Scenario:
    config: TrainingConfig
    steps: int = 0
    drive: Callable[[Trainer], None] | None = None

    def trainer(self) -> Trainer:
        trainer = Trainer(self.config)
        if self.drive is not None:
            self.drive(trainer)
        else:
            assert trainer.run_steps(self.steps) == f"ran {self.steps} steps"
        return trainer


SCENARIOS = {
    "default, 20 steps": Scenario(TrainingConfig(), 20),
    "micrograd demo, 30 steps": Scenario(MICROGRAD_DEMO, 30),
    "adam, mini-batches, L1, softmax on 3 blobs, 15 steps": Scenario(TrainingConfig(
        dataset="blobs", classes=3, optimizer="adam", lr=0.05, batch_size=16, l1=1e-3), 15),
    "sgd momentum, logistic, sigmoid": Scenario(TrainingConfig(
        loss="logistic", momentum=0.9, lr=0.1, activation="sigmoid"), 20),
    "mse, linear units, step schedule past its first halving": Scenario(TrainingConfig(
        loss="mse", activation="linear", hidden=(4,), schedule="step", lr=0.05, l2=0.0,
        batch_size=30), 55),
    "forget zero_grad for some steps, rewind, learning-rate edit": Scenario(
        TrainingConfig(), drive=_forget_some_steps),
    "weights edited by hand, one edit undone by a rewind": Scenario(
        TrainingConfig(momentum=0.5), drive=_edit_weights_by_hand),
    "every input feature, He init, on circle": Scenario(TrainingConfig(
        dataset="circle", features=tuple(features.NAMES), init="he", init_scale=0.8,
        hidden=(4,), activation="relu", lr=0.05, batch_size=40), 25),
    "regression: sine with sin x₁ and x₁², Huber, xavier": Scenario(TrainingConfig(
        dataset="sine", features=("x1", "x1^2", "sin x1"), loss="huber", init="xavier",
        hidden=(6,), lr=0.1, noise=0.2), 25),
    "regression: multiple gaussians, MSE; plane-style 2-D targets": Scenario(TrainingConfig(
        dataset="multi_gaussian", features=("x1", "x2", "x1*x2"), hidden=(5, 3), lr=0.05,
        optimizer="adam"), 20),
    "regression: abs with mean absolute error": Scenario(TrainingConfig(
        dataset="abs", loss="mae", hidden=(4,), lr=0.05, init="normal", init_scale=0.5), 20),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[Trainer, str]]:
    """Each scenario's trainer and its script (built once: several tests read them)."""
    out = {}
    for name, scenario in SCENARIOS.items():
        trainer = scenario.trainer()
        out[name] = (trainer, pytorch_script(trainer))
    return out


def _assigned(script: str) -> dict[str, Any]:
    """The literal values the script assigns to upper-case names (its embedded data)."""
    values: dict[str, Any] = {}
    for node in ast.parse(script).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id.isupper()):
            name = node.targets[0].id
            if isinstance(node.value, ast.Call) and ast.unparse(node.value) == "set()":
                values[name] = set()
            else:
                values[name] = ast.literal_eval(node.value)
    return values


# --- the script as text, no torch needed ---------------------------------------------------
@pytest.mark.parametrize("name", SCENARIOS)
def test_script_is_python_that_imports_only_torch(runs: dict[str, tuple[Trainer, str]],
                                                  name: str) -> None:
    _, script = runs[name]
    tree = ast.parse(script)
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
        # Comments and the header may name the app; the code must not use it.
        if isinstance(node, ast.Name):
            assert "gradbox" not in node.id.lower()
        if isinstance(node, ast.Attribute):
            assert "gradbox" not in node.attr.lower()
    assert imported == {"torch", "torch.nn.functional"}
    assert "import gradbox" not in script and "from gradbox" not in script
    compile(script, "exported.py", "exec")


@pytest.mark.parametrize("name", SCENARIOS)
def test_script_embeds_the_run_exactly(runs: dict[str, tuple[Trainer, str]], name: str) -> None:
    trainer, script = runs[name]
    v = _assigned(script)
    ds = trainer.dataset
    # Exact float equality: the literals must read back as the same float64s.
    assert np.array_equal(np.array(v["POINTS"], dtype=np.float64), ds.points)
    if ds.targets is not None:
        assert np.array_equal(np.array(v["TARGETS"], dtype=np.float64), ds.targets)
        assert "LABELS" not in v
    else:
        assert v["LABELS"] == ds.labels.tolist()
    assert v["IS_TEST"] == ds.is_test.tolist()
    flat = [x for weight, bias in v["INITIAL_WEIGHTS"]
            for row, b in zip(weight, bias) for x in [*row, b]]
    assert np.array_equal(np.array(flat), trainer.initial_params)
    assert v["LRS"] == [r.lr for r in trainer.history]
    assert v["APP_LOSSES"] == [r.loss for r in trainer.history]
    app_test = [None if math.isnan(r.test_loss) else r.test_loss for r in trainer.history]
    assert v["APP_TEST_LOSSES"] == app_test
    assert v["SKIP_ZERO_GRAD"] == {r.step for r in trainer.history if r.zero_grad_skipped}
    expected_edits: dict[int, list[tuple[Any, ...]]] = {}
    for e in trainer.edits:
        parts = e.name.split(".")  # layers.L.neurons.J.w.I or layers.L.neurons.J.b
        where = ("weight", (int(parts[3]), int(parts[5]))) if parts[4] == "w" else (
            "bias", (int(parts[3]),))
        expected_edits.setdefault(e.step + 1, []).append((int(parts[1]), *where, e.new))
    assert v["EDITS"] == expected_edits
    expected_batches = [trainer.batch_indices(s).tolist() for s in range(trainer.step_count)]
    if v["BATCHES"] is None:
        train = np.flatnonzero(~ds.is_test).tolist()
        assert all(b == train for b in expected_batches)
    else:
        assert v["BATCHES"] == expected_batches


def test_the_scenarios_exercise_what_they_name(runs: dict[str, tuple[Trainer, str]]) -> None:
    """Each special case really is in the script (else the torch runs would prove less)."""
    forget, forget_script = runs["forget zero_grad for some steps, rewind, learning-rate edit"]
    assert [r.zero_grad_skipped for r in forget.history] == [False] * 3 + [True] + [False] * 6
    assert [r.lr for r in forget.history] == [0.5] * 4 + [0.2] * 6
    assert _assigned(forget_script)["SKIP_ZERO_GRAD"] == {4}
    # Without the skipped zero_grad, step 5 would see other gradients and another loss.
    clean = Trainer(TrainingConfig())
    clean.run_steps(4)
    clean.set_lr(0.2)
    clean.run_steps(1)
    assert abs(clean.history[4].loss - forget.history[4].loss) > 1e-3

    edited, edited_script = runs["weights edited by hand, one edit undone by a rewind"]
    assert _assigned(edited_script)["EDITS"] == {
        1: [(0, "weight", (1, 0), 0.75)],
        4: [(2, "bias", (0,), -0.3), (1, "weight", (2, 4), 1.25)]}
    assert edited.step_count == 7 and "9.0" not in edited_script.split("EDITS = ")[1][:300]
    # The edits matter: without them step 2 would see other weights and another loss.
    plain = Trainer(TrainingConfig(momentum=0.5))
    plain.run_steps(2)
    assert abs(plain.history[1].loss - edited.history[1].loss) > 1e-3

    _, adam_script = runs["adam, mini-batches, L1, softmax on 3 blobs, 15 steps"]
    batches = _assigned(adam_script)["BATCHES"]
    assert batches is not None and len(batches) == 15 and len(batches[0]) == 16
    assert batches[0] != batches[1]
    assert "torch.optim.Adam(" in adam_script and "F.cross_entropy" in adam_script

    demo_lrs = _assigned(runs["micrograd demo, 30 steps"][1])["LRS"]
    assert demo_lrs[0] == 1.0 and demo_lrs[-1] < demo_lrs[0]  # the linear schedule decays
    step_lrs = _assigned(runs["mse, linear units, step schedule past its first halving"][1])
    assert step_lrs["LRS"][49] == 0.05 and step_lrs["LRS"][50] == 0.025

    momentum_script = runs["sgd momentum, logistic, sigmoid"][1]
    assert "momentum=0.9" in momentum_script and "F.softplus(-y * scores)" in momentum_script


def _numpy_loss(v: dict[str, Any], loss: str, l2: float) -> float:
    """The first step's loss from the script's own numbers, with numpy (for tanh nets)."""
    batch = [i for i, t in enumerate(v["IS_TEST"]) if not t]
    h = np.array(v["POINTS"])[batch]
    layers = v["INITIAL_WEIGHTS"]
    for i, (weight, bias) in enumerate(layers):
        h = h @ np.array(weight).T + np.array(bias)
        if i < len(layers) - 1:
            h = np.tanh(h)
    y = 2.0 * np.array(v["LABELS"])[batch] - 1.0
    assert loss == "hinge"
    data = float(np.mean(np.maximum(1 - y * h[:, 0], 0)))
    params = [np.array(a) for pair in layers for a in pair]
    return data + l2 * sum(float(np.sum(p * p)) for p in params)


def test_weights_map_to_rows_of_each_linear(runs: dict[str, tuple[Trainer, str]]) -> None:
    """Row j of a layer's weight is gradbox's neuron j: the script's numbers, run as a
    torch Linear would, give the app's first loss."""
    trainer, script = runs["default, 20 steps"]
    v = _assigned(script)
    assert abs(_numpy_loss(v, "hinge", trainer.config.l2) - trainer.history[0].loss) < 1e-12


def test_edited_points_are_flagged_in_the_header() -> None:
    trainer = Trainer(TrainingConfig())
    trainer.run_steps(2)
    edited = trainer.dataset.copy()
    edited.add_point(0.5, 0.5, 1)
    trainer.replace_dataset(edited)
    script = pytorch_script(trainer)
    assert "the points were edited during this session" in script
    assert "edited" not in pytorch_script(Trainer(TrainingConfig()))


def test_an_untrained_run_exports_a_script_with_nothing_to_compare() -> None:
    script = pytorch_script(Trainer(TrainingConfig()))
    v = _assigned(script)
    assert v["LRS"] == [] and v["APP_LOSSES"] == []
    assert "nothing to compare" in script


def test_data_from_csv_is_embedded_too() -> None:
    """Points the user loaded (not generated by a seed) are carried as they are."""
    data = points_csv.from_csv("x,y,label\n0.1,0.2,0\n-0.3,0.4,1\n1e-300,-2.5,1\n")
    trainer = Trainer(TrainingConfig(), dataset=data)
    trainer.run_steps(2)
    v = _assigned(pytorch_script(trainer))
    assert v["POINTS"] == [[0.1, 0.2], [-0.3, 0.4], [1e-300, -2.5]]


# --- running the scripts with torch --------------------------------------------------------
# One interpreter runs every scenario's script in turn (torch's import costs seconds, so
# one per script would not fit the test budget); gradbox is made unimportable in it, so a
# script that needed gradbox would fail. One script also runs on its own, as a user runs it.
RUNNER = """
import runpy, sys
sys.modules["gradbox"] = None  # `import gradbox` now raises ImportError
for path in sys.argv[1:]:
    print("=== " + path, flush=True)
    runpy.run_path(path, run_name="__main__")
"""
STEP_LINE = re.compile(r"^step\s+(\d+)\s+loss\s+(\S+)\s+app\s+(\S+)", re.M)
MAX_LINE = re.compile(r"^max difference from the app over (\d+) steps: (\S+)$", re.M)
MAX_TEST_LINE = re.compile(r"^max test-loss difference from the app: (\S+)$", re.M)


ALTERED = "default, with the app's step-2 loss raised by 1e-3"


def _altered_script(run: tuple[Trainer, str]) -> str:
    trainer, script = run
    loss = trainer.history[1].loss
    altered = script.replace(f"{loss!r}, ", f"{loss + 1e-3!r}, ", 1)
    assert altered != script
    return altered


def _need_torch() -> None:
    # find_spec rather than importorskip: importing torch here would cost seconds and
    # is not needed, since the scripts run in their own interpreter.
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: the exported PyTorch script cannot be run here "
                    "(torch is optional for gradbox; `pip install torch` to run these tests)")


@pytest.fixture(scope="module")
def torch_output(runs: dict[str, tuple[Trainer, str]],
                 tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    _need_torch()
    folder = tmp_path_factory.mktemp("torch_scripts")
    scripts = {name: script for name, (_, script) in runs.items()}
    scripts[ALTERED] = _altered_script(runs["default, 20 steps"])
    paths = {}
    for i, (name, script) in enumerate(scripts.items()):
        paths[name] = folder / f"scenario_{i}.py"
        paths[name].write_text(script, encoding="utf-8")
    # -I: no user site, no PYTHONPATH, no current directory on the path.
    standalone = subprocess.Popen(
        [sys.executable, "-I", str(paths["default, 20 steps"])], cwd=folder,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    together = subprocess.run(
        [sys.executable, "-I", "-c", RUNNER, *map(str, paths.values())], cwd=folder,
        capture_output=True, text=True, timeout=300)
    own_out, own_err = standalone.communicate(timeout=300)
    assert together.returncode == 0, together.stderr[-3000:]
    assert standalone.returncode == 0, own_err[-3000:]
    pieces = together.stdout.split("=== ")[1:]
    by_path = {p.split("\n", 1)[0]: p.split("\n", 1)[1] for p in pieces}
    return {"scenarios": {name: by_path[str(path)] for name, path in paths.items()},
            "standalone": own_out}


def _check_output(trainer: Trainer, output: str) -> float:
    """Every printed loss equals the app's to TOLERANCE; returns the script's own max."""
    printed = [(int(s), float(loss), float(app)) for s, loss, app in STEP_LINE.findall(output)]
    assert [s for s, _, _ in printed] == [r.step for r in trainer.history]
    for (step, loss, app), record in zip(printed, trainer.history):
        assert abs(loss - record.loss) <= TOLERANCE, f"step {step}: {loss} vs {record.loss}"
        assert abs(app - record.loss) <= 1e-12  # the embedded copy, printed to 12 places
    (steps, worst), = MAX_LINE.findall(output)
    assert int(steps) == trainer.step_count
    worst_test = MAX_TEST_LINE.findall(output)
    assert bool(worst_test) == bool(trainer.dataset.is_test.any())
    assert all(float(w) <= TOLERANCE for w in [worst, *worst_test])
    assert f"torch reproduces the app within {TOLERANCE:g}" in output
    return float(worst)


@pytest.mark.parametrize("name", SCENARIOS)
def test_torch_reproduces_the_loss_history(runs: dict[str, tuple[Trainer, str]],
                                           torch_output: dict[str, Any], name: str) -> None:
    trainer, _ = runs[name]
    _check_output(trainer, torch_output["scenarios"][name])


def test_a_script_runs_on_its_own(runs: dict[str, tuple[Trainer, str]],
                                  torch_output: dict[str, Any]) -> None:
    trainer, _ = runs["default, 20 steps"]
    assert _check_output(trainer, torch_output["standalone"]) <= TOLERANCE


def test_a_changed_run_is_reported_as_different(torch_output: dict[str, Any]) -> None:
    """The script's verdict can fail: the same script with one app loss altered."""
    output = torch_output["scenarios"][ALTERED]
    assert "torch differs from the app by more than" in output
    (_, worst), = MAX_LINE.findall(output)
    assert float(worst) == pytest.approx(1e-3, rel=1e-6)


def test_a_saved_session_exports_the_same_script(runs: dict[str, tuple[Trainer, str]],
                                                 tmp_path: Path) -> None:
    """`gradbox --export-pytorch FILE OUT.py` loads a session file and exports it."""
    for name in ("weights edited by hand, one edit undone by a rewind",
                 "adam, mini-batches, L1, softmax on 3 blobs, 15 steps"):
        trainer, script = runs[name]
        save_session(trainer, tmp_path / "run.gradbox")
        assert pytorch_script(load_session(tmp_path / "run.gradbox")) == script


def test_a_half_done_step_is_left_out() -> None:
    """Between phases, only the completed steps are exported (as a save would store)."""
    trainer = Trainer(TrainingConfig(n_samples=30))
    trainer.run_steps(2)
    before = pytorch_script(trainer)
    trainer.substep()
    trainer.substep()
    assert trainer.phase == "backward"
    assert pytorch_script(trainer) == before


def test_the_window_builds_the_script_in_a_process_of_its_own(qtbot, window, tmp_path,  # type: ignore[no-untyped-def]
                                                              monkeypatch) -> None:
    """Issue 31 item 13: a 1000x1000 network's script was built on the UI thread (3.95 s
    frozen). Building it in this process now fails the test: the export's own process
    has its own copy of the module."""
    import ast

    from gradbox.files import export_torch

    def not_here(*_: object) -> str:
        raise AssertionError("the script was built in the window's process")
    monkeypatch.setattr(export_torch, "pytorch_script", not_here)
    monkeypatch.setattr(export_torch, "pytorch_script_of", not_here)
    window.controller.step()
    qtbot.waitUntil(lambda: window.controller.snapshot.step == 1, timeout=10000)
    written: list[object] = []
    window.class_exports.export_pytorch(tmp_path / "run.py", written.append)
    qtbot.waitUntil(lambda: bool(written), timeout=60000)
    assert written == [tmp_path / "run.py"], window.error_box and window.error_box.text()
    ast.parse((tmp_path / "run.py").read_text())
    assert "Exported run.py" in window.messages.text()
