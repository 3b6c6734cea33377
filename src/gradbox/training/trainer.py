"""The training model: one step in four phases, history, rewind, and the broken switch.

Pure Python/numpy, no Qt: the desktop app drives a `Trainer` from a worker thread and
reads only the immutable `Snapshot`s it hands out.

    forward   -> build the graph of one sample (every node holds all samples), compute loss
    zero_grad -> set every parameter's gradient to 0 (skipped when forget_zero_grad is on)
    backward  -> loss.backward(): gradients flow from the loss to every parameter
    update    -> the optimizer moves each parameter against its gradient

What a run is made of lives beside it: its configuration (`config`), what it keeps of
its past (`checkpoints`), what views see (`snapshots`), when a Run stops (`goals`). The
names are also importable from here, where they were first defined.

Why the Trainer stays one module past 700 lines: what is left is one object's state --
the run, the ghost, the history, the events and the checkpoints -- changed together by
the phases, rewind (a replay of the phases) and the saved state; split further, each
part would reach into the others' private fields.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradbox.autograd import features, losses
from gradbox.autograd.engine import Value, release_graph
from gradbox.autograd.nn import MLP, numpy_forward
from gradbox.autograd.optim import Optimizer, Schedule, make_optimizer
from gradbox.autograd.phases import PHASES, Phase  # PHASES re-exported: older imports read it here
from gradbox.graph import Graph, trace
from gradbox.training import datasets, limits
from gradbox.training import statistics as layer_stats
from gradbox.training.checkpoints import (
    PATH_BYTES,
    PATH_POINTS,
    CheckpointPolicy,
    CheckpointStore,
    WeightPath,
)
from gradbox.training.compare import PinnedRun
from gradbox.training.config import (
    DATA_FIELDS,
    SLOW_STEP_SECONDS,
    SLOW_WORK,
    ConfigChange,
    ConfigError,
    TrainingConfig,
    check_task,
    config_for,
    plan_config_change,
    splits_steps,
)
from gradbox.training.datasets import Dataset
from gradbox.training.goals import DIVERGED_LOSS, DIVERGED_RATIO, Run, RunGoal, divergence
from gradbox.training.history import History, HistoryBuffer, StepRecord, history_arrays
from gradbox.training.snapshots import Snapshot
from gradbox.training.state import (
    Checkpoint,
    DataChange,
    Event,
    GhostChange,
    ParameterEdit,
    RateChange,
    RunState,
    TrainingState,
    frozen,
    frozen_dataset,
    frozen_optimizer,
)

__all__ = ["DATA_FIELDS", "DIVERGED_LOSS", "DIVERGED_RATIO", "PATH_BYTES", "PATH_POINTS",
           "PHASES", "SLOW_STEP_SECONDS", "SLOW_WORK", "Checkpoint", "CheckpointPolicy",
           "ConfigChange", "ConfigError", "DataChange", "GhostChange", "History",
           "ParameterEdit", "RateChange", "RunGoal", "Snapshot", "StepRecord", "Trainer",
           "TrainingConfig", "TrainingState", "check_task", "config_for", "divergence",
           "history_arrays", "passes_after", "plan_config_change", "splits_steps"]

# Revision numbers, drawn from one counter so that no two runs' numbers ever coincide
# (a view that kept a number from a replaced run cannot mistake the new run for it).
_REVISIONS = itertools.count(1)


def start_revisions_at(first: int) -> None:
    """Draw this process's revision numbers from `first` on: a training process started
    after another (one that died) must not hand the window numbers it has seen."""
    global _REVISIONS
    _REVISIONS = itertools.count(first)


@dataclass
class _Run:
    model: MLP
    optimizer: Optimizer
    params: list[Value] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.params = self.model.parameters()

    def values(self) -> np.ndarray:
        return np.fromiter((p.data for p in self.params), np.float64, len(self.params))

    def grads(self) -> np.ndarray:
        return np.fromiter((float(p.grad) for p in self.params), np.float64, len(self.params))

    def set_values(self, values: np.ndarray) -> None:
        for p, v in zip(self.params, values.tolist()):
            p.data = v

    def set_grads(self, grads: np.ndarray) -> None:
        for p, g in zip(self.params, grads.tolist()):
            p.grad = g

    def state(self) -> RunState:
        return RunState(frozen(self.values()), frozen(self.grads()),
                        frozen_optimizer(self.optimizer.state_dict()))

    def load(self, state: RunState, weights: bool = True) -> None:
        """Put `state` back (`weights=False`: all but the weights, which are as they
        were: a 1000x1000 network's take 0.1 s to set)."""
        if weights:
            self.set_values(state.params)
        self.set_grads(state.grads)
        self.optimizer.load_state_dict(dict(state.optimizer))


# Young objects beyond this many (a big network's graph) are frozen rather than scanned by
# the cyclic collector; W1's step leaves a few thousand.
FREEZE_YOUNG_ABOVE = 100_000


@contextlib.contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one training step.

    The engine's graphs contain no reference cycles (closures receive the gradient as
    an argument instead of holding their output), so reference counting frees every
    node; the cyclic collector would only re-scan thousands of fresh nodes for nothing.

    A big network's step leaves millions of young objects: re-enabled as they are, the
    collector would scan them all at the next allocation (seconds for a 1000x1000
    network, and inside a Pause that abandons a step). They are frozen instead
    (`gc.freeze()`, constant time; reference counting still frees them).

    A step cut short by an exception (Pause abandons a step that way) is frozen whatever
    its count: its half-built graph lives on in the traceback until the caller has
    answered, held by a few young containers of millions of entries (the backward walk's
    node list and visited set), which the next young collection traversed whole: 140-195
    ms of a 1000x1000 network's Pause in the backward pass (benchmarks/bench_pause.py).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    except BaseException:
        if was_enabled:
            gc.freeze()
        raise
    finally:
        if was_enabled:
            if gc.get_count()[0] > FREEZE_YOUNG_ABOVE:
                gc.freeze()
            gc.enable()



