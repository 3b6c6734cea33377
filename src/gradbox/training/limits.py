"""Limits that match the machine: what a network will cost before it is built.

(How large a network may be at all is the configuration's: gradbox.training.config.)

The engine builds one graph node per scalar operation and each node holds every sample
of the batch (and, after backward, a gradient of the same size), so a step's cost is
about `nodes × (per-node cost + per-sample cost × batch)`, in time and in memory alike.
The per-node and per-sample costs are measured on this machine -- the time from whole
training steps at launch (gradbox.training.calibration, which reports to `calibrated`),
the memory from two small traced graphs -- so the estimate follows the machine rather
than a constant guessed on another one; the time is then corrected by the steps actually
trained (`observe_step`), so a launch on a busy machine does not set it for the whole
session.
"""

from __future__ import annotations

import functools
import gc
import itertools
import os
import threading
import tracemalloc
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.nn import MLP, parameter_count
from gradbox.training.config import SLOW_STEP_SECONDS, TrainingConfig

# Refuse a network whose step needs more than this share of the memory available now.
MEMORY_SHARE = 0.7
# The training process may use at most this share of the machine's memory (its address
# space is capped: an allocation past it raises MemoryError there, said in words, rather
# than the system's out-of-memory killer choosing a process); the environment variable
# sets another cap, in megabytes.
TRAINING_MEMORY_SHARE = 0.8
TRAINING_MEMORY_ENV = "GRADBOX_TRAINING_MEMORY_MB"

@dataclass(frozen=True)
class NodeCosts:
    """Measured memory of one graph node: fixed, and per sample it holds."""

    bytes: float
    bytes_per_sample: float


# A node's numbers up to this many samples stay in the processor's caches; past it each
# sample costs more (the arrays come from memory, freshly mapped): two rates per sample.
CACHED_BATCH = 1024
# About how long the scheduler lets a step run before other work on a busy machine has
# the core (Linux's slices are a few ms each, with several processes waiting).
SCHEDULER_SLICE = 0.01


@dataclass(frozen=True)
class StepCosts:
    """Measured CPU seconds of the parts of a training step on this machine
    (gradbox.training.calibration, from whole steps). `*_sample`: per node and sample up
    to CACHED_BATCH samples; `*_beyond`: per node and sample past it."""

    step: float = 0.0  # every step, whatever the network: the Trainer's own work
    built: float = 0.0  # a node of a graph built for the step and walked node by node
    built_sample: float = 0.0
    built_beyond: float = 0.0
    fused: float = 0.0  # a node of a kept graph's layer, computed a layer at a time
    fused_call: float = 0.0  # a numpy call of such a layer (a few per input and per neuron)
    fused_sample: float = 0.0
    fused_beyond: float = 0.0
    first: float = 0.0  # a node of a run's first graph, on top of `built`: sorted, kept
    first_sample: float = 0.0  # ... its memory first taken
    first_beyond: float = 0.0
    plan: float = 0.0  # a layer node at the second step: the plan made, its arrays first written
    plan_sample: float = 0.0
    plan_nodes: float = 5000.0  # the layer nodes of the graph `plan` was measured on
    evaluate: float = 0.0  # a parameter and a test point: the test loss every step computes
    # Elapsed over CPU time over many of the scheduler's slices (1 on a quiet machine,
    # more when other work shares the cores): what a long step takes; see `elapsed`.
    elapsed_per_cpu: float = 1.0
    scale: float = 1.0  # what the steps trained say the figures are off by

    def scaled(self, factor: float) -> StepCosts:
        """The same costs, elapsed time `factor` times as long."""
        return replace(self, scale=self.scale * factor)

    def elapsed(self, cpu: float) -> float:
        """The elapsed seconds of a step of `cpu` seconds of CPU time. A step shorter than
        the scheduler's slice mostly runs whole (its elapsed time is its CPU time); a
        longer one waits while other work has the cores, as the calibration did."""
        share = cpu / (cpu + SCHEDULER_SLICE)
        return self.scale * cpu * (1 + (self.elapsed_per_cpu - 1) * share)

    def built_node(self, batch: int) -> float:
        return self.built + _samples(self.built_sample, self.built_beyond, batch)

    def fused_node(self, batch: int) -> float:
        return self.fused + _samples(self.fused_sample, self.fused_beyond, batch)


