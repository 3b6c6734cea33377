"""How the desktop app keeps up with training, offscreen, on workload W1.

W1 is micrograd's demo: 100 moons (noise 0.1), MLP(2, [16, 16, 1]) ReLU, hinge loss +
1e-4 L2, full batch, SGD. Printed, in one run:

  * Step -> all views updated: from the Step action until the snapshot has reached
    every view and the window has repainted (median and worst of N single steps);
  * Run: steps per second over 200 steps, and the longest event-loop stall on the UI
    thread meanwhile (a 5 ms timer records the gaps between its ticks);
  * the same with the computation-graph tab showing, which makes the worker trace;
  * as the reference, a bare `Trainer.step()` in this process, and the ratios to it.

Targets (issue 4): median Step -> updated <= 50 ms; Run >= 25 steps/s; no stall > 50 ms.

    python benchmarks/bench_app.py [--steps 200] [--singles 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg
from PySide6.QtCore import QElapsedTimer, QTimer
from PySide6.QtWidgets import QApplication

from gradbox.training import Trainer, TrainingConfig
from gradbox.views.main_window import MainWindow
from gradbox.views.session import SessionController

W1 = TrainingConfig(dataset="moons", n_samples=100, noise=0.1, test_ratio=0.0,
                    hidden=(16, 16), activation="relu", loss="hinge", l2=1e-4,
                    optimizer="sgd", lr=1.0, schedule="linear", steps=100)


class StallMeter:
    """Ticks every `interval_ms` on the UI thread; a late tick is a stall of the loop."""

    def __init__(self, interval_ms: int = 5) -> None:
        self.interval_ms = interval_ms
        self.worst_ms = 0.0
        self.worst_at_ms = 0.0
        self._since_start = QElapsedTimer()
        self.clock = QElapsedTimer()
        self.timer = QTimer()
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self.worst_ms = 0.0
        self.clock.start()
        self._since_start.start()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        gap = self.clock.nsecsElapsed() / 1e6
        self.clock.restart()
        if gap - self.interval_ms > self.worst_ms:
            self.worst_ms = gap - self.interval_ms
            self.worst_at_ms = self._since_start.nsecsElapsed() / 1e6


def wait_until(app: QApplication, condition, timeout_s: float = 120.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.perf_counter() + timeout_s
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the app did not answer in time")
        app.processEvents()


def bare_step_ms(repeats: int = 50) -> float:
    trainer = Trainer(W1)
    for _ in range(5):
        trainer.step()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        trainer.step()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def step_to_updated(app: QApplication, window: MainWindow, count: int) -> list[float]:
    controller = window.controller
    times = []
    for _ in range(count):
        before = controller.snapshot.step
        t0 = time.perf_counter()
        window.toolbar.step_action.trigger()
        wait_until(app, lambda b=before: controller.snapshot.step > b)
        app.processEvents()  # the repaints the update asked for
        times.append((time.perf_counter() - t0) * 1000)
    return times


def run_steps(app: QApplication, window: MainWindow, steps: int) -> tuple[float, float]:
    controller = window.controller
    meter = StallMeter()
    start_step = controller.snapshot.step
    meter.start()
    t0 = time.perf_counter()
    controller.run(steps)
    wait_until(app, lambda: not controller.running and controller.snapshot.step
               >= start_step + steps)
    elapsed = time.perf_counter() - t0
    meter.stop()
    print(f"  (the longest stall ended {meter.worst_at_ms:.0f} ms after Run was pressed)")
    return (controller.snapshot.step - start_step) / elapsed, meter.worst_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--singles", type=int, default=30)
    args = parser.parse_args()

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    app = QApplication.instance() or QApplication([])
    reference = bare_step_ms()
    print(f"reference: bare Trainer.step() on W1          {reference:7.2f} ms")

    for tab_name, tab_index in (("decision boundary", 0), ("computation graph", 1)):
        controller = SessionController(Trainer(W1))
        window = MainWindow(controller)
        window.resize(1400, 900)
        window.show()
        if tab_index < window.tabs.count():
            window.tabs.setCurrentIndex(tab_index)
        app.processEvents()
        singles = step_to_updated(app, window, args.singles)
        median = statistics.median(singles)
        rate, stall = run_steps(app, window, args.steps)
        print(f"\n[{tab_name} tab showing]")
        print(f"Step -> all views updated   median {median:7.2f} ms  worst {max(singles):7.2f} ms"
              f"   ({median / reference:.1f}x a bare step)   target <= 50 ms:"
              f" {'ok' if median <= 50 else 'MISSED'}")
        print(f"Run {args.steps} steps             {rate:7.1f} steps/s"
              f"   ({rate * reference / 1000:.2f}x the bare step rate)   target >= 25:"
              f" {'ok' if rate >= 25 else 'MISSED'}")
        print(f"longest UI stall while running {stall:7.2f} ms   target <= 50 ms:"
              f" {'ok' if stall <= 50 else 'MISSED'}")
        window.close()
        controller.shutdown()


if __name__ == "__main__":
    main()
