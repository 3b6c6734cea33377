"""Compare runs: a finished (or paused) run pinned, to lay its curves over the current one's.

Pure data, no Qt. A pinned run keeps its configuration and its per-step records -- what
the loss curve draws -- not its weights: comparing curves needs nothing more, and the
records are small. It belongs to the session, not to one model: it survives a change of
settings (that is the point: SGD, pin, switch to Adam, run again), a reset and a save.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the trainer holds a PinnedRun, so this module cannot import it at run time
    from gradbox.training.config import TrainingConfig
    from gradbox.training.history import History

# Shown in this order when two configurations differ (the fields a learner changes most).
_FIELDS = ("optimizer", "lr", "momentum", "schedule", "batch_size", "activation", "hidden",
           "loss", "l1", "l2", "dataset", "n_samples", "noise", "classes", "test_ratio",
           "seed", "steps")


@dataclass(frozen=True)
class PinnedRun:
    config: TrainingConfig
    history: History

    @property
    def steps(self) -> int:
        return len(self.history)


def _show(field: str, value: object) -> str:
    if field == "hidden":
        return "[" + ", ".join(str(h) for h in value) + "]"  # type: ignore[attr-defined]
    if field == "batch_size" and value is None:
        return "full"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def differences(pinned: TrainingConfig, current: TrainingConfig) -> list[str]:
    """What differs between two configurations, as 'lr 0.5 → 0.1' (pinned → current)."""
    return [f"{f.replace('_', ' ')} {_show(f, getattr(pinned, f))} → "
            f"{_show(f, getattr(current, f))}"
            for f in _FIELDS if getattr(pinned, f) != getattr(current, f)]


def describe(config: TrainingConfig) -> str:
    """A short name for a run: optimizer, learning rate, momentum if any, activation."""
    parts = [config.optimizer, f"lr {config.lr:g}"]
    if config.optimizer == "sgd" and config.momentum:
        parts.append(f"momentum {config.momentum:g}")
    parts.append(config.activation)
    return ", ".join(parts)
