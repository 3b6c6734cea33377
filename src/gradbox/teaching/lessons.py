"""Guided lessons: each rule of autograd, shown by setting the app up and breaking it.

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
    "LESSONS",
    "PLAYGROUND_CONTROLS",
    "TRAINING_CONTROLS",
    "Lesson",
    "Setup",
    "Step",
    "lesson",
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
TRAINING_LOOP = "training_loop"
PHASE_INDICATOR = "phase_indicator"
LAYERS_TAB = "layer_stats"
LANDSCAPE_TAB = "landscape"
TRAINING_CONTROLS = (TRAINING_TOOLBAR, FORGET_ZERO_GRAD, GHOST, DESIGNER, PARAMETERS,
                     LOSS_CURVE, BOUNDARY, GRAPH_TAB, TRAINING_LOOP, LAYERS_TAB, LANDSCAPE_TAB)

ALL_CONTROLS = (*PLAYGROUND_CONTROLS, *TRAINING_CONTROLS, PLAYGROUND_TAB)


@dataclass(frozen=True)
class Setup:
    """The state a lesson starts from.

    view "playground": `expression` with `values`, a backward `variant` (a key of
    `gradbox.teaching.expression.PLAYGROUND_VARIANTS`), the retain_graph box, and which of the
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


def _playground(expression: str, values: dict[str, float], variant: str = "engine",
                retain_graph: bool = False, tab: str = "variables") -> Setup:
    return Setup("playground", expression, MappingProxyType(values), variant, retain_graph,
                 tab)


_BASIC = (PLAYGROUND_TAB, PG_EXPRESSION, PG_FORWARD, PG_BACKWARD, PG_TABLE, PG_GRAPH,
          PG_MESSAGE)

CHAIN_RULE = Lesson(
    key="chain-rule",
    title="1. The chain rule, one node at a time",
    intro=(
        "Every box in the graph is a small delivery worker. It knows its own number, "
        "and how it was made — nothing about the graph as a whole. When a gradient "
        "arrives, it multiplies it by its local derivative and hands the result to its "
        "inputs. Wake the workers up from the output backwards and every leaf gets its "
        "gradient. That is the chain rule, done mechanically."
    ),
    steps=(
        Step("Look at the graph: a and b go into ×, the product and c go into +.",
             "Each box shows its data: a·b = −6, and −6 + 10 = 4 at the output.",
             panels=(PLAYGROUND_TAB, PG_EXPRESSION, PG_GRAPH)),
        Step("Press Backward and watch the graph light up.",
             "The output gets grad 1 first (dL/dL = 1). Then the + node hands that 1 "
             "unchanged to both of its inputs: the slope of x + c is 1.",
             panels=(PLAYGROUND_TAB, PG_BACKWARD, PG_GRAPH)),
        Step("Read the grad of a and of b in the table.",
             "a gets −3, which is b's value; b gets 2, which is a's value. The × node "
             "swaps its inputs on the way back — its local derivative.",
             panels=(PLAYGROUND_TAB, PG_TABLE)),
        Step("Press Gradient check.",
             "Finite differences appear beside each gradient and agree to about 1e-10. "
             "The worst row is highlighted: it still passes.",
             panels=(PLAYGROUND_TAB, PG_CHECK, PG_TABLE)),
        Step("Type 5 as the value of a in the table, press Zero grads, then Backward.",
             "b's gradient is now 5: it is always whatever a is. The rule did not "
             "change, only the number that flows through it.",
             panels=(PLAYGROUND_TAB, PG_TABLE, PG_ZERO, PG_BACKWARD)),
    ),
    formulas=(
        "∂(x + c)/∂x = 1,  ∂(x + c)/∂c = 1",
        "∂(a·b)/∂a = b,  ∂(a·b)/∂b = a",
        "chain rule: ∂L/∂a = ∂L/∂out · ∂out/∂a",
    ),
    setup=_playground("a*b + c", {"a": 2.0, "b": -3.0, "c": 10.0}),
    controls=(*_BASIC, PG_CHECK, PG_ZERO),
    takeaway="backward() is the chain rule applied mechanically, one local derivative "
             "at a time.",
)

