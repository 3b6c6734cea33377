"""The built-in cases: each is the code that runs (exactly as the learner sees it) and
what is checked after it ran.

A case's `code` runs twice in the sandbox's child: once with the learner's names (their
`Value`, `zero_grad`, `MLP` ...) and once with gradbox's reference written to the same
API (`gradbox.build.reference`, itself tested against `gradbox.autograd.engine`). Then
each expression in `compare` (`a.grad`, `c.data`, `b.grad` ...) must agree. Checks read
the gradients of leaves (what PyTorch keeps): an engine may or may not reset the
intermediate ones. Cases whose check is more than a comparison (`kind`) are run by the
function of that kind in `gradbox.build.checks`.

Stage files choose and order the cases by name (`cases = [...]`); the names are stable
(`gradbox check --json` prints them).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CASES", "KINDS", "Case"]

KINDS = ("compare", "contract", "order", "raises", "random", "derivative", "train")


@dataclass(frozen=True)
class Case:
    """One check: its stable name, the code that runs, what it compares, and why."""

    name: str
    code: str
    about: str
    needs: tuple[str, ...] = ("Value",)
    compare: tuple[str, ...] = ()
    root: str = ""          # the variable whose graph is drawn when the case fails
    kind: str = "compare"
    ops: tuple[str, ...] = ()  # for kind="random": the ops the random graphs use
    options: tuple[tuple[str, object], ...] = ()  # kind-specific settings

    def option(self, key: str, default: object = None) -> object:
        return dict(self.options).get(key, default)


def _cases(*cases: Case) -> MappingProxyType[str, Case]:
    table = {c.name: c for c in cases}
    assert len(table) == len(cases), "two cases share a name"
    for c in cases:
        assert c.kind in KINDS, c
    return MappingProxyType(table)


D = ("numerical_derivative",)
CASES: MappingProxyType[str, Case] = _cases(
    # --- stage 0: the oracle -----------------------------------------------------------
    Case("derivative-of-square", "numerical_derivative(lambda x: x ** 2, 3.0)",
         "the slope of x² at 3 is 6", D, kind="derivative",
         options=(("expected", 6.0), ("tolerance", 1e-6))),
    Case("derivative-is-central", "numerical_derivative(lambda x: x ** 3, 1.0, h=0.1)",
         "a central difference (f(x+h) − f(x−h)) / 2h: 3.01 for x³ at 1 with h = 0.1 "
         "(a forward difference gives 3.31)", D, kind="derivative",
         options=(("expected", 3.01), ("tolerance", 1e-9))),
    Case("derivative-default-step", "numerical_derivative(lambda x: x ** 3, 1.0)",
         "with the default h = 1e-6 the slope of x³ at 1 is 3 to 1e-8", D,
         kind="derivative", options=(("expected", 3.0), ("tolerance", 1e-8))),
    # --- stage 1: the container ----------------------------------------------------------
    Case("value-fields", "a = Value(3.0)",
         "a new Value holds data, grad = 0, an empty _prev set, _op '' and a _backward "
         "that does nothing", kind="contract", options=(("what", "leaf"),)),
    Case("value-children", "a = Value(2.0)\nb = Value(3.0)\nc = Value(5.0, (a, b), '+')",
         "_prev is a set holding both parents (the very objects), _op the label",
         kind="contract", options=(("what", "children"),)),
    # --- stage 2: + and * build the graph ---------------------------------------------
    Case("add-builds-graph", "a = Value(2.0)\nb = Value(-3.0)\nc = a + b",
         "c.data is 2 + (−3) and c remembers a and b", compare=("c.data",), root="c",
         kind="contract", options=(("what", "op"), ("op", "+"))),
    Case("mul-builds-graph", "a = Value(2.0)\nb = Value(-3.0)\nc = a * b",
         "c.data is 2 × (−3) and c remembers a and b", compare=("c.data",), root="c",
         kind="contract", options=(("what", "op"), ("op", "*"))),
    Case("number-wrapped", "a = Value(2.0)\nc = a + 1\nd = a * 3",
         "a plain number is wrapped as a Value at the door", compare=("c.data", "d.data"),
         root="d", kind="contract", options=(("what", "wrapped"),)),
    Case("reflected-ops", "a = Value(2.0)\nc = 1 + a\nd = 3 * a",
         "2 * a and 1 + a work: __radd__ and __rmul__", compare=("c.data", "d.data"),
         root="d"),
    Case("sum-of-values", "a = Value(2.0)\nb = Value(3.0)\nc = Value(4.0)\n"
         "s = sum([a, b, c])", "sum() starts from 0, so it needs 0 + a: __radd__",
         compare=("s.data",), root="s"),
    # --- stage 3: the _backward closures ----------------------------------------------
    Case("add-backward", "a = Value(2.0)\nb = Value(-3.0)\nc = a + b\nc.grad = 2.0\n"
         "c._backward()", "+ hands its gradient on unchanged to both inputs",
         compare=("a.grad", "b.grad"), root="c", options=(("op", "+"),)),
    Case("mul-backward", "a = Value(2.0)\nb = Value(-3.0)\nc = a * b\nc.grad = 2.0\n"
         "c._backward()", "* hands each input the other's value times its gradient",
         compare=("a.grad", "b.grad"), root="c", options=(("op", "*"),)),
    Case("constant-backward", "a = Value(2.0)\nc = a * 4\nc.grad = 1.0\nc._backward()",
         "a wrapped constant takes part like any Value", compare=("a.grad",), root="c",
         options=(("op", "*"),)),
    Case("random-add-mul", "random expressions over + and *, each value used once; "
         "the gradients passed by running your _backward closures in order",
         "compared with gradbox's engine and a central difference", kind="random",
         ops=("+", "*"), options=(("backward", "closures"), ("reuse", False))),
    # --- stage 4: tanh (the slope from the output), exp, relu, ** and - / ---------------
    Case("tanh-backward", "a = Value(0.5)\nt = a.tanh()\nt.grad = 2.0\nt._backward()",
         "tanh's slope is 1 − t², read off its output", compare=("t.data", "a.grad"),
         root="t", options=(("op", "tanh"),)),
    Case("tanh-saturated", "a = Value(20.0)\nt = a.tanh()\nt.grad = 1.0\nt._backward()",
         "at saturation tanh is flat: the slope is 0", compare=("t.data", "a.grad"),
         root="t", options=(("op", "tanh"),)),
    Case("exp-backward", "a = Value(0.7)\ne = a.exp()\ne.grad = 2.0\ne._backward()",
         "the slope of eˣ is eˣ: the output again", compare=("e.data", "a.grad"), root="e",
         options=(("op", "exp"),)),
    Case("relu-backward", "a = Value(1.5)\nb = Value(-2.0)\nr = a.relu()\ns = b.relu()\n"
         "r.grad = 3.0\ns.grad = 3.0\nr._backward()\ns._backward()",
         "relu passes the gradient where it is on (x > 0) and nothing where it is off",
         compare=("r.data", "s.data", "a.grad", "b.grad"), root="s",
         options=(("op", "relu"),)),
    Case("pow-backward", "a = Value(2.0)\nb = Value(4.0)\nc = a ** 3\nd = b ** -0.5\n"
         "c.grad = 1.0\nd.grad = 1.0\nc._backward()\nd._backward()",
         "d(xᵏ)/dx = k·xᵏ⁻¹, for a number k", compare=("c.data", "d.data", "a.grad",
                                                      "b.grad"),
         root="c", options=(("op", "**"),)),
    Case("sub-div-neg", "a = Value(3.0)\nb = Value(-2.0)\nc = a - b\nd = a / b\ne = -a\n"
         "f = 1 - a\ng = 2 / b", "- and / built from + * ** (and their reflected forms)",
         compare=("c.data", "d.data", "e.data", "f.data", "g.data"), root="d"),
    Case("random-all-ops", "random expressions over + * - / ** tanh exp relu, each value "
         "used once; the gradients passed by running your _backward closures in order",
         "compared with gradbox's engine and a central difference", kind="random",
         ops=("+", "*", "-", "/", "**", "tanh", "exp", "relu"),
         options=(("backward", "closures"), ("reuse", False))),
    # --- stage 5: backward() in topological order --------------------------------------
    Case("backward-chain", "a = Value(2.0)\nb = Value(-3.0)\nc = Value(10.0)\n"
         "d = Value(-2.0)\nL = (a * b + c) * d\nL.backward()",
         "backward() starts at L with grad 1 and reaches every leaf",
         compare=("a.grad", "b.grad", "c.grad", "d.grad"), root="L"),
    Case("topological-order", "a = Value(2.0)\nb = Value(3.0)\nx = a * b\ny = x + 1\n"
         "z = x * y\nL = z + x\nL.backward()",
         "every node passes its gradient on only after all of its consumers have added "
         "theirs: x waits for y, z and L", root="L", kind="order"),
    Case("deep-chain", "a = Value(0.5)\nx = a\nfor _ in range(2000):\n    x = x + 1\n"
         "x.backward()", "a chain 2,000 deep: a recursive walk hits Python's limit",
         compare=("a.grad",), root=""),
    Case("random-backward", "random expressions over every op so far, each value used "
         "once; L.backward()", "compared with gradbox's engine and a central difference",
         kind="random", ops=("+", "*", "-", "/", "**", "tanh", "exp", "relu"),
         options=(("backward", "learner"), ("reuse", False))),
    # --- stage 6: gradients accumulate ---------------------------------------------------
    Case("a-plus-a", "a = Value(3.0)\nb = a + a\nb.backward()",
         "a used twice collects 1 + 1", compare=("a.grad",), root="b"),
    Case("a-times-a", "a = Value(3.0)\nb = a * a\nb.backward()",
         "∂(a·a)/∂a = a + a = 6", compare=("a.grad",), root="b"),
    # A learner's backward fires b and c in the order its walk over a set (`_prev`)
    # happens to give, which changes from run to run. So each of these diamonds sends a
    # both shares through the same input of the same op: `=` in that closure loses a
    # share whichever fires last, and keeping the other share gives the same number
    # either way. (a + a and a * a above catch `=` on `other`; these catch it on `self`.)
    Case("diamond", "a = Value(2.0)\nb = a * 3\nc = a * 4\nd = b * c\nd.backward()",
         "a is the parent of two nodes: it collects a share from each (24 + 24)",
         compare=("a.grad",), root="d"),
    Case("diamond-of-sums", "a = Value(2.0)\nb = a + 3\nc = a + 4\nd = b + c\n"
         "d.backward()", "a is the parent of two sums: it collects 1 from each",
         compare=("a.grad",), root="d"),
    # The `+ a` node is the output, so it fires first and a's share from it is always
    # there before the unary nodes fire (in whatever order): `=` in any of them loses it.
    Case("used-by-every-op", "a = Value(0.5)\n"
         "L = a.tanh() + a.exp() + a.relu() + a ** 2 + a\nL.backward()",
         "a collects a share from each op it feeds: tanh, exp, relu, ** and +",
         compare=("a.grad",), root="L"),
    Case("reused-intermediate", "a = Value(2.0)\nb = a * 2\nc = b * b\nL = c + b\n"
         "L.backward()", "b is used three times: its total goes on to a",
         compare=("a.grad",), root="L"),
    Case("random-shared", "random expressions over every op so far, values reused; "
         "L.backward()", "compared with gradbox's engine and a central difference",
         kind="random", ops=("+", "*", "-", "/", "**", "tanh", "exp", "relu"),
         options=(("backward", "learner"), ("reuse", True))),
    # --- stage 7: zero_grad, and what two backward calls do ---------------------------
    Case("backward-twice-adds", "a = Value(2.0)\nb = Value(3.0)\nL = a + b\nL.backward()\n"
         "L.backward()", "a second backward adds to the leaves' gradients (this + saves "
         "nothing, so it is allowed even once graphs are freed)",
         compare=("a.grad", "b.grad"), root="L", needs=("Value",)),
    Case("zero-grad", "a = Value(2.0)\nb = Value(3.0)\nc = a * b\nL = c + a\nL.backward()\n"
         "zero_grad([a, b, c])", "zero_grad sets the grad of every value it is given "
         "to 0 (an intermediate one too)", compare=("a.grad", "b.grad", "c.grad"),
         root="L", needs=("Value", "zero_grad")),
    Case("zero-grad-then-backward", "a = Value(2.0)\nb = Value(3.0)\nL = a + b\n"
         "L.backward()\nL.backward()\nzero_grad([a, b])\nM = a * b\nM.backward()",
         "after zero_grad a new backward starts from 0: one step's gradient only",
         compare=("a.grad", "b.grad"), root="M", needs=("Value", "zero_grad")),
    # --- stage 8: retain_graph ------------------------------------------------------
    Case("backward-twice-raises", "a = Value(2.0)\nb = Value(3.0)\nL = a * b\n"
         "L.backward()\nL.backward()", "* saved a and b for its backward, and backward "
         "freed them: the second call raises RuntimeError, as PyTorch does",
         root="L", kind="raises", options=(("raises", True),)),
    Case("tanh-twice-raises", "a = Value(0.5)\nL = a.tanh()\nL.backward()\nL.backward()",
         "tanh saved its output: a second backward raises", root="L", kind="raises",
         options=(("raises", True),)),
    Case("retain-graph", "a = Value(2.0)\nb = Value(3.0)\nL = a * b\n"
         "L.backward(retain_graph=True)\nL.backward()",
         "retain_graph=True keeps the graph: the second call works and the gradients "
         "double", compare=("a.grad", "b.grad"), root="L", kind="raises",
         options=(("raises", False),)),
    Case("add-twice-allowed", "a = Value(2.0)\nb = Value(3.0)\nL = a + b\nL.backward()\n"
         "L.backward()", "+ saved nothing, so even without retain_graph a second "
         "backward works and adds", compare=("a.grad", "b.grad"), root="L", kind="raises",
         options=(("raises", False),)),
    # --- stage 9: Neuron, Layer, MLP --------------------------------------------------
    Case("neuron", "n = Neuron(3)\nfor p, w in zip(n.parameters(), [0.5, -1.0, 2.0, 0.1]):\n"
         "    p.data = w\ny = n([1.0, 2.0, -0.5])\nlin = Neuron(2, nonlin=False)\n"
         "for p, w in zip(lin.parameters(), [-1.0, -1.0, 0.5]):\n    p.data = w\n"
         "z = lin([1.0, 2.0])", "a neuron is relu(w·x + b); nonlin=False leaves out the relu",
         needs=("Value", "Neuron"), compare=("len(n.parameters())", "y.data", "z.data"),
         root="y"),
    Case("parameters-order", "m = MLP(2, [1])\nfor p, w in zip(m.parameters(), "
         "[1.0, 2.0, 3.0]):\n    p.data = w\ny = m([10.0, 100.0])",
         "parameters() lists each neuron's weights, then its bias", needs=("Value", "MLP"),
         compare=("len(m.parameters())", "y.data"), root="y"),
    Case("mlp-forward-backward", "m = MLP(2, [4, 4, 1])\nset_weights(m)  # through "
         "m.parameters()\ny = m([0.5, -1.5])\nL = (y - 1) ** 2\nL.backward()",
         "the network's output and every parameter's gradient", needs=("Value", "MLP"),
         compare=("len(m.parameters())", "y.data", "[p.grad for p in m.parameters()]"),
         root="L"),
    Case("module-zero-grad", "m = MLP(2, [3, 1])\nset_weights(m)\n"
         "m([1.0, 2.0]).backward()\nm.zero_grad()",
         "Module.zero_grad() sets every parameter's grad to 0", needs=("Value", "MLP"),
         compare=("[p.grad for p in m.parameters()]",)),
    # --- stage 10: train on your engine ------------------------------------------------
    Case("train-moons", "model = MLP(2, [16, 16, 1]) with gradbox's weights\n"
         "4 steps of micrograd's demo on 10 moons points, per sample",
         "your engine's loss follows gradbox's at every step (to 1e-6)",
         needs=("Value", "MLP"), kind="train"),
)
