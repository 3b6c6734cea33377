"""How fast the graph view opens, refreshes per training step, and pans.

Micrograd's demo network (MLP(2, [16, 16, 1]), 100 moons, hinge + 1e-4 L2: 1,663 nodes).
Targets (issue 5): per-step refresh <= 20 ms at network level, <= 100 ms at op level;
panning smooth. The reference, measured in the same run, is one training step of the
engine itself (forward + backward), so the ratios say what the view adds to a step.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_graph.py [--grandalf] [--big]

--grandalf also times grandalf's Sugiyama layout on the same graph (slow: ~10 s);
--big also opens a 64x64x64 network.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication

from gradbox import datasets, graph, losses
from gradbox.engine import Value
from gradbox.nn import MLP
from gradbox.views.graph_view import GraphView

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grandalf", action="store_true", help="also time grandalf's layout")
    parser.add_argument("--big", action="store_true", help="also open a 64x64x64 network")
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
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
    print("\noperation level (whole graph)")
    graph.clear_layout_cache()
    start = time.perf_counter()
    view.set_level("operation")
    view.viewport().repaint()
    row("first open (layout, 1,663 items, fit, paint)", (time.perf_counter() - start) * 1e3,
        step_ms)

    for label, scale in (("fit (all nodes, no text)", None), ("zoom 1.0 (readable)", 1.0)):
        if scale is None:
            view.fit()
        else:
            view.focus_node(graph.neuron_nodes(g, 2, 0).output, scale)
        refresh = []
        for _ in range(10):
            loss = forward_backward(model, ds)
            step_graph = graph.trace(loss, model)
            start = time.perf_counter()
            view.set_graph(step_graph, 5)
            view.viewport().repaint()
            refresh.append((time.perf_counter() - start) * 1e3)
        row(f"per-step refresh at {label}", refresh, step_ms, 100)
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
