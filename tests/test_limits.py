"""Limits that match the machine: estimates from measured per-node costs, refusals with
a message, and errors that always carry text."""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pytest

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP, parameter_count
from gradbox.files import points_csv
from gradbox.training import datasets, limits
from gradbox.training.config import (
    MAX_HIDDEN_LAYERS,
    MAX_WIDTH,
    ConfigError,
    TrainingConfig,
    network_problems,
)
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer


def graph_size(root: Value) -> int:
    seen: set[int] = set()
    stack = [root]
    while stack:
        v = stack.pop()
        if id(v) not in seen:
            seen.add(id(v))
            stack.extend(v.inputs)
    return len(seen)


@pytest.mark.parametrize("sizes", [[2, 8, 8, 1], [2, 16, 16, 1], [2, 30, 3], [2, 5, 5, 5, 1]])
def test_the_node_count_matches_a_built_graph(sizes: list[int]) -> None:
    net = MLP(2, sizes[1:], activation="tanh", seed=0)
    x = np.zeros((6, 2))
    out = net([x[:, 0], x[:, 1]])
    loss = losses.compute_loss("hinge" if sizes[-1] == 1 else "softmax", out,
                               np.zeros(6, dtype=np.int64))
    params = len(net.parameters())
    built = graph_size(loss) - params  # the weights are leaves, not per-step work
    counted, _ = limits.graph_nodes(sizes, "tanh", False, False)
    assert abs(counted - built) <= 0.1 * built


def test_a_network_that_would_not_fit_is_refused_before_it_is_built(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "available_memory", lambda: 200 * 2**20)
    big = TrainingConfig(hidden=(400, 400))
    with pytest.raises(ConfigError, match=r"would need about .* of memory.*200 MB free"):
        Trainer(big)
    assert limits.fits_in_memory(TrainingConfig()) == ""
    Trainer(TrainingConfig())  # the default still builds


def test_the_estimate_grows_with_the_network_and_the_batch() -> None:
    small = limits.estimate_step(TrainingConfig(hidden=(8, 8)))
    wide = limits.estimate_step(TrainingConfig(hidden=(64, 64)))
    batched = limits.estimate_step(TrainingConfig(hidden=(64, 64), batch_size=8))
    assert small.seconds < wide.seconds and batched.bytes < wide.bytes
    assert wide.batch == 80 and batched.batch == 8
    # (1000, 1000) on 100 points: the issue measured 4 GB for a step.
    huge = limits.estimate_step(TrainingConfig(hidden=(1000, 1000)))
    assert 2 * 2**30 < huge.bytes < 8 * 2**30


def test_slow_warning_uses_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    # The estimate as at launch: steps other tests trained in this process (fast ones, on
    # a quiet machine) would otherwise correct the cost per node down past the warning.
    monkeypatch.setattr(limits, "_ratios", deque(maxlen=limits.OBSERVED_STEPS))
    monkeypatch.setattr(limits, "_costs", None)
    assert limits.slow_warning(TrainingConfig()) == ""
    warning = limits.slow_warning(TrainingConfig(hidden=(256, 256), n_samples=1000))
    assert "1,000 samples" in warning and "on this machine" in warning


def test_a_memory_error_is_described_in_words() -> None:
    text = limits.describe_error(MemoryError())
    assert text.startswith("Out of memory") and "nothing was changed" in text
    assert limits.describe_error(ValueError()) == "ValueError"


def test_a_csv_with_more_points_than_a_session_holds_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(points_csv, "MAX_POINTS", 50)  # what the reader holds a file to
    rows = "\n".join(f"{i / 100},{-i / 100},{i % 2}" for i in range(51))
    with pytest.raises(datasets.DatasetError, match="more than 50 points"):
        points_csv.from_csv("x,y,label\n" + rows)
    assert len(points_csv.from_csv("x,y,label\n" + rows.rsplit("\n", 1)[0])) == 50


