"""Lessons: what each one claims is what the app does; the panel sets the app up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QMainWindow,
    QMenuBar,
    QTabWidget,
    QTextBrowser,
    QToolBar,
    QWidget,
)

from demonstrations import forgetting_claim
from gradbox.autograd.nn import parameter_count, unflatten
from gradbox.port.controller import SessionController
from gradbox.teaching import lessons
from gradbox.teaching.expression import parse
from gradbox.teaching.lessons import ALL_CONTROLS, LESSONS, Lesson, Setup, lesson
from gradbox.teaching.pitfalls import microbatch_demo
from gradbox.teaching.playground import PLAYGROUND_VARIANTS, Playground
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.panels.lesson_panel import (
    LessonPanel,
    apply_teacher_mode,
    lesson_html,
    presented,
)
from gradbox.views.panels.playground import PlaygroundPanel


# --- the lessons as data ------------------------------------------------------------------
def test_there_are_at_least_six_lessons_each_complete() -> None:
    assert len(LESSONS) >= 6
    assert len({item.key for item in LESSONS}) == len(LESSONS)
    for item in LESSONS:
        assert item.title and item.intro
        assert len(item.steps) >= 3
        assert all(step.do and step.look for step in item.steps)
        assert item.formulas
        assert set(item.controls) <= set(ALL_CONTROLS), item.key
        if item.setup.view == "playground":
            parse(item.setup.expression, item.setup.values)  # every expression is valid
            assert item.setup.variant in PLAYGROUND_VARIANTS
            assert lessons.PLAYGROUND_TAB in item.controls
        else:
            assert isinstance(item.setup.config, TrainingConfig)


def test_the_six_topics_of_the_issue_are_covered() -> None:
    keys = [item.key for item in LESSONS]
    assert keys[:6] == ["chain-rule", "accumulate", "topological-order", "zero-grad",
                        "backward-twice", "moons"]
    assert lesson("chain-rule").setup.expression == "a*b + c"
    assert lesson("accumulate").setup.expression == "a + a"
    assert lesson("topological-order").setup.variant == "wrong order"
    zero = lesson("zero-grad").setup
    assert (zero.view, zero.forget_zero_grad, zero.ghost) == ("training", True, True)
    assert lesson("moons").setup.config.dataset == "moons"
    with pytest.raises(KeyError, match="no lesson"):
        lesson("nope")


def test_a_setup_is_checked_and_read_only() -> None:
    with pytest.raises(ValueError, match="needs an expression"):
        Setup("playground")
    with pytest.raises(ValueError, match="needs a config"):
        Setup("training")
    with pytest.raises(ValueError, match="view must be"):
        Setup("other", expression="a")  # type: ignore[arg-type]
    setup = lesson("chain-rule").setup
    with pytest.raises(TypeError):
        setup.values["a"] = 5.0  # type: ignore[index]


# --- what the lessons say happens, happens ------------------------------------------------
def _model(item: Lesson) -> Playground:
    setup = item.setup
    model = Playground(setup.expression, setup.values)
    model.set_variant(setup.variant)
    model.retain_graph = setup.retain_graph
    return model


def _grads(model: Playground, column: str = "grad") -> dict[str, float]:
    return {row.name: getattr(row, column) for row in model.rows()}


def test_chain_rule_lesson_numbers() -> None:
    model = _model(lesson("chain-rule"))
    assert model.root.data == 4.0  # a·b = −6, −6 + 10 = 4
    model.backward()
    assert _grads(model) == {"a": -3.0, "b": 2.0, "c": 1.0}
    assert "passed" in model.gradient_check().title
    model.set_value("a", 5.0)
    model.zero_grads()
    model.backward()
    assert _grads(model)["b"] == 5.0


def test_accumulate_lesson_numbers() -> None:
    model = _model(lesson("accumulate"))
    model.backward()
    assert _grads(model) == {"a": 2.0}
    model.set_variant("assign")
    model.backward()
    assert (_grads(model), _grads(model, "variant_grad")) == ({"a": 2.0}, {"a": 1.0})
    assert "FAILED" in model.gradient_check().title
    model.set_text("a * a")
    model.backward()
    assert (_grads(model), _grads(model, "variant_grad")) == ({"a": 6.0}, {"a": 3.0})
    model.set_text("(x1*w1 + x2*w2 + b).tanh()")
    model.backward()
    assert _grads(model) == _grads(model, "variant_grad")


def test_topological_order_lesson_numbers() -> None:
    model = _model(lesson("topological-order"))
    outcome = model.backward()
    assert (_grads(model), _grads(model, "variant_grad")) == ({"a": 4.0}, {"a": 8.0})
    assert "It fired: c, b, a, a, b, a, a" in outcome.text
    assert "FAILED" in model.gradient_check().title
    model.set_text("h = 2*x; tanh(b + w1*h + w2*h)")
    model.backward()
    wrong = {row.name for row in model.rows() if row.wrong}
    assert wrong == {"x"}  # the weights stay right, as the lesson says


def test_backward_twice_lesson_numbers() -> None:
    model = _model(lesson("backward-twice"))
    model.backward()
    outcome = model.backward_again()
    assert outcome.kind == "error" and "second time" in outcome.quote
    model.set_text("a + a")
    model.backward()
    model.backward_again()
    assert _grads(model) == {"a": 4.0}
    model.set_text("a * b")
    model.retain_graph = True
    model.backward()
    model.backward_again()
    assert _grads(model) == {"a": 2 * model.expression.values["b"],
                             "b": 2 * model.expression.values["a"]}
    assert "FAILED" in model.gradient_check().title
    model.zero_grads()
    model.backward()
    assert "passed" in model.gradient_check().title


def test_zero_grad_lesson_numbers() -> None:
    """What the lesson's steps say, in seed 0 (the lesson's own); the claim about the
    loss at step 30 is checked over ten seeds in test_forget_zero_grad."""
    setup = lesson("zero-grad").setup
    assert setup.config is not None
    trainer = Trainer(setup.config)
    trainer.set_forget_zero_grad(setup.forget_zero_grad)
    trainer.set_ghost(setup.ghost)
    first = trainer.step()
    assert first is not None and first.loss == first.ghost_loss  # step 1 matches the ghost
    assert trainer.snapshot().grad_passes == 1
    trainer.step()
    assert trainer.snapshot().grad_passes == 2  # "the sum of 2 passes"
    trainer.set_forget_zero_grad(False)
    trainer.step()
    assert trainer.snapshot().grad_passes == 1  # "Held drops to 1 pass"


def test_zero_grad_lesson_step_size_grows_and_stays_large() -> None:
    config = lesson("zero-grad").setup.config
    assert config is not None
    _shown, runs = forgetting_claim(config, range(10))
    for run in runs:
        # "the step size |Δw| has grown and stays large" by steps 20 to 30
        assert min(run.step_sizes[19:30]) > run.step_sizes[0], run.seed


def test_moons_lesson_trains_to_full_accuracy() -> None:
    config = lesson("moons").setup.config
    assert config.activation in lesson("moons").intro
    trainer = Trainer(config)
    records = [trainer.step() for _ in range(100)]
    assert records[-1].loss < records[0].loss / 5
    assert records[-1].accuracy == 1.0


def test_microbatch_lesson_numbers() -> None:
    for k in (1, 2, 3, 6):
        assert microbatch_demo(k).max_difference <= 1e-12


# --- the panel, with a fake host ----------------------------------------------------------
class RecordingHost:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def show_playground(self, expression: str, values: Mapping[str, float], variant: str,
                        retain_graph: bool, tab: str) -> None:
        self.calls.append(("playground", expression, dict(values), variant, retain_graph, tab))

    def show_training(self, config: TrainingConfig, forget_zero_grad: bool,
                      ghost: bool, tab: str = "") -> None:
        self.calls.append(("training", config, forget_zero_grad, ghost))

    def set_teacher_mode(self, on: bool, needed_controls: Sequence[str]) -> None:
        self.calls.append(("teacher", on, tuple(needed_controls)))

    def use_run_controls(self, speed: float | None, stop: str, value: float) -> None:
        self.calls.append(("run controls", speed, stop, value))

    def restore_run_controls(self) -> None:
        self.calls.append(("restore run controls",))


@pytest.fixture
def recorded(qtbot):  # type: ignore[no-untyped-def]
    host = RecordingHost()
    panel = LessonPanel(host)
    qtbot.addWidget(panel)
    panel.resize(420, 600)
    panel.show()
    return panel, host


def _expected_call(item: Lesson) -> tuple:
    s = item.setup
    if s.view == "playground":
        return ("playground", s.expression, dict(s.values), s.variant, s.retain_graph, s.tab)
    return ("training", s.config, s.forget_zero_grad, s.ghost)


@pytest.mark.parametrize("item", LESSONS, ids=[x.key for x in LESSONS])
def test_choosing_a_lesson_sets_the_app_up_through_the_host(qtbot, recorded, item: Lesson) -> None:  # type: ignore[no-untyped-def]
    panel, host = recorded
    with qtbot.waitSignal(panel.lesson_applied) as signal:
        panel.chooser.setCurrentIndex(LESSONS.index(item))
        panel.chooser.activated.emit(LESSONS.index(item))
    assert signal.args == [item.key]
    assert host.calls[-1] == _expected_call(item)
    text = " ".join(panel.text_plain().split())  # HTML folds runs of spaces
    assert item.title in text
    assert item.steps[0].do in text and item.steps[0].look in text
    for formula in item.formulas:
        assert " ".join(formula.split()) in text
    assert panel.position.text() == f"Step 1 of {len(item.steps)}"


def test_previous_and_next_walk_the_steps(qtbot, recorded) -> None:  # type: ignore[no-untyped-def]
    panel, _host = recorded
    item = lesson("backward-twice")
    panel.apply(item)
    assert not panel.previous_button.isEnabled()
    with qtbot.waitSignal(panel.step_changed) as signal:
        panel.next_button.click()
    assert signal.args == [1]
    assert panel.position.text() == f"Step 2 of {len(item.steps)}"
    html = panel.text.toHtml()
    assert "Look for:" in panel.text_plain()
    assert item.steps[1].look in panel.text_plain()
    assert item.steps[0].look not in panel.text_plain()  # only the current step's
    assert "#fff1b8" in html  # the current step is highlighted
    while panel.next_button.isEnabled():
        panel.next_button.click()
    assert panel.step == len(item.steps) - 1
    assert item.takeaway in panel.text_plain()
    panel.previous_button.click()
    assert panel.step == len(item.steps) - 2
    assert item.takeaway not in panel.text_plain()


def test_teacher_mode_asks_the_host_to_present_each_step(recorded) -> None:  # type: ignore[no-untyped-def]
    panel, host = recorded
    panel.apply(lesson("chain-rule"))
    panel.teacher.click()
    assert host.calls[-1] == ("teacher", True, presented(lesson("chain-rule"), 0))
    panel.apply(lesson("zero-grad"))
    assert host.calls[-2:] == [_expected_call(lesson("zero-grad")),
                               ("teacher", True, presented(lesson("zero-grad"), 0))]
    panel.next_step()  # each step presents what it names
    assert host.calls[-1] == ("teacher", True, presented(lesson("zero-grad"), 1))
    shown = host.calls[-1][2]
    assert lessons.PARAMETERS in shown and lessons.LOSS_CURVE not in shown
    assert lessons.FORGET_ZERO_GRAD in shown  # the lesson's switches stay at every step
    panel.teacher.click()
    assert host.calls[-1] == ("teacher", False, presented(lesson("zero-grad"), 1))


def test_the_lessons_menu_opens_lessons_and_toggles_teacher_mode(qtbot, recorded) -> None:  # type: ignore[no-untyped-def]
    panel, host = recorded
    bar = QMenuBar()
    qtbot.addWidget(bar)
    menu = panel.build_menu(bar)
    actions = [a for a in menu.actions() if not a.isSeparator()]
    assert [a.text() for a in actions] == [x.title for x in LESSONS] + [
        "&Previous step", "&Next step", "&Teacher mode"]
    assert all(a.toolTip() for a in actions)
    actions[2].trigger()
    assert panel.lesson.key == "topological-order"
    assert panel.chooser.currentIndex() == 2
    assert host.calls[-1] == _expected_call(LESSONS[2])
    assert actions[2].isChecked()
    actions[-1].trigger()
    assert panel.teacher.isChecked()
    panel.teacher.click()
    assert not actions[-1].isChecked()


def test_the_panels_controls_have_tooltips_and_accessible_names(recorded) -> None:  # type: ignore[no-untyped-def]
    panel, _host = recorded
    controls = [w for w in vars(panel).values()
                if isinstance(w, QAbstractButton | QComboBox | QTextBrowser)]
    assert len(controls) >= 6
    for widget in controls:
        assert widget.toolTip() and widget.accessibleName(), widget.objectName()


def test_lesson_html_escapes_and_marks_the_current_step() -> None:
    item = lesson("chain-rule")
    text = lesson_html(item, 2)
    assert text.count("<li") == len(item.steps)
    assert "#fff1b8" in text
    assert "<b>" + item.steps[2].do in text
    odd = Lesson("x", "<script>", "a < b & c", item.steps, ("x < 1",), item.setup, ())
    assert "<script>" not in lesson_html(odd, 0) and "&lt;script&gt;" in lesson_html(odd, 0)


# --- the panel driving real widgets, as the main window will ------------------------------
class MiniWindow(QMainWindow):
    """The main window in miniature: the lesson host the lead adds to MainWindow."""

    def __init__(self, controller: SessionController) -> None:
        super().__init__()
        self.controller = controller
        self.toolbar = QToolBar("Training")
        self.toolbar.setObjectName(lessons.TRAINING_TOOLBAR)
        self.forget = QCheckBox("Forget zero_grad")
        self.forget.setObjectName(lessons.FORGET_ZERO_GRAD)
        self.ghost = QCheckBox("Ghost run")
        self.ghost.setObjectName(lessons.GHOST)
        self.toolbar.addWidget(self.forget)
        self.toolbar.addWidget(self.ghost)
        self.addToolBar(self.toolbar)
        self.tabs = QTabWidget()
        self.boundary = QWidget()
        self.boundary.setObjectName(lessons.BOUNDARY)
        self.graph_tab = QWidget()
        self.graph_tab.setObjectName(lessons.GRAPH_TAB)
        self.playground = PlaygroundPanel(controller)
        self.playground.animation_ms = 1
        self.tabs.addTab(self.boundary, "Decision boundary")
        self.tabs.addTab(self.graph_tab, "Computation graph")
        self.tabs.addTab(self.playground, "Playground")
        self.setCentralWidget(self.tabs)
        self.docks = {}
        for name in (lessons.DESIGNER, lessons.PARAMETERS, lessons.LOSS_CURVE):
            dock = QDockWidget(name)
            dock.setObjectName(name)
            dock.setWidget(QWidget())
            self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
            self.docks[name] = dock
        self.lessons = LessonPanel(self)
        lesson_dock = QDockWidget("Lessons")
        lesson_dock.setObjectName("lessons_dock")
        lesson_dock.setWidget(self.lessons)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, lesson_dock)
        self.lessons.build_menu(self)

    # LessonHost
    def show_playground(self, expression: str, values: Mapping[str, float], variant: str,
                        retain_graph: bool, tab: str) -> None:
        self.tabs.setCurrentWidget(self.playground)
        self.playground.setup(expression, values, variant, retain_graph, tab)

    def show_training(self, config: TrainingConfig, forget_zero_grad: bool,
                      ghost: bool, tab: str = "") -> None:
        self.tabs.setCurrentWidget(self.boundary)
        self.controller.apply_config(config)
        self.forget.setChecked(forget_zero_grad)
        self.ghost.setChecked(ghost)
        self.controller.send(Session.set_forget_zero_grad, forget_zero_grad)
        self.controller.send(Session.set_ghost, ghost)

    def set_teacher_mode(self, on: bool, needed_controls: Sequence[str]) -> None:
        apply_teacher_mode(self, needed_controls, on)

    def use_run_controls(self, speed: float | None, stop: str, value: float) -> None:
        pass  # this window has no run controls

    def restore_run_controls(self) -> None:
        pass


@pytest.fixture
def window(qtbot, controller):  # type: ignore[no-untyped-def]
    win = MiniWindow(controller)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    qtbot.waitExposed(win)
    return win


@pytest.mark.parametrize("item", LESSONS, ids=[x.key for x in LESSONS])
def test_every_lesson_opens_and_sets_the_state_it_describes(qtbot, window: MiniWindow,
                                                            item: Lesson) -> None:  # type: ignore[no-untyped-def]
    window.lessons.apply(item)
    setup = item.setup
    if setup.view == "playground":
        pg = window.playground
        assert window.tabs.currentWidget() is pg
        assert pg.expression.text() == setup.expression
        assert pg.model.text == setup.expression
        for name, value in setup.values.items():
            assert pg.model.expression.values[name] == value
        assert pg.current_variant() == setup.variant
        assert pg.retain.isChecked() == setup.retain_graph == pg.model.retain_graph
        assert pg.extras.name_of(pg.extras.currentIndex()).lower() == setup.tab
        assert pg.graph.graph() is not None
        assert pg.model.passes == 0  # a fresh graph: the lesson's first click is Backward
    else:
        assert window.tabs.currentWidget() is window.boundary
        assert window.forget.isChecked() == setup.forget_zero_grad
        assert window.ghost.isChecked() == setup.ghost
        qtbot.waitUntil(lambda: (window.controller.snapshot.config == setup.config
                                 and window.controller.snapshot.forget_zero_grad
                                 == setup.forget_zero_grad
                                 and window.controller.snapshot.ghost == setup.ghost),
                        timeout=5000)


def test_teacher_mode_hides_what_the_lesson_does_not_need_and_enlarges_fonts(
        qtbot, window: MiniWindow) -> None:  # type: ignore[no-untyped-def]
    pg = window.playground
    size = window.font().pointSizeF()
    window.lessons.apply(lesson("chain-rule"))
    window.lessons.teacher.click()
    assert window.font().pointSizeF() == pytest.approx(size * 1.5)
    assert pg.font().pointSizeF() == pytest.approx(size * 1.5)  # children inherit it
    # The chain-rule lesson needs Backward and the table, not the variants or retain_graph.
    # Its first step points at the graph: the table, a region it does not name, is away.
    for kept in (pg.backward_button, pg.graph, pg.expression, pg.check_button):
        assert kept.isVisible()
    for hidden in (pg.variant, pg.retain, pg.backward_again_button, pg.examples, pg.table):
        assert hidden.isHidden()
    window.lessons.go_to_step(2)  # "Read the grad of a and of b in the table."
    assert pg.table.isVisible() and pg.graph.isHidden()
    assert pg.extras.isVisible()  # not named itself, but it holds the table, which is
    # Training controls and tabs the lesson does not use are gone.
    assert window.toolbar.isHidden()
    assert all(dock.isHidden() for dock in window.docks.values())
    assert not window.tabs.isTabVisible(0) and not window.tabs.isTabVisible(1)
    assert window.tabs.isTabVisible(2)
    # The lessons themselves stay.
    assert window.lessons.isVisible()

    # Another lesson: the training controls come back, the playground tab goes.
    window.lessons.apply(lesson("zero-grad"))
    assert window.toolbar.isVisible() and window.forget.isVisible()
    assert not window.docks[lessons.DESIGNER].isVisible()
    assert not window.docks[lessons.LOSS_CURVE].isVisible()  # step 1 names the loop
    window.lessons.go_to_step(2)  # "... The loss curve shows the broken run ..."
    assert window.docks[lessons.LOSS_CURVE].isVisible()
    assert not window.tabs.isTabVisible(2)
    assert window.font().pointSizeF() == pytest.approx(size * 1.5)  # scaled once, not twice

    window.lessons.teacher.click()
    assert window.font().pointSizeF() == pytest.approx(size)
    assert all(window.tabs.isTabVisible(i) for i in range(3))
    assert all(dock.isVisible() for dock in window.docks.values())
    assert pg.variant.isVisibleTo(pg)


def test_teacher_mode_enlarges_widgets_with_their_own_style_sheet_too(
        qtbot, window: MiniWindow) -> None:  # type: ignore[no-untyped-def]
    # A style sheet stops a widget inheriting its parent's font, as the toolbar's red
    # "Forget zero_grad" box does in the real window.
    window.forget.setStyleSheet("QCheckBox { font-weight: bold; color: #b3261e; }")
    message = window.playground.message  # styled by the kind of message it shows
    sizes = {w: w.font().pointSizeF() for w in (window.forget, message)}
    apply_teacher_mode(window, lesson("zero-grad").controls, True)
    for widget, size in sizes.items():
        assert widget.font().pointSizeF() == pytest.approx(size * 1.5)
    assert window.forget.font().bold()
    apply_teacher_mode(window, (), False)
    for widget, size in sizes.items():
        assert widget.font().pointSizeF() == pytest.approx(size)


def test_turning_teacher_mode_off_leaves_what_the_user_hid_hidden(
        qtbot, window: MiniWindow) -> None:  # type: ignore[no-untyped-def]
    window.docks[lessons.PARAMETERS].hide()  # closed by the user before the lesson
    apply_teacher_mode(window, lesson("chain-rule").controls, True)
    apply_teacher_mode(window, (), False)
    assert window.docks[lessons.PARAMETERS].isHidden()
    assert window.docks[lessons.DESIGNER].isVisible()


# --- the lessons of issue 15: what their text claims, under their own settings, by seed -----
SEEDS = (0, 1, 2)


def _first_perfect_step(config: TrainingConfig, steps: int) -> tuple[int | None, Trainer]:
    trainer = Trainer(config)
    trainer.run_steps(steps)
    first = next((r.step for r in trainer.history if r.accuracy == 1.0), None)
    return first, trainer


@pytest.mark.parametrize("seed", SEEDS)
def test_features_or_depth_lesson_claims(seed: int) -> None:
    base = lesson("features-or-depth").setup.config.with_changes(seed=seed)
    assert base.hidden == () and base.features == ("x1", "x2")
    # 1. one neuron on x₁, x₂: a line, well short of 100 %
    line, line_run = _first_perfect_step(base, 200)
    assert line is None and line_run.history[-1].accuracy <= 0.85
    # 2. the squares: full accuracy within a few dozen steps, with the same 3 parameters
    squares_config = base.with_changes(features=("x1^2", "x2^2"))
    squares, squares_run = _first_perfect_step(squares_config, 60)
    assert squares is not None and squares <= 36
    assert squares_config.layer_sizes == base.layer_sizes == [2, 1]
    # 3. x₁² is a × node fed twice by x₁
    squares_run.capture_graph = True
    squares_run.substep()
    g = squares_run.last_graph
    square = g.labels.index("x₁²")
    assert g.ops[square] == "*" and [g.labels[c] for c in g.children[square]] == ["x₁", "x₁"]
    # 4. "+ layer" (8 tanh units) on x₁, x₂: full accuracy too, later, many more parameters
    deep_config = base.with_changes(hidden=(8,))
    deep, _ = _first_perfect_step(deep_config, 200)
    assert deep is not None and deep > squares
    assert parameter_count(deep_config.layer_sizes) > 10 * parameter_count(base.layer_sizes)


def _layer_rows(trainer: Trainer) -> list[np.ndarray]:
    weights, biases = unflatten(trainer.run.values(), trainer.config.layer_sizes)
    return [np.column_stack([w, b]) for w, b in zip(weights, biases)]


@pytest.mark.parametrize("seed", SEEDS)
def test_start_at_zero_lesson_claims(seed: int) -> None:
    zeros = lesson("start-at-zero").setup.config.with_changes(seed=seed)
    assert zeros.init == "zeros"
    # 1-2. from zero: only the output bias learns; every weight and its gradient stay 0
    trainer = Trainer(zeros)
    trainer.run_steps(200)
    first, last = trainer.history[0], trainer.history[-1]
    assert last.loss >= 0.9 * first.loss and last.accuracy <= 0.6
    names = trainer.param_names
    moved = [n for n, v in zip(names, trainer.run.values()) if v != 0.0]
    assert moved == [names[-1]]  # the output neuron's bias
    assert all(g == 0.0 for n, g in zip(names, trainer.run.grads()) if n != names[-1])
    # 3. constant 0.5: it learns, but each layer's neurons stay copies of each other, and
    # the boundary is one cut that misses the moons' tips
    constant = Trainer(zeros.with_changes(init="constant"))
    assert constant.config.init_scale == 0.5
    constant.run_steps(200)
    assert constant.history[-1].loss < 0.5 * constant.history[0].loss
    assert all(np.all(rows == rows[0]) for rows in _layer_rows(constant))
    assert constant.history[-1].accuracy <= 0.9
    # 4. Xavier, scale 1: the neurons differ and the boundary wraps around both moons
    xavier = Trainer(zeros.with_changes(init="xavier", init_scale=1.0))
    xavier.run_steps(200)
    assert not np.all(_layer_rows(xavier)[0] == _layer_rows(xavier)[0][0])
    assert xavier.history[-1].accuracy >= 0.97
