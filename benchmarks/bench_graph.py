"""How fast the graph view opens, refreshes per training step, and pans.

Micrograd's demo network (MLP(2, [16, 16, 1]), 100 moons, hinge + 1e-4 L2: 1,663 nodes).
Targets (issue 5): per-step refresh <= 20 ms at network level, <= 100 ms at op level;
panning smooth. The reference, measured in the same run, is one training step of the
engine itself (forward + backward), so the ratios say what the view adds to a step.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_graph.py [--grandalf] [--big]

--grandalf also times grandalf's Sugiyama layout on the same graph (slow: ~10 s);
--big also opens a 64x64x64 network;
--panel instead trains in the main window for a few seconds per case, with the
Computation graph tab hidden, at network level and at operation level, and reports
steps/s, the panel's refresh cost and how long the UI thread was ever busy at a stretch.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from gradbox import graph
from gradbox.autograd import losses
from gradbox.autograd.engine import Value
from gradbox.autograd.nn import MLP
from gradbox.training import datasets
from gradbox.views.graph.view import GraphView

EXTENT = (-2.0, 3.0, -1.5, 2.0)


def forward_backward(model: MLP, ds: datasets.Dataset) -> Value:
    out = model([ds.points[:, 0], ds.points[:, 1]])
    loss = losses.hinge(out, ds.labels) + 1e-4 * losses.l2_penalty(model.parameters())
    model.zero_grad()
    loss.backward(retain_graph=True)
    return loss


def update(model: MLP) -> None:
    for p in model.parameters():
        p.data -= 0.05 * p.grad


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and best time in ms."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), min(times)


def row(what: str, ms: float | list[float], reference: float,
        target: float | None = None) -> None:
    """One result: median (and best, for lists) in ms, and its ratio to a training step."""
    best = ""
    if isinstance(ms, list):
        best = f" (best {min(ms):6.2f})"
        ms = statistics.median(ms)
    verdict = "" if target is None else ("  ok" if ms <= target else f"  OVER {target:g} ms")
    print(f"  {what:<46} {ms:8.2f} ms{best}  {ms / reference:6.2f}x step{verdict}")


def pan_fps(app: QApplication, view: GraphView, frames: int = 60, step: int = 25) -> float:
    bar = view.horizontalScrollBar()
    vbar = view.verticalScrollBar()
    start_h, start_v = bar.value(), vbar.value()
    start = time.perf_counter()
    for k in range(frames):
        bar.setValue(start_h + (k % 30) * step)
        vbar.setValue(start_v + (k % 20) * step // 2)
        view.viewport().repaint()
    app.processEvents()
    return frames / (time.perf_counter() - start)


def op_refreshes(view: GraphView, model: MLP, ds: datasets.Dataset, steps: int = 10
                 ) -> list[float]:
    """ms per operation-level refresh after a training step (trace, set, repaint)."""
    times = []
    for _ in range(steps):
        step_graph = graph.trace(forward_backward(model, ds), model)
        start = time.perf_counter()
        view.set_graph(step_graph, 5)
        view.viewport().repaint()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def _pump(app: QApplication, until: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.perf_counter() + timeout
    while not until() and time.perf_counter() < end:
        app.processEvents()


def _panel_case(app: QApplication, hidden: tuple[int, ...], case: str, seconds: float) -> str:
    """Train for `seconds` in the main window; one line of results."""
    from PySide6.QtCore import QTimer

    from gradbox.port.controller import SessionController
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer
    from gradbox.views.window.main_window import MainWindow

    controller = SessionController(Trainer(TrainingConfig(hidden=hidden)))
    window = MainWindow(controller)
    window.resize(1400, 900)
    window.show()
    panel = window.graph
    if case != "graph tab hidden":
        window.tabs.setCurrentIndex(1)
        panel.view.set_level(case.split()[0])
    if case.endswith("zoom 1"):
        # one step first, to have nodes to zoom to: the layout is then made before the run
        controller.step()
        _pump(app, lambda: controller.snapshot.graph is not None)
        _pump(app, lambda: panel.view.graph() is not None)
        panel.view.focus_node(controller.snapshot.graph.root, 1.0)
    _pump(app, lambda: False, 0.3)
    panel.refresh_costs.clear()
    # A 5 ms timer in the UI thread: the gaps between its ticks are how long the
    # thread was busy at a stretch (painting, refreshing): what a user would feel.
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    start_step = controller.snapshot.step
    controller.set_speed(None)  # as fast as possible: the benchmark measures throughput
    controller.run()
    start = last[0] = time.perf_counter()
    timer.start()
    _pump(app, lambda: time.perf_counter() - start >= seconds, seconds + 5)
    timer.stop()
    controller.pause()
    _pump(app, lambda: not controller.running)
    elapsed = time.perf_counter() - start
    steps = controller.snapshot.step - start_step
    costs = sorted(c * 1e3 for c in panel.refresh_costs)
    shown = (f"{len(costs)} refreshes, median {statistics.median(costs):.1f} ms, "
             f"max {costs[-1]:.1f} ms" if costs else "no refreshes")
    gaps_ms = sorted(g_ * 1e3 for g_ in gaps) or [0.0]
    controller.shutdown()
    window.hide()
    window.deleteLater()
    app.processEvents()
    return (f"  {case:<24} {steps / elapsed:7.1f} steps/s · {shown} · UI thread busy at "
            f"most {gaps_ms[-1]:.0f} ms at a stretch (95% of gaps ≤ "
            f"{gaps_ms[int(0.95 * (len(gaps_ms) - 1))]:.0f} ms)")


def panel_run(app: QApplication, hidden: tuple[int, ...], seconds: float) -> None:
    """Run training in the main window: tab hidden vs shown at each level."""
    print(f"\nMLP(2, {list(hidden)}, 1) on 100 moons, Run for {seconds:g} s per case "
          "(main window 1400x900)")
    for case in ("graph tab hidden", "network level", "operation level",
                 "operation level, zoom 1"):
        print(_panel_case(app, hidden, case, seconds), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grandalf", action="store_true", help="also time grandalf's layout")
    parser.add_argument("--big", action="store_true", help="also open a 64x64x64 network")
    parser.add_argument("--panel", action="store_true",
                        help="train in the main window: graph tab hidden vs shown")
    parser.add_argument("--switch-ms", type=float, default=None,
                        help="with --panel: Python's thread switch interval (default 5 ms)")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    if args.switch_ms is not None:
        # Every Python paint() or slot the UI thread runs while training holds the GIL
        # waits up to this long for it: the interval decides how sluggish the UI feels.
        sys.setswitchinterval(args.switch_ms / 1e3)
    if args.panel:
        for hidden in ((8, 8), (16, 16)):
            panel_run(app, hidden, 4.0)
        return
    ds = datasets.make("moons", 100, 0.1, seed=0)
    model = MLP(2, [16, 16, 1], seed=0)

    # --- reference: one engine step --------------------------------------------------
    step_ms, _ = timed(lambda: (forward_backward(model, ds), update(model)), 15)
    loss = forward_backward(model, ds)
    g = graph.trace(loss, model)
    print(f"micrograd demo graph: {len(g)} nodes, {len(g.edges)} edges")
    print(f"reference: one training step (forward + backward + update) {step_ms:.2f} ms\n")

    print("pure (gradbox.graph)")
    trace_ms, _ = timed(lambda: graph.trace(loss, model), 20)
    row("trace(loss)", trace_ms, step_ms)

    def first_layout() -> None:
        graph.clear_layout_cache()
        graph.layered_layout(g)
    layout_ms, _ = timed(first_layout, 5)
    row("first layout (layered_layout, uncached)", layout_ms, step_ms)
    cached_ms, _ = timed(lambda: graph.layered_layout(g), 20)
    row("layout again, same structure (cache hit)", cached_ms, step_ms)
    lay = graph.layered_layout(g)
    print(f"  {'edge crossings, all / solid (not faint) edges':<46} "
          f"{graph.count_crossings(g, lay):8d} / {graph.count_crossings(g, lay, True)}")
    graph.clear_layout_cache()
    unswept = graph.layered_layout(g, sweeps=0)
    print(f"  {'  the same without barycenter sweeps':<46} "
          f"{graph.count_crossings(g, unswept):8d} / {graph.count_crossings(g, unswept, True)}")
    graph.clear_layout_cache()
    snap_ms, _ = timed(lambda: g.snapshot(), 20)
    row("Graph.snapshot() (freeze the numbers)", snap_ms, step_ms)
    net_ms, _ = timed(lambda: graph.network_level(model, g, 5, EXTENT), 20)
    row("network_level(model, graph, sample, maps)", net_ms, step_ms)

    view = GraphView()
    view.resize(1200, 800)
    view.show()
    app.processEvents()

    # --- network level -------------------------------------------------------------------
    print("\nnetwork level (1200x800 window)")
    start = time.perf_counter()
    view.set_graph(g, 5)
    view.set_network(graph.network_level(model, g, 5, EXTENT))
    view.viewport().repaint()
    row("first open (build items, fit, paint)", (time.perf_counter() - start) * 1e3, step_ms)

    def network_refresh() -> None:
        loss = forward_backward(model, ds)
        step_graph = graph.trace(loss, model)
        start = time.perf_counter()
        view.set_graph(step_graph, 5)
        view.set_network(graph.network_level(model, step_graph, 5, EXTENT))
        view.viewport().repaint()
        refresh.append((time.perf_counter() - start) * 1e3)

    refresh: list[float] = []
    for _ in range(25):
        network_refresh()
    row("per-step refresh (data + items + paint)", refresh, step_ms, 20)

    # --- operation level -----------------------------------------------------------------
    print("\noperation level, as it opens (one box per neuron, the L2 penalty one box)")
    graph.clear_layout_cache()
    start = time.perf_counter()
    view.set_level("operation")
    view.viewport().repaint()
    row(f"first open (overview of {len(view.shown_graph())} boxes and nodes)",
        (time.perf_counter() - start) * 1e3, step_ms)
    row("per-step refresh of the overview", op_refreshes(view, model, ds), step_ms, 100)

    print("\noperation level (whole graph)")
    graph.clear_layout_cache()
    start = time.perf_counter()
    view.show_all_operations()
    view.viewport().repaint()
    row("first open (layout, 1,663 items, fit, paint)", (time.perf_counter() - start) * 1e3,
        step_ms)

    for label, scale in (("fit (all nodes, no text)", None), ("zoom 1.0 (readable)", 1.0)):
        if scale is None:
            view.fit()
        else:
            view.focus_node(graph.neuron_nodes(g, 2, 0).output, scale)
        row(f"per-step refresh at {label}", op_refreshes(view, model, ds), step_ms, 100)
        sample_ms, _ = timed(lambda: (view.set_sample(7), view.viewport().repaint()), 10)
        row(f"select another sample at {label}", sample_ms, step_ms, 100)

    print("\npanning the operation level (scroll + repaint per frame)")
    for label, scale in (("zoom 1.0 (labels)", 1.0), ("zoom 0.4 (boxes)", 0.4)):
        view.focus_node(graph.neuron_nodes(g, 1, 8).output, scale)
        view.viewport().repaint()
        fps = pan_fps(app, view)
        print(f"  {label:<46} {fps:8.1f} frames/s")
    view.fit()
    print(f"  {'fit (whole graph)':<46} {pan_fps(app, view):8.1f} frames/s")

    if args.big:
        print("\n64x64x64 network")
        big = MLP(2, [64, 64, 64, 1], seed=0)
        start = time.perf_counter()
        big_loss = forward_backward(big, ds)
        engine_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        big_graph = graph.trace(big_loss, big)
        big_view = GraphView()
        big_view.resize(1200, 800)
        big_view.show()
        big_view.set_graph(big_graph, 0)
        big_view.set_network(graph.network_level(big, big_graph, 0, EXTENT))
        big_view.viewport().repaint()
        big_view.set_level("operation")
        big_view.viewport().repaint()
        ms = (time.perf_counter() - start) * 1e3
        shown = big_view.shown_graph()
        print(f"  {len(big_graph)} nodes; engine step {engine_ms:.0f} ms; open both levels "
              f"{ms:.0f} ms (op level collapsed to {len(shown)} nodes of neuron "
              f"{big_view.expanded_neuron()})")

    if args.grandalf:
        print("\ngrandalf's Sugiyama layout on the same graph, for comparison")
        from grandalf.graphs import Edge, Vertex
        from grandalf.graphs import Graph as GGraph
        from grandalf.layouts import SugiyamaLayout

        class Box:
            w, h = 132, 44

        start = time.perf_counter()
        vertices = [Vertex(i) for i in range(len(g))]
        for v in vertices:
            v.view = Box()
        gg = GGraph(vertices, [Edge(vertices[c], vertices[p]) for c, p in g.edges])
        build = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        sugiyama = SugiyamaLayout(gg.C[0])
        sugiyama.init_all()
        sugiyama.draw(1)
        draw = (time.perf_counter() - start) * 1e3
        row("grandalf: build graph", build, step_ms)
        row("grandalf: init_all + draw(1 pass)", draw, step_ms)


if __name__ == "__main__":
    main()
