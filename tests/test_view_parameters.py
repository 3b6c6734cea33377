"""The parameters view shows each parameter's value and gradient and one parameter's history."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.state import ParameterEdit
from gradbox.training.trainer import Trainer
from gradbox.views.panels.parameter_table import GHOST, GRAD, NAME, VALUE, ParameterTableModel
from gradbox.views.panels.parameters import EDIT_HINT, ParametersView
from gradbox.views.panels.typed import parse_number as parse_weight
from gradbox.views.plots.boundary import DecisionBoundaryView
from gradbox.views.plots.heatmap import output_colours
from gradbox.views.plots.plotting import NEGATIVE, POSITIVE, weight

# Widgets on an InProcessPort: the session steps on the UI thread, no training process.
pytestmark = pytest.mark.in_process


@pytest.fixture
def view(controller, show_widget):  # type: ignore[no-untyped-def]
    return show_widget(ParametersView(controller))


def _shown(view: ParametersView, column: int) -> dict[str, str]:
    """What the table shows in a column, by parameter name, in the table's own order."""
    proxy = view.proxy
    return {proxy.index(r, NAME).data(): proxy.index(r, column).data()
            for r in range(proxy.rowCount())}


def _first_gradient_over_steps(controller, view: ParametersView, step_session,  # type: ignore[no-untyped-def]
                               n: int) -> list[float]:
    """The first parameter's gradient as the table shows it after each of n steps."""
    name = controller.snapshot.param_names[0]
    shown = []
    for _ in range(n):
        step_session(controller)
        shown.append(float(_shown(view, GRAD)[name]))
    return shown