ACCUMULATE = Lesson(
    key="accumulate",
    title="2. Why gradients accumulate (+=)",
    intro=(
        "A value used twice takes part in the result twice, so it must collect a "
        "gradient from each use. The engine writes grad += …, never grad = …. Here is "
        "what happens when you break that on purpose."
    ),
    steps=(
        Step("Press Backward.",
             "a + a: the + node sends 1 to its first input and 1 to its second — both "
             "are a. a.grad = 2, and the double border marks a node used twice.",
             panels=(PLAYGROUND_TAB, PG_BACKWARD, PG_GRAPH, PG_TABLE)),
        Step("Choose “assign instead of accumulate (=)” as the backward variant, then "
             "press Backward.",
             "Two columns: the correct 2 and the broken 1, in red. With =, the second "
             "delivery overwrote the first.",
             panels=(PLAYGROUND_TAB, PG_VARIANT, PG_BACKWARD, PG_TABLE)),
        Step("Press Gradient check.",
             "The finite difference says 2. The check fails and points at a.",
             panels=(PLAYGROUND_TAB, PG_CHECK, PG_TABLE)),
        Step("Type a * a in the expression box and press Forward, then Backward.",
             "Correct: 2a = 6. Assign: 3 — only one of the two uses counted.",
             panels=(PLAYGROUND_TAB, PG_EXPRESSION, PG_FORWARD, PG_BACKWARD, PG_TABLE)),
        Step("Type (x1*w1 + x2*w2 + b).tanh() and press Forward, then Backward.",
             "Same numbers in both columns. Every value is used once (a tree), so "
             "assigning cannot go wrong — the bug waits for the first reused value.",
             panels=(PLAYGROUND_TAB, PG_EXPRESSION, PG_FORWARD, PG_BACKWARD, PG_TABLE)),
    ),
    formulas=(
        "∂(a + a)/∂a = 1 + 1 = 2",
        "a used in k places: ∂L/∂a = Σₖ ∂L/∂(use k) — hence +=",
        "∂(a·a)/∂a = a + a = 2a",
    ),
    setup=_playground("a + a", {"a": 3.0}, variant="engine"),
    controls=(*_BASIC, PG_VARIANT, PG_CHECK, PG_ZERO),
    takeaway="Accumulating is not an optimisation; it is the sum rule of calculus.",
)

TOPOLOGICAL = Lesson(
    key="topological-order",
    title="3. Why topological order",
    intro=(
        "A node may pass its gradient on only once it is complete: every consumer has "
        "reported. Fire too early and the inputs get a partial number — and no error "
        "is raised. The naive recursion below fires each node as soon as it reaches it."
    ),
    steps=(
        Step("Press Backward.",
             "b = a + a and c = b + b. Correct: a.grad = 4. Wrong order: 8, in red.",
             panels=(PLAYGROUND_TAB, PG_BACKWARD, PG_TABLE)),
        Step("Read the message under the table.",
             "The recursion fired c, b, a, a, b, a, a: b passed its gradient on twice, "
             "and a collected both deliveries.",
             panels=(PLAYGROUND_TAB, PG_TABLE, PG_MESSAGE)),
        Step("Press Gradient check.",
             "The finite difference says 4; the wrong-order column fails the check.",
             panels=(PLAYGROUND_TAB, PG_CHECK, PG_TABLE)),
        Step("Pick “neuron with a reused hidden value” from the examples, press "
             "Backward.",
             "h feeds two weights, as every hidden unit feeds every neuron of the next "
             "layer. x gets the wrong gradient; the weights stay right.",
             panels=(PLAYGROUND_TAB, PG_EXAMPLES, PG_BACKWARD, PG_TABLE)),
        Step("Pick the plain neuron (x1*w1 + x2*w2 + b).tanh() and press Backward.",
             "Both columns agree: on a tree any order that starts at the output works. "
             "That is why this bug survives small tests.",
             panels=(PLAYGROUND_TAB, PG_EXAMPLES, PG_BACKWARD, PG_TABLE)),
    ),
    formulas=(
        "reverse topological order: a node fires after all of its consumers",
        "∂L/∂b = Σ over consumers of b — complete before b passes it on",
        "∂(b + b)/∂b = 2,  ∂(a + a)/∂a = 2,  so ∂c/∂a = 2·2 = 4",
    ),
    setup=_playground("a = 1; b = a + a; c = b + b", {}, variant="wrong order"),
    controls=(*_BASIC, PG_EXAMPLES, PG_VARIANT, PG_CHECK),
    takeaway="Topological sort is what makes every gradient complete before it moves on.",
)

