"""Compare runs: a pinned run's records, kept across resets and saved with the session."""

from __future__ import annotations

from pathlib import Path

from gradbox.files import sessions as persistence
from gradbox.training.config import TrainingConfig, describe, differences
from gradbox.training.trainer import Trainer


def test_the_pinned_run_survives_save_and_load(tmp_path: Path) -> None:
    trainer = Trainer(TrainingConfig(n_samples=40, hidden=(4,), seed=2, test_ratio=0.25))
    trainer.run_steps(5)
    trainer.pin()
    pinned = trainer.pinned
    trainer.reset()
    trainer.run_steps(2)
    assert trainer.snapshot().pinned is pinned  # a reset keeps it
    path = tmp_path / "p.gradbox"
    persistence.save_session(trainer, path)
    loaded = persistence.load_session(path)
    assert loaded.pinned is not None
    assert loaded.pinned.config == pinned.config
    assert loaded.pinned.history == pinned.history  # every record, layer statistics too
    assert loaded.pinned.steps == 5 and len(loaded.history) == 2
    loaded.unpin()
    persistence.save_session(loaded, path)
    assert persistence.load_session(path).pinned is None


def test_a_bad_pinned_run_is_refused_by_name(tmp_path: Path) -> None:
    import io
    import json
    import zipfile

    import pytest
    trainer = Trainer(TrainingConfig(n_samples=40, hidden=(4,), seed=2))
    trainer.run_steps(2)
    trainer.pin()
    good = tmp_path / "good.gradbox"
    persistence.save_session(trainer, good)

    def rewrite(change) -> Path:  # type: ignore[no-untyped-def]
        out = io.BytesIO()
        with zipfile.ZipFile(good) as src, zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                data = src.read(info.filename)
                if info.filename == "manifest.json":
                    manifest = json.loads(data)
                    change(manifest)
                    data = json.dumps(manifest).encode()
                dst.writestr(info.filename, data)
        bad = tmp_path / "bad.gradbox"
        bad.write_bytes(out.getvalue())
        return bad

    with pytest.raises(persistence.SessionError, match=r"pinned\.config"):
        persistence.load_session(rewrite(lambda m: m["pinned"]["config"].update(lr=-1)))
    with pytest.raises(persistence.SessionError, match=r"pinned/step\.npy"):
        persistence.load_session(rewrite(lambda m: m["pinned"].update(steps=3)))


def test_differences_name_what_changed_from_pinned_to_current() -> None:
    a = TrainingConfig(optimizer="sgd", lr=0.5)
    b = a.with_changes(optimizer="adam", lr=0.01, batch_size=10)
    assert differences(a, b) == ["optimizer sgd → adam", "lr 0.5 → 0.01",
                                         "batch size full → 10"]
    assert differences(a, a) == []
    assert describe(a.with_changes(momentum=0.9)) == "sgd, lr 0.5, momentum 0.9, tanh"
