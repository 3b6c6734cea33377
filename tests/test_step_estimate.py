"""The step-time estimate's model (gradbox.training.limits) at fixed costs: the kinds of
step it tells apart, what it counts, and the warning that quotes it. Not timed: the
estimate against real steps is measured by benchmarks/bench_estimate.py."""

from __future__ import annotations

from collections import deque
from dataclasses import replace

import pytest

from gradbox.autograd.fused import Plan
from gradbox.training import calibration, limits
from gradbox.training.config import TrainingConfig
from gradbox.training.trainer import Trainer

# Costs as measured on 2 cores at load ~5 (CPU seconds), fixed here.
COSTS = limits.StepCosts(step=3e-4, built=5e-6, built_sample=2e-9, built_beyond=2.5e-9,
                         fused=3e-7, fused_call=5e-7, fused_sample=1.5e-9,
                         fused_beyond=2e-9, first=1e-6, first_sample=3e-9,
                         first_beyond=5e-9, plan=3e-6, plan_sample=5e-9, evaluate=1e-9)
ALL = ("x1", "x2", "x1^2", "x2^2", "x1*x2", "sin x1", "sin x2")


@pytest.fixture(autouse=True)
def fixed_costs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "_costs", COSTS)
    monkeypatch.setattr(limits, "_ratios", deque(maxlen=limits.OBSERVED_STEPS))
    monkeypatch.setattr(limits, "_run_seen", [None, 0])


def test_a_kept_graph_with_fused_layers_is_estimated_below_one_built_node_by_node() -> None:
    kept = limits.estimate_step(TrainingConfig(hidden=(64, 64), n_samples=1000))
    # 799 of the 800 training points: a new batch each step, so a graph built each step.
    built = limits.estimate_step(TrainingConfig(hidden=(64, 64), n_samples=1000,
                                                batch_size=799))
    assert kept.seconds < built.seconds / 3
    # The run's first step builds the graph either way; the kept one's second plans it.
    assert kept.first_seconds > kept.second_seconds > kept.seconds
    assert built.second_seconds == built.seconds < built.first_seconds
    # A softmax loss reads the scores: its graph is built each step too.
    softmax = limits.count_nodes(TrainingConfig(hidden=(8, 8), dataset="blobs", classes=3),
                                 80, 80)
    assert not softmax.kept and softmax.fused == 0


@pytest.mark.parametrize("grow", ["points", "width", "depth"])
def test_every_estimate_grows_with_points_width_and_depth(grow: str) -> None:
    def config(k: int) -> TrainingConfig:
        return TrainingConfig(hidden=((16 * k,) if grow == "width" else (16,))
                              * (k if grow == "depth" else 1),
                              n_samples=100 * k ** 2 if grow == "points" else 500)

    estimates = [limits.estimate_step(config(k)) for k in (1, 2, 4, 8)]
    for kind in ("first_seconds", "second_seconds", "seconds"):
        seconds = [getattr(e, kind) for e in estimates]
        assert seconds == sorted(seconds) and len(set(seconds)) == 4, (kind, seconds)


def test_a_wide_layer_costs_less_per_node_than_a_narrow_one() -> None:
    """A layer's numpy calls are per input and per neuron, its numbers per weight: the
    wider the layer, the less each of its nodes costs (the launch figure, from narrow
    networks, made W2's steps several times too long)."""
    def per_node(width: int) -> float:
        config = TrainingConfig(hidden=(width, width), n_samples=10, l2=0.0)
        return limits.estimate_step(config).seconds / limits.estimate_step(config).nodes

    assert per_node(256) < 0.8 * per_node(16)


@pytest.mark.parametrize("kw", [
    {}, {"hidden": (1, 1)}, {"hidden": (8, 8), "features": ALL},
    {"hidden": (8,), "features": ("x1", "x2", "sin x1")},
    {"hidden": (8, 8), "features": ("x1^2", "x2^2")}, {"hidden": (6, 6), "dataset": "sine"},
    {"hidden": (8, 8), "activation": "linear"}, {"hidden": (4,) * 5, "l1": 0.01},
])
def test_the_fused_nodes_counted_are_those_the_plan_fuses(kw: dict) -> None:  # type: ignore[type-arg]
    config = TrainingConfig(**kw)
    trainer = Trainer(config)
    trainer.step()
    kept = trainer.run.kept
    plan = Plan(kept.root, kept.order)
    fused = sum(2 * layer.nin * layer.nout for layer in plan.layers)
    batch = len(trainer.last_batch)
    counts = limits.count_nodes(config, batch, batch)
    assert counts.kept and counts.fused == fused
    assert counts.calls == sum(limits.LAYER_CALLS + 2 * layer.nin + 4 * layer.nout
                               for layer in plan.layers)
    # Every op node of the graph is counted, the loss's within a few per output.
    assert abs(counts.sample + 1 - len(kept.order)) <= 8 * config.layer_sizes[-1] + 8