class Trainer:
    """Owns the dataset, the model, the optimizer and the history of one run.

    Other code reads a run through `snapshot()` (for views) and `state()` (the whole
    run, to save, hand over or keep for undo), and changes it through the methods below.
    """

    def __init__(self, config: TrainingConfig | None = None, dataset: Dataset | None = None,
                 init_seed: int | None = None, initial_params: np.ndarray | None = None,
                 policy: CheckpointPolicy | None = None) -> None:
        self.config = config or TrainingConfig()
        c = self.config
        n_train = None if dataset is None else int(np.count_nonzero(~dataset.is_test))
        too_big = limits.fits_in_memory(c, n_train)
        if too_big:  # refused before building a network that would not fit
            raise ConfigError(too_big)
        self._dataset = frozen_dataset(dataset if dataset is not None else datasets.make(
            c.dataset, c.n_samples, c.noise, c.seed, c.test_ratio, c.effective_classes))
        check_task(c, self._dataset)
        self.dataset_version = 0
        self.init_seed = c.seed if init_seed is None else init_seed
        self.forget_zero_grad = False
        self.policy = policy or CheckpointPolicy()
        # Tracing costs about as much as a step, so it is done only when a view wants it.
        self.capture_graph = False
        self.pinned: PinnedRun | None = None  # kept across reset, reinitialize, with_config
        self._build(initial_params)

    # --- construction -----------------------------------------------------------------
    def _new_run(self, values: np.ndarray) -> _Run:
        c = self.config
        model = c.make_model(seed=0)
        model.set_flat(values)
        return _Run(model, make_optimizer(c.optimizer, model.parameters(), self.lr, c.momentum))

    def _build(self, initial: np.ndarray | None = None, ghost: bool = False) -> None:
        """A fresh run at step 0 from `initial` weights (default: drawn from init_seed)."""
        c = self.config
        if initial is None:
            initial = c.make_model(seed=self.init_seed).get_flat()
        self.initial_params = frozen(initial, np.float64)
        self.run = self._new_run(self.initial_params)
        self.model = self.run.model
        self._known_arrays: tuple[int, _Run, np.ndarray, np.ndarray] | None = None
        self.ghost: _Run | None = None
        self.param_names = tuple(name for name, _ in self.model.named_parameters())
        self._history = HistoryBuffer()
        self._events: list[Event] = [DataChange(0, self._dataset, self.dataset_version)]
        self._checkpoints = CheckpointStore(self.policy)
        self._phase_index = 0
        self._step_seconds = 0.0  # the phases of the step under way, so far
        self._zero_grad_skipped = False
        self.stop_reason = ""
        self._path = WeightPath(self.initial_params)
        # A new run: views redraw everything (see `Snapshot.run_id`).
        self.run_id = self.params_rev = next(_REVISIONS)
        self._clear_graph()
        # Cumulative largest |gradient| after each step (see `_grad_peak`).
        self._peaks: list[float] = []
        if ghost:
            self.set_ghost(True)

    def _clear_step_state(self) -> None:
        """Forget what the phases of a half-done (or dropped) step measured."""
        self._mid_passes: int | None = None  # passes held, once this step's zero_grad ran
        self._step_grads: np.ndarray | None = None
        self._update_norm = math.nan

    @property
    def grad_passes(self) -> int:
        """How many backward passes the gradients hold now (0 right after zero_grad)."""
        if self._mid_passes is not None:
            return self._mid_passes
        return passes_after(self._history.view())

    def _clear_graph(self) -> None:
        self._clear_step_state()
        self.last_root: Value | None = None
        self.last_output: Value | list[Value] | None = None
        self.last_batch: np.ndarray = np.arange(0)
        self._traced: Graph | None = None
        self._traced_root: Value | None = None
        self.last_graph = None
        self.last_graph_batch: np.ndarray | None = None

    @property
    def last_graph(self) -> Graph | None:
        """The last captured graph (see `Snapshot.graph`); setting it moves `graph_rev`."""
        return self._last_graph

    @last_graph.setter
    def last_graph(self, graph: Graph | None) -> None:
        if graph is None and getattr(self, "_last_graph", False) is None:
            return  # none before, none now: nothing for a view to redraw
        self._last_graph = graph
        self.graph_rev = next(_REVISIONS)

    @property
    def dataset(self) -> Dataset:
        """The points the next step trains on (read-only arrays; use replace_dataset)."""
        return self._dataset

    @property
    def history(self) -> History:
        return self._history.view()

    @property
    def edits(self) -> tuple[ParameterEdit, ...]:
        return tuple(e for e in self._events if isinstance(e, ParameterEdit))

    @property
    def step_count(self) -> int:
        return len(self._history)

    @property
    def phase(self) -> str:
        """The phase the next `substep()` will run."""
        return PHASES[self._phase_index]

    @property
    def lr(self) -> float:
        """The base learning rate (before the schedule); it can change between steps."""
        return self.config.lr

    @property
    def schedule(self) -> Schedule:
        c = self.config
        return Schedule(c.schedule, self.lr, c.steps)

    @property
    def ghost_enabled(self) -> bool:
        return self.ghost is not None

    # --- switches -----------------------------------------------------------------------
    def set_forget_zero_grad(self, on: bool) -> None:
        """Skip zero_grad from the next step on (or stop skipping it).

        Switched on with a ghost running, the ghost starts again from the current
        weights: the correct run and the broken one branch from the same step, so the
        difference between their curves is the missing zero_grad and nothing else.
        """
        if on and not self.forget_zero_grad and self.ghost is not None:
            self.set_ghost(False)
            self.set_ghost(True)
        self.forget_zero_grad = bool(on)

    def set_ghost(self, on: bool) -> None:
        """A ghost run trains a copy correctly on the same batches, for comparison.

        Turned on at step 0 it starts from the same initial weights as the main run;
        turned on later it starts from the main run's current weights.
        """
        if bool(on) == (self.ghost is not None):
            return
        if on:
            self.ghost = self._new_run(self.run.values())
            self.ghost.optimizer.load_state_dict(self.run.optimizer.state_dict())
        else:
            self.ghost = None
        self.params_rev = next(_REVISIONS)  # the ghost's gradients come or go
        self._event(GhostChange(self.step_count, bool(on)))

    def set_lr(self, lr: float) -> None:
        if not math.isfinite(lr) or lr < 0:
            raise ConfigError(f"learning rate must be a finite number >= 0, got {lr}")
        if float(lr) != self.config.lr:
            self.config = self.config.with_changes(lr=float(lr))
            self._event(RateChange(self.step_count, float(lr)))

    def _event(self, event: Event) -> None:
        """Record a change between steps. Mid-step (only the rate and the ghost can change
        then: they act in the update), the step's starting checkpoint takes it in too, so
        that it stays 'the start of this step, after its events'."""
        self._events.append(event)
        if self._checkpoints.start is not None:
            ghost = self.ghost.state() if self.ghost is not None else None
            self._checkpoints.amend_start(self.lr, ghost)

    # --- the four phases ---------------------------------------------------------------------
    def batch_indices(self, step: int, dataset: Dataset | None = None) -> np.ndarray:
        """The training points step `step + 1` uses (all of them, or a seeded batch)."""
        train = np.flatnonzero(~(dataset or self._dataset).is_test)
        size = self.config.batch_size
        if size is None or size >= len(train):
            return train
        # Seeded by the step number, so replaying from a checkpoint sees the same batches.
        rng = np.random.default_rng([self.config.seed, step])
        return np.sort(rng.choice(train, size, replace=False))

    def _forward(self, run: _Run, batch: np.ndarray) -> tuple[Value, Value | list[Value]]:
        c = self.config
        points, truth = self._dataset.points[batch], self._dataset.truth[batch]
        # The inputs are engine nodes too (x₁² is x₁ * x₁), so the graph shows them.
        output = run.model(features.input_nodes(points, c.effective_features))
        loss = self.data_loss(output, truth)
        if c.l2:
            loss = loss + c.l2 * losses.l2_penalty(run.params)
        if c.l1:
            loss = loss + c.l1 * losses.l1_penalty(run.params)
        return loss, output

    def substep(self, capture_every_phase: bool = True) -> str:
        """Run the next phase and return its name; after 'update' a step is complete."""
        phase = self.phase
        if self.stop_reason and phase == Phase.FORWARD:
            self.stop_reason = ""
        started = time.perf_counter()
        with np.errstate(all="ignore"), cyclic_gc_paused():
            getattr(self, f"_phase_{phase}")()
            if self.capture_graph and not self.stop_reason and phase != Phase.UPDATE and (
                    capture_every_phase or phase == Phase.BACKWARD):
                self._capture_graph()
        self.params_rev = next(_REVISIONS)  # a phase changes the weights or gradients
        took = time.perf_counter() - started
        self._checkpoints.trained(took)
        # A whole step's compute time, untraced, corrects the launch-time cost figure.
        self._step_seconds = 0.0 if phase == PHASES[0] else self._step_seconds
        self._step_seconds += took
        if phase == PHASES[-1] and not self.stop_reason and not self.capture_graph:
            limits.observe_step(self.config, self._step_seconds)
        if not self.stop_reason:
            self._phase_index = (self._phase_index + 1) % len(PHASES)
        return phase

    def capture_current_graph(self) -> None:
        """Capture the last forward pass's graph now, as it was before its update.

        After a whole step the optimizer has already moved the weights; the graph must
        show the weights the forward pass used, so they are put back while it is frozen.
        """
        if self.last_root is None:
            return
        latest = self._checkpoints.latest()
        if self._phase_index == 0 and latest is not None:
            current = self.run.values()
            self.run.set_values(latest.run.params)
            try:
                self._capture_graph()
            finally:
                self.run.set_values(current)
        else:
            self._capture_graph()

    def _capture_graph(self) -> None:
        """Freeze the current graph's numbers (before the update moves the weights)."""
        if self.last_root is None:
            return
        if self._traced is None or self._traced_root is not self.last_root:
            self._traced = trace(self.last_root, self.model)
            self._traced_root = self.last_root
        self.last_graph = self._traced.snapshot()
        self.last_graph_batch = frozen(self.last_batch)

    def _phase_forward(self) -> None:
        step = self.step_count
        cp = self._checkpoint()
        # Just read from the parameters: a snapshot during this forward pass (a Pause)
        # shows these instead of reading a big network's again (0.1-0.2 s).
        self._known_arrays = (self.params_rev, self.run, cp.run.params, cp.run.grads)
        self._checkpoints.begin_step(cp, evented=self._events[-1].step == cp.step)
        self.last_batch = self.batch_indices(step)
        if len(self.last_batch) == 0:
            self._stop("there are no training points: add some, or hold fewer out for testing")
            return
        self._release_last_graph()
        self.last_root, self.last_output = self._forward(self.run, self.last_batch)
        if not math.isfinite(self.last_root.data):
            self._stop(f"the loss became {self.last_root.data} at step {step + 1}: "
                       "the learning rate is probably too large. Rewind or lower it.")

    def _release_last_graph(self) -> None:
        """Free the last step's graph in slices (see `release_graph`) before the next one
        is built, rather than all at once when its last reference goes."""
        old = self.last_root
        if old is None:
            return
        self.last_root = self.last_output = None
        if self._traced_root is old:
            self._traced = self._traced_root = None
        release_graph(old)

    def _phase_zero_grad(self) -> None:
        self._zero_grad_skipped = self.forget_zero_grad
        if self._zero_grad_skipped:
            self._mid_passes = passes_after(self._history.view())
        else:
            self.run.optimizer.zero_grad()
            self._mid_passes = 0

    def _phase_backward(self) -> None:
        assert self.last_root is not None
        held = self.run.grads() if self._mid_passes else None
        self.last_root.backward()
        grads = self.run.grads()
        # This pass's own gradient: what is in .grad now, less what was already there.
        self._step_grads = grads if held is None else grads - held
        self._mid_passes = (self._mid_passes or 0) + 1
        if not np.all(np.isfinite(grads)):
            self._stop(f"a gradient became non-finite at step {self.step_count + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")

    def _train_ghost(self, batch: np.ndarray, lr: float) -> float:
        """One correct step of the ghost run on the same batch; its loss."""
        assert self.ghost is not None
        ghost_root, _ = self._forward(self.ghost, batch)
        self.ghost.optimizer.zero_grad()
        ghost_root.backward()
        self.ghost.optimizer.lr = lr
        self.ghost.optimizer.step()
        loss = ghost_root.data
        release_graph(ghost_root)
        return loss

    def _phase_update(self) -> None:
        assert self.last_root is not None
        step = self.step_count
        lr = self.schedule.lr_at(step)
        grads = self.run.grads()
        ghost_loss = math.nan
        if self.ghost is not None:
            ghost_loss = self._train_ghost(self.last_batch, lr)
        test_loss, test_acc = self._evaluate(self._dataset.is_test)
        # From the weights the forward pass used, before the optimizer moves them.
        before = self.run.values()
        stats = layer_stats.measure(before, grads, self.config.layer_sizes,
                                    self.config.activation,
                                    self.config.inputs(self._dataset.points[self.last_batch]))
        output = self.last_output
        out_data = [o.data for o in output] if isinstance(output, list) else output.data
        self.run.optimizer.lr = lr
        self.run.optimizer.step()
        after = self.run.values()
        if not np.all(np.isfinite(after)):
            self._stop(f"a weight became non-finite in the update of step {step + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")
            return
        record = StepRecord(
            step=step + 1, loss=float(self.last_root.data), test_loss=test_loss,
            accuracy=self._accuracy(out_data, self.last_batch),
            test_accuracy=test_acc, grad_norm=float(np.linalg.norm(grads)), lr=lr,
            zero_grad_skipped=self._zero_grad_skipped, ghost_loss=ghost_loss, layers=stats)
        update_norm = float(np.linalg.norm(after - before))
        peak = max(self._peaks[-1] if self._peaks else 0.0, self._grad_peak_of(grads))
        # The step is done from the history's append on; what follows is quick, so a
        # Pause almost never finds a step recorded but not finished, which it would
        # drop by a rewind (for a 1000x1000 network, 0.1-0.3 s of reading the weights
        # again used to follow the append).
        self._history.append(record)
        self._path.add(step + 1, after)
        self._checkpoints.start = None
        self._update_norm = update_norm
        self._mid_passes = None
        self._peaks.append(peak)

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        self._phase_index = 0
        # Drop the half-done step: the last finite state stays the current one.
        start = self._checkpoints.start
        assert start is not None
        self._restore(start)
        self._checkpoints.start = None

    def step(self, pause: Callable[[], bool] | None = None) -> StepRecord | None:
        """One whole iteration (finishing a partly sub-stepped one). None if it stopped
        (`stop_reason` says why) or if `pause()` said so at a phase boundary: a long step
        of a big network then stays half done, as Substep leaves it."""
        while True:
            phase = self.substep(capture_every_phase=False)
            if self.stop_reason:
                return None
            if phase == Phase.UPDATE:
                return self._history.last()
            if pause is not None and pause():
                return None

    def run_steps(self, max_steps: int | None = None, target_loss: float | None = None,
                  stop_diverging: bool = True) -> str:
        """Train until a step count, a target loss, a non-finite loss or a diverging one,
        by the window's Run rules (the same loop, `goals.Run`); return why it stopped.
        `stop_diverging=False` trains on through a rising loss, into non-finite numbers
        if it goes there (a script or a test that drives a run there on purpose)."""
        if max_steps is not None and max_steps <= 0:
            return "ran 0 steps"
        run = Run(RunGoal(steps=max_steps, loss=target_loss), stop_diverging=stop_diverging)
        while True:
            tick = run.tick(self)
            if tick.over:
                return tick.alarm or tick.reached

    # --- evaluation ------------------------------------------------------------------------
    def _evaluate(self, mask: np.ndarray) -> tuple[float, float]:
        """Loss (without penalties) and accuracy on the masked points, by plain numpy."""
        if not mask.any():
            return math.nan, math.nan
        points, truth = self._dataset.points[mask], self._dataset.truth[mask]
        out = numpy_forward(self.run.values(), self.config.layer_sizes,
                            self.config.activation, self.config.inputs(points))
        outputs = [out[:, k] for k in range(out.shape[1])]
        scores = [Value(o) for o in outputs]
        loss = self.data_loss(scores if len(scores) > 1 else scores[0], truth)
        return float(loss.data), self._accuracy(outputs if len(outputs) > 1 else outputs[0],
                                                np.flatnonzero(mask))

    def data_loss(self, output: Value | list[Value], truth: np.ndarray) -> Value:
        """The loss (without penalties) of network output against the data's truth:
        targets for regression, class labels otherwise."""
        if self.config.is_regression:
            return losses.compute_regression_loss(self.config.effective_loss, output, truth)
        return losses.compute_loss(self.config.effective_loss, output, truth)

    def _accuracy(self, output: Any, indices: np.ndarray) -> float:
        """Fraction classified right; NaN for regression, where nothing is a class."""
        if self.config.is_regression:
            return math.nan
        return losses.accuracy(output, self._dataset.labels[indices])

    # --- checkpoints, rewind -------------------------------------------------------------------
    def _checkpoint(self) -> Checkpoint:
        ghost = self.ghost.state() if self.ghost is not None else None
        return Checkpoint(self.step_count, self.lr, self.run.state(), ghost)

    def _restore(self, cp: Checkpoint, weights: bool = True) -> None:
        self._restore_but_nodes(cp, weights)()

    def _restore_but_nodes(self, cp: Checkpoint, weights: bool = True) -> Callable[[], None]:
        """`_restore`, all but putting the run's weights, gradients and optimizer state
        back, which the function returned does."""
        self.params_rev = next(_REVISIONS)
        self.config = self.config.with_changes(lr=cp.lr)
        if cp.ghost is None:
            self.ghost = None
        else:
            self.ghost = self._new_run(cp.ghost.params)
            self.ghost.load(cp.ghost)
        self._clear_graph()
        return functools.partial(self.run.load, cp.run, weights)

    def _data_at(self, step: int) -> Dataset:
        """The points the step after `step` steps trained on."""
        data = self._events[0]
        for event in self._events:
            if isinstance(event, DataChange) and event.step <= step:
                data = event
        assert isinstance(data, DataChange)
        return data.dataset

    def _replay(self, cp: Checkpoint, step: int) -> None:
        """From checkpoint `cp` to the start of step `step + 1`, by training again.

        No event lies strictly between `cp` and `step` (a checkpoint is kept at every
        step with one), so the points, the ghost and the rate stay those of `cp`;
        each step's learning rate and zero_grad come from its record.
        """
        self._restore(cp)
        self._dataset = self._data_at(cp.step)
        history = self._history.view()
        before = None
        with np.errstate(all="ignore"), cyclic_gc_paused():
            for s in range(cp.step, step):
                record = history[s]
                batch = self.batch_indices(s)
                root, _ = self._forward(self.run, batch)
                if not record.zero_grad_skipped:
                    self.run.optimizer.zero_grad()
                root.backward()
                if self.ghost is not None:
                    self._train_ghost(batch, record.lr)
                self.run.optimizer.lr = record.lr
                if s == step - 1:
                    before = self.run.values()
                self.run.optimizer.step()
        if before is not None:  # the training loop's |Δw| of the last step, as it was
            self._update_norm = float(np.linalg.norm(self.run.values() - before))

    def _last_update_norm(self) -> float:
        """|Δw| of the last step, from the kept weights at its start and now (its own
        update: a weight typed in after it is taken back out); NaN if its start is not
        kept."""
        last = self.step_count
        start = self._checkpoints.at(last - 1)
        if start is None:
            return math.nan
        after = self._params_and_grads()[0].copy()  # (a half-done step's start: known)
        for event in reversed(self._events):
            if isinstance(event, ParameterEdit) and event.step == last:
                after[self.param_names.index(event.name)] = event.old
        return float(np.linalg.norm(after - start.run.params))

    def rewind(self, step: int) -> None:
        """Go back to the state just after `step` steps (0 = the initial weights).

        Parameters, gradients, optimizer state and history are restored exactly, so
        continuing reproduces the original run bit for bit. The points stay the current
        ones: a rewind takes back training, not the data.
        """
        self.begin_rewind(step)()

    def begin_rewind(self, step: int) -> Callable[[], None]:
        """`rewind`, except that when it drops a half-done step (`step` is `step_count`)
        the start's weights, gradients and optimizer state go back into the parameters
        only when the function returned is called. Call it before anything but
        `snapshot()` reads or changes the run; `snapshot()` shows the start already (it
        reads the start's arrays, not the parameters).

        For Pause, which answers with the snapshot first: setting a 1000x1000 network's
        million gradients took 50-100 ms (benchmarks/bench_pause.py)."""
        if not 0 <= step <= self.step_count:
            raise ValueError(f"can rewind to steps 0..{self.step_count}, not {step}")
        if step == self.step_count and self._phase_index == 0:
            return _nothing
        data, version = self._dataset, self.dataset_version
        finish = _nothing
        if step == self.step_count:
            start = self._checkpoints.start
            assert start is not None
            # Only the update moves the weights (an edit first rewinds a half-done step).
            finish = self._restore_but_nodes(start, weights=self.phase == Phase.UPDATE)
            # What a snapshot would read from the nodes now is the start's, bit for bit.
            self._known_arrays = (self.params_rev, self.run, start.run.params,
                                  start.run.grads)
        else:
            self._replay(self._checkpoints.nearest(step), step)
            self._history.truncate(step)
            self.run_id = next(_REVISIONS)  # the run's past changed: views redraw it all
            del self._peaks[step:]
            self._path.truncate(step)
            self._events = [e for e in self._events if e.step <= step]
            self._checkpoints.truncate(step)
            self._dataset = data
            if self._data_at(step) is not data:
                self._events.append(DataChange(step, data, version))
        self._checkpoints.start = None
        self._phase_index = 0
        self.stop_reason = ""
        if math.isnan(self._update_norm):
            self._update_norm = self._last_update_norm()
        return finish

    def reset(self) -> None:
        """Back to step 0 with the same initial weights (and the current points and rate)."""
        self._build(self.initial_params, ghost=self.ghost is not None)

    def reinitialize(self, seed: int | None = None) -> None:
        """Back to step 0 with new initial weights (a new seed, or the next one)."""
        self.init_seed = self.init_seed + 1 if seed is None else int(seed)
        self._build(ghost=self.ghost is not None)

    def set_parameter(self, name: str, value: float) -> ParameterEdit:
        """Type a weight in by hand. It takes effect from the next step and is kept in
        the history: rewinding to before the edit undoes it and rewinding to after it
        keeps it."""
        if name not in self.param_names:
            raise KeyError(f"there is no parameter named {name!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ConfigError(f"a weight must be a finite number, got {value}")
        self.rewind(self.step_count)  # a half-done step was computed with the old weight
        index = self.param_names.index(name)
        param = self.run.params[index]
        edit = ParameterEdit(self.step_count, name, float(param.data), value)
        param.data = value
        self.params_rev = next(_REVISIONS)
        self._event(edit)
        self.last_graph = self.last_graph_batch = None
        return edit

    def parameter_history(self, index: int) -> tuple[np.ndarray, np.ndarray,
                                                     np.ndarray, np.ndarray]:
        """(steps, values, gradient steps, gradients) of one parameter, where known.

        values[i] is the weight at the start of step steps[i] + 1 (after that step's
        edits); gradients[i] is what the backward pass of step grad_steps[i] left. Known at
        every kept checkpoint (every step near the end, sparser further back) and now.
        """
        kept = self._checkpoints.kept(below=self.step_count)
        steps = [cp.step for cp in kept]
        values = [cp.run.params[index] for cp in kept]
        grad_steps = [cp.step for cp in kept if cp.step > 0]
        grads = [cp.run.grads[index] for cp in kept if cp.step > 0]
        steps.append(self.step_count)
        values.append(self.run.params[index].data)
        grad_steps.append(self.step_count)
        grads.append(float(self.run.params[index].grad))
        return (np.array(steps, np.int64), np.array(values, np.float64),
                np.array(grad_steps, np.int64), np.array(grads, np.float64))

    # --- dataset edits --------------------------------------------------------------------------
    def replace_dataset(self, dataset: Dataset) -> None:
        """Train on new points from the next step on; weights and history stay.

        Earlier history records keep what was measured on the old points, and a rewind
        restores earlier weights but keeps the new points.
        """
        check_task(self.config, dataset)
        if dataset.classes > max(self.config.outputs, 2):
            raise ConfigError(f"the data has {dataset.classes} classes but this network has "
                              f"{self.config.outputs} output(s); choose blobs with "
                              f"{dataset.classes} classes so it gets one output per class")
        self.rewind(self.step_count)  # a half-done step belongs to the old points
        # The last step's batch names points, not places: follow them to the new list.
        self.last_batch = datasets.same_points(self._dataset, dataset, self.last_batch)
        self._dataset = frozen_dataset(dataset)
        self.dataset_version += 1
        self._event(DataChange(self.step_count, self._dataset, self.dataset_version))

    def with_config(self, config: TrainingConfig) -> Trainer:
        """A new run for `config` (see `plan_config_change`), keeping what it allows:
        the points unless the data changed, the initial weights unless the network did,
        and the switches."""
        new_data = plan_config_change(self.config, config).kind == "data"
        same_network = config.network_key == self.config.network_key
        fresh = Trainer(config, None if new_data else self._dataset, init_seed=self.init_seed,
                        initial_params=self.initial_params if same_network else None,
                        policy=self.policy)
        fresh.forget_zero_grad = self.forget_zero_grad
        fresh.pinned = self.pinned  # comparing across settings is what a pin is for
        fresh.set_ghost(self.ghost is not None)
        fresh.dataset_version = self.dataset_version + (1 if new_data else 0)
        fresh._events[0] = DataChange(0, fresh._dataset, fresh.dataset_version)
        return fresh

    # --- state ----------------------------------------------------------------------------------
    def state(self) -> TrainingState:
        """The whole run as an immutable value (cheap: only the current weights are copied)."""
        start = self._checkpoints.start
        current = start if start is not None else self._checkpoint()
        return TrainingState(
            config=self.config, init_seed=self.init_seed, initial_params=self.initial_params,
            dataset=self._dataset, dataset_version=self.dataset_version,
            forget_zero_grad=self.forget_zero_grad, history=self._history.view(),
            events=tuple(self._events), checkpoints=self._checkpoints.kept(below=current.step),
            current=current, phase=self.phase, zero_grad_skipped=self._zero_grad_skipped,
            stop_reason=self.stop_reason, pinned=self.pinned)

    @classmethod
    def from_state(cls, state: TrainingState, policy: CheckpointPolicy | None = None,
                   ) -> Trainer:
        """A trainer that continues `state` bit for bit (mid-step, the phases done are run
        again from the step's start). The state is not changed."""
        trainer = cls(state.config, state.dataset, init_seed=state.init_seed,
                      initial_params=state.initial_params, policy=policy)
        trainer.dataset_version = state.dataset_version
        trainer._dataset = state.dataset
        trainer.forget_zero_grad = state.forget_zero_grad
        trainer._history = HistoryBuffer(state.history)
        trainer._events = list(state.events)
        trainer._checkpoints.load(state.checkpoints, state.current.nbytes)
        trainer.pinned = state.pinned
        # The path so far is known where the weights are: at the kept checkpoints.
        for cp in state.checkpoints[1:]:
            trainer._path.add(cp.step, cp.run.params)
        trainer._restore(state.current)
        trainer._update_norm = trainer._last_update_norm()
        trainer.stop_reason = state.stop_reason
        phases = PHASES.index(state.phase)
        if phases:
            forget = trainer.forget_zero_grad
            trainer.forget_zero_grad = state.zero_grad_skipped
            try:
                for _ in range(phases):
                    trainer.substep()
            finally:
                trainer.forget_zero_grad = forget
        return trainer

    # --- what forgetting zero_grad does ---------------------------------------------------------
    def _grad_peak_of(self, grads: np.ndarray) -> float:
        """The largest |gradient| in `grads` and the ghost's (NaN and inf ignored)."""
        arrays = [grads] if self.ghost is None else [grads, self.ghost.grads()]
        peak = 0.0
        for array in arrays:
            if not len(array):
                continue
            # Two reductions and no temporary arrays when all is finite: every snapshot
            # asks, and a million gradients' temporaries (25 MB) took 10-40 ms of a Pause.
            high, low = float(array.max()), float(array.min())
            if math.isfinite(high) and math.isfinite(low):
                peak = max(peak, high, -low)
                continue
            magnitudes = np.abs(array)
            magnitudes = magnitudes[np.isfinite(magnitudes)]
            if len(magnitudes):
                peak = max(peak, float(magnitudes.max()))
        return peak

    def _grad_peak(self, grads: np.ndarray) -> float:
        """The largest |gradient| of the run so far, from step 1 to now (`grads`: the
        run's gradients now)."""
        if len(self._peaks) < self.step_count:
            # A run restored from a state: its steps' gradients are known only at the
            # kept checkpoints (checkpoint s holds those after step s); use those.
            known = {cp.step: float(np.abs(cp.run.grads).max(initial=0.0))
                     for cp in self._checkpoints.kept()}
            while len(self._peaks) < self.step_count:
                s = len(self._peaks) + 1
                self._peaks.append(max(self._peaks[-1] if self._peaks else 0.0,
                                       known.get(s, 0.0)))
        return max(self._peaks[-1] if self._peaks else 0.0,
                   self._grad_peak_of(grads))

    # --- snapshots --------------------------------------------------------------------------
    def _params_and_grads(self) -> tuple[np.ndarray, np.ndarray]:
        """The run's weights and gradients, read-only; read from the parameters only when
        `params_rev` moved since the last read. Reading a 1000x1000 network's takes 0.2-0.4
        s, and a Pause in the forward pass publishes the weights last published. Every
        change to a weight or gradient moves `params_rev` (a phase, a restore, an edit)."""
        known = self._known_arrays
        if known is None or known[0] != self.params_rev or known[1] is not self.run:
            known = (self.params_rev, self.run, frozen(self.run.values()),
                     frozen(self.run.grads()))
            self._known_arrays = known
        return known[2], known[3]

    def snapshot(self) -> Snapshot:
        ghost_grads = self.ghost.grads() if self.ghost is not None else None
        step_grads = self._step_grads
        params, grads = self._params_and_grads()
        return Snapshot(
            step=self.step_count, phase=self.phase, config=self.config,
            layer_sizes=tuple(self.config.layer_sizes), param_names=self.param_names,
            params=params, grads=grads,
            history=self._history.view(), points=self._dataset.points,
            labels=self._dataset.labels, is_test=self._dataset.is_test,
            classes=self._dataset.classes, forget_zero_grad=self.forget_zero_grad,
            ghost=self.ghost is not None,
            ghost_grads=frozen(ghost_grads) if ghost_grads is not None else None,
            stop_reason=self.stop_reason, lr=self.lr, dataset_version=self.dataset_version,
            graph=self.last_graph, graph_batch=self.last_graph_batch, edits=self.edits,
            grad_passes=self.grad_passes,
            step_grads=frozen(step_grads) if step_grads is not None else None,
            grad_peak=self._grad_peak(grads), update_norm=self._update_norm,
            forward_loss=float(self.last_root.data) if self.last_root is not None else math.nan,
            targets=self._dataset.targets,
            batch=frozen(self.last_batch), pinned=self.pinned, run_id=self.run_id,
            params_rev=self.params_rev, graph_rev=self.graph_rev)

    # --- comparison, and the path taken ---------------------------------------------------------
    def pin(self) -> None:
        """Keep this run's configuration and records, to compare the next run with."""
        self.pinned = PinnedRun(self.config, self._history.view())

    def unpin(self) -> None:
        self.pinned = None

    def trajectory(self) -> tuple[np.ndarray, np.ndarray]:
        """The weights along the run so far: (steps, (steps, P) weights), from step 0 to
        now, at most PATH_POINTS of them, evenly thinned (see `_Path`)."""
        return self._path.arrays(self.step_count, self.run.values())

    def training_loss(self) -> float:
        """The loss backward would differentiate at the current weights, on the whole
        training set (penalties included), computed by the engine."""
        train = np.flatnonzero(~self._dataset.is_test)
        if len(train) == 0:
            return math.nan
        with np.errstate(all="ignore"), cyclic_gc_paused():
            loss, _ = self._forward(self.run, train)
        return float(loss.data)


def _nothing() -> None:
    """What is left to do when nothing is."""


def passes_after(history: Sequence[StepRecord]) -> int:
    """How many backward passes the gradients hold after the last step of `history`.

    A step that ran zero_grad leaves one; each step that skipped it adds one to what
    the step before left (and the gradients start at zero before step 1).
    """
    if isinstance(history, History):
        skipped = history.column("zero_grad_skipped").astype(bool)
    else:
        skipped = np.array([r.zero_grad_skipped for r in history], dtype=bool)
    ran = np.flatnonzero(~skipped)
    if len(ran) == 0:
        return len(skipped)
    return len(skipped) - int(ran[-1])