def test_a_network_too_big_for_memory_is_refused_in_words_and_training_goes_on(
        qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    """The memory check runs where the network would be built: in the training process.
    Its refusal comes back in words, and the run there stays."""
    with qtbot.waitSignal(controller.error, timeout=30000) as signal:
        controller.send(Session.new_run, TrainingConfig(hidden=(700, 700), n_samples=100_000),
                           "A huge network")
    text, _detail = signal.args
    assert "of memory for each step" in text and "free" in text
    with qtbot.waitSignal(controller.snapshot_changed, timeout=10000):
        controller.step()
    assert controller.snapshot.step == 1 and controller.snapshot.config.hidden == (8, 8)


def test_the_step_cost_follows_the_steps_actually_trained(monkeypatch) -> None:
    """Measured at launch on a busy machine the figure came out 3.6x too high for the
    whole session; the steps trained since correct it (within CORRECTION_RANGE: the
    launch figure counts the machine's load since, so what is left is the drift)."""
    from collections import deque

    from gradbox.training import limits
    from gradbox.training.config import TrainingConfig

    config = TrainingConfig(hidden=(48, 48), n_samples=1000, test_ratio=0.0)
    monkeypatch.setattr(limits, "_ratios", deque(maxlen=limits.OBSERVED_STEPS))
    monkeypatch.setattr(limits, "_run_seen", [None, 0])
    true_costs = limits.step_costs(corrected=False)
    # The launch figure, 1.8 times what this machine does now.
    monkeypatch.setattr(limits, "_costs", true_costs.scaled(1.8))
    busy = limits.estimate_step(config).seconds
    # A run's first two steps build and plan its graph: they say nothing of the later ones.
    for _ in range(limits.STARTING_STEPS):
        limits.observe_step(config, busy * 10)
    for _ in range(limits.OBSERVED_NEEDED - 1):
        limits.observe_step(config, busy / 1.8)
    assert limits.estimate_step(config).seconds == busy  # too few seen: unchanged
    limits.observe_step(config, busy / 1.8)
    assert limits.estimate_step(config).seconds == pytest.approx(busy / 1.8)
    # Steps too small for the model say nothing.
    limits.observe_step(TrainingConfig(hidden=(1,), n_samples=4), 1.0)
    assert limits.correction() == pytest.approx(1 / 1.8)
    # 3.6 times: corrected as far as the range goes.
    for _ in range(limits.OBSERVED_STEPS):
        limits.observe_step(config, busy / 3.6)
    assert limits.correction() == limits.CORRECTION_RANGE[0]


def test_trained_steps_feed_the_correction(monkeypatch) -> None:
    from collections import deque

    from gradbox.training import limits
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer

    seen: list[float] = []
    monkeypatch.setattr(limits, "_ratios", deque(maxlen=limits.OBSERVED_STEPS))
    monkeypatch.setattr(limits, "observe_step", lambda config, s, n=None: seen.append(s))
    trainer = Trainer(TrainingConfig(hidden=(4,), n_samples=20))
    for _ in range(3):
        trainer.step()
    for _ in range(4):  # a step taken phase by phase counts once, when it completes
        trainer.substep()
    assert len(seen) == 4 and all(s > 0 for s in seen)
    trainer.capture_graph = True  # traced steps cost more than training: not counted
    trainer.step()
    assert len(seen) == 4


@pytest.mark.parametrize(("hidden", "words"), [
    ((2,) * 65, "hidden has 65 layers; at most 64 hidden layers are allowed"),
    ((8, 5000), "hidden layer 2 has 5,000 neurons; at most 4,096 a layer are allowed"),
    ((1000, 1000, 1000), "hidden layers [1000, 1000, 1000] make 2,006,001 parameters; "
     "at most 2,000,000 are allowed"),
])
def test_every_network_is_held_to_the_same_limits(hidden, words) -> None:  # type: ignore[no-untyped-def]
    """One definition (training.config), checked by TrainingConfig: the Designer, a
    lesson, a command and a file all build networks through it."""
    assert network_problems(hidden, [2, *hidden, 1]) == [words]
    with pytest.raises(ConfigError) as caught:
        TrainingConfig(hidden=hidden)
    assert words in str(caught.value)
    largest = TrainingConfig(hidden=(2,) * MAX_HIDDEN_LAYERS)
    assert len(largest.hidden) == 64 and TrainingConfig(hidden=(MAX_WIDTH,))


def test_a_model_file_is_held_to_the_network_limits() -> None:
    from gradbox.files import exports

    sizes = [2, *([1] * 100), 1]
    flat = [0.0] * parameter_count(sizes)
    text = json.dumps({"format": exports.MODEL_FORMAT, "version": exports.MODEL_VERSION,
                       "layer_sizes": sizes,
                       "activation": "tanh", "output_activation": "linear",
                       "loss": "hinge", "classes": 2, "step": 0, "features": ["x1", "x2"],
                       "parameter_order": "", "flat": flat, "parameters": {}})
    with pytest.raises(exports.ModelFileError, match="hidden has 100 layers; at most 64"):
        exports.load_model_json(text)


def test_the_designer_says_in_words_why_a_network_too_large_is_not_applied(  # type: ignore[no-untyped-def]
        qtbot, window) -> None:
    from PySide6.QtCore import Qt

    designer, before = window.designer, window.controller.snapshot.config.hidden
    spin = designer.layer_spins[0]
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=5000)
    spin.selectAll()
    qtbot.keyClicks(spin, "5000")
    qtbot.keyClick(spin, Qt.Key_Return)
    qtbot.waitUntil(lambda: "Not applied" in designer.status.text(), timeout=5000)
    assert "hidden layer 1 has 5,000 neurons; at most 4,096" in designer.status.text()
    assert window.controller.snapshot.config.hidden == before
    designer.show_config(TrainingConfig(hidden=(2,) * MAX_HIDDEN_LAYERS))
    assert not designer.add_layer.isEnabled()
    assert "At most 64 hidden layers" in designer.add_layer.toolTip()


