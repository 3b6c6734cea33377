"""The Build workspace: write the engine, Ctrl+Enter checks it off the UI thread, the first
failing case and its named mistake show, the learner's graph is drawn yours vs expected,
the code per stage survives a restart, stages open one after another."""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from gradbox.build import sandbox
from gradbox.build.report import CaseGraph, CaseResult, CheckReport, GraphNode, StageResult
from gradbox.build.stages import load_stages
from gradbox.views.build import BUILD_TAB
from gradbox.views.build.case_graph import CaseGraphView
from gradbox.views.build.checking import sandbox_start
from gradbox.views.build.panel import BuildPanel
from qt_waits import settle

STAGES = load_stages()
CORRECT = (Path(__file__).parent / "build_solutions" / "correct.py").read_text("utf-8")

# a * a with `grad = ...`: a's gradient is 3, where it should be 6; the product agrees.
A_TIMES_A = CaseGraph((GraphNode(0, "", "a", (), 3.0, 3.0, 3.0, 6.0),
                       GraphNode(1, "*", "b", (0, 0), 9.0, 1.0, 9.0, 1.0)), first_wrong=0)


def assign_report(stage: int) -> CheckReport:
    failing = CaseResult("a * a", False, "a = Value(3.0)\nb = a * a\nb.backward()",
                         "a.grad is 3.0; it should be 6.0", "assign-not-accumulate", line=12,
                         output="hello from your code\n", graph=A_TIMES_A,
                         playground="a = 3.0\nb = a * a", playground_variant="assign")
    passing = tuple(StageResult(s.number, s.title, True, (CaseResult("ok", True, "", ""),))
                    for s in STAGES if s.number < stage)
    return CheckReport(False, (*passing, StageResult(stage, STAGES[stage].title, False, (
        CaseResult("a + a", True, "", ""), failing))))


def passing_report(stage: int) -> CheckReport:
    return CheckReport(True, tuple(StageResult(s.number, s.title, True,
                                               (CaseResult("ok", True, "", ""),))
                                   for s in STAGES if s.number <= stage))


class FakeCheck:
    """The sandbox's handle as the panel sees it: answers after `polls` polls."""

    def __init__(self, report: CheckReport | None, polls: int = 2) -> None:
        self.report, self.polls, self.cancelled = report, polls, False

    def poll(self) -> CheckReport | None:
        self.polls -= 1
        return self.report if self.polls <= 0 else None

    def cancel(self) -> None:
        self.cancelled = True


class FakeSandbox:
    """Judges the source the way the real checks would for these two engines."""

    def __init__(self) -> None:
        self.sources: list[tuple[str, int]] = []
        self.handles: list[FakeCheck] = []

    def __call__(self, source: str, stage: int) -> FakeCheck:
        self.sources.append((source, stage))
        report = assign_report(stage) if "grad = " in source else passing_report(stage)
        self.handles.append(FakeCheck(report))
        return self.handles[-1]


def _panel(qtbot, show_widget, tmp_path, sandbox=None, settings=None):  # type: ignore[no-untyped-def]
    panel = BuildPanel(STAGES, tmp_path / "build", settings, sandbox or FakeSandbox())
    return show_widget(panel, 1000, 650)


def _type(qtbot, panel: BuildPanel, text: str) -> None:  # type: ignore[no-untyped-def]
    panel.editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel.editor)
    panel.editor.moveCursor(QTextCursor.MoveOperation.End)
    for k, line in enumerate(text.split("\n")):
        if k:
            QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return)
        QTest.keyClicks(QApplication.focusWidget(), line)


def test_the_workspace_shortcut_shows_the_build_workspace(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window(size=(1024, 700))
    QTest.keyClick(win, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    settle()
    assert win.tabs.currentWidget().objectName() == BUILD_TAB
    assert win.workspaces.current is not None and win.workspaces.current.key == "build"
    assert not any(dock.isVisible() for dock in win.docks.values())
    assert win.size().toTuple() == (1024, 700)  # the page fits the smallest window
    assert win.build.editor.isVisible() and win.build.check_button.isVisible()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.build.editor)
    before = win.build.editor.toPlainText()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Space)  # a space, not a Step
    assert "..." in before and win.build.editor.toPlainText() == before.replace("...", " ", 1)


