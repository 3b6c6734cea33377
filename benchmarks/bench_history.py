"""Long runs: memory per step, save time and size, rewinds, and Run with autosave on.

Printed, in one run (issue 10):

  * memory per 1,000 steps of the run's state (history, checkpoints, points) on W1 and
    on MLP(2, [64, 64]), with the sparse checkpoints and with one checkpoint per step
    (what the design kept before);
  * save time and file size at 1k, 10k, 30k and 100k W1 steps, and load time;
  * the worst rewind: to the step just before each kept checkpoint (the longest replay),
    over the whole run, and to random steps;
  * Run steps/s with autosave on (headless controller, a 1 s autosave delay), at step 0
    and at step 50,000, and how long a Pause takes to act at each.

Targets: rewind <= 0.5 s anywhere in 100k W1 steps; <= 1 MB per 1,000 W1 steps; a 30k-step
W1 session saves in <= 1 s and is <= 20 MB; Run at 50k >= 90 % of Run at step 0.

    python benchmarks/bench_history.py [--steps 100000] [--wide-steps 300] [--seconds 8]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gradbox.files.sessions import load_state, save_session
from gradbox.training.config import TrainingConfig
from gradbox.training.record import CheckpointPolicy
from gradbox.training.state import TrainingState
from gradbox.training.trainer import Trainer

W1 = TrainingConfig(dataset="moons", n_samples=100, noise=0.1, test_ratio=0.0,
                    hidden=(16, 16), activation="relu", loss="hinge", l2=1e-4,
                    optimizer="sgd", lr=1.0, schedule="linear", steps=100)
WIDE = W1.with_changes(hidden=(64, 64))
DENSE = CheckpointPolicy(every=1, max_recent=1)


def per_thousand(trainer: Trainer, steps: int) -> float:
    """MB the run's state grows by per 1,000 steps, over `steps` more steps."""
    before = trainer.state().nbytes
    trainer.run_steps(steps)
    return (trainer.state().nbytes - before) / steps * 1000 / 2**20


def memory(wide_steps: int) -> None:
    print("memory of the run's state per 1,000 steps (after the last steps kept whole):")
    for name, config, steps, warm in (("W1", W1, 2000, 300), ("64x64", WIDE, wide_steps, 40)):
        for label, policy in (("sparse", None), ("every step", DENSE)):
            trainer = Trainer(config, policy=policy)
            trainer.run_steps(warm)  # past the last steps kept whole (2 MB of them)
            print(f"  {name:6s} {label:10s} {per_thousand(trainer, steps):8.2f} MB"
                  f"   (measured over {steps} steps)")


def save_and_load(state: TrainingState, folder: Path) -> str:
    path = folder / f"run{state.step}.gradbox"
    start = time.perf_counter()
    save_session(state, path)
    saved = time.perf_counter() - start
    start = time.perf_counter()
    load_state(path)
    loaded = time.perf_counter() - start
    return (f"  {state.step:>7,} steps: save {saved:6.3f} s, {path.stat().st_size / 2**20:7.2f}"
            f" MB, load {loaded:6.3f} s, {len(state.checkpoints) + 1} checkpoints")


def rewinds(trainer: Trainer, samples: int) -> None:
    state = trainer.state()
    kept = [cp.step for cp in state.checkpoints]
    worst_targets = [s - 1 for s in kept[1:] if s - 1 not in kept]
    rng = random.Random(0)
    chosen = rng.sample(worst_targets, min(samples, len(worst_targets)))
    random_targets = [rng.randrange(state.step) for _ in range(samples)]
    for label, targets in (("just before a checkpoint", chosen), ("random", random_targets)):
        times = []
        for target in targets:
            copy = Trainer.from_state(state)
            start = time.perf_counter()
            copy.rewind(target)
            times.append(time.perf_counter() - start)
        times.sort()
        print(f"  rewind to {label:24s} worst {times[-1]:.3f} s, median "
              f"{times[len(times) // 2]:.3f} s over {len(times)} rewinds")
    gaps = [b - a for a, b in itertools.pairwise(kept)]
    print(f"  checkpoints kept: {len(kept) + 1} (spacing median {sorted(gaps)[len(gaps) // 2]}"
          f" steps, largest {max(gaps)})")


def run_rate(state: TrainingState, seconds: float, folder: Path) -> tuple[float, float]:
    """Steps/s of a headless Run with autosave on, and how long a Pause then takes."""
    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    from gradbox.port.controller import SessionController
    from gradbox.views.window.files.autosave import Autosaver

    app = QCoreApplication.instance() or QCoreApplication([])
    controller = SessionController(Trainer.from_state(state))
    saver = Autosaver(controller, folder / f"auto{state.step}.gradbox", delay_ms=1000)
    loop = QEventLoop()
    start_step = controller.snapshot.step
    controller.run()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()
    done = controller.snapshot.step - start_step
    pause_start = time.perf_counter()
    controller.running_changed.connect(lambda running: running or loop.quit())
    controller.pause()
    loop.exec()
    pause = time.perf_counter() - pause_start
    saver.saver.wait(30)
    print(f"    ({saver.failures} autosave failures; last autosave holds "
          f"{load_state(saver.path).step if saver.path.exists() else 0:,} steps)")
    controller.shutdown()
    app.processEvents()
    return done / seconds, pause


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--wide-steps", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rewinds", type=int, default=20)
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    memory(args.wide_steps)

    print("W1 sessions (sparse checkpoints):")
    trainer = Trainer(W1)
    milestones = [s for s in (1_000, 10_000, 30_000, 50_000, 100_000) if s <= args.steps]
    if args.steps not in milestones:
        milestones.append(args.steps)
    states = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for milestone in milestones:
            trainer.run_steps(milestone - trainer.step_count)
            states[milestone] = trainer.state()
            print(save_and_load(states[milestone], folder) + f" (trained in "
                  f"{time.perf_counter() - started:.0f} s so far)")
        print(f"rewinds in the {trainer.step_count:,}-step run:")
        rewinds(trainer, args.rewinds)
        print(f"Run with autosave on ({args.seconds:.0f} s each):")
        at_zero, pause_zero = run_rate(Trainer(W1).state(), args.seconds, folder)
        print(f"  at step 0:      {at_zero:7.1f} steps/s, Pause acted in {pause_zero:.3f} s")
        late = max(s for s in states if s <= 50_000)
        at_late, pause_late = run_rate(states[late], args.seconds, folder)
        print(f"  at step {late:,}: {at_late:7.1f} steps/s, Pause acted in {pause_late:.3f} s")
        print(f"  ratio: {at_late / at_zero:.2f}")


if __name__ == "__main__":
    main()
