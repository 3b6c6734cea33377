"""The training model: one step in four phases, history, rewind, and the broken switch.

Pure Python/numpy, no Qt: the training process drives a `Trainer`; the window reads
only the immutable `Snapshot`s it hands out.

    forward   -> build the graph of one sample (every node holds all samples), compute loss
    zero_grad -> set every parameter's gradient to 0 (skipped when forget_zero_grad is on)
    backward  -> loss.backward(): gradients flow from the loss to every parameter
    update    -> the optimizer moves each parameter against its gradient

Beside it: the configuration (`config`), the run's past (`record`), what views see
(`snapshots`), when a Run stops (`goals`), the cyclic collector (autograd.collector).
Here: the phases, and time travel (a rewind replays the phases from a checkpoint).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from gradbox.autograd.collector import cyclic_gc_paused
from gradbox.autograd.engine import Value
from gradbox.autograd.optim import Schedule
from gradbox.autograd.order import OrderCache
from gradbox.autograd.phases import PHASES, Phase
from gradbox.graph import Graph, trace
from gradbox.training import datasets, limits, network
from gradbox.training.config import (
    ConfigError,
    TrainingConfig,
    check_task,
    plan_config_change,
)
from gradbox.training.datasets import Dataset
from gradbox.training.goals import RunGoal, RunLoop
from gradbox.training.history import History, LayerInputs, LayerStats, StepRecord
from gradbox.training.network import ModelAndOptimizer
from gradbox.training.record import CheckpointPolicy, RunRecord
from gradbox.training.snapshots import PublishedArrays, Snapshot, gradient_peak, next_revision
from gradbox.training.state import (
    Checkpoint,
    DataChange,
    Event,
    GhostChange,
    ParameterEdit,
    PinnedRun,
    RateChange,
    TrainingState,
    frozen,
    frozen_dataset,
)


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
        self._orders = OrderCache()  # one shape's order serves the run, ghost and replays
        self._build(initial_params)

    # --- construction -----------------------------------------------------------------
    def _new_run(self, values: np.ndarray) -> ModelAndOptimizer:
        return network.build(self.config, values)

    def _build(self, initial: np.ndarray | None = None, ghost: bool = False) -> None:
        """A fresh run at step 0 from `initial` weights (default: drawn from init_seed)."""
        c = self.config
        if initial is None:
            initial = c.make_model(seed=self.init_seed).get_flat()
        self.initial_params = frozen(initial, np.float64)
        self.run = self._new_run(self.initial_params)
        self.model = self.run.model
        self._published = PublishedArrays()
        self.ghost: ModelAndOptimizer | None = None
        self.param_names = tuple(name for name, _ in self.model.named_parameters())
        self._record = RunRecord(self.policy, self.initial_params,
                                 DataChange(0, self._dataset, self.dataset_version))
        self._phase_index = 0
        self._step_seconds = 0.0  # the phases of the step under way, so far
        self._zero_grad_skipped = False
        self.stop_reason = ""
        # A new run: views redraw everything (see `Snapshot.run_id`).
        self.run_id = self.params_rev = next_revision()
        self._clear_graph()
        if ghost:
            self.set_ghost(True)

    def _clear_step_state(self) -> None:
        """Forget what the phases of a half-done (or dropped) step measured."""
        self._mid_passes: int | None = None  # passes held, once this step's zero_grad ran
        self._step_grads: np.ndarray | None = None
        self._grads_read: np.ndarray | None = None  # the run's gradients, read by backward
        self._left: tuple[np.ndarray, np.ndarray] | None = None  # the update's weights, grads
        self._finished: StepRecord | None = None  # and record
        self._update_norm = math.nan

    @property
    def grad_passes(self) -> int:
        """How many backward passes the gradients hold now (0 right after zero_grad)."""
        if self._mid_passes is not None:
            return self._mid_passes
        return self._record.passes_held()

    def _clear_graph(self) -> None:
        self._clear_step_state()
        self.last_root: Value | None = None
        self.last_output: Value | list[Value] | None = None
        self._last_order: Sequence[Value] | None = None  # last_root's topological order
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
        self.graph_rev = next_revision()

    @property
    def dataset(self) -> Dataset:
        """The points the next step trains on (read-only arrays; use replace_dataset)."""
        return self._dataset

    @property
    def history(self) -> History:
        return self._record.view()

    def column(self, name: str) -> np.ndarray:
        """One field of every step so far (`History.column`), cheap after every step."""
        return self._record.history.column(name)

    @property
    def edits(self) -> tuple[ParameterEdit, ...]:
        return self._record.edits()

    @property
    def step_count(self) -> int:
        return self._record.steps

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
        self.params_rev = next_revision()  # the ghost's gradients come or go
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
        self._record.events.append(event)
        if self._record.checkpoints.start is not None:
            ghost = self.ghost.state() if self.ghost is not None else None
            self._record.checkpoints.amend_start(self.lr, ghost)

    # --- the four phases ---------------------------------------------------------------------
    def batch_indices(self, step: int) -> np.ndarray:
        """The training points step `step + 1` uses (all of them, or a seeded batch)."""
        return network.batch_indices(self.config, self._dataset, step)

    def data_loss(self, output: Value | list[Value], truth: np.ndarray) -> Value:
        """The loss (without penalties) of network output against the data's truth."""
        return network.data_loss(self.config, output, truth)

    def _forward(self, run: ModelAndOptimizer, batch: np.ndarray,
                 ) -> tuple[Value, Value | list[Value], Sequence[Value] | None]:
        return network.forward(self.config, self._dataset, run, batch, self._orders)

    def substep(self, capture_every_phase: bool = True) -> str:
        """Run the next phase and return its name; after 'update' a step is complete."""
        with np.errstate(all="ignore"), cyclic_gc_paused():
            return self._substep(capture_every_phase)

    def _substep(self, capture_every_phase: bool) -> str:
        """`substep`, numpy's warnings off and the collector paused already."""
        phase = self.phase
        if self.stop_reason and phase == Phase.FORWARD:
            self.stop_reason = ""
        started = time.perf_counter()
        getattr(self, f"_phase_{phase}")()
        if self.capture_graph and not self.stop_reason and phase != Phase.UPDATE and (
                capture_every_phase or phase == Phase.BACKWARD):
            self._capture_graph()
        self.params_rev = next_revision()  # a phase changes the weights or gradients
        if self._left is not None:  # what the update left, read already: not read again
            self._published.known(self.params_rev, self.run, *self._left)
            self._left = None
        took = time.perf_counter() - started
        self._record.checkpoints.trained(took)
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
        latest = self._record.checkpoints.latest()
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
        cp = self._checkpoint()  # (a Pause in this forward pass publishes what it read)
        self._record.begin_step(cp)
        self.last_batch = self.batch_indices(step)
        if len(self.last_batch) == 0:
            self._stop("there are no training points: add some, or hold fewer out for testing")
            return
        self._release_last_graph()
        self.last_root, self.last_output, self._last_order = self._forward(self.run,
                                                                           self.last_batch)
        if not math.isfinite(self.last_root.data):
            self._stop(f"the loss became {self.last_root.data} at step {step + 1}: "
                       "the learning rate is probably too large. Rewind or lower it.")

    def _release_last_graph(self) -> None:
        """Let go of the last step's graph (a big one in slices: `network.release`)."""
        old, order = self.last_root, self._last_order
        if old is None:
            return
        self.last_root = self.last_output = self._last_order = None
        if self._traced_root is old:
            self._traced = self._traced_root = None
        network.release(old, order, self.run)

    def _phase_zero_grad(self) -> None:
        self._zero_grad_skipped = self.forget_zero_grad
        if self._zero_grad_skipped:
            self._mid_passes = self._record.passes_held()
        else:
            self.run.optimizer.zero_grad()
            self._mid_passes = 0

    def _phase_backward(self) -> None:
        assert self.last_root is not None
        held = self.run.grads() if self._mid_passes else None
        network.backward(self.run, self.last_root, self._last_order)  # (kept: forward)
        self._grads_read = grads = self.run.grads()
        grads.flags.writeable = False  # kept: the step's checkpoint, its layer statistics
        # This pass's own gradient: what is in .grad now, less what was already there.
        self._step_grads = grads if held is None else grads - held
        self._mid_passes = (self._mid_passes or 0) + 1
        if not np.isfinite(grads).all():
            self._stop(f"a gradient became non-finite at step {self.step_count + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")

    def _train_ghost(self, batch: np.ndarray, lr: float) -> float:
        """One correct step of the ghost run on the same batch; its loss."""
        assert self.ghost is not None
        return network.train_step(self.config, self._dataset, self.ghost, batch, lr,
                                  self._orders)

    def _phase_update(self) -> None:
        assert self.last_root is not None
        step = self.step_count
        lr = self.schedule.lr_at(step)
        grads = self._grads_read if self._grads_read is not None else self.run.grads()
        ghost_loss = math.nan if self.ghost is None else self._train_ghost(self.last_batch, lr)
        # The weights the forward pass used, read at the step's start: nothing moves them
        # before the optimizer does (an edit first rewinds a half-done step).
        start = self._record.checkpoints.start
        before = start.run.params if start is not None else self.run.values()
        test_loss, test_acc = network.evaluate(self.config, self._dataset, before,
                                              self._dataset.is_test)
        # Measured when read, with the steps before (see `HistoryBuffer`).
        stats = LayerStats.later(LayerInputs(
            before, grads, tuple(self.config.layer_sizes), self.config.activation,
            network.batch_inputs(self.config, self._dataset, self.run, self.last_batch)))
        self.run.optimizer.lr = lr
        after = self.run.optimizer.step(before, grads)
        if not np.isfinite(after).all():
            self._stop(f"a weight became non-finite in the update of step {step + 1}; "
                       "the weights were not updated. Rewind or lower the learning rate.")
            return
        after.flags.writeable = False  # the next step's checkpoint (`_left`)
        record = StepRecord(  # (what `history[-1]` reads back: Python's floats)
            step=step + 1, loss=float(self.last_root.data), test_loss=test_loss,
            accuracy=network.accuracy(self.config, self._dataset, self.last_output,
                                      self.last_batch),
            test_accuracy=test_acc, grad_norm=float(np.linalg.norm(grads)), lr=lr,
            zero_grad_skipped=self._zero_grad_skipped, ghost_loss=float(ghost_loss),
            layers=stats)
        update_norm = float(np.linalg.norm(after - before))
        peak = max(self._record.last_peak(), self._grad_peak_of(grads))
        # The step is done from the history's append on; what follows is quick, so a
        # Pause almost never finds a step recorded but not finished, which it would
        # drop by a rewind (for a 1000x1000 network, 0.1-0.3 s of reading the weights
        # again used to follow the append).
        self._record.finish_step(record, after, peak)
        self._update_norm = update_norm
        self._mid_passes = None
        self._left, self._finished = (after, grads), record

    def _stop(self, reason: str) -> None:
        self.stop_reason = reason
        self._phase_index = 0
        # Drop the half-done step: the last finite state stays the current one.
        start = self._record.checkpoints.start
        assert start is not None
        self._restore(start)
        self._record.checkpoints.start = None

    def step(self) -> StepRecord | None:
        """One whole iteration (finishing a partly sub-stepped one); None if it stopped
        (`stop_reason` says why)."""
        with np.errstate(all="ignore"), cyclic_gc_paused():  # once, not around each phase
            while True:
                phase = self._substep(capture_every_phase=False)
                if self.stop_reason:
                    return None
                if phase == Phase.UPDATE:
                    return self._finished

    def run_steps(self, max_steps: int | None = None, target_loss: float | None = None,
                  stop_diverging: bool = True) -> str:
        """Train until a step count, a target loss, a non-finite loss or a diverging one,
        by the window's Run rules (the same loop, `goals.RunLoop`); return why it stopped.
        `stop_diverging=False` trains on through a rising loss, into non-finite numbers
        if it goes there (a script or a test that drives a run there on purpose)."""
        if max_steps is not None and max_steps <= 0:
            return "ran 0 steps"
        run = RunLoop(RunGoal(steps=max_steps, loss=target_loss), stop_diverging=stop_diverging)
        while True:
            tick = run.tick(self)
            if tick.over:
                return tick.alarm or tick.reached

    # --- checkpoints, rewind -------------------------------------------------------------------
    def _checkpoint(self) -> Checkpoint:
        ghost = self.ghost.state() if self.ghost is not None else None
        return Checkpoint(self.step_count, self.lr, self.run.state(*self._params_and_grads()),
                          ghost)

    def _restore(self, cp: Checkpoint, weights: bool = True) -> None:
        self._restore_but_nodes(cp, weights)()

    def _restore_but_nodes(self, cp: Checkpoint, weights: bool = True) -> Callable[[], None]:
        """`_restore`, all but putting the run's weights, gradients and optimizer state
        back, which the function returned does."""
        self.params_rev = next_revision()
        self.config = self.config.with_changes(lr=cp.lr)
        if cp.ghost is None:
            self.ghost = None
        else:
            self.ghost = self._new_run(cp.ghost.params)
            self.ghost.load(cp.ghost)
        self._clear_graph()
        return functools.partial(self.run.load, cp.run, weights)

    def _replay(self, cp: Checkpoint, step: int) -> None:
        """From checkpoint `cp` to the start of step `step + 1`, by training again.

        No event lies strictly between `cp` and `step` (a checkpoint is kept at every
        step with one), so the points, the ghost and the rate stay those of `cp`;
        each step's learning rate and zero_grad come from its record.
        """
        self._restore(cp)
        self._dataset = self._record.data_at(cp.step)
        rates, skipped = self.column("lr"), self.column("zero_grad_skipped")
        before = None
        with np.errstate(all="ignore"), cyclic_gc_paused():
            for s in range(cp.step, step):
                before = self.run.values() if s == step - 1 else None
                batch = self.batch_indices(s)
                network.train_step(self.config, self._dataset, self.run, batch, rates[s],
                                   self._orders, zero_grad=not skipped[s])
                if self.ghost is not None:
                    self._train_ghost(batch, rates[s])
        if before is not None:  # the training loop's |Δw| of the last step, as it was
            self._update_norm = float(np.linalg.norm(self.run.values() - before))

    def _last_update_norm(self) -> float:
        """|Δw| of the last step, from the kept weights at its start and now (its own
        update: a weight typed in after it is taken back out); NaN if its start is not
        kept."""
        # (A half-done step's start is known: the published arrays are its weights.)
        return self._record.last_update_norm(self._params_and_grads()[0], self.param_names)

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
        network.forget_kept_graphs(self.run, self.ghost)  # (see network.forget_kept_graphs)
        if step == self.step_count and self._phase_index == 0:
            return _nothing
        data, version = self._dataset, self.dataset_version
        finish = _nothing
        if step == self.step_count:
            start = self._record.checkpoints.start
            assert start is not None
            # Only the update moves the weights (an edit first rewinds a half-done step).
            finish = self._restore_but_nodes(start, weights=self.phase == Phase.UPDATE)
            # What a snapshot would read from the nodes now is the start's, bit for bit.
            self._published.known(self.params_rev, self.run, start.run.params,
                                  start.run.grads)
        else:
            self._replay(self._record.checkpoints.nearest(step), step)
            self.run_id = next_revision()  # the run's past changed: views redraw it all
            self._record.truncate(step)
            self._dataset = data
            if self._record.data_at(step) is not data:
                self._record.events.append(DataChange(step, data, version))
        self._record.checkpoints.start = None
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
        self.params_rev = next_revision()
        self._event(edit)
        self.last_graph = self.last_graph_batch = None
        return edit

    def parameter_history(self, index: int) -> tuple[np.ndarray, np.ndarray,
                                                     np.ndarray, np.ndarray]:
        """(steps, values, gradient steps, gradients) of one parameter, where known
        (see `RunRecord.parameter_history`)."""
        param = self.run.params[index]
        return self._record.parameter_history(index, param.data, float(param.grad))

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
        fresh._record.events[0] = DataChange(0, fresh._dataset, fresh.dataset_version)
        return fresh

    # --- state ----------------------------------------------------------------------------------
    def state(self) -> TrainingState:
        """The whole run as an immutable value (cheap: only the current weights are copied)."""
        start = self._record.checkpoints.start
        current = start if start is not None else self._checkpoint()
        return TrainingState(
            config=self.config, init_seed=self.init_seed, initial_params=self.initial_params,
            dataset=self._dataset, dataset_version=self.dataset_version,
            forget_zero_grad=self.forget_zero_grad, history=self._record.view(),
            events=tuple(self._record.events),
            checkpoints=self._record.checkpoints.kept(below=current.step),
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
        trainer._record.load(state)
        trainer.pinned = state.pinned
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

    # --- snapshots --------------------------------------------------------------------------
    def _grad_peak_of(self, grads: np.ndarray) -> float:
        """The largest |gradient| in `grads` and the ghost's (NaN and inf ignored)."""
        return gradient_peak([grads] if self.ghost is None else [grads, self.ghost.grads()])

    def _params_and_grads(self) -> tuple[np.ndarray, np.ndarray]:
        """The run's weights and gradients, read-only (see `PublishedArrays`)."""
        return self._published.read(self.params_rev, self.run, self.run.values,
                                    self.run.grads)

    def snapshot(self) -> Snapshot:
        ghost_grads = self.ghost.grads() if self.ghost is not None else None
        step_grads = self._step_grads
        params, grads = self._params_and_grads()
        return Snapshot(
            step=self.step_count, phase=self.phase, config=self.config,
            layer_sizes=tuple(self.config.layer_sizes), param_names=self.param_names,
            params=params, grads=grads,
            history=self._record.view(), points=self._dataset.points,
            labels=self._dataset.labels, is_test=self._dataset.is_test,
            classes=self._dataset.classes, forget_zero_grad=self.forget_zero_grad,
            ghost=self.ghost is not None,
            ghost_grads=frozen(ghost_grads) if ghost_grads is not None else None,
            stop_reason=self.stop_reason, lr=self.lr, dataset_version=self.dataset_version,
            graph=self.last_graph, graph_batch=self.last_graph_batch, edits=self.edits,
            grad_passes=self.grad_passes,
            step_grads=frozen(step_grads) if step_grads is not None else None,
            grad_peak=max(self._record.peak(), self._grad_peak_of(grads)),
            update_norm=self._update_norm,
            forward_loss=float(self.last_root.data) if self.last_root is not None else math.nan,
            targets=self._dataset.targets,
            batch=frozen(self.last_batch), pinned=self.pinned, run_id=self.run_id,
            params_rev=self.params_rev, graph_rev=self.graph_rev)

    # --- comparison, and the path taken ---------------------------------------------------------
    def pin(self) -> None:
        """Keep this run's configuration and records, to compare the next run with."""
        self.pinned = PinnedRun(self.config, self._record.view())

    def unpin(self) -> None:
        self.pinned = None

    def trajectory(self) -> tuple[np.ndarray, np.ndarray]:
        """The weights along the run so far: (steps, (steps, P) weights), from step 0 to
        now, at most PATH_POINTS of them, evenly thinned (see `WeightPath`)."""
        return self._record.path.arrays(self.step_count, self.run.values())

    def training_loss(self) -> float:
        """The loss backward would differentiate at the current weights, on the whole
        training set (penalties included), computed by the engine."""
        return network.training_loss(self.config, self._dataset, self.run)


def _nothing() -> None:
    """What is left to do when nothing is."""