def test_open_in_playground_shows_gradboxs_engine_making_the_same_mistake(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    win = open_window(size=(1024, 700))
    win.workspaces.switch("build")
    win.build.show_report(assign_report(3))
    button = win.build.feedback.playground_button
    assert button.isVisible()
    button.click()
    settle()
    assert win.workspaces.current is not None and win.workspaces.current.key == "playground"
    assert win.tabs.currentWidget() is win.playground_page()
    assert win.playground.expression.text() == "a = 3.0; b = a * a"
    assert win.playground.current_variant() == "assign"


def test_typing_a_classic_mistake_and_ctrl_enter_name_it(qtbot, show_widget, tmp_path  # type: ignore[no-untyped-def]
                                                         ) -> None:
    """The real sandbox: tanh's slope typed from the input, as the article warns."""
    panel = _panel(qtbot, show_widget, tmp_path, sandbox_start)
    panel.unlock_all.setChecked(True)
    panel.go_to(4)
    panel.editor.setPlainText(CORRECT)
    panel.editor.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is panel.editor)
    panel.editor.setTextCursor(panel.editor.document().find("t * t"))
    QTest.keyClicks(QApplication.focusWidget(), "self.data * self.data")
    assert "(1 - self.data * self.data) * out.grad" in panel.editor.toPlainText()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return,
                   Qt.KeyboardModifier.ControlModifier)
    assert panel.checker.is_running() and panel.busy.isVisible()
    qtbot.waitUntil(lambda: not panel.checker.is_running(), timeout=30_000)
    feedback = panel.feedback
    assert feedback.status.text().startswith("Stage 4")
    assert feedback.case is not None and feedback.case.mistake == "tanh-slope-from-input"
    assert "from the input" in feedback.mistake_shown()
    assert "tanh" in feedback.code.toPlainText()
    assert panel.graph.wrong  # its graph drawn, the wrong node found


RUNAWAY = {  # learner code that never ends well, and what the feedback must say
    "an endless loop": ("    while True:\n        pass\n", "stopped after 2 s"),
    "runaway recursion": ("    return numerical_derivative(f, x, h)\n", "RecursionError"),
    "a memory blow-up": ("    keep = bytearray(4 * 10**9)\n    return 0.0\n", "MemoryError"),
}


@pytest.mark.parametrize("what", list(RUNAWAY))
def test_runaway_learner_code_ends_in_a_message_and_the_window_answers(  # type: ignore[no-untyped-def]
        qtbot, show_widget, tmp_path, what: str) -> None:
    def start(source: str, stage: int):  # type: ignore[no-untyped-def]
        return sandbox.start_check(source, up_to_stage=stage, timeout=2.0)

    body, said = RUNAWAY[what]
    panel = _panel(qtbot, show_widget, tmp_path, start)
    panel.editor.setPlainText("def numerical_derivative(f, x, h=1e-6):\n" + body)
    ticks = []
    timer = QTimer(interval=50)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start()
    started = time.monotonic()
    panel.check()
    assert panel.cancel_button.isVisible()
    qtbot.waitUntil(lambda: not panel.checker.is_running(), timeout=20_000)
    timer.stop()
    assert said in panel.feedback.mistake_shown(), panel.feedback.mistake_shown()
    assert panel.editor.marked_line() == 2  # the line it was at
    # the event loop ran all along: no gap between ticks near the check's length
    ended = time.monotonic()
    gaps = [b - a for a, b in itertools.pairwise([started, *ticks, ended])]
    assert max(gaps) < 1.0, max(gaps)
    assert panel.check_button.isEnabled() and not panel.busy.isVisible()


def test_cancel_ends_a_check_at_once(qtbot, show_widget, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, show_widget, tmp_path, sandbox_start)
    panel.editor.setPlainText("import time\ntime.sleep(60)\n")
    panel.check()
    qtbot.waitUntil(lambda: panel.cancel_button.isVisible())
    panel.cancel_button.click()
    assert not panel.checker.is_running() and panel.check_button.isEnabled()
    assert "cancelled" in panel.feedback.status.text()


