"""What crossing the process boundary costs: pickle through the pipe, or shared memory.

For W1 (micrograd's demo network) and the 1000x1000 network, in one run, a training
process (gradbox.runner) is asked for its snapshot two ways:

  * pickled: the `snapshot` command's reply, the whole `Snapshot` pickled by the child,
    sent through the pipe and unpickled by the window's process;
  * shared: the snapshot every command publishes, its arrays written to shared memory
    and only metadata pickled; the window builds numpy views.

W1 is measured twice: as on the boundary tab, and with its computation graph (1,663
nodes, each a value and a gradient per sample) traced, as on the graph tab.

It prints the median wall time from the command until the snapshot is usable, the
window process's CPU time for it (what the UI thread would spend), and the ratios; then
the start-up time of a training process (until its first snapshot is usable) with the
spawn and forkserver contexts, and the bare step of each network in the same run.

    python benchmarks/bench_process.py [--repeats 15] [--no-big]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench_app import BIG, W1, bare_step_ms  # the same workloads, timed the same way
from gradbox.runner.process import NewSnapshot, TrainingProcess


def crossing(process: TrainingProcess, repeats: int) -> dict[str, float]:
    pickled_wall, pickled_cpu, shared_wall, shared_cpu = [], [], [], []
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.thread_time()
        snapshot = process.request("snapshot", timeout=600)
        pickled_wall.append(time.perf_counter() - t0)
        pickled_cpu.append(time.thread_time() - c0)
        assert snapshot.params.size
        process.receive()  # the snapshot the command also published
        t0, c0 = time.perf_counter(), time.thread_time()
        process.call("unpin")  # a command that changes nothing: a snapshot follows
        process.wait_for(NewSnapshot, timeout=600)
        shared_wall.append(time.perf_counter() - t0)
        shared_cpu.append(time.thread_time() - c0)
        assert process.latest is not None and process.latest.params.size
    ms = {k: statistics.median(v) * 1000 for k, v in (
        ("pickled wall", pickled_wall), ("pickled cpu", pickled_cpu),
        ("shared wall", shared_wall), ("shared cpu", shared_cpu))}
    return ms


def start_up(context: str) -> float:
    t0 = time.perf_counter()
    process = TrainingProcess(W1, context=context)
    process.wait_for(NewSnapshot, timeout=120)
    elapsed = time.perf_counter() - t0
    process.close()
    return elapsed * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--no-big", action="store_true")
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
          " (a shared machine: compare the ratios)")
    cases = [("W1", W1, args.repeats, False), ("W1 with its graph traced", W1, args.repeats, True)]
    if not args.no_big:
        cases.append(("1000x1000", BIG, 3, False))
    for title, config, repeats, graph in cases:
        bare = bare_step_ms(config, 20 if config is W1 else 2)
        process = TrainingProcess(config)
        process.wait_for(NewSnapshot, timeout=600)
        process.tell("set_graph_wanted", graph)
        process.tell("capture_graph")  # (a snapshot follows)
        process.wait_for(NewSnapshot, timeout=600)
        process.request("step", timeout=600)
        snapshot = process.latest
        assert snapshot is not None
        arrays = snapshot.params.nbytes + snapshot.grads.nbytes
        ms = crossing(process, repeats)
        process.close()
        print(f"\n[{title}]  bare Trainer.step() {bare:.2f} ms; parameters and gradients "
              f"{arrays / 1e6:.2f} MB")
        print(f"  pickled through the pipe: {ms['pickled wall']:8.2f} ms until usable, "
              f"{ms['pickled cpu']:7.2f} ms of the window's CPU")
        print(f"  shared memory           : {ms['shared wall']:8.2f} ms until usable, "
              f"{ms['shared cpu']:7.2f} ms of the window's CPU")
        print(f"  shared / pickled        : {ms['shared wall'] / ms['pickled wall']:8.2f}x wall,"
              f" {ms['shared cpu'] / max(ms['pickled cpu'], 1e-6):6.2f}x the window's CPU")
    print("\n[start-up until the first snapshot is usable, W1]")
    for context in ("spawn", "spawn", "forkserver", "forkserver", "forkserver"):
        print(f"  {context:10s} {start_up(context):8.0f} ms")


if __name__ == "__main__":
    main()