ZERO_GRAD = Lesson(
    key="zero-grad",
    title="4. Why zero_grad()",
    intro=(
        "Gradients accumulate — that is the rule you just met. A loop that never clears "
        "them adds each step's gradient to all the earlier ones, and the update uses that "
        "sum. Summing every past gradient is momentum with no decay: while the gradients "
        "keep pointing the same way, on a plateau, it speeds training up, which is why the "
        "bug can look helpful for a while. But old gradients never fade. When the slope "
        "turns they keep pushing, the steps stay large, and the weights overshoot. Here "
        "Forget zero_grad is on, and the ghost is the same network trained correctly from "
        "the same weights on the same batches."
    ),
    steps=(
        Step("Press Sub-step four times, watching the Training loop panel.",
             "optimizer.zero_grad() is struck through: the highlighted line skips it. "
             "Step 1 matches the ghost exactly, since the gradients started at zero.",
             panels=(TRAINING_TOOLBAR, TRAINING_LOOP), loop_line="zero_grad",
             claims=(Claim("ghost_gap", "<=", 0.0, 1, "step 1 matches the ghost exactly"),)),
        Step("Press Sub-step four more times.",
             "After loss.backward() the panel says the gradient is the sum of 2 passes. "
             "Parameters & gradients says the same in red, and its × true column gives "
             "each gradient as a multiple of the true one: this pass's own.",
             panels=(TRAINING_TOOLBAR, TRAINING_LOOP, PARAMETERS), loop_line="backward"),
        Step("Press Step until the counter says step 10.",
             "The bars are on a fixed scale (the largest gradient so far), so the pile-up "
             "shows as bars that grow. The loss curve shows the broken run (blue) beside "
             "the correct one (grey, dashed), both from step 0.",
             panels=(TRAINING_TOOLBAR, PARAMETERS, LOSS_CURVE)),
        Step("Press Step until step 30 and read the loss curve.",
             "The broken run's loss is at least twice the ghost's, and the ghost's has "
             "fallen since step 1. Beside optimizer.step(), the step size |Δw| has "
             "grown and stays large: the sum of all past gradients keeps pushing.",
             panels=(TRAINING_TOOLBAR, LOSS_CURVE, TRAINING_LOOP), loop_line="update",
             claims=(Claim("ghost_ratio", ">=", 2.0, 30,
                    "at step 30 the broken run's loss is at least twice the ghost's"),
              Claim("ghost_loss_drop", "<", 1.0, 30,
                    "the ghost's loss has fallen since step 1"))),
        Step("Untick Forget zero_grad and press Step.",
             "zero_grad runs again: the gradients hold 1 pass, this step's own, and "
             "the × true column goes away. The run continues from wherever the "
             "overshoot left it.",
             panels=(TRAINING_TOOLBAR, FORGET_ZERO_GRAD, TRAINING_LOOP, PARAMETERS),
             loop_line="zero_grad"),
    ),
    formulas=(
        "without zero_grad: grad after k steps = Σᵢ≤ₖ ∇L(θᵢ)",
        "momentum: v ← β·v + ∇L;  forgetting zero_grad is β = 1, no decay",
        "update: θ ← θ − lr · grad — with k gradients in grad, up to k times too far",
        "with the weights still (lr = 0): grad = k · ∇L — see the playground's Forget "
        "zero_grad tab",
    ),
    # Spelled out, not the defaults: the lesson's words must not drift when they change.
    # Chosen with gradbox.teaching.demonstrations.search_forgetting: with the hinge loss a large
    # rate is safe for the correct run (its gradients vanish once points have their
    # margin), while the broken run's sum never does. At step 30 the broken loss was
    # 3.5× to 71× the ghost's in seeds 0-29 (tests check seeds 0-9).
    setup=Setup("training", config=TrainingConfig(dataset="moons", hidden=(8, 8),
                                                  activation="tanh", loss="hinge", lr=2.0),
                forget_zero_grad=True, ghost=True),
    controls=(TRAINING_TOOLBAR, FORGET_ZERO_GRAD, GHOST, LOSS_CURVE, PARAMETERS, BOUNDARY,
              TRAINING_LOOP),
    takeaway="zero_grad() exists because += exists. One clears what the other piles up.",
)