def test_ctrl_enter_shows_the_first_failing_case_its_mistake_and_the_prints(  # type: ignore[no-untyped-def]
        qtbot, show_widget, tmp_path) -> None:
    sandbox = FakeSandbox()
    panel = _panel(qtbot, show_widget, tmp_path, sandbox, )
    panel.unlock_all.setChecked(True)
    panel.go_to(3)
    _type(qtbot, panel, "\nx.grad = out.grad")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Return,
                   Qt.KeyboardModifier.ControlModifier)
    assert sandbox.sources and sandbox.sources[-1][1] == 3
    assert sandbox.sources[-1][0].endswith("x.grad = out.grad")
    assert panel.busy.isVisible() and panel.cancel_button.isVisible()  # while it runs
    qtbot.waitUntil(lambda: not panel.checker.is_running())
    feedback = panel.feedback
    assert feedback.case_title.text() == "Case “a * a”, the code that ran:"  # the first only
    assert feedback.code.toPlainText() == "a = Value(3.0)\nb = a * a\nb.backward()"
    assert "assigns (`=`)" in feedback.mistake_shown()
    assert "gradients accumulate" in feedback.mistake_shown()
    assert feedback.playground_button.isVisibleTo(feedback)
    assert feedback.output.toPlainText() == "hello from your code\n"  # prints apart
    assert panel.editor.marked_line() == 12
    assert not panel.busy.isVisible()
    with qtbot.waitSignal(panel.open_playground) as opened:
        feedback.playground_button.click()
    assert opened.args[:3] == ["a = 3.0; b = a * a", {}, "assign"]


def test_the_failing_cases_graph_shows_yours_vs_expected_and_marks_the_first_wrong(  # type: ignore[no-untyped-def]
        qtbot, show_widget) -> None:
    view = show_widget(CaseGraphView(), 700, 450)
    case = CaseGraph((
        GraphNode(0, "", "a", (), 2.0, 1.0, 2.0, 5.0),
        GraphNode(1, "", "b", (), 3.0, 2.0, 3.0, 2.0),
        GraphNode(2, "*", "c", (0, 1), 6.0, 1.0, 6.0, 1.0),
        GraphNode(3, "+", "d", (2, 0), 8.0, 1.0, 8.0, 1.0)), first_wrong=0)
    view.set_case(case, "a reused")
    ops = view.view.operations
    assert len(ops.nodes) == 4
    # each node: the learner's numbers in its box, the expected ones under them
    assert [n.grad_text for n in ops.nodes] == ["grad 1", "grad 2", "grad 1", "grad 1"]
    assert view.texts == {0: "want grad 5", 1: "✓ want grad 2", 2: "✓ want grad 1",
                          3: "✓ want grad 1"}
    assert view.wrong == [0]
    assert "look at “a” first" in view.caption.text()
    tag = [m for m in view.marks if getattr(m, "text", lambda: "")() == "look here first"]
    assert tag and ops.nodes[0].sceneBoundingRect().intersects(tag[0].sceneBoundingRect()
                                                               .adjusted(0, 0, 0, 30))
    view.set_case(None)
    assert view.view.is_empty() and not view.marks


def test_a_graph_too_wide_to_fit_is_shown_where_it_is_first_wrong(qtbot, show_widget  # type: ignore[no-untyped-def]
                                                                  ) -> None:
    view = show_widget(CaseGraphView(), 300, 250)
    nodes = [GraphNode(0, "", "a", (), 1.0, 9.0, 1.0, 8.0)]
    for k in range(1, 12):  # a long chain: its output, on the right, is framed first
        nodes.append(GraphNode(k, "+", f"n{k}", (k - 1,), 1.0, 1.0, 1.0, 1.0))
    view.set_case(CaseGraph(tuple(nodes), first_wrong=0), "a chain")
    shown = view.view.mapToScene(view.view.viewport().rect()).boundingRect()
    assert shown.contains(view.view.node_scene_pos(0))


def test_the_panel_draws_the_failing_cases_graph_after_a_check(qtbot, show_widget, tmp_path  # type: ignore[no-untyped-def]
                                                              ) -> None:
    panel = _panel(qtbot, show_widget, tmp_path)
    panel.unlock_all.setChecked(True)
    panel.go_to(3)
    panel.editor.setPlainText("a.grad = 1")
    panel.check()
    qtbot.waitUntil(lambda: panel.graph.case is A_TIMES_A)
    assert panel.graph.wrong == [0] and panel.feedback.table.rowCount() == 2
    assert "look here" in panel.feedback.table.item(1, 0).text()  # a, last in backward