def _samples(cached: float, beyond: float, batch: int) -> float:
    return cached * min(batch, CACHED_BATCH) + beyond * max(batch - CACHED_BATCH, 0)


@dataclass(frozen=True)
class StepEstimate:
    nodes: int
    batch: int
    seconds: float  # a step once the run is under way (the kept graph's, if it is kept)
    bytes: int
    first_seconds: float | None = None  # the run's first step, which builds its graph
    second_seconds: float | None = None  # the second, which plans the kept graph

    @property
    def start_seconds(self) -> float:
        """The longest of the first two steps."""
        return max(self.seconds, self.first_seconds or 0.0, self.second_seconds or 0.0)


@dataclass(frozen=True)
class GraphCounts:
    """The nodes of one step's graph by how a step computes them."""

    fused: int  # in the neurons' sums of layers computed a layer at a time
    calls: int  # numpy calls of those layers a step (2 per input, 4 per neuron, 12 more)
    other: int  # computed node by node (activations, features, the loss, layers not fused)
    scalar: int  # per parameter, of the penalties: one number each
    kept: bool  # the graph is kept and recomputed from step to step

    @property
    def sample(self) -> int:
        return self.fused + self.other


def graph_nodes(layer_sizes: list[int] | tuple[int, ...], activation: str, l1: bool,
                l2: bool) -> tuple[int, int]:
    """(nodes holding every sample, scalar nodes) of one step's graph, without building it.

    Each neuron is b + w0*x0 + w1*x1 + ... (a product and a sum per input) and its
    activation (the last layer has none); the loss adds a few per output; an L1 or L2
    penalty is one node (`Value.sum_of_squares`), whose term and gradient per parameter
    are counted as a scalar node each (they were two nodes each before issue 34: an
    overestimate now, on the safe side).
    """
    sums, activations, scalar = _layer_nodes(layer_sizes, activation, l1, l2)
    return sum(sums) + sum(activations) + _loss_nodes(layer_sizes), scalar


def _layer_nodes(layer_sizes: list[int] | tuple[int, ...], activation: str, l1: bool,
                 l2: bool) -> tuple[list[int], list[int], int]:
    """Per layer, its neurons' sum nodes and its activation nodes; the scalar nodes."""
    last = len(layer_sizes) - 2
    sums, activations = [], []
    for i, (nin, nout) in enumerate(itertools.pairwise(layer_sizes)):
        sums.append(2 * nin * nout)
        activations.append(nout if i < last and activation != "linear" else 0)
    return sums, activations, parameter_count(layer_sizes) * (int(l1) + int(l2))


def _loss_nodes(layer_sizes: list[int] | tuple[int, ...]) -> int:
    return 8 * layer_sizes[-1] + 8


# A layer computed at once makes a numpy call or two per input and per neuron, and about
# this many more (stacking its inputs, weights and gradients, reducing, accumulating).
LAYER_CALLS = 12


def count_nodes(config: TrainingConfig, batch: int, train: int) -> GraphCounts:
    """The nodes of a step of `config` on `batch` of its `train` points, by kind.

    The graph is kept from step to step when every step is on the same points with a loss
    that reads no scores (`gradbox.training.network.forward`); then its layers' sums are
    computed a layer at a time (`gradbox.autograd.fused`), except the first layer's when a
    coordinate is both an input and read by a computed feature (x₁ and sin x₁: the plan
    cannot prove that layer's order, and runs it node by node).
    """
    sizes = config.layer_sizes
    sums, activations, scalar = _layer_nodes(sizes, config.activation, config.l1 > 0,
                                             config.l2 > 0)
    names = config.effective_features
    computed = [n for n in names if n not in features.DEFAULT]
    other = len(computed) + sum(activations) + _loss_nodes(sizes)
    kept = batch >= train and not losses.lookup(config.effective_loss,
                                                config.is_regression).reads_scores
    if not kept:
        return GraphCounts(0, 0, other + sum(sums), scalar, False)
    reads = {"x1": ("x1^2", "x1*x2", "sin x1"), "x2": ("x2^2", "x1*x2", "sin x2")}
    mixed = any(raw in names and set(reads[raw]) & set(computed) for raw in reads)
    fused = [s for i, s in enumerate(sums) if i > 0 or not mixed]
    calls = sum(LAYER_CALLS + 2 * nin + 4 * nout
                for i, (nin, nout) in enumerate(itertools.pairwise(sizes)) if i > 0 or not mixed)
    return GraphCounts(sum(fused), calls, other + sum(sums) - sum(fused), scalar, True)