BACKWARD_TWICE = Lesson(
    key="backward-twice",
    title="5. Backward twice, and retain_graph",
    intro=(
        "A × node needs both inputs to compute its gradient, so it keeps them. PyTorch "
        "frees what ops kept as soon as backward has used it — and a second backward "
        "then has nothing to work with. An addition keeps nothing, so there the second "
        "call runs, and quietly adds every gradient again."
    ),
    steps=(
        Step("Press Backward, then Backward again.",
             "PyTorch's own RuntimeError, word for word: the × node's saved values were "
             "freed by the first call.",
             panels=(PLAYGROUND_TAB, PG_BACKWARD, PG_BACKWARD_AGAIN, PG_MESSAGE)),
        Step("Pick a + a from the examples, press Backward, then Backward again.",
             "No error. The gradient goes from 2 to 4: nothing was saved, nothing "
             "freed, so the second pass simply adds.",
             panels=(PLAYGROUND_TAB, PG_EXAMPLES, PG_BACKWARD, PG_BACKWARD_AGAIN, PG_TABLE)),
        Step("Pick a * b again, tick retain_graph, press Backward, then Backward again.",
             "It runs now, and both gradients double.",
             panels=(PLAYGROUND_TAB, PG_EXAMPLES, PG_RETAIN, PG_BACKWARD, PG_BACKWARD_AGAIN,
                     PG_TABLE)),
        Step("Press Gradient check.",
             "The check fails: two passes put twice the gradient in .grad.",
             panels=(PLAYGROUND_TAB, PG_CHECK, PG_TABLE)),
        Step("Press Zero grads, then Backward.",
             "One pass, one gradient, and the check passes again.",
             panels=(PLAYGROUND_TAB, PG_ZERO, PG_BACKWARD, PG_CHECK, PG_TABLE)),
    ),
    formulas=(
        "∂(a·b)/∂a = b — needs b kept until backward",
        "∂(a + b)/∂a = 1 — needs nothing kept",
        "two passes: grad = ∇L + ∇L = 2∇L",
    ),
    setup=_playground("a * b", {"a": 2.0, "b": -3.0}, retain_graph=False),
    controls=(*_BASIC, PG_EXAMPLES, PG_BACKWARD_AGAIN, PG_RETAIN, PG_ZERO, PG_CHECK),
    takeaway="retain_graph=True keeps the saved values; it does not stop the second "
             "pass from adding.",
)

