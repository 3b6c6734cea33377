"""Regression: Playground's plane and multiple gaussians, 1-D functions, and their losses."""

from __future__ import annotations

import json
import math
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.files import points_csv
from gradbox.files.sessions import SessionError, load_session, save_session
from gradbox.training import datasets
from gradbox.training.config import ConfigError, TrainingConfig, config_for
from gradbox.training.datasets import DatasetError
from gradbox.training.trainer import Trainer

SCORES = np.array([0.3, -1.7, 2.4, 0.95, -0.2])
TARGETS = np.array([0.1, 0.5, -1.0, 0.0, -0.2 + 1e-3])


def _numeric(name: str, scores: np.ndarray) -> np.ndarray:
    def f(s: np.ndarray) -> float:
        return float(losses.compute_regression_loss(name, Value(s), TARGETS).data)
    h = 1e-6
    out = np.zeros(len(scores))
    for i in range(len(scores)):
        up, down = scores.copy(), scores.copy()
        up[i] += h
        down[i] -= h
        out[i] = (f(up) - f(down)) / (2 * h)
    return out


@pytest.mark.parametrize("name", losses.REGRESSION_LOSSES)
def test_regression_losses_match_finite_differences(name: str) -> None:
    score = Value(SCORES)
    losses.compute_regression_loss(name, score, TARGETS).backward()
    np.testing.assert_allclose(score.grad, _numeric(name, SCORES), rtol=1e-6, atol=1e-9)


def test_regression_losses_are_their_formulas() -> None:
    e = SCORES - TARGETS
    value = {name: losses.compute_regression_loss(name, Value(SCORES), TARGETS).data
             for name in losses.REGRESSION_LOSSES}
    assert value["mse"] == pytest.approx(np.mean(e ** 2), rel=1e-15)
    assert value["mae"] == pytest.approx(np.mean(np.abs(e)), rel=1e-15)
    huber = np.where(np.abs(e) <= 1, 0.5 * e ** 2, np.abs(e) - 0.5)
    assert value["huber"] == pytest.approx(np.mean(huber), rel=1e-15)


def test_plane_and_bumps_are_playgrounds_formulas_without_noise() -> None:
    plane = datasets.make("plane", 200, 0.0, seed=3)
    assert plane.is_regression and not plane.one_dimensional
    np.testing.assert_allclose(plane.targets, plane.points.sum(axis=1) / 10, rtol=1e-15)
    assert np.abs(plane.points).max() <= 6
    bumps = datasets.make("multi_gaussian", 300, 0.0, seed=3)
    np.testing.assert_array_equal(bumps.targets, datasets.bumps_target(bumps.points))
    centres = np.array([(cx, cy) for cx, cy, _ in datasets.BUMPS])
    assert datasets.bumps_target(centres).tolist() == [s for _, _, s in datasets.BUMPS]
    assert datasets.bumps_target(np.array([[-2.0, 0.0]])).tolist() == [0.0]  # between bumps
    assert np.all(np.abs(bumps.targets) <= 1)


@pytest.mark.parametrize("kind", datasets.ONE_D_KINDS)
def test_a_one_dimensional_dataset_is_points_on_its_curve(kind: str) -> None:
    clean = datasets.make(kind, 100, 0.0, seed=1)
    assert clean.one_dimensional
    x, y = clean.points[:, 0], clean.points[:, 1]
    np.testing.assert_array_equal(clean.targets, y)
    np.testing.assert_allclose(y, datasets.FUNCTIONS[kind](x), rtol=1e-15)
    noisy = datasets.make(kind, 2000, 0.3, seed=1)
    residual = noisy.targets - datasets.FUNCTIONS[kind](noisy.points[:, 0])
    assert residual.std() == pytest.approx(0.3, rel=0.05)


def test_a_regression_point_needs_its_target_and_csv_round_trips() -> None:
    plane = datasets.make("plane", 10, 0.1, seed=0)
    with pytest.raises(DatasetError, match="needs a finite target"):
        plane.add_point(1.0, 2.0, 0)
    plane.add_point(1.0, 2.0, 0, target=0.25)
    assert plane.targets[-1] == 0.25 and plane.labels[-1] == 1
    sine = datasets.make("sine", 10, 0.1, seed=0)
    sine.add_point(0.5, -0.75, 0)  # a 1-D point's target is its height
    assert sine.targets[-1] == -0.75
    for ds in (plane, sine):
        back = points_csv.from_csv(points_csv.to_csv(ds))
        np.testing.assert_array_equal(back.targets, ds.targets)
        np.testing.assert_array_equal(back.points, ds.points)
        assert back.one_dimensional == ds.one_dimensional


