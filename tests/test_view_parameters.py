"""The parameters view shows each parameter's value and gradient and one parameter's history."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt

from gradbox.training import Trainer, TrainingConfig
from gradbox.views.parameters import (
    GHOST,
    GRAD,
    NAME,
    NEGATIVE,
    POSITIVE,
    VALUE,
    ParametersView,
    ParameterTableModel,
)
from gradbox.views.session import SessionController


@pytest.fixture
def view(controller, show_widget):  # type: ignore[no-untyped-def]
    return show_widget(ParametersView(controller))


def _shown(view: ParametersView, column: int) -> dict[str, str]:
    """What the table shows in a column, by parameter name, in the table's own order."""
    proxy = view.proxy
    return {proxy.index(r, NAME).data(): proxy.index(r, column).data()
            for r in range(proxy.rowCount())}


def _shown_grad(view: ParametersView, name: str) -> float:
    return float(_shown(view, GRAD)[name])


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
    after_snapshot(controller, controller.set_lr, 0.0)
    after_snapshot(controller, controller.set_forget_zero_grad, True)
    name = controller.snapshot.param_names[0]
    shown = []
    for _ in range(4):
        step_session(controller)
        shown.append(_shown_grad(view, name))
    assert shown[0] != 0
    # Each step adds the same gradient again: 1x, 2x, 3x, 4x.
    np.testing.assert_allclose(shown, [shown[0] * k for k in (1, 2, 3, 4)], rtol=1e-3)
    assert view.warning.isVisible()
    assert "pile up" in view.warning.text()


def test_normal_mode_keeps_the_shown_gradient_bounded(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    after_snapshot(controller, controller.set_lr, 0.0)
    name = controller.snapshot.param_names[0]
    shown = []
    for _ in range(4):
        step_session(controller)
        shown.append(_shown_grad(view, name))
    assert shown[0] != 0
    np.testing.assert_allclose(shown, [shown[0]] * 4, rtol=1e-3)
    assert not view.warning.isVisible()


def test_ghost_column_shows_the_correct_runs_gradient(  # type: ignore[no-untyped-def]
        controller, view, step_session, after_snapshot) -> None:
    assert view.table.isColumnHidden(GHOST)
    after_snapshot(controller, controller.set_forget_zero_grad, True)
    after_snapshot(controller, controller.set_ghost, True)
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
    qtbot.waitUntil(lambda: len(view.history_data()[1]) == 4)
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
    after_snapshot(controller, controller.set_ghost, True)
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
    for widget in (view.filter, view.table, view.history, view.summary):
        assert widget.accessibleName()
        assert widget.toolTip()


def test_sorted_updates_of_a_big_network_stay_cheap(qtbot) -> None:  # type: ignore[no-untyped-def]
    """Re-sorting 8,577 rows by |gradient| after a step must not ask Python per comparison."""
    session = SessionController(Trainer(TrainingConfig(hidden=(64, 64, 64), n_samples=10)))
    try:
        widget = ParametersView(session)
        qtbot.addWidget(widget)
        widget.resize(700, 500)
        widget.show()
        widget.table.sortByColumn(GRAD, Qt.SortOrder.DescendingOrder)
        calls = 0
        original = ParameterTableModel.data

        def counting(self, index, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            return original(self, index, role)

        ParameterTableModel.data = counting  # type: ignore[method-assign]
        try:
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
    finally:
        session.shutdown()