def _click_row(qtbot, view: ParametersView, row: int) -> None:  # type: ignore[no-untyped-def]
    rect = view.table.visualRect(view.proxy.index(row, NAME))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def _click_header(qtbot, view: ParametersView, column: int) -> None:  # type: ignore[no-untyped-def]
    header = view.table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(x, header.height() // 2))


def test_table_shows_the_snapshots_values_and_gradients(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller, 2)
    snapshot = controller.snapshot
    values, grads = _shown(view, VALUE), _shown(view, GRAD)
    assert list(values) == list(snapshot.param_names)  # every parameter, network order
    for i, name in enumerate(snapshot.param_names):
        assert values[name] == f"{snapshot.params[i]:+.4g}"
        assert grads[name] == f"{snapshot.grads[i]:+.4g}"
    assert str(len(snapshot.param_names)) in view.summary.text()


def test_forgotten_zero_grad_makes_the_shown_gradient_grow(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    # The weights stay put: only the accumulation changes.
    after_snapshot(controller, controller.send, Session.set_lr, 0.0)
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    shown = _first_gradient_over_steps(controller, view, step_session, 4)
    assert shown[0] != 0
    # Each step adds the same gradient again: 1x, 2x, 3x, 4x.
    np.testing.assert_allclose(shown, [shown[0] * k for k in (1, 2, 3, 4)], rtol=1e-3)
    assert view.warning.isVisible()
    assert "the sum of 4 backward passes" in view.warning.text()


def test_normal_mode_keeps_the_shown_gradient_bounded(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    after_snapshot(controller, controller.send, Session.set_lr, 0.0)
    shown = _first_gradient_over_steps(controller, view, step_session, 4)
    assert shown[0] != 0
    np.testing.assert_allclose(shown, [shown[0]] * 4, rtol=1e-3)
    assert not view.warning.isVisible()


def test_ghost_column_shows_the_correct_runs_gradient(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    assert view.table.isColumnHidden(GHOST)
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    after_snapshot(controller, controller.send, Session.set_ghost, True)
    step_session(controller, 3)
    assert not view.table.isColumnHidden(GHOST)
    snapshot = controller.snapshot
    ghost, grads = _shown(view, GHOST), _shown(view, GRAD)
    for i, name in enumerate(snapshot.param_names):
        assert ghost[name] == f"{snapshot.ghost_grads[i]:+.4g}"
    # The pile-up beside the correct value: the broken gradients are larger overall.
    broken = np.abs([float(grads[n]) for n in snapshot.param_names]).sum()
    correct = np.abs([float(ghost[n]) for n in snapshot.param_names]).sum()
    assert broken > correct


def test_selecting_a_row_selects_the_parameter(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(controller.parameter_selected) as blocker:
        _click_row(qtbot, view, 4)
    name = controller.snapshot.param_names[4]
    assert blocker.args == [name]
    assert controller.selected_parameter == name
    assert view.selected_name() == name


def test_controller_selection_selects_the_row_once(controller, view) -> None:  # type: ignore[no-untyped-def]
    name = controller.snapshot.param_names[9]
    emitted: list[str] = []
    controller.parameter_selected.connect(emitted.append)
    controller.select_parameter(name)
    assert view.selected_name() == name
    assert emitted == [name]  # no echo from the table back to the controller
    rows = view.table.selectionModel().selectedRows()
    assert [view.model.parameter_at(view.proxy.mapToSource(r).row()) for r in rows] == [9]


def test_sorting_by_gradient_orders_rows_by_size(qtbot, controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller)
    _click_header(qtbot, view, GRAD)
    first = [abs(float(g)) for g in _shown(view, GRAD).values()]
    _click_header(qtbot, view, GRAD)
    second = [abs(float(g)) for g in _shown(view, GRAD).values()]
    ascending, descending = sorted(first), sorted(first, reverse=True)
    assert {tuple(first), tuple(second)} == {tuple(ascending), tuple(descending)}
    assert first != second


def test_updates_keep_sort_and_selection(qtbot, controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller)
    _click_header(qtbot, view, GRAD)
    _click_row(qtbot, view, 2)
    name = view.selected_name()
    header = view.table.horizontalHeader()
    order = header.sortIndicatorOrder()
    with qtbot.assertNotEmitted(view.model.modelReset):
        step_session(controller, 3)
    assert view.selected_name() == name
    assert header.sortIndicatorSection() == GRAD and header.sortIndicatorOrder() == order
    magnitudes = [abs(float(g)) for g in _shown(view, GRAD).values()]
    assert magnitudes in (sorted(magnitudes), sorted(magnitudes, reverse=True))


def test_history_plot_follows_the_selected_parameter(qtbot, controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    # Before any selection there is only a hint, not an empty plot.
    assert view.history.isHidden() and "Select a row" in view.history_title.text()
    assert "no gradients yet" in view.summary.text()
    step_session(controller, 3)
    _click_row(qtbot, view, 5)
    assert not view.history.isHidden()
    # Both curves clip to their view, which ranges itself at the next paint: wait for it.
    qtbot.waitUntil(lambda: len(view.history_data()[1]) == 4
                    and len(view.history_data()[3]) == 3)
    steps, values, grad_steps, grads = view.history_data()
    snapshot = controller.snapshot
    np.testing.assert_array_equal(steps, [0, 1, 2, 3])
    np.testing.assert_array_equal(grad_steps, [1, 2, 3])
    assert values[-1] == snapshot.params[5] and grads[-1] == snapshot.grads[5]
    assert snapshot.param_names[5] in view.history_title.text()
    # A step extends it.
    step_session(controller)
    qtbot.waitUntil(lambda: len(view.history_data()[1]) == 5)
    assert view.history_data()[1][-1] == controller.snapshot.params[5]


def test_history_fetch_does_not_feed_itself(qtbot, controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    # The history is fetched with a read-only query: no snapshot follows, nothing redraws.
    step_session(controller)
    snapshots: list[object] = []
    controller.snapshot_changed.connect(snapshots.append)
    _click_row(qtbot, view, 1)
    qtbot.waitUntil(lambda: len(view.history_data()[1]) == 2)
    with qtbot.assertNotEmitted(controller.snapshot_changed, wait=500):
        pass
    assert snapshots == []


def test_filter_by_name(qtbot, view) -> None:  # type: ignore[no-untyped-def]
    qtbot.keyClicks(view.filter, "layers.2")
    names = list(_shown(view, VALUE))
    assert names and all("layers.2" in n for n in names)
    assert len(names) == sum("layers.2" in n for n in view.model.names)


def test_new_network_replaces_the_rows(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    config = controller.snapshot.config.with_changes(hidden=(3,))
    with qtbot.waitSignal(view.model.modelReset):
        controller.apply_config(config)
    assert view.proxy.rowCount() == (2 + 1) * 3 + (3 + 1) * 1


def test_gradient_bars_are_coloured_by_sign(controller, view, step_session) -> None:  # type: ignore[no-untyped-def]
    step_session(controller)
    grads = controller.snapshot.grads
    for i, colour in ((int(np.argmax(grads)), POSITIVE), (int(np.argmin(grads)), NEGATIVE)):
        index = view.proxy.mapFromSource(view.model.index(view.model.row_of(i), GRAD))
        view.table.scrollTo(index)
        image = view.table.viewport().grab().toImage()
        rect = view.table.visualRect(index)
        colours = {image.pixelColor(x, rect.center().y()).name()
                   for x in range(rect.left(), rect.right())}
        assert colour.name() in colours


def test_export_csv(controller, view, tmp_path, step_session, after_snapshot) -> None:  # type: ignore[no-untyped-def]
    after_snapshot(controller, controller.send, Session.set_ghost, True)
    step_session(controller)
    path = tmp_path / "params.csv"
    view.export_csv(path)
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    snapshot = controller.snapshot
    assert [r["name"] for r in rows] == list(snapshot.param_names)
    np.testing.assert_array_equal([float(r["value"]) for r in rows], snapshot.params)
    np.testing.assert_array_equal([float(r["grad"]) for r in rows], snapshot.grads)
    np.testing.assert_array_equal([float(r["ghost_grad"]) for r in rows], snapshot.ghost_grads)


def test_controls_are_labelled(view) -> None:  # type: ignore[no-untyped-def]
    for widget in (view.filter, view.table, view.history, view.summary, view.edit_status):
        assert widget.accessibleName()
        assert widget.toolTip()


def test_sorted_updates_of_a_big_network_stay_cheap(  # type: ignore[no-untyped-def]
        qtbot, make_session, show_widget) -> None:
    """Re-sorting 8,577 rows by |gradient| after a step must not ask Python per comparison."""
    session = make_session(hidden=(64, 64, 64), n_samples=10)
    widget = show_widget(ParametersView(session))
    widget.table.sortByColumn(GRAD, Qt.SortOrder.DescendingOrder)
    calls = 0
    original = ParameterTableModel.data

    def counting(self, index, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return original(self, index, role)

    ParameterTableModel.data = counting  # type: ignore[method-assign]
    try:
        # A big network's step takes a while: more than waitSignal's default 5 s on CI.
        with qtbot.waitSignal(session.snapshot_changed, timeout=20000):
            session.step()
        widget.table.viewport().repaint()
    finally:
        ParameterTableModel.data = original  # type: ignore[method-assign]
    n = len(session.snapshot.param_names)
    assert n == 8577
    # Painting the visible rows asks a few hundred times; a proxy sort would ask
    # ~2 n log n = 230,000 times.
    assert calls < n
    magnitudes = [abs(float(g)) for g in _shown(widget, GRAD).values()]
    assert magnitudes == sorted(magnitudes, reverse=True)


@pytest.mark.parametrize("column", [NAME, VALUE, GRAD])
def test_a_sorted_table_announces_exactly_the_rows_whose_numbers_moved(column: int) -> None:
    """After a snapshot in which a few weights moved, the model tells the view about
    those rows (where the sort put them) and no others; its rows stay sorted."""
    first = Trainer(TrainingConfig(hidden=(8, 8), n_samples=10, seed=5)).snapshot()
    model = ParameterTableModel()
    model.set_snapshot(first)
    model.sort(column, Qt.SortOrder.DescendingOrder)
    announced: set[tuple[int, int]] = set()
    model.dataChanged.connect(lambda a, b: announced.update(
        (row, c) for row in range(a.row(), b.row() + 1)
        for c in range(a.column(), b.column() + 1)))
    moved = [3, 17, 40, 41, 90]
    params = np.array(first.params)
    params[moved] += 0.125
    model.set_snapshot(replace(first, params=params))
    assert {row for row, c in announced if c == VALUE} == {model.row_of(i) for i in moved}
    assert not {c for _row, c in announced} - {VALUE}
    assert model.names is first.param_names


def test_a_step_announces_the_rows_on_screen_and_a_row_scrolled_to_shows_its_numbers(  # type: ignore[no-untyped-def]
        qtbot, make_session, show_widget, step_session) -> None:
    """A step tells the table about the rows it shows, not the thousands below (the
    filter proxy sorted every row it was told about: ~13 ms a signal for a million);
    a row scrolled into sight afterwards shows that step's numbers."""
    session = make_session(hidden=(32, 32), n_samples=10)
    widget = show_widget(ParametersView(session))
    announced: list[int] = []
    widget.model.dataChanged.connect(
        lambda a, b: announced.extend(range(a.row(), b.row() + 1)))
    step_session(session)
    last_shown = widget.table.rowAt(widget.table.viewport().height() - 1)
    n = widget.proxy.rowCount()
    assert announced and 0 < last_shown < n - 1
    assert max(announced) <= last_shown
    widget.table.scrollToBottom()
    name = session.snapshot.param_names[-1]
    row = widget.proxy.index(n - 1, NAME)
    assert row.data() == name
    assert float(row.siblingAtColumn(VALUE).data()) == pytest.approx(
        float(session.snapshot.params[-1]), rel=1e-3, abs=1e-3)
    # Scrolled there, the next step tells the table about the rows now in sight.
    announced.clear()
    step_session(session)
    assert announced and min(announced) > last_shown


# --- editing a weight by hand ----------------------------------------------------------------
def _open_value_editor(qtbot, view: ParametersView, row: int, column: int = VALUE) -> QLineEdit:  # type: ignore[no-untyped-def]
    """Double-click a cell of `row` and return the value editor that opens."""
    index = view.proxy.index(row, column)
    view.table.scrollTo(index)
    pos = view.table.visualRect(index).center()
    # A double-click is a click followed by a double-click event, as a real mouse sends.
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    qtbot.waitUntil(lambda: view.table.state() == QAbstractItemView.State.EditingState)
    editors = [e for e in view.table.viewport().findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1
    return editors[0]


def _type_in(qtbot, editor: QLineEdit, text: str) -> None:  # type: ignore[no-untyped-def]
    editor.selectAll()
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def test_double_click_type_enter_edits_the_weight(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session) -> None:
    step_session(controller, 3)
    i = 4  # layers.0.neurons.1.w.0 (the table starts in network order)
    name = controller.snapshot.param_names[i]
    old = float(controller.snapshot.params[i])
    editor = _open_value_editor(qtbot, view, i)
    # The editor starts from the value (six digits fit), all selected: typing replaces it.
    assert editor.text() == f"{old:.6g}" and editor.selectedText() == editor.text()
    assert editor.accessibleName() == f"New value of {name}" and editor.toolTip()
    _type_in(qtbot, editor, "2.0")
    qtbot.waitUntil(lambda: len(controller.snapshot.edits) == 1)
    snapshot = controller.snapshot
    assert snapshot.params[i] == 2.0
    assert snapshot.edits == (ParameterEdit(3, name, old, 2.0),)
    # Everything re-renders from that snapshot: the cell and the line that explains it.
    assert _shown(view, VALUE)[name] == "+2"
    assert f"{name}: {weight(old)} → 2.0" in view.edit_status.text()
    assert "after step 3" in view.edit_status.text()


def test_double_click_on_the_name_edits_the_value_too(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    editor = _open_value_editor(qtbot, view, 2, column=NAME)
    assert view.table.currentIndex().column() == VALUE
    assert editor.accessibleName() == f"New value of {controller.snapshot.param_names[2]}"


def test_an_edit_changes_the_boundary(  # type: ignore[no-untyped-def]
        qtbot, controller, view, show_widget, step_session) -> None:
    boundary = show_widget(DecisionBoundaryView(controller))
    step_session(controller, 2)
    before = boundary.image.image.copy()
    # The output neuron's bias: a large one pushes the whole plane to one class.
    row = len(controller.snapshot.param_names) - 1
    _type_in(qtbot, _open_value_editor(qtbot, view, row), "5")
    qtbot.waitUntil(lambda: controller.snapshot.params[row] == 5.0)
    snapshot = controller.snapshot
    expected = output_colours(snapshot.predict(boundary.grid_points(), dtype=np.float32),
                              snapshot.config.effective_loss)
    n = boundary.grid_size
    np.testing.assert_array_equal(boundary.image.image, expected.reshape(n, n, 3))
    assert not np.array_equal(boundary.image.image, before)


@pytest.mark.parametrize("typed", ["abc", "inf", "nan", ""])
def test_a_non_number_leaves_the_value_unchanged_with_a_message(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session, typed: str) -> None:
    step_session(controller)
    shown = _shown(view, VALUE)
    editor = _open_value_editor(qtbot, view, 0)
    _type_in(qtbot, editor, typed)
    # The editor stays open with what was typed, and the panel says what is wrong.
    assert view.table.state() == QAbstractItemView.State.EditingState
    assert editor.text() == typed
    message = view.edit_status.text()
    assert view.edit_status.isVisible() and "not changed" in message
    assert ("nothing was typed" if not typed else f"'{typed}'") in message
    assert _shown(view, VALUE) == shown
    # Esc gives up: the editor closes, the hint comes back.
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: view.table.state() != QAbstractItemView.State.EditingState)
    assert view.edit_status.text() == EDIT_HINT
    # A step afterwards proves the worker has seen everything sent before it: no edit.
    step_session(controller)
    assert controller.snapshot.edits == ()
    assert controller.snapshot.step == 2


def test_enter_on_an_untouched_value_records_no_edit(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session) -> None:
    editor = _open_value_editor(qtbot, view, 3)
    # The text is the value rounded: sent, it would change the weight a little.
    assert float(editor.text()) != controller.snapshot.params[3]
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: view.table.state() != QAbstractItemView.State.EditingState)
    step_session(controller)
    assert controller.snapshot.edits == ()


def test_parse_weight() -> None:
    assert parse_weight(" -1.5e-3 ") == -1.5e-3
    assert parse_weight("\u22120.5") == -0.5  # a typographic minus, pasted from a document
    for bad in ("abc", "", "inf", "-inf", "nan", "1,5"):
        with pytest.raises(ValueError):
            parse_weight(bad)


def test_rewinding_past_an_edit_brings_the_hint_back(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    step_session(controller, 2)
    name = controller.snapshot.param_names[0]
    after_snapshot(controller, controller.send, Session.set_parameter, name, 1.25)
    assert "1.25" in view.edit_status.text()
    step_session(controller)
    after_snapshot(controller, controller.rewind, 1)
    assert controller.snapshot.edits == ()
    assert view.edit_status.text() == EDIT_HINT


def test_typing_again_clears_the_complaint(qtbot, controller, view) -> None:  # type: ignore[no-untyped-def]
    editor = _open_value_editor(qtbot, view, 0)
    _type_in(qtbot, editor, "abc")
    assert "not a number" in view.edit_status.text()
    qtbot.keyClick(editor, Qt.Key.Key_Backspace)
    assert view.edit_status.text() == EDIT_HINT
    _type_in(qtbot, editor, "0.125")
    qtbot.waitUntil(lambda: controller.snapshot.params[0] == 0.125)


def test_clicking_away_from_a_non_number_keeps_the_message(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session) -> None:
    editor = _open_value_editor(qtbot, view, 1)
    editor.selectAll()
    qtbot.keyClicks(editor, "abc")
    _click_row(qtbot, view, 6)  # focus leaves the editor: Qt commits, then closes it
    qtbot.waitUntil(lambda: view.table.state() != QAbstractItemView.State.EditingState)
    assert "'abc' is not a number" in view.edit_status.text()
    step_session(controller)
    assert controller.snapshot.edits == ()


def test_history_shows_an_edit_as_a_jump_at_its_step(  # type: ignore[no-untyped-def]
        qtbot, controller, view, step_session, after_snapshot) -> None:
    step_session(controller, 3)
    _click_row(qtbot, view, 5)
    name = controller.snapshot.param_names[5]
    old = float(controller.snapshot.params[5])
    after_snapshot(controller, controller.send, Session.set_parameter, name, 1.5)
    step_session(controller)
    qtbot.waitUntil(lambda: len(view.history_data()[1]) == 6)
    steps, values, _, _ = view.history_data()
    # Steps 0..4, with step 3 twice: what step 3 left, then the value typed in.
    np.testing.assert_array_equal(steps, [0, 1, 2, 3, 3, 4])
    assert values[3] == old and values[4] == 1.5
    xs, ys = view.edit_points.getData()
    assert list(xs) == [3] and list(ys) == [1.5]
    assert "typed in by hand after step 3" in view.history_title.text()
    # Rewound past it, the jump and its mark are gone.
    after_snapshot(controller, controller.rewind, 2)
    qtbot.waitUntil(lambda: len(view.history_data()[1]) == 3)
    assert len(view.edit_points.getData()[0]) == 0
    assert "by hand" not in view.history_title.text()


def test_forgetting_shows_passes_held_and_the_ratio_to_the_true_gradient(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    from gradbox.views.panels.parameter_table import HELD

    # weights still: ratio = passes
    after_snapshot(controller, controller.send, Session.set_lr, 0.0)
    assert view.table.isColumnHidden(HELD) and not view.fixed_scale.isChecked()
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    assert view.fixed_scale.isChecked()  # on by default while zero_grad is skipped
    step_session(controller, 3)
    assert not view.table.isColumnHidden(HELD)
    model = view.model
    assert model.passes == 3
    np.testing.assert_allclose(model.ratios, 3.0, rtol=1e-6)
    assert view.fixed_scale.text() == f"Fixed scale: {controller.snapshot.grad_peak:.3g}"
    held = _shown(view, HELD)
    assert set(held.values()) == {"×3"}
    assert "sum of 3 backward passes" in view.warning.text()
    assert "median 3× the true one" in view.warning.text()
    # Untick: zero_grad runs at the next step, one pass again.
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, False)
    assert not view.fixed_scale.isChecked()
    step_session(controller, 1)
    assert model.passes == 1 and view.table.isColumnHidden(HELD)


def test_fixed_scale_bars_keep_the_runs_largest_gradient(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    from gradbox.views.panels.parameter_table import BAR_ROLE

    after_snapshot(controller, controller.send, Session.set_lr, 0.0)
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, True)
    step_session(controller, 4)  # the gradients hold 4 passes: 4 × the true ones
    i = int(np.argmax(np.abs(controller.snapshot.grads)))
    row = view.model.row_of(i)
    assert abs(view.model.index(row, GRAD).data(BAR_ROLE)) == pytest.approx(1.0)
    after_snapshot(controller, controller.send, Session.set_forget_zero_grad, False)
    step_session(controller, 1)  # zero_grad again: 1 × the true gradient
    view.fixed_scale.setChecked(True)
    # Against the run's largest gradient so far the bar shows the drop to a quarter;
    # rescaled to this step's largest it would still fill the cell.
    assert abs(view.model.index(row, GRAD).data(BAR_ROLE)) == pytest.approx(0.25, rel=1e-6)
    assert view.model.scale == pytest.approx(controller.snapshot.grad_peak)
    view.fixed_scale.setChecked(False)
    assert abs(view.model.index(row, GRAD).data(BAR_ROLE)) == pytest.approx(1.0)


def test_after_zero_grad_the_summary_says_what_happened(controller, view, after_snapshot,  # type: ignore[no-untyped-def]
                                                       step_session) -> None:
    step_session(controller, 1)
    after_snapshot(controller, controller.substep)
    after_snapshot(controller, controller.substep)  # zero_grad
    assert "zero_grad set every gradient to 0" in view.summary.text()


@pytest.mark.parametrize("width", [700, 400, 260])
def test_a_steps_summary_moves_nothing_and_shows_whole(  # type: ignore[no-untyped-def]
        controller, show_widget, step_session, qtbot, width: int) -> None:
    """The summary's text changes with every step (the largest gradient and its name):
    the table must stay where it is (a summary that went from one line to two and back
    moved it, and laid out and repainted the whole panel again after each step), and
    every line of the text must show, in a wide panel and a narrow one."""
    view = show_widget(ParametersView(controller), width, 500)
    step_session(controller)
    qtbot.wait(1)  # (layouts posted by the first step's texts)
    top = view.table.mapTo(view, QPoint(0, 0))
    texts = set()
    for _ in range(10):
        step_session(controller)
        qtbot.wait(1)  # (a layout the text asked for comes in the next event-loop turn)
        texts.add(view.summary.text())
        label = view.summary
        assert label.heightForWidth(label.width()) <= label.height(), label.text()
        assert label.isVisible() and label.width() >= view.table.width()
        assert view.table.mapTo(view, QPoint(0, 0)) == top
    assert len(texts) > 1  # (the text did change)


def test_the_ratio_column_says_what_it_divides_by() -> None:
    """issue 32, item 22: '× true' beside 'Ghost gradient' read as Gradient ÷ Ghost grad
    (0.1373 / 0.0017 ≈ 81 under a ×28.6); it is Gradient ÷ this pass's own gradient."""
    from gradbox.views.panels.parameter_table import HEADER_TIPS, HEADERS, HELD
    assert HEADERS[HELD] == "× 1 pass"
    assert HEADER_TIPS[HELD].startswith("Gradient ÷ this pass's own gradient")


def test_the_summary_names_the_parameter_as_the_table_does(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                           step_session) -> None:
    """issue 32, cosmetic: 'layers.2.neurons.0.w.5' in the summary over 'L0 n0 w0'."""
    win = open_window((1024, 700))
    step_session(win.controller, 2)
    view = win.parameters
    qtbot.waitUntil(lambda: view.name_delegate.shown_name("layers.0.neurons.0.w.0",
                                                          view.model.name_prefix())
                    != "layers.0.neurons.0.w.0" or view.table.width() > 600)
    step_session(win.controller, 1)
    shown = view.name_delegate.shown_name("layers.0.neurons.0.w.0", view.model.name_prefix())
    assert shown == "L0 n0 w0"  # at 1024 x 700 the column shows the short form
    assert "layers." not in view.summary.text(), view.summary.text()
