"""Opening a big session in the window: does the window keep answering, and does it hold
a second copy of the run? Offscreen, in one run.

It saves a 1000x1000 run (--steps steps, so a few checkpoints) to a temporary file, then
opens it --repeats times with File > Open's code path in a fresh main window at 1400x900,
and prints for each:

  * the time from the open until the run is on screen;
  * the longest gap of the UI thread's event loop meanwhile (a 5 ms precise timer), the
    UI thread's own CPU in it, and the next longest gaps;
  * the window process's resident memory before the open, after it, and its peak growth
    (the run itself lives in the training process).

Target (issue 22, "the UI thread never waits"; "the window process does not hold a
second copy of the history"): no gap near the 50 ms a 1000x1000 network may cost while
it trains, and no growth of the window's memory by the size of the run.

    python benchmarks/bench_open.py [--steps 20] [--repeats 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from bench_app import BIG, W1, Scenario, StallMeter, make_window, settle, spin
from gradbox.files import sessions
from gradbox.training.trainer import Trainer


def memory_mb() -> tuple[float, float]:
    """(resident now, resident at its peak) of this process, in MB (Linux)."""
    fields = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


def save_run(path: Path, steps: int) -> None:
    trainer = Trainer(BIG)
    for _ in range(steps):
        trainer.step()
    sessions.save_session(trainer, path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-open-"))
    path = folder / "big.gradbox"
    # Saved by another process: this one's memory is the window's alone.
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        pool.apply(save_run, (path, args.steps))
    print(f"{BIG.hidden} run, {args.steps} steps: {path.stat().st_size / 1e6:.0f} MB on disk")
    app = QApplication.instance() or QApplication([])
    for repeat in range(args.repeats):
        window = make_window(app, Scenario("open", "open", W1, "boundary"),
                             folder / f"auto{repeat}")
        rss_before, peak_before = memory_mb()
        meter = StallMeter(5)
        meter.start()
        start = time.perf_counter()
        window.files.open_session(path)
        spin(app, lambda w=window: w.controller.snapshot.config.hidden == BIG.hidden
             and not w.files.reading, 120)
        opened_s = time.perf_counter() - start
        settle(app, 500)
        meter.stop()
        rss_after, peak_after = memory_mb()
        gaps = sorted((gap for gap, _ in meter.gaps), reverse=True)
        worst = max(range(len(meter.gaps)), key=lambda i: meter.gaps[i][0])
        print(f"  open {repeat + 1}: on screen after {opened_s:.1f} s; longest UI gap "
              f"{gaps[0]:.0f} ms ({meter.cpu_gaps[worst]:.0f} ms of UI-thread CPU), next "
              f"{', '.join(f'{g:.0f}' for g in gaps[1:5])} ms")
        print(f"          window process: {rss_before:.0f} MB before, {rss_after:.0f} MB "
              f"after, peak grew {max(0.0, peak_after - peak_before):.0f} MB")
        window.close()
        settle(app, 200)


if __name__ == "__main__":
    main()