def test_the_elapsed_time_follows_the_share_of_the_machine() -> None:
    """On a busy machine a long step takes the calibration's elapsed over CPU time; one
    shorter than the scheduler's slice mostly runs whole."""
    long, short = (TrainingConfig(hidden=(256, 256), n_samples=1000), TrainingConfig())
    quiet = [limits.estimate_step(c) for c in (long, short)]
    limits.calibrated(replace(COSTS, elapsed_per_cpu=2.5))
    busy = [limits.estimate_step(c) for c in (long, short)]
    for kind in ("first_seconds", "second_seconds", "seconds"):
        assert getattr(busy[0], kind) == pytest.approx(2.5 * getattr(quiet[0], kind), 0.05)
        assert getattr(quiet[1], kind) < getattr(busy[1], kind) < 1.25 * getattr(quiet[1], kind)
    # The steps trained scale every estimate (their correction), long or short.
    assert COSTS.scaled(3).elapsed(0.001) == pytest.approx(3 * COSTS.elapsed(0.001))


def test_the_warning_quotes_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    config = TrainingConfig(hidden=(64, 64), n_samples=1000)

    def estimate(seconds: float, first: float, second: float) -> None:
        monkeypatch.setattr(limits, "estimate_step", lambda *_a, **_k: limits.StepEstimate(
            13_137, 800, seconds, 300 * 2**20, first, second))

    estimate(0.62, 0.8, 0.7)  # the first steps about as long: not said apart
    assert limits.slow_warning(config) == (
        "4,417 parameters × 1,000 samples: each step will take about 0.62 s on this "
        "machine and need about 300 MB")
    estimate(0.31, 2.4, 3.1)  # under the threshold once under way, not at the start
    assert limits.slow_warning(config) == (
        "4,417 parameters × 1,000 samples: each step will take about 0.31 s on this "
        "machine (the first two up to 3.1 s, building the graph) and need about 300 MB")
    estimate(0.1, 0.3, 0.2)
    assert limits.slow_warning(config) == ""


def test_the_warning_of_a_real_estimate_says_its_numbers() -> None:
    config = TrainingConfig(hidden=(256, 256), n_samples=100)
    estimate = limits.estimate_step(config)
    text = limits.slow_warning(config)
    assert f"about {limits._duration(estimate.seconds)} on this machine" in text
    assert f"up to {limits._duration(estimate.start_seconds)}" in text


def test_calibration_reports_every_cost_through_its_callback() -> None:
    reported: list[limits.StepCosts] = []
    costs = calibration.measure_step_time(reported.append)
    assert reported == [costs]
    assert costs.step > 0 and costs.built > 0 and costs.fused > 0
    assert all(value >= 0 for value in costs.__dict__.values())
    assert costs.elapsed_per_cpu >= 1.0
    assert limits.step_costs(corrected=False) is COSTS  # reported elsewhere, not here


def test_the_training_process_words_its_warning_with_the_windows_figures(
        qtbot, process_controller) -> None:  # type: ignore[no-untyped-def]
    """The warning after a change is worded by the session, in the training process: it
    used a guess there (0.079 s a step for 256 x 256 on 300 points, measured 0.43 s) while
    only the window's estimates had the measured figures. The window sends them."""
    from gradbox.training.session import Session

    slow = COSTS.scaled(1000)
    process_controller.send(Session.use_step_costs, slow)
    limits.calibrated(slow)  # the same figures on this side
    config = TrainingConfig(hidden=(16, 16))
    with qtbot.waitSignal(process_controller.message, timeout=30000,
                          check_params_cb=lambda text: "Warning" in text) as said:
        process_controller.send(Session.set_config, config)
    expected = limits.slow_warning(config)
    assert expected and expected in said.args[0]