MOONS = Lesson(
    key="moons",
    title="6. Training a network on moons",
    intro=(
        "Now the same engine trains a real network: 2 inputs, two hidden layers of 8 "
        "tanh units, one output score. Every step is the four phases you have taken "
        "apart: forward, zero_grad, backward, update."
    ),
    steps=(
        Step("Press Sub-step four times, reading the Training loop panel.",
             "forward builds the graph and the loss; zero_grad clears; backward fills "
             "every weight's gradient; update moves each weight against it.",
             panels=(TRAINING_TOOLBAR, TRAINING_LOOP)),
        Step("Look at the decision boundary.",
             "The background is the network's score over the plane: orange for one "
             "class, blue for the other. Points are the data.",
             panels=(BOUNDARY,)),
        Step("Open the Computation graph tab.",
             "Network level: one line per weight, thickness = size. Double-click a "
             "neuron to see its operations, the same boxes as in the playground.",
             panels=(GRAPH_TAB,)),
        Step("Go back to the Decision boundary tab and press Run.",
             "The loss curve falls and the boundary bends around the two moons. Around "
             "step 100 a few training points may still be on the wrong side; by step "
             "200 at most one is.",
             panels=(TRAINING_TOOLBAR, BOUNDARY, LOSS_CURVE),
             claims=(Claim("wrong_points", "<=", 1, 200,
                    "by step 200 at most one training point is on the wrong side"),)),
        Step("Read the grad norm plot beside the accuracy, under the loss curve.",
             "The gradient's overall size is smaller at step 100 than at step 1: less "
             "error, less to correct. A single weight's gradient need not follow: one can "
             "grow for a while as the boundary moves.",
             panels=(TRAINING_TOOLBAR, PARAMETERS, LOSS_CURVE),
             claims=(Claim("grad_norm_drop", "<", 1.0, 100,
                    "the gradient's size at step 100 is below step 1's"),)),
    ),
    formulas=(
        "neuron: out = tanh(b + Σᵢ wᵢ xᵢ),  ∂out/∂wᵢ = (1 − out²) · xᵢ",
        "hinge loss: L = mean(relu(1 − y · score)),  y ∈ {−1, +1}",
        "update: w ← w − lr · ∂L/∂w",
    ),
    setup=Setup("training", config=TrainingConfig(dataset="moons", hidden=(8, 8),
                                                  activation="tanh", loss="hinge", lr=0.5),
                forget_zero_grad=False, ghost=False),
    controls=(TRAINING_TOOLBAR, DESIGNER, PARAMETERS, LOSS_CURVE, BOUNDARY, GRAPH_TAB,
              TRAINING_LOOP),
    takeaway="A network is a bigger graph of the same boxes; training is backward and "
             "update, over and over.",
)

MICROBATCHES = Lesson(
    key="micro-batches",
    title="7. Accumulation on purpose: micro-batches",
    intro=(
        "Forgetting zero_grad piles gradients up by accident. Do it on purpose and it "
        "is a tool: split a batch into k micro-batches, weight each loss by its share, "
        "call backward after each without zeroing — and the gradient is exactly the "
        "full batch's. That is how large batches fit in small memory."
    ),
    steps=(
        Step("Read the two columns.",
             "Full batch on the left, the sum of the micro-batches on the right: the "
             "same numbers, the difference about 1e-16.",
             panels=(PLAYGROUND_TAB, PG_EXTRAS)),
        Step("Change k.",
             "Any k gives the same gradient: the mean of a batch is the weighted sum of "
             "the means of its parts.",
             panels=(PLAYGROUND_TAB, PG_EXTRAS)),
        Step("Open the Forget zero_grad tab and press its button.",
             "k backward passes on the same values without zero_grad: every gradient "
             "is k times the true one. Same +=, used by mistake.",
             panels=(PLAYGROUND_TAB, PG_EXTRAS)),
    ),
    formulas=(
        "L = (1/n) Σᵢ ℓᵢ = Σⱼ (nⱼ/n) · Lⱼ,  Lⱼ = mean over micro-batch j",
        "∇L = Σⱼ (nⱼ/n) ∇Lⱼ — what += computes across the k backward calls",
    ),
    setup=_playground("a*b + c", {}, tab="micro-batches"),
    controls=(PLAYGROUND_TAB, PG_EXTRAS, PG_MESSAGE),
    takeaway="The same += that forces zero_grad makes gradient accumulation free.",
)

