"""Does the window stay responsive while File -> Export animation records a run?

A real MainWindow (offscreen, 1400x900) on a W1 run trained --steps steps exports it as a
GIF, an MP4 and a folder of PNG frames through the dialog's own entry point
(`ClassExports.record`: the whole run is asked of the training process, then replayed,
drawn and encoded in the background). Meanwhile a 2 ms precise timer ticks on the UI
thread; the gaps between its ticks are the stalls a person would feel.

First it measures the window idle for --idle seconds: on a busy machine the window waits
for a core now and then whatever the app does, and that is the floor to compare with.
For each format it prints the longest stall (beyond the tick interval), the CPU time the UI
thread and the whole window process used during it (little CPU: the UI thread waited --
for the interpreter lock while other threads of the process ran, for a core when none
did), the 99th percentile gap, how long the export took, and the load average (`os.getloadavg`, what
`uptime` shows) before and after: on a shared 2-core machine the figures move with it.
The event loop runs through a QEventLoop with timers (bench_app.spin), never
QTest.qWait, which keeps the GIL on PySide6 6.11.

    python benchmarks/bench_animation.py [--steps 200] [--every 1] [--size 800x500]
                                         [--only gif,mp4,png] [--repeats 1] [--idle 10]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pyqtgraph as pg
from PySide6.QtWidgets import QApplication

from bench_app import W1, StallMeter, settle, spin
from gradbox.app import freeze_what_lives_now, set_window_process_policy
from gradbox.port.controller import SessionController
from gradbox.training.trainer import Trainer
from gradbox.views.window.main_window import MainWindow


class CpuStallMeter(StallMeter):
    """bench_app's meter, also noting the CPU time this process and its UI thread used in
    each gap: a long gap the UI thread spent working is our code; one where it used
    no CPU was a wait -- for the interpreter lock if the process's other threads ran
    meanwhile, for a core if nothing of ours did."""

    def start(self) -> None:
        self.cpu: list[tuple[float, float]] = []  # (UI thread, whole process) ms per gap
        self._marks = (time.thread_time(), time.process_time())
        super().start()

    def _tick(self) -> None:
        thread, process = time.thread_time(), time.process_time()
        self.cpu.append(((thread - self._marks[0]) * 1000, (process - self._marks[1]) * 1000))
        self._marks = (thread, process)
        super()._tick()

    def over(self, ms: float) -> tuple[int, int, float]:
        """(gaps longer than `ms`; of those, how many the process's other threads spent
        >= 5 ms of CPU in -- the interpreter lock held away from the UI thread -- and the
        longest of those)."""
        long = [(g, ui, proc) for (g, _), (ui, proc) in zip(self.gaps, self.cpu) if g > ms]
        locked = [g for g, ui, proc in long if proc - ui >= 5.0]
        return len(long), len(locked), max(locked, default=0.0)

    def worst_cpu(self) -> tuple[float, float]:
        if not self.gaps:
            return 0.0, 0.0
        return self.cpu[max(range(len(self.gaps)), key=lambda i: self.gaps[i][0])]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--size", default="800x500")
    parser.add_argument("--only", default="gif,mp4,png")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--idle", type=float, default=10.0,
                        help="seconds measured first with no export: the machine's noise")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    app = QApplication.instance() or QApplication([])
    set_window_process_policy()  # as the app does before its window
    trainer = Trainer(W1)
    for _ in range(args.steps):
        trainer.step()
    folder = Path(tempfile.mkdtemp(prefix="bench-animation-"))
    controller = SessionController(trainer)
    window = MainWindow(controller, autosave_path=folder / "autosave.gradbox.json")
    window.ask_unsaved = lambda: "discard"  # type: ignore[method-assign]  # no dialog at close
    window.resize(1400, 900)
    window.show()
    freeze_what_lives_now()
    settle(app, 500)
    print(f"{os.cpu_count()} cores; W1 run of {args.steps} steps, every {args.every}, "
          f"{width}x{height}; load average {load()}")
    try:
        if args.idle > 0:  # the machine's own noise: the same window, nothing exported
            meter = CpuStallMeter(2)
            before = load()
            meter.start()
            settle(app, int(args.idle * 1000))
            meter.stop()
            stall, when = meter.worst()
            long, locked, worst_locked = meter.over(16.0)
            print(f"  idle ({args.idle:.0f} s, no export): longest UI stall {stall:6.1f} ms   "
                  f"p99 gap {meter.p99():5.1f} ms   gaps > 16 ms: {long}   load {before} -> "
                  f"{load()}")
        for kind in args.only.split(",") * args.repeats:
            path = folder / {"gif": "run.gif", "mp4": "run.mp4", "png": "frames"}[kind]
            done: list[tuple[Path | None, str]] = []
            frames: list[int] = []
            before = load()
            meter = CpuStallMeter(2)
            meter.start()
            t0 = time.perf_counter()
            window.class_exports.record(path, kind, 0, args.steps, args.every,
                                        (width, height), 10,
                                        lambda d, _t, frames=frames: frames.append(d),
                                        lambda p, text, done=done: done.append((p, text)))
            spin(app, lambda done=done: bool(done), timeout_s=1800)
            elapsed = time.perf_counter() - t0
            settle(app, 50)
            meter.stop()
            stall, when = meter.worst()
            written, text = done[0]
            if written is None:
                print(f"  {kind}: FAILED: {text}")
                continue
            ui_cpu, process_cpu = meter.worst_cpu()
            long, locked, worst_locked = meter.over(16.0)
            print(f"  {kind}: longest UI stall {stall:6.1f} ms (at {when:5.1f} s; CPU in it: "
                  f"UI thread {ui_cpu:5.1f} ms, this process {process_cpu:5.1f} ms)   "
                  f"p99 gap {meter.p99():5.1f} ms   {len(meter.gaps)} ticks   export "
                  f"{elapsed:5.1f} s, {frames[-1] if frames else 0} frames   load "
                  f"{before} -> {load()}")
            print(f"       gaps > 16 ms: {long}, of which {locked} with this process's other "
                  f"threads working >= 5 ms in them (the longest {worst_locked:.1f} ms)")
            if path.is_dir():
                shutil.rmtree(path)
            else:
                path.unlink()
        # Cancel: from the click to the dialog's "Cancelled", a GIF 20 frames in.
        for _ in range(args.repeats):
            done, frames = [], []
            cancel = window.class_exports.record(
                folder / "run.gif", "gif", 0, args.steps, args.every, (width, height), 10,
                lambda d, _t, frames=frames: frames.append(d),
                lambda p, text, done=done: done.append((p, text)))
            spin(app, lambda frames=frames: len(frames) >= 20, timeout_s=600)
            t0 = time.perf_counter()
            cancel()
            spin(app, lambda done=done: bool(done), timeout_s=600)
            answered = (time.perf_counter() - t0) * 1000
            left = sorted(p.name for p in folder.iterdir() if not p.name.startswith("autosave"))
            print(f"  Cancel (GIF, {len(frames)} frames in): answered in {answered:.0f} ms: "
                  f"{done[0][1]!r}; left in the folder: {left}")
    finally:
        window.close()
        controller.shutdown()
        window.deleteLater()
        settle(app, 50)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