@pytest.mark.parametrize("kind", datasets.REGRESSION_KINDS)
def test_training_fits_each_regression_dataset(kind: str) -> None:
    config = TrainingConfig(dataset=kind, hidden=(8, 8), lr=0.1, steps=150, noise=0.05,
                            features=("x1", "x2", "sin x1", "sin x2"))
    trainer = Trainer(config)
    assert config.is_regression and config.effective_loss == "mse" and config.outputs == 1
    trainer.run_steps(150)
    first, last = trainer.history[0], trainer.history[-1]
    assert last.loss < 0.5 * first.loss
    assert math.isnan(last.accuracy) and math.isnan(last.test_accuracy)
    assert not math.isnan(last.test_loss)


def test_a_classification_loss_on_regression_data_becomes_mse_and_back() -> None:
    assert TrainingConfig(dataset="plane", loss="hinge").loss == "mse"
    assert TrainingConfig(dataset="plane", loss="huber").effective_loss == "huber"
    assert TrainingConfig(dataset="moons", loss="mae").loss == "hinge"
    assert TrainingConfig(dataset="moons").with_changes(dataset="sine").loss == "mse"


def test_points_of_the_wrong_kind_are_refused_with_what_to_choose() -> None:
    with pytest.raises(ConfigError, match="choose a regression dataset"):
        Trainer(TrainingConfig(), datasets.make("plane", 20))
    with pytest.raises(ConfigError, match="choose a classification dataset"):
        Trainer(TrainingConfig(dataset="plane"), datasets.make("moons", 20))
    trainer = Trainer(TrainingConfig(dataset="plane"))
    with pytest.raises(ConfigError, match="sine, abs or step"):
        trainer.replace_dataset(datasets.make("sine", 20))


def _rewrite_manifest(path: Path, change: Callable[[dict], None]) -> None:
    with zipfile.ZipFile(path) as z:
        members = {name: z.read(name) for name in z.namelist()}
    manifest = json.loads(members["manifest.json"])
    change(manifest)
    members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def test_a_regression_run_survives_save_and_load(tmp_path: Path) -> None:
    trainer = Trainer(TrainingConfig(dataset="step", loss="huber", hidden=(4,), lr=0.1))
    trainer.run_steps(4)
    save_session(trainer, tmp_path / "s.gradbox")
    loaded = load_session(tmp_path / "s.gradbox")
    np.testing.assert_array_equal(loaded.dataset.targets, trainer.dataset.targets)
    assert loaded.dataset.one_dimensional and loaded.config == trainer.config
    assert math.isnan(loaded.history[-1].accuracy)
    trainer.run_steps(2)
    loaded.run_steps(2)
    assert [r.loss for r in loaded.history] == [r.loss for r in trainer.history]
    # a file that pairs regression points with a classification network is refused
    save_session(Trainer(TrainingConfig(dataset="plane", hidden=(4,))), tmp_path / "p.gradbox")
    _rewrite_manifest(tmp_path / "p.gradbox",
                      lambda m: m["config"].update(dataset="moons", loss="hinge"))
    with pytest.raises(SessionError, match="these points have targets"):
        load_session(tmp_path / "p.gradbox")


def test_a_session_saved_before_these_fields_still_opens(tmp_path: Path) -> None:
    trainer = Trainer(TrainingConfig())
    trainer.run_steps(2)
    save_session(trainer, tmp_path / "s.gradbox")

    def drop(manifest: dict) -> None:
        for name in ("features", "init", "init_scale"):
            del manifest["config"][name]
        for d in manifest["datasets"]:
            del d["one_dimensional"]

    _rewrite_manifest(tmp_path / "s.gradbox", drop)
    loaded = load_session(tmp_path / "s.gradbox")
    assert loaded.config == trainer.config
    assert [r.loss for r in loaded.history] == [r.loss for r in trainer.history]


def test_imported_points_get_a_config_of_their_task() -> None:
    moons = TrainingConfig(hidden=(4,))
    assert config_for(datasets.make("sine", 10), moons).dataset == "sine"
    assert config_for(datasets.make("plane", 10), moons).dataset == "plane"
    assert config_for(datasets.make("moons", 10), TrainingConfig(dataset="abs")).dataset == \
        "moons"
    assert config_for(datasets.make("plane", 10), TrainingConfig(dataset="sine")).dataset == \
        "plane"
    blobs = config_for(datasets.make("blobs", 12, classes=4), moons)
    assert (blobs.dataset, blobs.classes, blobs.effective_loss) == ("blobs", 4, "softmax")
    assert config_for(datasets.make("circle", 10), moons) is moons
    for data in (datasets.make("sine", 10), datasets.make("plane", 10)):
        Trainer(config_for(data, moons), data).run_steps(1)  # and it trains
