"""The playground shows the engine's numbers, refuses bad input, and breaks on purpose."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QSpinBox,
    QTableWidget,
    QTabWidget,
)

from gradbox.autograd.engine import FREED_GRAPH_MESSAGE
from gradbox.teaching.expression import MAX_DEPTH, parse
from gradbox.teaching.pitfalls import backward_wrong_order, microbatch_demo
from gradbox.training.session import Session
from gradbox.views.graph.framing import READABLE_PT
from gradbox.views.panels.playground import (
    C_ERROR,
    C_GRAD,
    C_NUMERIC,
    C_VALUE,
    C_VARIANT,
    EXAMPLES,
    PlaygroundPanel,
)
from gradbox.views.panels.playground_text import CARET_CONTEXT

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process

RED = QColor("#f6c9c4")


@pytest.fixture
def panel(qtbot):  # type: ignore[no-untyped-def]
    widget = PlaygroundPanel()
    widget.animation_ms = 1
    qtbot.addWidget(widget)
    widget.resize(1200, 700)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


# --- reading the table --------------------------------------------------------------------
def column(panel: PlaygroundPanel, col: int) -> dict[str, str]:
    table = panel.table
    return {table.item(r, 0).text(): table.item(r, col).text() for r in range(table.rowCount())}


def numbers(panel: PlaygroundPanel, col: int) -> dict[str, float]:
    return {name: float(text) for name, text in column(panel, col).items()}


def background(panel: PlaygroundPanel, name: str, col: int) -> QColor:
    table = panel.table
    row = next(r for r in range(table.rowCount()) if table.item(r, 0).text() == name)
    return table.item(row, col).background().color()


def backward(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    """Click Backward and wait for the replay in the graph to finish."""
    with qtbot.waitSignal(panel.graph.animation_finished, timeout=5000):
        panel.backward_button.click()


def engine_grads(text: str, values: dict[str, float]) -> dict[str, float]:
    expr = parse(text, values)
    expr.root.backward()
    return {name: leaf.grad for name, leaf in expr.leaves.items()}


def finite_differences(text: str, values: dict[str, float], eps: float = 1e-6
                       ) -> dict[str, float]:
    out = {}
    for name in values:
        plus = parse(text, {**values, name: values[name] + eps}).root.data
        minus = parse(text, {**values, name: values[name] - eps}).root.data
        out[name] = (plus - minus) / (2 * eps)
    return out


# --- forward and backward -----------------------------------------------------------------
NEURON = "(x1*w1 + x2*w2 + b).tanh()"
NEURON_VALUES = {"x1": 2.0, "w1": -3.0, "x2": 0.5, "w2": 1.0, "b": 6.5}


@pytest.mark.parametrize(("text", "values"), [
    ("tanh(a*b + c)", {"a": 0.5, "b": -1.5, "c": 0.25}),
    (NEURON, NEURON_VALUES),
    ("exp(x) / (1 + exp(x))", {"x": 0.7}),
])
def test_backward_shows_the_engines_gradients_and_they_pass_the_check(
        qtbot, panel: PlaygroundPanel, text: str, values: dict[str, float]) -> None:  # type: ignore[no-untyped-def]
    panel.setup(text, values)
    assert set(column(panel, C_GRAD).values()) == {"–"}  # nothing has flowed yet
    backward(qtbot, panel)
    expected = engine_grads(text, values)
    shown = numbers(panel, C_GRAD)
    for name, grad in expected.items():
        assert shown[name] == pytest.approx(grad, rel=1e-3, abs=1e-12), name
    # The graph draws the engine's own numbers: the root's value and every leaf's grad.
    graph = panel.graph.graph()
    assert graph is not None
    assert graph.data(graph.root) == pytest.approx(parse(text, values).root.data, rel=1e-15)
    for name, leaf in panel.model.expression.leaves.items():
        assert graph.grad(graph.node_of(leaf)) == pytest.approx(expected[name], rel=1e-15)

    panel.check_button.click()
    numeric = numbers(panel, C_NUMERIC)
    slopes = finite_differences(text, values)
    for name in values:
        assert numeric[name] == pytest.approx(slopes[name], rel=1e-3, abs=1e-9)
        assert float(column(panel, C_ERROR)[name]) < 1e-6
    assert "passed" in panel.message_text()
    worst = panel.model.check.names[panel.model.check.worst]
    assert background(panel, worst, C_ERROR) != RED  # highlighted, but not as a failure
    assert panel.table.item(panel.model.names.index(worst), C_ERROR).font().bold()


def test_mid_animation_the_table_waits_for_the_graph(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a*b + c", {"a": 2.0, "b": -3.0, "c": 10.0})
    panel.animation_ms = 10_000  # the timer never fires during this test: steps are manual
    panel.backward_button.click()
    graph = panel.graph.graph()
    assert panel.graph.step_backward() == graph.root  # the output lights up first
    assert column(panel, C_GRAD) == {"a": "…", "b": "…", "c": "…"}
    reached: set[str] = set()
    for _ in range(len(graph) - 2):
        node = panel.graph.step_backward()
        if graph.is_leaf(node):
            reached.add(graph.display_name(node))
        shown = column(panel, C_GRAD)
        # A leaf shows its number in the table the moment the graph lights it up.
        assert {name for name, text in shown.items() if text != "…"} == reached
    assert 0 < len(reached) < 3
    with qtbot.waitSignal(panel.graph.animation_finished):
        panel.graph.step_backward()
    assert numbers(panel, C_GRAD) == {"a": -3.0, "b": 2.0, "c": 1.0}


def test_editing_a_value_runs_the_forward_pass_again(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a*b + c", {"a": 2.0, "b": -3.0, "c": 10.0})
    panel.table.item(0, C_VALUE).setText("5")
    assert panel.model.expression.leaves["a"].data == 5.0
    assert panel.graph.graph().data(panel.graph.graph().root) == -5.0  # 5·(−3) + 10
    assert "output = -5" in panel.message_text()
    backward(qtbot, panel)
    assert numbers(panel, C_GRAD)["b"] == 5.0  # ∂(a·b)/∂b = a


def test_a_value_the_expression_cannot_take_is_refused(panel: PlaygroundPanel) -> None:
    panel.setup("log(a)", {"a": 2.0})
    panel.table.item(0, C_VALUE).setText("-1")
    assert "does not work here" in panel.message_text()
    assert "log" in panel.message_text()
    assert column(panel, C_VALUE)["a"] == "2"
    panel.table.item(0, C_VALUE).setText("two")
    assert "not a number" in panel.message_text()
    assert panel.model.expression.leaves["a"].data == 2.0


def test_backward_without_zero_grads_adds_and_says_so(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a*b", {"a": 2.0, "b": -3.0})
    backward(qtbot, panel)
    backward(qtbot, panel)  # a new forward, then backward into leaves that kept their grads
    assert numbers(panel, C_GRAD) == {"a": -6.0, "b": 4.0}
    assert "Zero grads" in panel.message_text()
    panel.zero_button.click()
    assert numbers(panel, C_GRAD) == {"a": 0.0, "b": 0.0}
    backward(qtbot, panel)
    assert numbers(panel, C_GRAD) == {"a": -3.0, "b": 2.0}


# --- the parser's refusals ----------------------------------------------------------------
@pytest.mark.parametrize(("text", "fragment"), [
    ("__import__('os')", "unknown function '__import__'"),
    ("a.__class__", "attribute access"),
    ("9**9**9", "exponent must be a number"),
    ("(" * 500 + "a" + ")" * 500, "nested too deeply"),
    ("-" * 1500 + "a", "nested too deeply"),
    ("tanh(a*b +* c)", "invalid syntax"),
])
def test_a_rejected_expression_shows_where_and_keeps_the_last_graph(
        qtbot, panel: PlaygroundPanel, text: str, fragment: str) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a + a", {"a": 3.0})
    backward(qtbot, panel)
    before = panel.graph.graph()
    panel.expression.setText(text)
    panel.forward_button.click()
    error = panel.error_text()
    assert fragment in error
    assert "column" in error
    assert "Still showing the last good expression: a + a" in error
    # The caret sits under the character the parser named; a long line is cut to the
    # part around it (so it never widens the panel), short ones are shown whole.
    shown, caret_line = error.splitlines()[:2]
    assert panel.model.text == "a + a"  # the model kept the good expression
    assert shown[caret_line.index("^")] == text[_column(text) - 1]
    assert len(shown) <= CARET_CONTEXT + 2
    if len(text) <= CARET_CONTEXT:
        assert caret_line.index("^") + 1 == _column(text)
    assert panel.graph.graph() is before
    assert numbers(panel, C_GRAD) == {"a": 2.0}
    # Fixing the text clears the error and shows the new graph.
    panel.expression.setText("a * a")
    panel.expression.returnPressed.emit()
    assert panel.error_text() == ""
    assert panel.graph.graph() is not before


def _column(text: str) -> int:
    from gradbox.teaching.expression import ExpressionError

    try:
        parse(text)
    except ExpressionError as error:
        return error.position
    raise AssertionError("expected a rejection")


def test_deep_nesting_within_the_limit_is_fine(panel: PlaygroundPanel) -> None:
    panel.expression.setText("(" * MAX_DEPTH + "a" + ")" * MAX_DEPTH)
    panel.forward_button.click()
    assert panel.error_text() == ""
    assert panel.model.names == ("a",)


# --- backward again -----------------------------------------------------------------------
def test_backward_again_through_a_product_shows_pytorchs_error(
        qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a * b", {"a": 2.0, "b": -3.0})
    backward(qtbot, panel)
    panel.backward_again_button.click()
    message = panel.message_text()
    assert " ".join(FREED_GRAPH_MESSAGE.split()) in " ".join(message.split())
    assert "RuntimeError" in message
    assert "× saved" in message
    assert panel.message.property("kind") == "error"
    assert numbers(panel, C_GRAD) == {"a": -3.0, "b": 2.0}  # the failed call changed nothing


@pytest.mark.parametrize("text", ["tanh(a + b)", "relu(a + b)"])
def test_backward_again_through_tanh_or_relu_raises_too(
        qtbot, panel: PlaygroundPanel, text: str) -> None:  # type: ignore[no-untyped-def]
    panel.setup(text, {"a": 0.5, "b": 0.25})
    backward(qtbot, panel)
    panel.backward_again_button.click()
    assert "Trying to backward through the graph a second time" in panel.message_text()


def test_backward_again_through_additions_doubles_and_explains(
        qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a + a + b", {"a": 3.0, "b": 1.0})
    backward(qtbot, panel)
    assert numbers(panel, C_GRAD) == {"a": 2.0, "b": 1.0}
    panel.backward_again_button.click()
    assert numbers(panel, C_GRAD) == {"a": 4.0, "b": 2.0}
    message = panel.message_text()
    assert "a: 2 → 4" in message and "b: 1 → 2" in message
    assert "Nothing in this graph saves a value" in message
    assert "twice their gradient" in message
    # The doubled gradients are now wrong, and the check says so.
    panel.check_button.click()
    assert "FAILED" in panel.message_text()
    assert background(panel, "a", C_ERROR) == RED


def test_retain_graph_lets_a_product_go_back_twice_and_double(
        qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a * b", {"a": 2.0, "b": -3.0})
    panel.retain.click()
    assert panel.model.retain_graph
    backward(qtbot, panel)
    panel.backward_again_button.click()
    assert numbers(panel, C_GRAD) == {"a": -6.0, "b": 4.0}
    assert "retain_graph=True kept every saved value" in panel.message_text()


def test_ticking_retain_graph_after_the_first_backward_is_too_late(
        qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a * b", {"a": 2.0, "b": -3.0})
    backward(qtbot, panel)
    panel.retain.click()
    panel.backward_again_button.click()
    assert "already freed" in panel.message_text()


def test_backward_again_before_any_backward_explains(panel: PlaygroundPanel) -> None:
    panel.setup("a * b", {"a": 2.0, "b": -3.0})
    panel.backward_again_button.click()
    assert "Press Backward first" in panel.message_text()


# --- broken variants beside the engine ----------------------------------------------------
# a = 1; b = a + a; c = b + b: by hand, dc/db = 2 and db/da = 2, so a.grad = 4. The naive
# recursion fires b twice (once per path from c) and a collects 2 + 2 + 2 + 2 = 8.
# a + a with =: the second use overwrites the first, 1 instead of 2.
# a * a with =: only one of the two uses counts, a = 3 gives 3 instead of 2a = 6.
CHAIN = "a = 1; b = a + a; c = b + b"


@pytest.mark.parametrize(("variant", "text", "values", "correct", "broken"), [
    ("wrong order", CHAIN, {}, {"a": 4.0}, {"a": 8.0}),
    ("assign", "a + a", {"a": 3.0}, {"a": 2.0}, {"a": 1.0}),
    ("assign", "a * a", {"a": 3.0}, {"a": 6.0}, {"a": 3.0}),
    ("assign", CHAIN, {}, {"a": 4.0}, {"a": 1.0}),
])
def test_a_broken_variant_shows_wrong_numbers_beside_the_right_ones(
        qtbot, panel: PlaygroundPanel, variant: str, text: str, values: dict[str, float],
        correct: dict[str, float], broken: dict[str, float]) -> None:  # type: ignore[no-untyped-def]
    panel.setup(text, values)
    panel.variant.setCurrentIndex(panel.variant.findData(variant))
    assert not panel.backward_again_button.isEnabled()
    panel.backward_button.click()
    assert not panel.table.isColumnHidden(C_VARIANT)
    assert panel.table.horizontalHeaderItem(C_VARIANT).text().split() == variant.split()
    assert numbers(panel, C_GRAD) == correct
    assert numbers(panel, C_VARIANT) == broken
    for name in broken:
        assert background(panel, name, C_VARIANT) == RED
    assert panel.message.property("kind") == "error"
    panel.check_button.click()
    message = panel.message_text()
    assert "Gradient check FAILED" in message
    assert numbers(panel, C_NUMERIC) == pytest.approx(correct, rel=1e-6)
    worst = max(broken, key=lambda n: abs(broken[n] - correct[n]))
    assert background(panel, worst, C_ERROR) == RED
    assert float(column(panel, C_ERROR)[worst]) > 1e-6


def test_wrong_order_on_a_neuron_names_the_firing_order(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    values = {"x": 0.5, "w1": 0.5, "w2": 0.25, "b": -0.25}
    text = "h = 2*x; tanh(b + w1*h + w2*h)"
    panel.setup(text, values, variant="wrong order")
    panel.backward_button.click()
    expr = parse(text, values)
    backward_wrong_order(expr.root)
    wrong = {name: leaf.grad for name, leaf in expr.leaves.items()}
    right = engine_grads(text, values)
    assert numbers(panel, C_VARIANT) == pytest.approx(wrong, rel=1e-3)
    assert numbers(panel, C_GRAD) == pytest.approx(right, rel=1e-3)
    # Only x sits behind the reused h; the weights and bias get the right numbers.
    assert background(panel, "x", C_VARIANT) == RED
    for name in ("w1", "w2", "b"):
        assert background(panel, name, C_VARIANT) != RED
    assert "It fired:" in panel.message_text()
    assert "h passed gradient on more than once" in panel.message_text()


@pytest.mark.parametrize("variant", ["wrong order", "assign"])
def test_on_a_tree_the_variants_agree_with_the_engine(qtbot, panel: PlaygroundPanel,
                                                      variant: str) -> None:  # type: ignore[no-untyped-def]
    panel.setup(NEURON, NEURON_VALUES, variant=variant)
    panel.backward_button.click()
    assert numbers(panel, C_VARIANT) == numbers(panel, C_GRAD)
    assert "same numbers here" in panel.message_text()
    panel.check_button.click()
    assert "passed" in panel.message_text()


def test_the_check_keeps_the_variants_explanation_in_view(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup(CHAIN, {}, variant="wrong order")
    panel.backward_button.click()
    panel.check_button.click()
    message = panel.message_text()
    assert message.index("Gradient check FAILED") < message.index("Before that")
    assert "It fired: c, b, a, a, b, a, a" in message


def test_back_to_the_engine_hides_the_variant_column(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a + a", {"a": 3.0}, variant="assign")
    panel.backward_button.click()
    panel.variant.setCurrentIndex(panel.variant.findData("engine"))
    assert panel.table.isColumnHidden(C_VARIANT)
    assert panel.backward_again_button.isEnabled()


# --- micro-batches and forget zero_grad ---------------------------------------------------
@pytest.mark.parametrize("k", [1, 3, 5, 12])
def test_microbatch_columns_match_the_full_batch(panel: PlaygroundPanel, k: int) -> None:
    panel.extras.setCurrentIndex(1)
    panel.microbatches.k.setValue(k)
    table = panel.microbatches.table
    expected = microbatch_demo(k)
    assert table.rowCount() == len(expected.names) == 17  # MLP(2, [4, 1])
    assert table.horizontalHeaderItem(2).text() == f"{k} micro-batches"
    for row in range(table.rowCount()):
        # The tooltips hold every digit; the cells show nine.
        full = float(table.item(row, 1).toolTip())
        accumulated = float(table.item(row, 2).toolTip())
        assert abs(full - accumulated) <= 1e-12
        assert full == expected.full_batch[row]
    assert f"{expected.max_difference:.1e}" in panel.microbatches.summary.text()


def test_forget_zero_grad_demo_shows_k_times_the_true_gradient(panel: PlaygroundPanel) -> None:
    panel.setup("a*b + c", {"a": 2.0, "b": -3.0, "c": 10.0})
    panel.forget.passes.setValue(4)
    panel.forget.button.click()
    assert panel.extras.currentIndex() == 2
    table = panel.forget.table
    assert table.columnCount() == 6
    rows = {table.item(r, 0).text(): [float(table.item(r, c).text()) for c in range(1, 6)]
            for r in range(table.rowCount())}
    assert rows == {"a": [-3.0, -3.0, -6.0, -9.0, -12.0], "b": [2.0, 2.0, 4.0, 6.0, 8.0],
                    "c": [1.0, 1.0, 2.0, 3.0, 4.0]}
    assert "4 × the true one" in panel.forget.summary.text()


# --- examples and accessibility -----------------------------------------------------------
def test_an_example_sets_expression_and_values(panel: PlaygroundPanel) -> None:
    index = next(i for i, (label, _t, _v) in enumerate(EXAMPLES)
                 if label == "neuron with a reused hidden value")
    panel.examples.setCurrentIndex(index + 1)
    panel.examples.activated.emit(index + 1)
    assert panel.expression.text() == "h = 2*x; tanh(b + w1*h + w2*h)"
    assert column(panel, C_VALUE) == {"x": "0.5", "b": "-0.25", "w1": "0.5", "w2": "0.25"}
    root = panel.graph.graph()
    assert root.data(root.root) == pytest.approx(math.tanh(0.5), rel=1e-15)
    assert panel.examples.currentIndex() == 0  # back to "Examples…"


def test_every_control_has_a_tooltip_and_an_accessible_name(panel: PlaygroundPanel) -> None:
    kinds = (QAbstractButton, QComboBox, QLineEdit, QSpinBox, QTableWidget, QTabWidget)
    # The panel's own controls are its attributes; Qt's inner parts (a tab bar's scroll
    # arrows) are not, and carry Qt's own accessibility. The lower tabs are pages of their own.
    owners = (panel, panel.microbatches, panel.forget, panel.network_check)
    controls = [w for owner in owners for w in vars(owner).values() if isinstance(w, kinds)]
    assert len(controls) >= 14
    for widget in controls:
        assert widget.toolTip(), widget.objectName()
        assert widget.accessibleName(), widget.objectName()
    for index in range(panel.extras.count()):
        assert panel.extras.tabToolTip(index)


def test_the_variant_column_header_and_check_tooltips_say_what_they_mean(
        qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a + a", {"a": 3.0}, variant="assign")
    panel.backward_button.click()
    cell = panel.table.item(0, C_VARIANT)
    assert "correct gradient is 2" in cell.toolTip()
    assert cell.data(Qt.ItemDataRole.DisplayRole) == "1"


# --- the network's gradient check ------------------------------------------------------------
def test_the_network_check_runs_on_the_sessions_network(qtbot, controller) -> None:  # type: ignore[no-untyped-def]
    panel = PlaygroundPanel(controller)
    qtbot.addWidget(panel)
    panel.extras.setCurrentIndex(3)
    with qtbot.waitSignal(controller.snapshot_changed):
        controller.step()
    panel.network_check.button.click()
    assert not panel.network_check.button.isEnabled()  # until the worker answers
    qtbot.waitUntil(lambda: panel.network_check.table.rowCount() > 0, timeout=10_000)
    snapshot = controller.snapshot
    table = panel.network_check.table
    assert table.rowCount() == len(snapshot.param_names)
    assert sorted(table.item(r, 0).toolTip() for r in range(table.rowCount())) == \
        sorted(snapshot.param_names)
    errors = [float(table.item(r, 3).text()) for r in range(table.rowCount())]
    assert errors == sorted(errors, reverse=True)  # worst first
    assert errors[0] < 1e-6
    assert table.item(0, 3).font().bold()
    assert "the check passes" in panel.network_check.summary.text()
    assert panel.network_check.button.isEnabled()
    # The check leaves the trainer as it was: the next snapshot's gradients are the same.
    with qtbot.waitSignal(controller.snapshot_changed):
        controller.send(Session.unpin)  # a command that changes nothing: a new snapshot
    assert (controller.snapshot.grads == snapshot.grads).all()
    assert (controller.snapshot.params == snapshot.params).all()


def test_without_a_session_the_network_check_is_off(panel: PlaygroundPanel) -> None:
    assert not panel.network_check.button.isEnabled()
    assert "training session" in panel.network_check.button.toolTip()


def test_selecting_a_node_shows_its_local_derivative(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a * b", {"a": 2.0, "b": -3.0})
    backward(qtbot, panel)
    graph = panel.graph.graph()
    product = graph.root
    panel.graph.select_node(product)
    text = panel.details.toPlainText()
    assert "local derivative" in text and "b" in text
    a = graph.node_of(panel.model.expression.leaves["a"])
    panel.graph.select_node(a)
    assert "grad" in panel.details.toPlainText()
    assert "-3" in panel.details.toPlainText()


def test_the_caption_says_whose_gradients_the_graph_holds(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("a + a", {"a": 3.0})
    assert "computed by the engine" in panel.graph_caption.text()
    panel.variant.setCurrentIndex(panel.variant.findData("assign"))
    panel.backward_button.click()
    assert "broken on purpose" in panel.graph_caption.text()
    graph = panel.graph.graph()
    assert graph.grad(graph.node_of(panel.model.expression.leaves["a"])) == 1.0  # the variant's


def test_the_graph_fits_after_every_forward_and_backward(qtbot, panel: PlaygroundPanel) -> None:  # type: ignore[no-untyped-def]
    panel.setup("tanh(x1*w1 + x2*w2 + b)",
                {"x1": 2.0, "w1": -3.0, "x2": 0.0, "w2": 1.0, "b": 6.88})
    view = panel.graph

    def whole_graph_in_view() -> bool:
        """Framed: its text READABLE_PT on screen, and the whole drawing in view when
        it fits at that size; when it does not (the replay follows the gradient to
        the leaves), the mini-map shows where the view is."""
        port = QRectF(view.viewport().rect())
        scene = view.operations
        if view.transform().m11() * scene.style.name_font.pointSizeF() < READABLE_PT - 1e-6:
            return False
        drawing = QRectF(view.mapFromScene(scene.drawing_rect()).boundingRect())
        if drawing.width() <= port.width() and drawing.height() <= port.height():
            return port.contains(drawing)
        view.viewport().repaint()  # the mini-map follows the paint
        return view.minimap.isVisible()

    backward(qtbot, panel)
    assert whole_graph_in_view()
    panel.resize(900, 600)  # the layout moves (a message wraps): still framed
    qtbot.waitUntil(whole_graph_in_view)
    backward(qtbot, panel)
    assert whole_graph_in_view()
    # the legend's text stays in its own box, over no node
    key = view.legend_rect()
    assert not any(key.intersects(view.mapFromScene(rect).boundingRect().toRectF())
                   for rect in view.operations.occupied())


def test_backward_with_an_unparsable_field_runs_on_the_last_good_expression_and_says_so(  # type: ignore[no-untyped-def]
        qtbot, controller, show_widget) -> None:
    """issue 32, item 16: Backward did nothing, silently, though the box said 'Still
    showing the last good expression'."""
    from PySide6.QtCore import Qt as _Qt
    from PySide6.QtTest import QTest

    from gradbox.views.panels.playground import PlaygroundPanel
    panel = show_widget(PlaygroundPanel(controller), 900, 700)
    good = panel.model.text
    panel.expression.setFocus()
    panel.expression.selectAll()
    QTest.keyClicks(panel.expression, "a * (b +")
    QTest.keyClick(panel.expression, _Qt.Key.Key_Return)
    qtbot.mouseClick(panel.backward_button, _Qt.MouseButton.LeftButton)
    assert "Backward ran on the last good expression" in panel.message_text()
    assert good in panel.message_text()
    assert panel.model.text == good