def _peak_bytes(batch: int) -> tuple[int, int]:
    """Traced peak bytes of one forward+backward of a small network, and its nodes."""
    net = MLP(2, [12, 12, 1], activation="tanh", seed=0)
    x = np.linspace(-1, 1, 2 * batch).reshape(batch, 2)
    labels = (x[:, 0] > 0).astype(np.int64)
    gc.collect()
    tracemalloc.start()
    out = net([x[:, 0], x[:, 1]])
    losses.compute_loss("hinge", out, labels).backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak, graph_nodes([2, 12, 12, 1], "tanh", False, False)[0]


# Before the step time is measured (it takes a second or so, so the app does it on a
# background thread at start), a guess: figures measured on 2 cores at load ~6.
_GUESS = StepCosts(step=3e-4, built=4e-6, built_sample=3e-9, built_beyond=8e-9,
                   fused=1e-7, fused_call=1.5e-6, fused_sample=1.5e-9, fused_beyond=5e-9,
                   first=4e-6, first_sample=1e-9, first_beyond=2e-9, plan=8e-6,
                   plan_sample=1e-8, evaluate=1e-9)
_costs: StepCosts | None = None
_lock = threading.Lock()


def calibrated(costs: StepCosts) -> None:
    """The step costs measured on this machine (gradbox.training.calibration), kept for
    every later estimate."""
    global _costs
    with _lock:
        _costs = costs
        _ratios.clear()  # they were relative to the old figure


@functools.cache
def _memory_costs() -> NodeCosts:
    """(bytes per node, per node and sample), from a traced small graph (milliseconds)."""
    b_small, nodes = _peak_bytes(8)
    b_large, _ = _peak_bytes(256)
    # At least a value and a gradient (8 bytes each) per sample, and a Python object.
    per_sample = max((b_large - b_small) / (nodes * (256 - 8)), 16.0)
    return NodeCosts(max(b_small / nodes - per_sample * 8, 200.0), per_sample)


# Steps actually trained correct the launch-time figure: measured on a busy machine it
# came out 3.6x too high for the whole session. The median ratio of the last few steps'
# compute time to what the figure predicted for them scales every later estimate. Steps
# predicted under OBSERVE_MIN_SECONDS are not counted (there the machine's noise is the
# step), nor a run's first two steps (they build and plan its graph: another kind of step
# than the ones after, which the correction is about). The correction is held within
# CORRECTION_RANGE: the launch figure already counts the machine's load then
# (`StepCosts.elapsed_per_cpu`), so what is left is the load's drift -- and the model's
# own error for the network trained, which says little of another network (in
# benchmarks/bench_estimate.py a deep narrow network's 2x carried over to the rows after).
CORRECTION_RANGE = (0.5, 2.0)
OBSERVE_MIN_SECONDS = 0.005
OBSERVED_STEPS = 15
OBSERVED_NEEDED = 3
STARTING_STEPS = 2
_ratios: deque[float] = deque(maxlen=OBSERVED_STEPS)
_run_seen: list[object] = [None, 0]  # the configuration of the steps seen, and how many


StepListener = Callable[[TrainingConfig, float, "int | None"], None]
_listener: StepListener | None = None


