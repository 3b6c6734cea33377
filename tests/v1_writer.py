"""The version-1 session writer, kept for tests only: it makes valid version-1 documents
to damage in the loader's hostile-file tests (tests/fixtures holds one written by the
real version-1 code). It needs a run whose every step has a checkpoint."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

import numpy as np

from gradbox.training.config import TrainingConfig
from gradbox.training.history import StepRecord
from gradbox.training.record import CheckpointPolicy
from gradbox.training.trainer import Trainer

# Every step kept: what a version-1 file holds.
DENSE = CheckpointPolicy(every=1, max_recent=1)


def dense_trainer(config: TrainingConfig) -> Trainer:
    return Trainer(config, policy=DENSE)


def _encode(values: np.ndarray) -> list[Any]:
    return [v if math.isfinite(v) else _spell(v) for v in np.asarray(values, np.float64).tolist()]


def _spell(v: float) -> str:
    return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")


def _number(v: float) -> float | str:
    v = float(v)
    return v if math.isfinite(v) else _spell(v)


def _optimizer(state: Any) -> dict[str, Any]:
    return {k: _encode(v) if isinstance(v, np.ndarray) else int(v) for k, v in state.items()}


def _record(record: StepRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(StepRecord):
        if f.name == "layers":  # measured since; version 1 never held them
            continue
        v = getattr(record, f.name)
        out[f.name] = (bool(v) if isinstance(v, bool) else int(v) if isinstance(v, int)
                       else _number(v))
    return out


def v1_session(trainer: Trainer) -> dict[str, Any]:
    state = trainer.state()
    assert state.phase == "forward"
    steps = state.step
    checkpoints = list(state.checkpoints)
    assert [cp.step for cp in checkpoints] == list(range(steps)), "needs dense checkpoints"
    current = state.current
    config = state.config.to_dict()
    ds = state.dataset
    ghost = current.ghost
    return {
        "format": "gradbox-session", "version": 1, "config": config,
        "dataset": {"points": ds.points.tolist(), "labels": ds.labels.tolist(),
                    "is_test": ds.is_test.tolist(), "classes": int(ds.classes),
                    "version": int(state.dataset_version)},
        "init_seed": int(state.init_seed), "forget_zero_grad": bool(state.forget_zero_grad),
        "phase": "forward", "stop_reason": state.stop_reason, "selected_sample": 0,
        "model": {"initial": np.asarray(state.initial_params).tolist(),
                  "params": current.run.params.tolist(), "grads": current.run.grads.tolist(),
                  "optimizer": _optimizer(current.run.optimizer)},
        "ghost": None if ghost is None else {
            "params": _encode(ghost.params), "grads": _encode(ghost.grads),
            "optimizer": _optimizer(ghost.optimizer)},
        "history": [_record(r) for r in state.history],
        "checkpoints": [{
            "params": cp.run.params.tolist(), "grads": cp.run.grads.tolist(),
            "optimizer": _optimizer(cp.run.optimizer),
            "ghost": None if cp.ghost is None else {
                "params": _encode(cp.ghost.params), "optimizer": _optimizer(cp.ghost.optimizer)},
            "lr": float(cp.lr)} for cp in checkpoints],
        "edits": [{"step": e.step, "name": e.name, "old": e.old, "new": e.new}
                  for e in state.edits],
    }
