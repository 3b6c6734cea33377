"""Pause on a 1000x1000 network, the training process alone (no window).

Starts a training process (gradbox.runner) with bench_app's BIG config, starts a Run,
waits until a step has been under way for a while (a different moment each repeat, so
Pause lands in the forward pass, the backward pass or the update), pauses, and times
until the process says the run stopped and until its snapshot (the step's start) has
arrived. It checks that the snapshot is the step's start, bit for bit.

`--ask timeline_view` then asks that question (a cheap one) as soon as Pause is
answered, and times its answer: what a click right after a Pause waits for (the
abandoned graph being freed, the gradients put back). The training process's peak
memory (VmHWM) is printed at the end.

`--backward 0.1,0.5,0.9` aims at the backward pass instead: one step is first taken
phase by phase (Substep) to time the phases, and Pause is sent those fractions of the
way through the backward pass (the load moves the phases' lengths: each line says which
phase the moment fell in by the timed step's lengths).

    python benchmarks/bench_pause.py [--repeats 3] [--into 1,4,9] [--backward 0.2,0.8]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import time

import numpy as np

from bench_app import BIG
from gradbox.runner.process import NewSnapshot, RunChanged, TrainingProcess


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def one_pause(process: TrainingProcess, number: int, into_s: float, ask: str = "",
              ) -> dict[str, float]:
    process.receive()
    assert process.latest is not None
    known = {process.latest.step: process.latest.params.copy()}  # each step's start
    process.run(number)
    process.want_snapshot()  # every step publishes its end
    while not process.stepping:  # the step under way
        process.receive(0.01)
    until = time.perf_counter() + into_s
    while time.perf_counter() < until:
        for event in process.receive(0.05):
            if isinstance(event, NewSnapshot):
                known[event.snapshot.step] = event.snapshot.params.copy()
                process.want_snapshot()
    sent = time.perf_counter()
    process.pause(number)
    stopped_at = shown_at = 0.0
    while not (stopped_at and shown_at):
        for event in process.receive(1.0):
            now = time.perf_counter()
            if isinstance(event, NewSnapshot) and not shown_at:
                shown_at = now
            if isinstance(event, RunChanged) and not event.running:
                stopped_at = now
    asked_ms = float("nan")
    if ask:
        asked = time.perf_counter()
        process.request(ask, timeout=600)
        asked_ms = (time.perf_counter() - asked) * 1000
    snapshot = process.latest
    assert snapshot is not None
    steps = snapshot.step
    start = known.get(steps)  # (None: a step ended as Pause was sent, unseen here)
    same = "unknown" if start is None else np.array_equal(snapshot.params, start)
    return {"sent": sent, "shown_ms": (shown_at - sent) * 1000,
            "stopped_ms": (stopped_at - sent) * 1000, "step": steps, "same": same,
            "asked_ms": asked_ms}  # type: ignore[dict-item]


def peak_memory(pid: int) -> str:
    with open(f"/proc/{pid}/status") as status:
        return next((line.split(":")[1].strip() for line in status
                     if line.startswith("VmHWM")), "?")


def time_phases(process: TrainingProcess) -> list[tuple[str, float]]:
    """One step taken phase by phase: each phase's name and seconds."""
    phases = []
    for name in ("forward", "zero_grad", "backward", "update"):
        started = time.perf_counter()
        process.request("substep", timeout=600)
        phases.append((name, time.perf_counter() - started))
    return phases


def phase_at(phases: list[tuple[str, float]], into_s: float) -> str:
    for name, seconds in phases:
        if into_s < seconds:
            return name
        into_s -= seconds
    return "next step"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--into", default="1,4,9",
                        help="seconds into the step to pause at (cycled over)")
    parser.add_argument("--backward", default="",
                        help="fractions of the backward pass to pause at (cycled over)")
    parser.add_argument("--ask", default="",
                        help="a question to ask right after Pause is answered (timed)")
    args = parser.parse_args()
    into = [float(x) for x in args.into.split(",")]
    process = TrainingProcess(BIG)
    process.wait_for(NewSnapshot, timeout=600)
    print(f"1000x1000 ({process.latest.params.size:,} parameters), pid {process.pid}")
    phases: list[tuple[str, float]] = []
    try:
        if args.backward:
            phases = time_phases(process)
            print("one step, phase by phase: " + ", ".join(f"{name} {seconds:.1f} s"
                                                         for name, seconds in phases)
                  + f"   [{load()}]")
            before = phases[0][1] + phases[1][1]
            into = [before + float(x) * phases[2][1] for x in args.backward.split(",")]
        for i in range(args.repeats):
            into_s = into[i % len(into)]
            r = one_pause(process, i + 1, into_s, args.ask)
            where = f" ({phase_at(phases, into_s)}?)" if phases else ""
            print(f"pause {into_s:4.1f} s into a step{where}: "
                  f"snapshot after {r['shown_ms']:7.0f} ms, "
                  f"stopped after {r['stopped_ms']:7.0f} ms (sent at {r['sent']:.4f}), "
                  f"step {r['step']}, start restored exactly: {r['same']}"
                  + (f", {args.ask} answered {r['asked_ms']:.0f} ms after the Pause's"
                     " answer" if args.ask else "") + f"   [{load()}]")
        print(f"training process's peak memory: {peak_memory(process.pid)}")
    finally:
        process.close()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
