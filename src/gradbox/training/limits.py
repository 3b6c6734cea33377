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
from dataclasses import dataclass

import numpy as np

from gradbox.autograd import losses
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
    """Measured costs of one graph node: fixed, and per sample it holds."""

    seconds: float
    seconds_per_sample: float
    bytes: float
    bytes_per_sample: float


@dataclass(frozen=True)
class StepEstimate:
    nodes: int
    batch: int
    seconds: float
    bytes: int


def graph_nodes(layer_sizes: list[int] | tuple[int, ...], activation: str, l1: bool,
                l2: bool) -> tuple[int, int]:
    """(nodes holding every sample, scalar nodes) of one step's graph, without building it.

    Each neuron is b + w0*x0 + w1*x1 + ... (a product and a sum per input) and its
    activation (the last layer has none); the loss adds a few per output; an L1 or L2
    penalty is one node (`Value.sum_of_squares`), whose term and gradient per parameter
    are counted as a scalar node each (they were two nodes each before issue 34: an
    overestimate now, on the safe side).
    """
    sample = 0
    params = 0
    last = len(layer_sizes) - 2
    for i, (nin, nout) in enumerate(itertools.pairwise(layer_sizes)):
        activated = i < last and activation != "linear"
        sample += nout * (2 * nin + (1 if activated else 0))
        params += nout * (nin + 1)
    sample += 8 * layer_sizes[-1] + 8
    scalar = params * (int(l1) + int(l2))
    return sample, scalar


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


# Before the step time is measured (it takes a second or two, so the app does it on a
# background thread at start), a middle-of-the-road guess.
_GUESS_SECONDS = (3e-5, 3e-8)
_times: tuple[float, float] | None = None
_lock = threading.Lock()


def calibrated(per_node: float, per_sample: float) -> None:
    """The step time measured on this machine (gradbox.training.calibration): seconds per
    node, and per node and sample. Kept for every later estimate."""
    global _times
    with _lock:
        _times = (per_node, per_sample)
        _ratios.clear()  # they were relative to the old figure


@functools.cache
def _memory_costs() -> tuple[float, float]:
    """(bytes per node, per node and sample), from a traced small graph (milliseconds)."""
    b_small, nodes = _peak_bytes(8)
    b_large, _ = _peak_bytes(256)
    # At least a value and a gradient (8 bytes each) per sample, and a Python object.
    per_sample = max((b_large - b_small) / (nodes * (256 - 8)), 16.0)
    return max(b_small / nodes - per_sample * 8, 200.0), per_sample


# Steps actually trained correct the launch-time figure: measured on a busy machine it
# came out 3.6x too high for the whole session. The median ratio of the last few steps'
# compute time to what the figure predicted for them scales every later estimate. Steps
# predicted under OBSERVE_MIN_SECONDS are not counted: there, the per-step overhead the
# model leaves out (Python, statistics) outweighs the per-node cost it is about.
OBSERVE_MIN_SECONDS = 0.005
OBSERVED_STEPS = 15
OBSERVED_NEEDED = 3
_ratios: deque[float] = deque(maxlen=OBSERVED_STEPS)


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
    last, times = _predicted, _times
    if last is not None and last[0] is config and last[1] == n_train and last[2] is times:
        predicted = last[3]
    else:
        predicted = estimate_step(config, n_train, corrected=False).seconds
        _predicted = (config, n_train, times, predicted)
    if predicted >= OBSERVE_MIN_SECONDS and seconds > 0:
        with _lock:
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
    return float(np.clip(np.median(ratios), 0.1, 10.0))


def measured_costs(corrected: bool = True) -> NodeCosts:
    """The costs estimates use: step time as measured (or the guess, until it is),
    corrected by the steps trained since, and memory as traced."""
    with _lock:
        seconds = _times or _GUESS_SECONDS
    factor = correction() if corrected else 1.0
    return NodeCosts(seconds[0] * factor, seconds[1] * factor, *_memory_costs())


def estimate_step(config: TrainingConfig, n_train: int | None = None,
                  corrected: bool = True) -> StepEstimate:
    """Time and peak memory of one training step of `config`, from the measured costs."""
    costs = measured_costs(corrected)
    train = n_train if n_train is not None else round(config.n_samples * (1 - config.test_ratio))
    batch = max(min(config.batch_size or train, train), 1)
    sample, scalar = graph_nodes(config.layer_sizes, config.activation, config.l1 > 0,
                                 config.l2 > 0)
    seconds = (sample * (costs.seconds + costs.seconds_per_sample * batch)
               + scalar * (costs.seconds + costs.seconds_per_sample))
    memory = (sample * (costs.bytes + costs.bytes_per_sample * batch)
              + scalar * (costs.bytes + costs.bytes_per_sample))
    return StepEstimate(sample + scalar, batch, seconds, int(memory))


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def slow_warning(config: TrainingConfig) -> str:
    """A plain warning when a step of `config` will take long on this machine, or ''. The
    time comes from the measured per-node costs; a network that would not fit in memory
    is refused when it is built, not warned about."""
    estimate = estimate_step(config)
    if estimate.seconds < SLOW_STEP_SECONDS:
        return ""
    return (f"{parameter_count(config.layer_sizes):,} parameters × {config.n_samples:,} "
            f"samples: each step will take about {_duration(estimate.seconds)} on this "
            f"machine and need about {estimate.bytes / 2**20:,.0f} MB")


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