FEATURES_OR_DEPTH = Lesson(
    key="features-or-depth",
    title="8. Features or depth?",
    intro=(
        "A network with no hidden layer is one neuron: it draws a single straight line. "
        "The circle's inside cannot be cut from its ring by a line. Two ways out: give "
        "the neuron better inputs, or give the network hidden layers that make their own."
    ),
    steps=(
        Step("Press Run.",
             "The boundary is a straight cut and the accuracy stalls well short of 100% "
             "(85% at most): whatever the line, part of the ring is on the inside's side.",
             panels=(TRAINING_TOOLBAR, BOUNDARY, LOSS_CURVE),
             claims=(Claim("train_accuracy", "<=", 0.85, 100,
                    "one neuron's accuracy stays at 85% or below"),)),
        Step("In Designer > Network > Inputs, untick x₁ and x₂, tick x₁² and x₂², and press "
             "Run.",
             "Full accuracy within 30 steps, still one neuron (read the "
             "parameter count under the layers): in x₁², x₂² the circle x₁² + x₂² = r² "
             "is a straight line.",
             panels=(TRAINING_TOOLBAR, DESIGNER, BOUNDARY, LOSS_CURVE),
             claims=(Claim("wrong_points", "<=", 0, 30,
                    "with x₁², x₂² every point is on its side within 30 steps",
                    run={"features": ("x1^2", "x2^2")}, by=True),)),
        Step("Open the Computation graph tab, press Operations and zoom in on the left "
             "(wheel or +).",
             "x₁² = × takes x₁ on both of its inputs: the feature is computed by the "
             "engine like any other node. Click x₁: backward adds the shares of both "
             "uses into its gradient.",
             panels=(GRAPH_TAB,)),
        Step("Back on the Decision boundary tab, tick x₁ and x₂ again, untick the "
             "squares, press + layer and Run.",
             "Eight tanh units learn the curve themselves: full accuracy too, within 200 "
             "steps, with many more parameters and more steps. Depth finds features; a "
             "good feature saves it the work.",
             panels=(TRAINING_TOOLBAR, DESIGNER, BOUNDARY, LOSS_CURVE),
             claims=(Claim("wrong_points", "<=", 0, 200,
                    "a hidden layer of eight reaches full accuracy within 200 steps",
                    run={"hidden": (8,)}, by=True),)),
    ),
    formulas=(
        "a line: score = b + w₁x₁ + w₂x₂",
        "an ellipse: score = b + w₁x₁² + w₂x₂²",
        "∂(x₁ · x₁)/∂x₁ = x₁ + x₁ = 2x₁",
    ),
    setup=Setup("training", config=TrainingConfig(
        dataset="circle", noise=0.0, hidden=(), activation="tanh", loss="hinge", lr=0.3,
        features=("x1", "x2")), forget_zero_grad=False, ghost=False),
    controls=(TRAINING_TOOLBAR, DESIGNER, LOSS_CURVE, BOUNDARY, GRAPH_TAB),
    takeaway="A hidden layer is a feature maker: hand it the right feature and one "
             "neuron is enough.",
)

START_AT_ZERO = Lesson(
    key="start-at-zero",
    title="9. Why not start at zero?",
    intro=(
        "Every weight here starts at 0. It looks like the fair, neutral choice. Watch "
        "what backward does with it: the neurons of a layer get the same gradient, so "
        "they move together — and from zero, not at all."
    ),
    steps=(
        Step("Press Run.",
             "The train loss stays near 1 (above 0.85) and the boundary stays one flat "
             "colour: only the output's bias learns, so the accuracy stays near half.",
             panels=(TRAINING_TOOLBAR, BOUNDARY, LOSS_CURVE),
             claims=(Claim("train_accuracy", "<=", 0.6, 100, "the accuracy stays near half"),
              Claim("train_loss", ">=", 0.85, 100, "the loss stays near 1 (above 0.85)"))),
        Step("Open Parameters & gradients.",
             "Every weight is 0, and so is its gradient: the output weights are 0, so "
             "nothing flows back to the hidden layers, and the hidden units all output "
             "tanh(0) = 0, so the output weights get nothing either.",
             panels=(TRAINING_TOOLBAR, PARAMETERS),
             claims=(Claim("largest_weight", "<=", 0.0, 100,
                    "every weight is 0, and so is its gradient"),)),
        Step("In Designer > Network choose Init: constant (scale 0.5) and press Run.",
             "Now it learns, but every neuron of a layer keeps the same weights as its "
             "neighbours, step after step: same inputs, same weights, same gradient. "
             "Eight neurons act as one, and the boundary is a single smooth cut that "
             "misses the moons' tips: the accuracy stays below 95%.",
             panels=(TRAINING_TOOLBAR, DESIGNER, BOUNDARY),
             claims=(Claim("identical_layers", ">=", 2, 100,
                    "every neuron of a layer keeps its neighbours' weights",
                    run={"init": "constant", "init_scale": 0.5}),
              Claim("train_accuracy", "<", 0.95, 200,
                    "the single smooth cut keeps the accuracy below 95%",
                    run={"init": "constant", "init_scale": 0.5}))),
        Step("Choose Xavier/Glorot, set the scale to 1, and press Run.",
             "Random starts make the neurons differ; each learns its own piece of the "
             "curve and the boundary wraps around both moons: within 250 steps at most "
             "two training points are on the wrong side.",
             panels=(TRAINING_TOOLBAR, DESIGNER, BOUNDARY),
             claims=(Claim("wrong_points", "<=", 2, 250,
                    "with Xavier at most two training points are on the wrong side "
                    "within 250 steps",
                    run={"init": "xavier", "init_scale": 1.0}, by=True),)),
    ),
    formulas=(
        "δᵢ = tanh'(zᵢ) · Σₖ vₖᵢ δₖ,  ∂L/∂wᵢⱼ = δᵢ xⱼ",
        "equal weights ⇒ equal δ ⇒ equal steps",
        "all zero: v = 0 ⇒ δ = 0;  h = tanh(0) = 0 ⇒ ∂L/∂v = 0",
        "Xavier: w ~ U(±√(6 / (in + out)))",
    ),
    setup=Setup("training", config=TrainingConfig(
        dataset="moons", hidden=(8, 8), activation="tanh", loss="hinge", lr=0.5,
        init="zeros", init_scale=0.5), forget_zero_grad=False, ghost=False),
    controls=(TRAINING_TOOLBAR, DESIGNER, PARAMETERS, LOSS_CURVE, BOUNDARY),
    takeaway="Randomness at the start is not noise: it is what lets the neurons of a "
             "layer become different.",
)