def report_steps_to(listener: StepListener | None) -> None:
    """Tell `listener` of every step observed from now on (None: nobody). The training
    process passes the steps it trains to the window this way, whose estimates (a new
    network's warning in the Designer) learn from them too."""
    global _listener
    _listener = listener


# The last prediction `observe_step` made: (config, n_train, the step-time figure it used,
# seconds). A run asks for the same one every step (W1: 12 us of a 0.8 ms step).
_predicted: tuple[TrainingConfig, int | None, object, float] | None = None


def observe_step(config: TrainingConfig, seconds: float, n_train: int | None = None) -> None:
    """A step of `config` took `seconds` of compute (thread-safe; the trainer calls it
    after each untraced step)."""
    global _predicted
    last, costs = _predicted, _costs
    if last is not None and last[0] is config and last[1] == n_train and last[2] is costs:
        predicted = last[3]
    else:
        predicted = estimate_step(config, n_train, corrected=False).seconds
        _predicted = (config, n_train, costs, predicted)
    with _lock:
        # (The window's steps come unpickled, another object each: compared, then.)
        if _run_seen[0] is not config and _run_seen[0] != config:
            _run_seen[:] = [config, 0]
        _run_seen[1] += 1  # type: ignore[operator]
        starting = _run_seen[1] <= STARTING_STEPS  # type: ignore[operator]
        if predicted >= OBSERVE_MIN_SECONDS and seconds > 0 and not starting:
            _ratios.append(seconds / predicted)
    listener = _listener
    if listener is not None:
        listener(config, seconds, n_train)


def correction() -> float:
    """What the steps seen say the launch figure is off by (1: not enough seen yet)."""
    with _lock:
        ratios = list(_ratios)
    if len(ratios) < OBSERVED_NEEDED:
        return 1.0
    return float(np.clip(np.median(ratios), *CORRECTION_RANGE))


def step_costs(corrected: bool = True) -> StepCosts:
    """The step costs estimates use: as measured (or the guess, until they are),
    corrected by the steps trained since."""
    with _lock:
        costs = _costs or _GUESS
    return costs.scaled(correction()) if corrected else costs


def step_seconds(costs: StepCosts, counts: GraphCounts, batch: int, params: int,
                 tested: int) -> tuple[float, float, float]:
    """Seconds of (the first step, the second, a step after) of a graph of `counts` on
    `batch` samples, `params` parameters and `tested` test points, at `costs`."""
    c = costs
    # A penalty's term per parameter: a number, not an array (as cheap as a layer's node).
    around = c.step + c.evaluate * params * tested + counts.scalar * c.fused_node(1)
    built = counts.sample * c.built_node(batch)
    first = (around + built
             + counts.sample * (c.first + _samples(c.first_sample, c.first_beyond, batch)))
    if counts.kept:
        steady = (around + counts.fused * c.fused_node(batch) + counts.calls * c.fused_call
                  + counts.other * c.built_node(batch))
        # A plan's walk costs more a node in a bigger graph (out of the processor's
        # caches): 2.7, 4.3, 5.8 us a node at 5,000, 34,000, 133,000 layer nodes.
        plan = c.plan * (max(counts.fused, 1) / c.plan_nodes) ** 0.25
        second = steady + counts.fused * (plan + c.plan_sample * batch)
    else:
        steady = second = around + built
    return c.elapsed(first), c.elapsed(second), c.elapsed(steady)


def estimate_step(config: TrainingConfig, n_train: int | None = None,
                  corrected: bool = True) -> StepEstimate:
    """Time and peak memory of a training step of `config`, from the measured costs: a
    step once the run is under way, and its first two."""
    train = n_train if n_train is not None else round(config.n_samples * (1 - config.test_ratio))
    batch = max(min(config.batch_size or train, train), 1)
    counts = count_nodes(config, batch, train)
    params = parameter_count(config.layer_sizes)
    first, second, steady = step_seconds(step_costs(corrected), counts, batch, params,
                                         max(config.n_samples - train, 0))
    memory = _memory_costs()
    needed = (counts.sample * (memory.bytes + memory.bytes_per_sample * batch)
              + counts.scalar * (memory.bytes + memory.bytes_per_sample))
    return StepEstimate(counts.sample + counts.scalar, batch, steady, int(needed), first,
                        second)


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds:.2g} s"
    return f"{seconds:.1f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


