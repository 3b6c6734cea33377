"""The wrong solutions: each is tests/build_solutions/correct.py with one edit, the way a
learner makes the mistake, and the stage and mistake id the checks must answer with.

    (name, [(old text, new text), ...], stage it fails at, mistake id)
"""

from __future__ import annotations

ADD_BACKWARD = "            self.grad += out.grad\n            other.grad += out.grad\n"
MUL_BACKWARD = ("            self.grad += other.data * out.grad\n"
                "            other.grad += self.data * out.grad\n")
TOPO = """        topo, visited, stack = [], set(), [(self, False)]
        while stack:
            node, ready = stack.pop()
            if ready:
                topo.append(node)
                continue
            if node in visited:
                continue
            visited.add(node)
            stack.append((node, True))
            for child in node._prev:
                if child not in visited:
                    stack.append((child, False))
"""
RECURSIVE_TOPO = """        topo, visited = [], set()
        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)
"""
FREEING = """        if not retain_graph:
            for node in topo:
                if node._prev and node._op != '+':
                    node._backward = _freed
"""
NAIVE_BACKWARD = """    def backward(self, retain_graph=False):
        self.grad = 1.0
        def fire(node):
            node._backward()
            for child in node._prev:
                fire(child)
        fire(self)
"""


def _method(name: str, body: str) -> tuple[str, str]:
    return (f"    def {name}(self, other):\n        {body}\n\n", "")