VANISHING = Lesson(
    key="vanishing-gradients",
    title="10. Vanishing gradients",
    intro=(
        "Backward multiplies the gradient by each layer's local derivative on its way "
        "to the input. A sigmoid's slope is at most 1/4, so every sigmoid layer can "
        "shrink the gradient several times over — and six of them in a row leave the "
        "first layers almost nothing to learn from. This network has six hidden layers "
        "of 8 sigmoid units."
    ),
    steps=(
        Step("Press Step once and read the Layers tab.",
             "One line per layer, on a log scale: the output layer's gradient on top, the "
             "first hidden layer's far below. The readout gives the factor between them: "
             "more than 50×.",
             panels=(TRAINING_TOOLBAR, LAYERS_TAB),
             claims=(Claim("layer_grad_factor", ">", 50, 1,
                    "the output layer's gradient is more than 50× the first layer's"),)),
        Step("Press Run, and Pause after about 100 steps.",
             "The loss curve stays flat near 0.69 — log 2, a coin toss: the network "
             "answers ½ for every point, and the boundary shows no shape.",
             panels=(TRAINING_TOOLBAR, LOSS_CURVE, BOUNDARY),
             claims=(Claim("log2_gap", "<", 0.01, 100, "the loss stays flat near 0.69"),)),
        Step("Look at the small plots under the gradients.",
             "Each layer's outputs over the steps: the band holds the middle of them. "
             "Sigmoid outputs live between 0 and 1, never negative, so every layer feeds "
             "the next an offset it must undo.",
             panels=(LAYERS_TAB,)),
        Step("In the Designer, set the activation to tanh, then press Step once.",
             "A fresh run, the same depth. Now the factor between the output layer and "
             "the first is below 10×: tanh's slope is 1 at 0, four times the sigmoid's.",
             panels=(TRAINING_TOOLBAR, DESIGNER, LAYERS_TAB),
             claims=(Claim("layer_grad_factor", "<", 10, 1, "with tanh the factor is below 10×",
                    run={"activation": "tanh"}),)),
        Step("Press Run again and Pause after about 100 steps.",
             "The same network learns: the loss falls below 0.5 (on most seeds below "
             "0.05) and the boundary bends around the moons.",
             panels=(TRAINING_TOOLBAR, LOSS_CURVE, BOUNDARY),
             claims=(Claim("train_loss", "<", 0.5, 100, "with tanh the loss falls below 0.5",
                    run={"activation": "tanh"}),)),
    ),
    formulas=(
        "∂L/∂h₁ = ∂L/∂out · Πₖ Wₖ · σ'(zₖ)",
        "σ'(z) = σ(z)(1 − σ(z)) ≤ 1/4,   tanh'(z) = 1 − tanh²(z) ≤ 1",
        "mean |∂L/∂θ| per layer: the Layers tab, one line each",
    ),
    # Spelled out: the claims above are tested with exactly these settings, across seeds.
    setup=Setup("training", config=TrainingConfig(
        dataset="moons", hidden=(8, 8, 8, 8, 8, 8), activation="sigmoid", loss="logistic",
        lr=0.5, l2=0.0), main_tab=LAYERS_TAB),
    controls=(TRAINING_TOOLBAR, DESIGNER, LOSS_CURVE, BOUNDARY, LAYERS_TAB),
    takeaway="Deep nets of saturating units starve their first layers: the gradient is a "
             "product, and sigmoid's factors are small.",
)