# The first steps are said apart when they take this many times a later one or more.
STARTING_SAID_ABOVE = 1.5


def slow_warning(config: TrainingConfig) -> str:
    """A plain warning when a step of `config` will take long on this machine, or ''. The
    times come from the measured costs: a step once the run is under way and, when they
    take much longer, the first two (the first builds the graph, the second plans its
    layers); a network that would not fit in memory is refused when it is built, not
    warned about."""
    estimate = estimate_step(config)
    start = estimate.start_seconds
    if max(estimate.seconds, start) < SLOW_STEP_SECONDS:
        return ""
    each = _duration(estimate.seconds)
    first = ("" if start < STARTING_SAID_ABOVE * estimate.seconds or _duration(start) == each
             else f" (the first two up to {_duration(start)}, building the graph)")
    return (f"{parameter_count(config.layer_sizes):,} parameters × {config.n_samples:,} "
            f"samples: each step will take about {each} on this machine{first} and need "
            f"about {estimate.bytes / 2**20:,.0f} MB")


def _meminfo(key: str) -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation now (None if unknown)."""
    available = _meminfo("MemAvailable")
    if available is not None:
        return available
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def training_memory_cap() -> int | None:
    """Bytes of memory the training process may use (see TRAINING_MEMORY_SHARE), or
    None where the machine's memory is unknown."""
    setting = os.environ.get(TRAINING_MEMORY_ENV, "")
    if setting.strip():
        try:
            return int(float(setting) * 2**20)
        except ValueError:
            pass
    total = _meminfo("MemTotal")
    if total is None:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None
    return int(TRAINING_MEMORY_SHARE * total)


def fits_in_memory(config: TrainingConfig, n_train: int | None = None) -> str:
    """'' if a step of `config` fits in the memory available, and in what the training
    process may use, else why not, in words."""
    available, cap = available_memory(), training_memory_cap()
    need = estimate_step(config, n_train).bytes
    if cap is not None and need > MEMORY_SHARE * cap and (
            available is None or cap < available):
        return (f"layers {config.layer_sizes} would need about {_size(need)} of memory for "
                f"each step, and the training process may use at most {_size(cap)} (its "
                "memory cap, a share of this machine's"
                + (f"; {_size(available)} free now" if available is not None else "")
                + "): use fewer or narrower layers, fewer points, or a smaller batch")
    if available is None or need <= MEMORY_SHARE * available:
        return ""
    return (f"layers {config.layer_sizes} would need about {_size(need)} of memory for each "
            f"step, and this machine has {_size(available)} free: use fewer or narrower "
            "layers, fewer points, or a smaller batch")


def _address_space_cap() -> int | None:
    """This process's address-space cap in bytes (the training process's), or None."""
    try:
        import resource
    except ImportError:  # (not on Windows)
        return None
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def cap_this_process() -> int | None:
    """Cap this process's address space at `training_memory_cap()` (the training process
    calls it at start); the cap set, or None."""
    cap = training_memory_cap()
    try:
        import resource
    except ImportError:
        return None
    if cap is None:
        return None
    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):
        return None
    return cap


def _size(n: float) -> str:
    return f"{n / 2**30:.1f} GB" if n >= 2**30 else f"{n / 2**20:.0f} MB"


def describe_error(error: BaseException) -> str:
    """What went wrong, in words, for exceptions that carry none (MemoryError())."""
    text = str(error)
    if isinstance(error, MemoryError):
        free = available_memory()
        where = f" ({_size(free)} free now)" if free is not None else ""
        capped = _address_space_cap()
        if capped is not None:
            where += f"; the training process may use at most {_size(capped)}"
        return ("Out of memory" + (f": {text}" if text else "") + f"{where}. The network or "
                "the data is too large for this machine; nothing was changed.")
    return text or type(error).__name__