def test_a_point_count_past_the_range_is_refused_in_words_not_capped(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    """issue 32, item 21: the Points box turned 1e9 into 100000 and 0 into 100, silently."""
    from PySide6.QtCore import Qt as _Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    win = open_window((1366, 768))
    box = win.designer.n_samples
    for typed in ("1000000000", "0"):
        box.setFocus()
        box.selectAll()
        QTest.keyClicks(QApplication.focusWidget(), typed)
        QTest.keyClick(QApplication.focusWidget(), _Qt.Key.Key_Return)
        assert "Not applied" in win.messages.text() and typed in win.messages.text(), typed
        assert box.value() == win.controller.snapshot.config.n_samples  # what the run uses


def test_a_steps_prediction_is_made_again_when_the_figure_changes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """observe_step keeps its last prediction for the next step of the same run (issue
    34) and makes it again once the step time is measured anew."""
    monkeypatch.setattr(limits, "_ratios", deque(maxlen=limits.OBSERVED_STEPS))
    monkeypatch.setattr(limits, "_run_seen", [None, 0])
    monkeypatch.setattr(limits, "_costs", None)  # the guess until measured
    config = TrainingConfig(hidden=(64, 64), n_samples=1000)
    for _ in range(limits.STARTING_STEPS + 2):  # (a run's first two are not counted)
        limits.observe_step(config, 0.5)
    first = limits.estimate_step(config, corrected=False).seconds
    assert list(limits._ratios) == [0.5 / first] * 2
    # (calibrated() clears the ratios: they were of the old figure)
    limits.calibrated(limits.step_costs(corrected=False).scaled(2.0))
    limits.observe_step(config, 0.5)
    second = limits.estimate_step(config, corrected=False).seconds
    assert second != first and list(limits._ratios) == [0.5 / second]