MOMENTUM = Lesson(
    key="momentum-landscape",
    title="11. Momentum on the landscape",
    intro=(
        "The loss is a surface over the weights, and gradient descent walks downhill on "
        "it, one small step per iteration. Momentum keeps a running sum of the steps, "
        "so it keeps going where the slope keeps pointing. The landscape tab draws the "
        "surface on a plane through the current weights, with the path taken on it."
    ),
    steps=(
        Step("Press Run and Pause after about 100 steps.",
             "Plain SGD with a small learning rate (0.05): the path on the landscape is "
             "a short, even walk from ○ to ★, and the loss curve falls slowly.",
             panels=(TRAINING_TOOLBAR, LANDSCAPE_TAB, LOSS_CURVE)),
        Step("Under the loss curve, press Pin run.",
             "The run's curves are kept, dotted, to compare with the next one.",
             panels=(LOSS_CURVE,)),
        Step("In the Designer, set momentum to 0.9.",
             "A fresh run from the same weights (the pinned curves stay).",
             panels=(DESIGNER,)),
        Step("Press Run and Pause after about 100 steps.",
             "The new loss curve falls well below the dotted one: at step 100 the "
             "momentum run's loss is lower. On the landscape the path is longer — the "
             "weights moved further from where they started.",
             panels=(TRAINING_TOOLBAR, LOSS_CURVE, LANDSCAPE_TAB),
             claims=(Claim("pinned_loss_ratio", "<", 1.0, 100,
                    "at step 100 the momentum run's loss is lower than the pinned run's",
                    run={"momentum": 0.9}, pinned={}),
              Claim("pinned_travel_ratio", ">", 1.0, 100,
                    "the momentum run's weights moved further from where they started",
                    run={"momentum": 0.9}, pinned={}))),
        Step("Choose “Random, filter-normalised” as the plane.",
             "Two random directions through the same weights: the path nearly vanishes, "
             "because a random direction among hundreds is almost orthogonal to it. "
             "That is why the default plane follows the path (Li et al. 2018).",
             panels=(LANDSCAPE_TAB,)),
    ),
    formulas=(
        "SGD: θ ← θ − lr · ∇L",
        "momentum: v ← μ·v + ∇L,  θ ← θ − lr · v",
        "on a steady slope v → ∇L / (1 − μ): μ = 0.9 moves up to 10× further per step",
    ),
    setup=Setup("training", config=TrainingConfig(
        dataset="moons", hidden=(8, 8), activation="tanh", loss="hinge", optimizer="sgd",
        lr=0.05, momentum=0.0, l2=1e-4), main_tab=LANDSCAPE_TAB),
    controls=(TRAINING_TOOLBAR, DESIGNER, LOSS_CURVE, BOUNDARY, LANDSCAPE_TAB),
    takeaway="Momentum is a heavy ball, not a step: it builds speed along the directions "
             "the gradient keeps pointing.",
)

LESSONS: tuple[Lesson, ...] = (CHAIN_RULE, ACCUMULATE, TOPOLOGICAL, ZERO_GRAD, BACKWARD_TWICE,
                               MOONS, MICROBATCHES, FEATURES_OR_DEPTH, START_AT_ZERO, VANISHING,
                               MOMENTUM)


def lesson(key: str) -> Lesson:
    """The lesson with this key."""
    for item in LESSONS:
        if item.key == key:
            return item
    raise KeyError(f"no lesson {key!r}; the lessons are {[x.key for x in LESSONS]}")
