"""Build it yourself: what a check and a training run on the learner's engine cost.

Times, with the written-out correct engine (tests/build_solutions/correct.py):
- the sandbox child's start-up: from spawning `python -I` to its "started" line arriving
  (Python, numpy and the checker imported, limits set; no learner code run yet), and a
  bare `python -I -c pass` beside it for scale;
- a whole check's wall time, stage 0 only, stages 0-9, and all eleven (a correct engine),
  and one wrong engine (`=` for `+=` in `*`, failing at stage 6);
- each case alone, in this process (where the time goes);
- a training step on micrograd's 100 moons in the child, against `rough_estimate`.

    python benchmarks/bench_build.py [--repeats 3] [--train-steps 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gradbox.build.sandbox import child_command, start_check
from gradbox.build.train import TrainSetup, rough_estimate, start_training

CORRECT = (Path(__file__).resolve().parents[1] / "tests" / "build_solutions" /
           "correct.py").read_text(encoding="utf-8")
WRONG = CORRECT.replace("            self.grad += other.data * out.grad\n",
                        "            self.grad = other.data * out.grad\n")


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def bare_python() -> float:
    started = time.perf_counter()
    subprocess.run([child_command()[0], "-I", "-c", "pass"], check=True)
    return time.perf_counter() - started


def check(source: str, up_to: int | None) -> tuple[float, float, bool]:
    started = time.perf_counter()
    handle = start_check(source, up_to_stage=up_to)
    report = handle.wait()
    wall = time.perf_counter() - started
    startup = handle.startup_seconds or float("nan")
    return wall, startup, report.passed


def per_case() -> list[tuple[str, float]]:
    from gradbox.build.cases import CASES
    from gradbox.build.checks import load_learner
    from gradbox.build.kinds import run_case
    from gradbox.build.stages import load_stages
    learner, _ = load_learner(CORRECT, "engine.py")
    out = []
    for stage in load_stages():
        for name in stage.cases:
            started = time.perf_counter()
            run_case(CASES[name], learner)
            out.append((name, time.perf_counter() - started))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--train-steps", type=int, default=3)
    args = parser.parse_args()
    print(load())
    print(f"bare python -I: {statistics.median(bare_python() for _ in range(args.repeats)):.2f} s")
    for label, source, up_to in (("stage 0", CORRECT, 0), ("stages 0-9", CORRECT, 9),
                                 ("all 11 stages", CORRECT, None),
                                 ("wrong (= in *), stops at 6", WRONG, None)):
        runs = [check(source, up_to) for _ in range(args.repeats)]
        walls = ", ".join(f"{w:.2f}" for w, _s, _p in runs)
        starts = ", ".join(f"{s:.2f}" for _w, s, _p in runs)
        print(f"check, {label:28}: wall {walls} s; child spawned to 'started' {starts} s;"
              f" passed {runs[0][2]}")
    slow = sorted(per_case(), key=lambda x: -x[1])[:6]
    print("slowest cases in-process: " + ", ".join(f"{n} {t:.2f} s" for n, t in slow))
    setup = TrainSetup(steps=args.train_steps)
    handle = start_training(CORRECT, setup)
    progress = handle.wait()
    steps = ", ".join(f"{p.seconds:.2f}" for p in progress.yours)
    print(f"training, 100 moons, MLP(2, [16, 16, 1]): estimate {rough_estimate(setup):.2f} s "
          f"a step; measured {steps} s; parted at {progress.parted_at}")
    print(load())


if __name__ == "__main__":
    sys.exit(main())
