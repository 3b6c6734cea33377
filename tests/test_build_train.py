"""Build it yourself, stage 10: the moons trained on the learner's own engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradbox.build.train import TrainSetup, gradbox_curve, rough_estimate, start_training

CORRECT = (Path(__file__).parent / "build_solutions" / "correct.py").read_text("utf-8")


def test_a_correct_learner_engine_reproduces_gradboxs_loss_over_20_steps() -> None:
    setup = TrainSetup(n_samples=30, steps=20)
    progress = start_training(CORRECT, setup, timeout=120).wait()
    assert progress.error is None, progress.error
    assert len(progress.yours) == 20 and len(progress.ghost) == 20
    for mine, theirs in zip(progress.yours, progress.ghost, strict=True):
        assert abs(mine.loss - theirs.loss) <= 1e-9
        assert mine.accuracy == theirs.accuracy
    assert progress.parted_at is None
    assert progress.yours[-1].loss < progress.yours[0].loss  # it trains
    assert progress.seconds_per_step is not None


def test_an_engine_that_trains_differently_is_shown_where_the_runs_part() -> None:
    # Module.zero_grad does nothing: step 0's update is right (the gradients start at 0),
    # step 1's update carries step 0's gradient in, so the loss parts at step 2.
    wrong = CORRECT.replace("        for p in self.parameters():\n            p.grad = 0.0",
                            "        pass")
    assert wrong != CORRECT
    progress = start_training(wrong, TrainSetup(n_samples=20, steps=4), timeout=120).wait()
    assert progress.parted_at == 2
    assert progress.error is None


def test_the_estimate_is_there_before_anything_runs_and_grows_with_the_data() -> None:
    small, big = rough_estimate(TrainSetup(n_samples=10)), rough_estimate(TrainSetup())
    assert 0 < small < big
    assert len(gradbox_curve(TrainSetup(n_samples=10, steps=2))) == 2


@pytest.mark.slow
def test_micrograds_whole_demo_on_a_learner_engine_follows_gradbox_to_the_end() -> None:
    # 100 moons, MLP(2, [16, 16, 1]), 100 steps: about two minutes here (1.2 s a step).
    # Measured once: the largest loss difference over the run 7.8e-16, 100% accuracy.
    progress = start_training(CORRECT, TrainSetup(steps=100), timeout=1800).wait()
    assert progress.error is None and len(progress.yours) == 100
    assert max(abs(m.loss - g.loss) for m, g in zip(progress.yours, progress.ghost,
                                                    strict=True)) <= 1e-9
    assert progress.yours[-1].accuracy >= 0.95


def test_stage_tens_check_names_an_engine_that_trains_differently() -> None:
    from gradbox.build.sandbox import check_source
    from gradbox.build.stages import Stage
    stage = (Stage(10, "train", "10. Train on your engine", "", "", (), ("train-moons",)),)
    wrong = CORRECT.replace("        for p in self.parameters():\n            p.grad = 0.0",
                            "        pass")
    case = check_source(wrong, stages=stage, timeout=60).stages[0].cases[0]
    assert (case.passed, case.mistake) == (False, "trains-differently")
    assert "parts from gradbox's at step 2" in case.message and "zero_grad" in case.message
    right = check_source(CORRECT, stages=stage, timeout=60).stages[0].cases[0]
    assert right.passed, right.message


def test_a_step_leaves_the_cyclic_collector_as_it_found_it() -> None:
    # A step pauses automatic collection; it must not turn it on in a process that runs
    # with it off (a test worker under the window's policy). Our own written-out engine,
    # run here, not in the child: this test is about the step, not the sandbox.
    import gc

    from gradbox.build.train import LearnerRun
    ns: dict[str, object] = {"__name__": "engine"}
    exec(compile(CORRECT, "correct.py", "exec"), ns)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        LearnerRun(ns, TrainSetup(n_samples=10, steps=1)).run_step()
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()