def test_the_code_of_each_stage_survives_a_restart(qtbot, show_widget, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    panel = _panel(qtbot, show_widget, tmp_path, settings=settings)
    assert not settings.allKeys()  # opening writes nothing
    panel.unlock_all.setChecked(True)
    panel.go_to(1)
    _type(qtbot, panel, "\n# mine, stage 1")
    one = panel.editor.toPlainText()
    panel.go_to(2)  # the engine grows: stage 1's code, stage 2's starter at its end
    assert panel.editor.toPlainText().startswith(one)
    assert STAGES[2].starter.strip() in panel.editor.toPlainText()
    _type(qtbot, panel, "\n# mine, stage 2")
    two = panel.editor.toPlainText()
    assert panel.flush()  # what the window does as it closes
    panel.close()
    again = _panel(qtbot, show_widget, tmp_path, settings=settings)
    assert again.stage.number == 2 and again.editor.toPlainText() == two
    again.go_to(1)
    assert again.editor.toPlainText() == one


def test_passing_a_stage_opens_the_next(qtbot, show_widget, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, show_widget, tmp_path)
    box = panel.stage_box
    assert not box.model().item(1).isEnabled()  # closed until stage 0 passes
    panel.go_to(1)
    assert panel.stage.number == 0
    panel.editor.setPlainText("def numerical_derivative(f, x, h=1e-6):\n    return 0\n")
    panel.check()
    qtbot.waitUntil(lambda: box.model().item(1).isEnabled())
    assert "passes" in panel.feedback.status.text()
    assert box.itemText(0) == f"✓ {STAGES[0].title}"  # passed, said in the list
    assert panel.feedback.next_button.isVisible()
    panel.feedback.next_button.click()
    assert panel.stage.number == 1 and panel.text.title.text() == STAGES[1].title


def test_the_predict_box_holds_the_answer_until_predicted(qtbot, show_widget, tmp_path  # type: ignore[no-untyped-def]
                                                         ) -> None:
    panel = _panel(qtbot, show_widget, tmp_path)
    panel.unlock_all.setChecked(True)
    panel.go_to(6)  # accumulation: "predict a.grad first"
    assert panel.text.predict_box.isVisible()
    panel.editor.setPlainText("self.grad = out.grad")
    panel.check()
    qtbot.waitUntil(lambda: not panel.checker.is_running())
    assert panel.feedback.case is None and "Predict" in panel.feedback.status.text()
    panel.text.predict_entry.setFocus()
    QTest.keyClicks(panel.text.predict_entry, "1")
    QTest.keyClick(panel.text.predict_entry, Qt.Key.Key_Return)
    assert "You said 1; gradbox's engine gives 2" in panel.text.predict_answer.text()
    assert panel.feedback.case is not None and panel.feedback.case.name == "a * a"


def test_hints_open_one_at_a_time(qtbot, show_widget, tmp_path) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, show_widget, tmp_path)
    hints = STAGES[0].hints
    assert panel.text.hint_texts() == []
    panel.text.hint_button.click()
    assert panel.text.hint_texts() == [f"Hint 1: {hints[0]}"]
    for _ in hints:
        panel.text.hint_button.click()
    assert len(panel.text.hint_texts()) == len(hints)
    assert not panel.text.hint_button.isEnabled()


def test_a_watched_engine_is_checked_after_each_atomic_save(qtbot, show_widget, tmp_path  # type: ignore[no-untyped-def]
                                                            ) -> None:
    sandbox = FakeSandbox()
    panel = _panel(qtbot, show_widget, tmp_path, sandbox)
    engine = tmp_path / "mine" / "engine.py"
    engine.parent.mkdir()
    engine.write_text("# mine\nself.grad = out.grad\n")
    panel.watch_file(engine)
    assert sandbox.sources[-1] == ("# mine\nself.grad = out.grad\n", 0)
    assert panel.editor.isReadOnly() and panel.watch_label.isVisible()
    qtbot.waitUntil(lambda: panel.feedback.case is not None)
    assert panel.feedback.case.mistake == "assign-not-accumulate"
    swap = engine.with_name(".engine.py.swp")  # as an editor saves: a new file renamed over
    swap.write_text("# mine\nself.grad += out.grad\n")
    os.replace(swap, engine)
    qtbot.waitUntil(lambda: sandbox.sources[-1][0] == "# mine\nself.grad += out.grad\n",
                    timeout=5000)
    qtbot.waitUntil(lambda: "passes" in panel.feedback.status.text())
    panel.stop_watching()
    assert not panel.editor.isReadOnly()
    assert "mine" not in panel.editor.toPlainText()  # the stage's own code is back