WRONG: list[tuple[str, list[tuple[str, str]], int, str]] = [
    # stage 0: the oracle
    ("forward-difference", [("(f(x + h) - f(x - h)) / (2 * h)", "(f(x + h) - f(x)) / h")],
     0, "wrong-derivative"),
    ("central-without-the-2", [("(f(x + h) - f(x - h)) / (2 * h)", "(f(x + h) - f(x - h)) / h")],
     0, "wrong-derivative"),
    ("oracle-forgets-return", [("    return (f(x + h) - f(x - h)) / (2 * h)",
                                "    (f(x + h) - f(x - h)) / (2 * h)")], 0, "wrong-derivative"),
    ("oracle-ignores-h", [("    return (f(x + h) - f(x - h)) / (2 * h)",
                           "    return (f(x + 1e-6) - f(x - 1e-6)) / 2e-6")], 0,
     "wrong-derivative"),
    # stage 1: the container
    ("prev-is-a-tuple", [("self._prev = set(_children)", "self._prev = _children")],
     1, "contract"),
    ("grad-starts-at-none", [("        self.grad = 0.0\n        self._backward",
                              "        self.grad = None\n        self._backward")], 1, "contract"),
    ("backward-is-none", [("self._backward = lambda: None", "self._backward = None")],
     1, "contract"),
    # stage 2: + and *
    ("add-does-not-wrap", [("        other = other if isinstance(other, Value) else Value(other)\n"
                            "        out = Value(self.data + other.data",
                            "        out = Value(self.data + other.data")],
     2, "number-not-wrapped"),
    ("add-forgets-return", [("        out._backward = _backward\n        return out\n\n"
                             "    def __mul__", "        out._backward = _backward\n\n"
                             "    def __mul__")], 2, "contract"),
    ("no-mul", [("    def __mul__(self, other):", "    def times(self, other):")], 2,
     "missing-name"),
    ("no-radd", [_method("__radd__", "return self + other")], 2, "missing-radd"),
    ("no-rmul", [_method("__rmul__", "return self * other")], 2, "missing-radd"),
    ("radd-as-other-plus-self", [("    def __radd__(self, other):\n        return self + other",
                                  "    def __radd__(self, other):\n        return other + self")],
     2, "radd-recursion"),
    ("mul-adds-going-forward", [("Value(self.data * other.data", "Value(self.data + other.data")],
     2, "wrong-forward"),
    # stage 3: the closures
    ("add-forgets-out-grad", [(ADD_BACKWARD, "            self.grad += 1.0\n"
                               "            other.grad += 1.0\n")], 3, "wrong-local-derivative"),
    ("mul-own-value", [(MUL_BACKWARD, "            self.grad += self.data * out.grad\n"
                        "            other.grad += other.data * out.grad\n")],
     3, "wrong-local-derivative"),
    ("mul-by-a-value", [(MUL_BACKWARD, "            self.grad += other * out.grad\n"
                         "            other.grad += self * out.grad\n")],
     3, "wrong-local-derivative"),
    ("mul-forgets-out-grad", [(MUL_BACKWARD, "            self.grad += other.data\n"
                               "            other.grad += self.data\n")],
     3, "wrong-local-derivative"),
    # stage 4: more ops
    ("tanh-slope-from-input", [("(1 - t * t) * out.grad", "(1 - self.data ** 2) * out.grad")],
     4, "tanh-slope-from-input"),
    ("exp-slope-from-input", [("self.grad += e * out.grad", "self.grad += self.data * out.grad")],
     4, "wrong-local-derivative"),
    ("relu-always-passes", [("self.grad += (out.data > 0) * out.grad", "self.grad += out.grad")],
     4, "wrong-local-derivative"),
    ("pow-keeps-the-exponent", [("k * self.data ** (k - 1)", "k * self.data ** k")],
     4, "wrong-local-derivative"),
    ("no-rsub", [_method("__rsub__", "return other + (-self)")], 4, "missing-radd"),
    ("no-rtruediv", [_method("__rtruediv__", "return other * self ** -1")], 4, "missing-radd"),
    ("no-neg", [("    def __neg__(self):\n        return self * -1\n\n", "")], 4, "missing-name"),
    # stage 5: backward
    ("recursive-unsorted-backward", [("    def backward(self, retain_graph=False):\n" + TOPO,
                                      NAIVE_BACKWARD + "        return\n        topo = []\n")],
     5, "not-topological"),
    ("recursive-topological-sort", [(TOPO, RECURSIVE_TOPO)], 5, "recursion"),
    ("no-seed", [("        self.grad = 1.0\n        for node in reversed(topo)",
                  "        for node in reversed(topo)")], 5, "seed-not-one"),
    ("forward-order", [("for node in reversed(topo):", "for node in topo:")],
     5, "not-topological"),
    # stage 6: accumulation
    ("add-assigns", [(ADD_BACKWARD, ADD_BACKWARD.replace("+=", "="))], 6, "assign-not-accumulate"),
    ("mul-assigns", [(MUL_BACKWARD, MUL_BACKWARD.replace("+=", "="))], 6, "assign-not-accumulate"),
    # `=` on one operand only: caught whichever order the walk over `_prev` fires in
    # (tests/test_build_checks.py fixes that order both ways).
    ("mul-assigns-self", [(MUL_BACKWARD, MUL_BACKWARD.replace("self.grad +=", "self.grad ="))],
     6, "assign-not-accumulate"),
    ("mul-assigns-other", [(MUL_BACKWARD, MUL_BACKWARD.replace("other.grad +=", "other.grad ="))],
     6, "assign-not-accumulate"),
    ("add-assigns-self", [(ADD_BACKWARD, ADD_BACKWARD.replace("self.grad +=", "self.grad ="))],
     6, "assign-not-accumulate"),
    ("add-assigns-other", [(ADD_BACKWARD, ADD_BACKWARD.replace("other.grad +=", "other.grad ="))],
     6, "assign-not-accumulate"),
    ("tanh-assigns", [("self.grad += (1 - t * t) * out.grad",
                       "self.grad = (1 - t * t) * out.grad")],
     6, "assign-not-accumulate"),
    ("exp-assigns", [("self.grad += e * out.grad", "self.grad = e * out.grad")],
     6, "assign-not-accumulate"),
    ("relu-assigns", [("self.grad += (out.data > 0) * out.grad",
                       "self.grad = (out.data > 0) * out.grad")], 6, "assign-not-accumulate"),
    ("pow-assigns", [("self.grad += k * self.data ** (k - 1) * out.grad",
                      "self.grad = k * self.data ** (k - 1) * out.grad")],
     6, "assign-not-accumulate"),
    # stage 7: zero_grad
    ("zero-grad-skips-non-leaves", [("    for v in values:\n        v.grad = 0.0",
                                     "    for v in values:\n        if not v._prev:\n"
                                     "            v.grad = 0.0")], 7, "grad-not-reset"),
    ("zero-grad-first-only", [("    for v in values:\n        v.grad = 0.0",
                               "    values[0].grad = 0.0")], 7, "grad-not-reset"),
    ("backward-resets-leaves", [("        self.grad = 1.0\n        for node in reversed(topo)",
                                 "        for node in topo:\n            node.grad = 0.0\n"
                                 "        self.grad = 1.0\n        for node in reversed(topo)")],
     7, "grad-reset-in-backward"),
    ("seed-adds-up", [("        self.grad = 1.0\n        for node in reversed(topo)",
                       "        self.grad += 1.0\n        for node in reversed(topo)")],
     7, "seed-not-one"),
    ("no-zero-grad", [("def zero_grad(values):", "def zero_grads(values):")], 7, "missing-name"),
    ("frees-the-addition-too", [("if node._prev and node._op != '+':", "if node._prev:")],
     7, "freed-too-much"),
    # stage 8: retain_graph
    ("never-frees", [(FREEING, "")], 8, "backward-twice-silent"),
    ("retain-graph-ignored", [("        if not retain_graph:\n            for node in topo",
                               "        if True:\n            for node in topo")],
     8, "retain-graph-ignored"),
    ("no-retain-graph-argument", [("    def backward(self, retain_graph=False):",
                                   "    def backward(self):\n        retain_graph = False")],
     8, "retain-graph-ignored"),
    # stage 9: the network
    ("bias-first", [("return [*self.w, self.b]", "return [self.b, *self.w]")],
     9, "parameters-order"),
    ("neuron-ignores-nonlin", [("return act.relu() if self.nonlin else act", "return act.relu()")],
     9, "wrong-network"),
    ("last-layer-relu", [("nonlin=i != len(nouts) - 1", "nonlin=True")], 9, "wrong-network"),
    ("layer-returns-a-list", [("return out[0] if len(out) == 1 else out", "return out")],
     9, "wrong-network"),
    ("module-zero-grad-skips-the-last", [("        for p in self.parameters():\n"
                                          "            p.grad = 0.0",
                                          "        for p in self.parameters()[:-1]:\n"
                                          "            p.grad = 0.0")], 9, "module-zero-grad"),
]


def apply(source: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        assert source.count(old) == 1, f"the edit's text is not once in correct.py: {old!r}"
        source = source.replace(old, new)
    return source
