"""What a lesson is: its setup, its steps, and the names of the panels it points at.

Pure data, no Qt. A lesson says what to click and what to look for, lists the local
derivatives involved, and carries a declarative `Setup` that the lesson panel hands to
its host (the main window) to put the app in the lesson's starting state. `controls`
names the widgets a lesson needs, by Qt objectName, so teacher mode can hide the rest.

The text is the app's own, in the voice of the article the app grew from: short,
concrete, and always "why", never "remember to".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from gradbox.teaching.claims import Claim
from gradbox.training.config import TrainingConfig

__all__ = [
    "ALL_CONTROLS",
    "BUILD_TAB",
    "FIELDS",
    "PLAYGROUND_CONTROLS",
    "STEP_NAMES",
    "TRAINING_CONTROLS",
    "Lesson",
    "Setup",
    "Step",
]

# --- the controls teacher mode knows, by objectName ----------------------------------------
# The playground's own widgets (set in gradbox.views.panels.playground).
PG_EXAMPLES = "playground_examples"
PG_EXPRESSION = "playground_expression"
PG_FORWARD = "playground_forward"
PG_BACKWARD = "playground_backward"
PG_BACKWARD_AGAIN = "playground_backward_again"
PG_RETAIN = "playground_retain_graph"
PG_ZERO = "playground_zero_grads"
PG_CHECK = "playground_gradient_check"
PG_VARIANT = "playground_variant"
PG_TABLE = "playground_table"
PG_GRAPH = "playground_graph"
PG_EXTRAS = "playground_extras"
PG_MESSAGE = "playground_message"
PLAYGROUND_CONTROLS = (PG_EXAMPLES, PG_EXPRESSION, PG_FORWARD, PG_BACKWARD, PG_BACKWARD_AGAIN,
                       PG_RETAIN, PG_ZERO, PG_CHECK, PG_VARIANT, PG_TABLE, PG_GRAPH, PG_EXTRAS,
                       PG_MESSAGE)

# The main window's widgets. Docks and the toolbar already carry these objectNames; the
# two check boxes, the tab pages and the playground need theirs set by the main window.
TRAINING_TOOLBAR = "training_toolbar"
FORGET_ZERO_GRAD = "forget_zero_grad"
GHOST = "ghost"
DESIGNER = "designer"
PARAMETERS = "parameters_and_gradients"
LOSS_CURVE = "loss_curve"
BOUNDARY = "boundary"
GRAPH_TAB = "graph_panel"
PLAYGROUND_TAB = "playground"
BUILD_TAB = "build"  # Build it yourself: the learner's own engine, stage by stage
TRAINING_LOOP = "training_loop"
PHASE_INDICATOR = "phase_indicator"
LAYERS_TAB = "layer_stats"
LANDSCAPE_TAB = "landscape"
TRAINING_CONTROLS = (TRAINING_TOOLBAR, FORGET_ZERO_GRAD, GHOST, DESIGNER, PARAMETERS,
                     LOSS_CURVE, BOUNDARY, GRAPH_TAB, TRAINING_LOOP, LAYERS_TAB, LANDSCAPE_TAB)

ALL_CONTROLS = (*PLAYGROUND_CONTROLS, *TRAINING_CONTROLS, PLAYGROUND_TAB, BUILD_TAB)

# Fields inside a panel that a step's words name ("set momentum to 0.9"): teacher mode
# never hides them, the window scrolls them into view, and the tests check them whole at
# every step (the Momentum box was scrolled out of the Designer at 1366 x 768).
DESIGNER_ACTIVATION = "designer_activation"
DESIGNER_INPUTS = "designer_inputs"
DESIGNER_INIT = "designer_init"
DESIGNER_MOMENTUM = "designer_momentum"
# "read the parameter count under the layers": the network's summary line, below the
# Designer's fold at 1024 x 700 (lesson 8).
DESIGNER_SUMMARY = "designer_summary"
FIELDS = (DESIGNER_ACTIVATION, DESIGNER_INPUTS, DESIGNER_INIT, DESIGNER_MOMENTUM,
          DESIGNER_SUMMARY)
STEP_NAMES = (*ALL_CONTROLS, *FIELDS)  # what a step's `panels` may name


@dataclass(frozen=True)
class Setup:
    """The state a lesson starts from.

    view "playground": `expression` with `values`, a backward `variant` (a key of
    `gradbox.teaching.playground.PLAYGROUND_VARIANTS`), the retain_graph box, and which of the
    playground's lower tabs to show. view "training": a `config`, the two switches, and
    the main tab to show (`main_tab`, an objectName; the decision boundary if empty).
    """

    view: Literal["playground", "training"]
    expression: str = ""
    values: MappingProxyType[str, float] = field(
        default_factory=lambda: MappingProxyType({}))
    variant: str = "engine"
    retain_graph: bool = False
    tab: str = "variables"  # or "micro-batches", "forget zero_grad"
    config: TrainingConfig | None = None
    forget_zero_grad: bool = False
    ghost: bool = False
    main_tab: str = ""
    # The run controls a training lesson depends on: its steps say "press Run, Pause after
    # about 100 steps", so Run goes until paused, at a speed each step can be followed at.
    # The learner's own are put back when the lesson is left.
    run_speed: float | None = 10.0  # steps per second; None: as fast as possible
    run_stop: str = "never"  # or "steps", "loss", "accuracy" (with run_stop_value)
    run_stop_value: float = 0.0

    def __post_init__(self) -> None:
        # A read-only mapping, so a frozen Setup cannot be changed through its values.
        object.__setattr__(self, "values", MappingProxyType(dict(self.values)))
        if self.view == "playground" and not self.expression:
            raise ValueError("a playground setup needs an expression")
        if self.view == "training" and self.config is None:
            raise ValueError("a training setup needs a config")
        if self.view not in ("playground", "training"):
            raise ValueError(f"view must be 'playground' or 'training', got {self.view!r}")


@dataclass(frozen=True)
class Step:
    """One thing to do, and what to look for once it is done.

    `panels` names, by objectName, every panel, tab, table or control the step's words
    point at (to press or to read). Teacher mode presents the step: these are shown, large,
    and the other panels are put away; tests check each is visible and readable at
    1024 x 700. `loop_line` is the training loop line the step points at, if any (a key
    of gradbox.views.panels.training_loop's lines), which the code panel scrolls to.
    """

    do: str
    look: str
    panels: tuple[str, ...] = ()
    loop_line: str = ""
    # The look-for's quantitative claims, checkable (gradbox.teaching.claims): over seeds
    # by the tests, and on the learner's own run by the lesson panel.
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True)
class Lesson:
    key: str
    title: str
    intro: str
    steps: tuple[Step, ...]
    formulas: tuple[str, ...]
    setup: Setup
    controls: tuple[str, ...]  # objectNames teacher mode keeps visible
    takeaway: str = ""