def test_the_learners_code_survives_closing_the_window_and_undo_stays_the_editors(  # type: ignore[no-untyped-def]
        qtbot, open_window, tmp_path) -> None:
    settings = QSettings(str(tmp_path / "window.ini"), QSettings.Format.IniFormat)
    autosave = tmp_path / "data" / "autosave.gradbox"
    autosave.parent.mkdir()
    win = open_window(size=(1024, 700), settings=settings, autosave_path=autosave)
    win.workspaces.switch("build")
    _type(qtbot, win.build, "\n# kept")
    typed = win.build.editor.toPlainText()
    win.build.editor.document().clearUndoRedoStacks()  # what Undo takes back: the X alone
    QTest.keyClicks(QApplication.focusWidget(), "X")
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert win.build.editor.toPlainText() == typed  # the editor's own Undo, not the run's
    win.close()  # no wait for the debounce: closing writes what is kept
    assert (tmp_path / "data" / "build" / "stage-00.py").read_text() == typed
    again = open_window(size=(1024, 700), settings=settings, autosave_path=autosave)
    assert again.build.editor.toPlainText() == typed


class FakeTraining:
    """A training run as the view sees it: `poll` hands out what 'arrived' so far."""

    def __init__(self, progresses: list) -> None:  # type: ignore[type-arg]
        self.progresses, self.cancelled = progresses, False

    def poll(self):  # type: ignore[no-untyped-def]
        return self.progresses.pop(0) if len(self.progresses) > 1 else self.progresses[0]

    def cancel(self) -> None:
        self.cancelled = True


def test_training_on_your_engine_draws_both_curves_and_marks_where_they_part(  # type: ignore[no-untyped-def]
        qtbot, show_widget) -> None:
    from gradbox.build.train import TrainPoint, TrainProgress
    from gradbox.views.build.training import TrainOnYours

    ghost = tuple(TrainPoint(k, 1.0 / (k + 1), 0.5) for k in range(6))
    yours = tuple(TrainPoint(k, (1.0 if k < 2 else 3.0) / (k + 1), 0.5, 0.4)
                  for k in range(6))
    runs = []

    def start(source: str, setup):  # type: ignore[no-untyped-def]
        runs.append(FakeTraining([
            TrainProgress(ghost, (), None, False),
            TrainProgress(ghost, yours[:3], 0.4, False, parted_at=2),
            TrainProgress(ghost, yours, 0.4, True, parted_at=2)]))
        return runs[-1]

    view = show_widget(TrainOnYours(lambda: "class Value: ...", start=start), 600, 450)
    assert "a step" in view.estimate.text()  # how slow, said before it starts
    view.start_button.click()
    assert view.stop_button.isEnabled() and not view.start_button.isEnabled()
    qtbot.waitUntil(lambda: not view.is_running(), timeout=5000)
    assert list(view.yours_curve.getData()[1]) == [p.loss for p in yours]
    assert list(view.ghost_curve.getData()[1]) == [p.loss for p in ghost]
    assert view.parting.isVisible() and view.parting.value() == 2
    assert "parts from gradbox's at step 2" in view.status.text()
    assert view.start_button.isEnabled()


def test_what_the_learners_code_and_the_files_say_is_shown_as_plain_text(  # type: ignore[no-untyped-def]
        qtbot, show_widget, tmp_path) -> None:
    from dataclasses import replace

    from PySide6.QtWidgets import QLabel

    markup = "<b>bold</b> <img src='x.png'> <a href='http://x'>link</a>"
    stages = [replace(STAGES[0], title=f"0. {markup}", text=markup, hints=(markup,))]
    panel = show_widget(BuildPanel(stages, tmp_path / "build", None, FakeSandbox()), 1000, 650)
    graph = CaseGraph((GraphNode(0, "", markup, (), 1.0, 1.0, 1.0, 2.0),
                       GraphNode(1, "*", "out", (0,), 1.0, 1.0, 1.0, 1.0)), first_wrong=0)
    case = CaseResult(markup, False, markup, markup, "assign-not-accumulate",
                      output=markup, graph=graph)
    panel.text.hint_button.click()
    panel.show_report(CheckReport(False, (StageResult(0, markup, False, (case,)),)))
    shown = [label for label in panel.findChildren(QLabel) if markup in label.text()]
    assert len(shown) >= 5  # title, passage, hint, the case's words, the graph's caption
    assert all(label.textFormat() == Qt.TextFormat.PlainText for label in shown)
    assert panel.feedback.code.toPlainText() == markup  # a plain-text editor
    assert panel.feedback.output.toPlainText() == markup
    assert panel.feedback.table.item(1, 0).text().startswith(markup)
    assert "&lt;b&gt;" in panel.graph.view.operations.nodes[0].toolTip()  # escaped
