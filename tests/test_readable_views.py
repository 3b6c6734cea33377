"""What a view shows is readable at the sizes learners and classrooms have: the real
MainWindow, offscreen, fresh settings, at 1024 x 700 and 1366 x 768.

Graph text opens at READABLE_PT or more on screen (the node's font size times the
view's zoom); a view given less than its readable size says so and offers the room."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtWidgets import QLabel, QStyleOptionViewItem

from axis_labels import tick_labels
from gradbox.views.fitting_combo import FittingComboBox
from gradbox.views.graph.framing import READABLE_PT
from gradbox.views.graph.items import OpNode
from gradbox.views.graph.view import GraphView
from gradbox.views.window.headline import FIGURES
from gradbox.views.window.main_window import MainWindow
from qt_waits import settle

SIZES = [(1024, 700), (1366, 768)]


def _window(qtbot, open_window, width: int, height: int) -> MainWindow:  # type: ignore[no-untyped-def]
    win = open_window((width, height))
    qtbot.waitUntil(lambda: win.size().toTuple() == (width, height), timeout=3000)
    settle()
    return win


def on_screen_points(view: GraphView) -> list[float]:
    """Each node label's size on screen, in points: its font's size times the zoom."""
    zoom = view.transform().m11()
    style = view.operations.style
    sizes = []
    for item in view.operations.nodes:
        assert isinstance(item, OpNode)
        title = style.name_font if item.kind == OpNode.PARAM else style.bold
        sizes += [zoom * title.pointSizeF(), zoom * style.font.pointSizeF()]
    return sizes


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_operation_graph_opens_with_readable_text(qtbot, open_window, step_session,  # type: ignore[no-untyped-def]
                                                      width: int, height: int) -> None:
    win = _window(qtbot, open_window, width, height)
    win.workspaces.switch("graph")
    step_session(win.controller, 1)
    view = win.graph.view
    qtbot.waitUntil(lambda: view.graph() is not None, timeout=5000)
    view.set_level("operation")
    settle()
    assert view.operations.nodes
    assert min(on_screen_points(view)) >= READABLE_PT - 1e-6  # 3.6 pt before at 1024 x 700
    # The rest of the graph is a pan away, and the mini-map says where the view is.
    view.viewport().repaint()
    port = view.viewport().rect()
    drawing = view.mapFromScene(view.operations.drawing_rect()).boundingRect()
    if not port.contains(drawing):
        assert view.minimap.isVisible()
    # F still shows everything, however small (the user's choice).
    view.fit_action.trigger()
    assert port.contains(view.mapFromScene(view.operations.drawing_rect()).boundingRect())


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_playground_graph_opens_with_readable_text(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                       height: int) -> None:
    win = _window(qtbot, open_window, width, height)
    win.workspaces.switch("playground")
    settle()
    view = win.playground.graph
    assert view.isVisible() and view.operations.nodes
    assert min(on_screen_points(view)) >= READABLE_PT - 1e-6  # 5.6 pt before at 1024 x 700


# --- a view too small to read says so and offers the room ----------------------------------
def _plot_rect_in(view, plot) -> QRectF:  # type: ignore[no-untyped-def]
    """A pyqtgraph item's rectangle in `view`'s pixels."""
    return QRectF(view.mapFromScene(plot.sceneBoundingRect()).boundingRect())


@pytest.mark.parametrize("step", [2, 3])
def test_the_layer_plots_lesson_10_points_at_are_whole_and_readable(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                                    step: int) -> None:
    win = _window(qtbot, open_window, 1024, 700)
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("vanishing-gradients")
    win.lessons.go_to_step(step)  # "Look at the small plots", then beside the Designer
    settle()
    view = win.layer_stats
    assert view.isVisible() and view.activations_shown()
    assert not win.room.shown_too_small()
    port = QRectF(view.graphics.viewport().rect())
    # step 3: the second row was cut off at the view's bottom; step 4: one column of
    # six plots ~20 px high beside the Designer
    for plot in [view.grad_plot, *view.act_plots]:
        rect = _plot_rect_in(view.graphics, plot)
        assert port.contains(rect), rect
        assert rect.height() >= 60 and rect.width() >= 150, rect


def test_a_squeezed_view_says_so_and_enlarge_gives_it_room(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = _window(qtbot, open_window, 1024, 700)
    table = win.parameters.table
    win.resizeDocks([win.docks["Lessons"], win.docks["Parameters && gradients"]], [600, 40],
                    Qt.Orientation.Vertical)
    settle()
    overlay = win.room.guards["parameters"]
    assert table.height() < overlay.minimum.height()  # 56 px: two rows
    qtbot.waitUntil(overlay.isVisible, timeout=3000)
    assert "too small" in overlay.label.text() and overlay.button.text() == "Enlarge"
    # a band beside the table, over none of its rows (issue 32, item 3: over it, it hid
    # the rows the step pointed at)
    band = QRect(overlay.mapTo(win, QPoint(0, 0)), overlay.size())
    assert not band.intersects(QRect(table.mapTo(win, QPoint(0, 0)), table.size()))
    assert overlay.parentWidget() is table.parentWidget()
    qtbot.mouseClick(overlay.button, Qt.MouseButton.LeftButton)
    settle()
    qtbot.waitUntil(lambda: not overlay.isVisible(), timeout=3000)
    assert table.height() >= overlay.minimum.height(), table.size()
    assert not win.docks["Designer"].isVisible() and not win.docks["Loss curve"].isVisible()
    assert win.docks["Lessons"].isVisible()  # the lesson's text stays
    assert "Put away" in win.messages.text()


def _squeezed_parameters(qtbot, win):  # type: ignore[no-untyped-def]
    """The parameters dock squeezed under the lesson's; its overlay on show."""
    win.resizeDocks([win.docks["Lessons"], win.docks["Parameters && gradients"]], [600, 40],
                    Qt.Orientation.Vertical)
    settle()
    overlay = win.room.guards["parameters"]
    qtbot.waitUntil(overlay.isVisible, timeout=3000)
    return overlay


def test_enlarge_never_puts_away_what_the_lesson_step_points_at(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    # Seen at 1024x700: lesson 4 step 1 says "watch the Training loop panel"; Enlarge on
    # the squeezed parameter table put the loop away.
    win = _window(qtbot, open_window, 1024, 700)
    # (lesson 4 step 1 names the table now, for its Ghost grad column: lesson 6's first
    # step names the loop and not the table)
    win.lessons.apply_key("moons")  # step 1 names the loop, not the table
    settle()
    overlay = _squeezed_parameters(qtbot, win)
    qtbot.mouseClick(overlay.button, Qt.MouseButton.LeftButton)
    settle()
    assert win.docks["Training loop"].isVisible()
    assert not win.docks["Designer"].isVisible()  # what the step does not name makes room
    assert win.workspaces.current is None or win.workspaces.current.key != "lesson"


def test_enlarge_on_a_panel_the_step_names_opens_the_lesson_workspace(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = _window(qtbot, open_window, 1024, 700)
    win.lessons.apply_key("zero-grad")
    win.lessons.go_to_step(1)  # "Look at the parameters table"
    settle()
    overlay = _squeezed_parameters(qtbot, win)
    qtbot.mouseClick(overlay.button, Qt.MouseButton.LeftButton)
    settle()
    assert win.workspaces.current is not None and win.workspaces.current.key == "lesson"
    assert "Lesson workspace" in win.messages.text() and "Train" in win.messages.text()
    qtbot.waitUntil(lambda: not overlay.isVisible(), timeout=3000)
    table = win.parameters.table
    assert table.isVisible() and table.height() >= overlay.minimum.height(), table.size()
    assert win.docks["Training loop"].isVisible() and win.docks["Lessons"].isVisible()


def test_layer_plots_without_room_say_so_and_get_it(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = open_window((1024, 700), hidden=(8,) * 6)
    qtbot.waitUntil(lambda: win.size().toTuple() == (1024, 700), timeout=3000)
    win.tabs.setCurrentWidget(win.layer_stats)  # Train: 372 x 290 px for six layers
    settle()
    view = win.layer_stats
    band = view.too_small
    assert band.isVisible() and not view.activations_shown()  # hidden, but not silently
    assert "small plots" in band.label.text()
    # under the readout, over no curve and not over the readout (issue 32, item 8)
    assert band.geometry().top() >= view.readout.geometry().bottom()
    assert band.geometry().top() >= view.graphics.geometry().bottom()
    qtbot.mouseClick(band.button, Qt.MouseButton.LeftButton)
    settle()
    qtbot.waitUntil(view.activations_shown, timeout=3000)
    assert not band.isVisible()
    assert not win.docks["Training loop"].isVisible() and win.docks["Lessons"].isVisible()
    win.tabs.setCurrentWidget(win.boundary)  # another tab: the loop comes back
    assert win.docks["Training loop"].isVisible()


# --- text is never clipped: a combo sizes to its contents or elides with a tooltip ---------
def test_combos_show_their_text_whole_or_elided_with_the_whole_in_the_tooltip(  # type: ignore[no-untyped-def]
        qtbot, open_window) -> None:
    win = _window(qtbot, open_window, 1024, 700)
    picker = win.boundary.class_picker
    assert picker.shown_text() == picker.currentText() == "0 (orange)"  # was "0 (orang"
    win.lessons.apply_key("chain-rule")
    settle()
    chooser = win.lessons.chooser
    title = chooser.currentText()
    assert title.startswith("1. The chain rule")
    shown = chooser.shown_text()
    # "1. The chain rule, one nc" was cut mid-letter by the frame
    assert shown == title or (shown.endswith("…") and title in chooser.toolTip())
    assert "Choose a lesson" in chooser.toolTip()  # what the box is for stays
    for box in (picker, chooser, win.designer.loss, win.landscape.mode):
        assert FittingComboBox.shown_text(box) in (box.currentText(), *(
            box.currentText()[:n] + "…" for n in range(len(box.currentText()))))


def test_a_combo_shows_a_million_texts_as_they_are_and_sizes_to_the_widest(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The landscape's axis boxes on a 1000x1000 network: a million names, not copied."""
    from gradbox.autograd.nn import parameter_names

    names = tuple(parameter_names((2, 1000, 1000, 1)))
    box = FittingComboBox(14)
    qtbot.addWidget(box)
    box.set_texts(names, 1)
    assert box.count() == len(names) > 1_000_000
    assert box.currentText() == names[1] and box.itemText(len(names) - 1) == names[-1]
    assert box.model().texts is names  # read where they are
    widest = max(box.fontMetrics().horizontalAdvance(n) for n in names[-3000:])
    assert box.sizeHint().width() >= widest
    box.setCurrentIndex(len(names) - 1)
    assert box.currentText() == names[-1]
    box.set_texts(("a", "b"))  # another network: the list before goes
    assert box.count() == 2 and box.currentText() == "a"


@pytest.mark.parametrize("space", ["playground", "train"])
def test_a_syntax_error_leaves_the_playground_whole(qtbot, open_window, space: str) -> None:  # type: ignore[no-untyped-def]
    win = _window(qtbot, open_window, 1024, 700)
    win.workspaces.switch(space)
    settle()  # the workspace's tab is shown in a queued call
    win.tabs.setCurrentWidget(win.playground_page())  # beside the lesson, in Train
    settle()
    panel = win.playground
    panel.expression.setText("a*b + (c")
    panel.forward()
    settle()
    area = win.playground_page()
    error, status = panel.error, panel.message
    assert error.isVisible() and "never closed" in error.text()
    # no scroll bar: it cut the status box off
    assert not area.verticalScrollBar().isVisible()
    for label in (error, status):
        assert label.visibleRegion().boundingRect().size() == label.size(), label
        assert label.height() >= label.heightForWidth(label.width()), label  # every line


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_playground_sections_are_all_on_show(qtbot, open_window, width: int,  # type: ignore[no-untyped-def]
                                                 height: int) -> None:
    win = _window(qtbot, open_window, width, height)
    win.tabs.setCurrentWidget(win.playground_page())  # beside the lesson: the narrowest
    settle()
    tabs = win.playground.extras
    bar = tabs.tabBar()
    assert not tabs.usesScrollButtons()
    for index in range(tabs.count()):
        rect, text = bar.tabRect(index), tabs.tabText(index)
        assert rect.left() >= 0 and rect.right() <= bar.width(), (text, rect, bar.width())
        assert bar.fontMetrics().horizontalAdvance(text) < rect.width(), text  # not elided
        assert tabs.name_of(index) in tabs.tabToolTip(index)


@pytest.mark.parametrize("span", [(0.5, 1.2), (0.0123, 0.0149), (0.000120, 0.000150)])
def test_no_tick_label_runs_into_an_axis_title(qtbot, open_window, span) -> None:  # type: ignore[no-untyped-def]
    win = _window(qtbot, open_window, 1024, 700)
    view = win.loss_curve
    view.grad_plot.setYRange(*span, padding=0)
    settle()
    for plot in (view.loss_plot, view.accuracy_plot, view.grad_plot):
        # "grad norm" was written over 0.0125 (37 px of text, 34 px of room)
        _assert_labels_clear_of_the_title(plot.getAxis("left"))


def _assert_labels_clear_of_the_title(axis) -> None:  # type: ignore[no-untyped-def]
    """Every tick label the axis writes is inside it and off its title."""
    title = axis.label.mapRectToParent(axis.label.boundingRect())
    margin = axis.label.document().documentMargin()  # empty, around the title's text
    title = title.adjusted(margin, margin, -margin, -margin)
    for rect, text in tick_labels(axis):
        assert not rect.intersects(title), (text, rect, title)
        assert rect.left() >= 0, (text, rect)


@pytest.mark.parametrize(("value", "gradient"), [((0.27391, 0.27399), (0.000120, 0.000150)),
                                                 ((-0.4605, -0.4603), (-0.0149, -0.0123))])
def test_no_parameter_history_label_runs_into_its_title(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session, value, gradient) -> None:
    """The parameter history's 'value' and 'gradient' titles stood under labels like
    0.27395 (a fixed 56 px axis; issue 32, cosmetic)."""
    win = _window(qtbot, open_window, 1024, 700)
    step_session(win.controller, 3)
    view = win.parameters
    view.table.selectRow(0)
    qtbot.waitUntil(lambda: view.history.isVisible())
    view.value_plot.setYRange(*value, padding=0)
    view.grad_plot.setYRange(*gradient, padding=0)
    settle()
    for plot in (view.value_plot, view.grad_plot):
        _assert_labels_clear_of_the_title(plot.getAxis("left"))
    # and the two stay lined up
    assert view.value_plot.getAxis("left").width() == view.grad_plot.getAxis("left").width()


# --- the parameter table: whole headers, one naming per column -----------------------------
@pytest.mark.parametrize("space", ["train", "graph"])
def test_the_parameter_table_headers_are_whole_and_its_names_one_form(  # type: ignore[no-untyped-def]
        qtbot, open_window, step_session, space: str) -> None:
    win = _window(qtbot, open_window, 1024, 700)
    win.workspaces.switch(space)
    win.toolbar.ghost.setChecked(True)  # the ghost's column too
    step_session(win.controller, 1)
    settle()
    table = win.parameters.table
    header = table.horizontalHeader()
    model = table.model()
    assert not table.isColumnHidden(3)
    for column in range(model.columnCount()):
        if table.isColumnHidden(column):
            continue
        text = model.headerData(column, Qt.Orientation.Horizontal)
        # whole ("Ghost gradient" showed as "host gradie"), the full name in its tooltip
        assert header.fontMetrics().horizontalAdvance(text) <= header.sectionSize(column), text
        tip = model.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert tip.startswith(("Parameter", "Value", "Gradient", "Ghost gradient", "× 1 pass"))
    # every name in one form: all 'L0 n0 w0', or all '…0.neurons.0.w.0', or all whole
    delegate = table.itemDelegateForColumn(0) or table.itemDelegate()
    shown = []
    for row in range(model.rowCount()):
        index = model.index(row, 0)
        option = QStyleOptionViewItem()
        option.initFrom(table)
        option.rect = table.visualRect(index)
        option.rect.setWidth(header.sectionSize(0))
        delegate.initStyleOption(option, index)
        shown.append(option.text)
    kinds = {"short" if t.startswith("L") else "prefix" if t.startswith("…") else "whole"
             for t in shown}
    assert len(kinds) == 1, sorted(set(shown))[:6]
    assert all(header.fontMetrics().horizontalAdvance(t) <= header.sectionSize(0) for t in shown)


def _whole_in_view(view: GraphView) -> bool:
    port = QRectF(view.viewport().rect())
    return all(port.contains(view.mapFromScene(rect).boundingRect().toRectF())
               for rect in view.operations.occupied())


@pytest.mark.parametrize("teacher", [False, True])
def test_the_playground_graph_is_whole_and_readable_at_1024x700(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                                 teacher: bool) -> None:
    win = _window(qtbot, open_window, 1024, 700)
    if teacher:  # "Look at the graph: a and b go into ×, the product and c go into +"
        win.lessons.set_teacher_mode(True)
        win.lessons.apply_key("chain-rule")
    else:  # tanh(a*b + c): four columns of nodes
        win.workspaces.switch("playground")
    settle()
    view = win.playground.graph
    assert view.isVisible()
    assert min(on_screen_points(view)) >= READABLE_PT - 1e-6
    assert _whole_in_view(view)  # a and b were off the left edge (nodes 158 px wide)


def test_what_the_teacher_walk_showed_cut_or_alone_is_whole_or_gone(qtbot, open_window) -> None:  # type: ignore[no-untyped-def]
    win = _window(qtbot, open_window, 1024, 700)
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("vanishing-gradients")
    win.lessons.go_to_step(3)  # beside the Designer: the main view 370 px wide
    settle()
    for key, caption in win.headline.captions.items():
        if caption.isVisible():  # "Train accuracy" was cut to "Train accurac"
            assert caption.fontMetrics().horizontalAdvance(caption.text()) <= caption.width(), key
            full = dict((k, c) for k, c, _colour in FIGURES)[key]
            assert caption.toolTip().startswith(full)  # the whole caption, however short
    win.lessons.apply_key("micro-batches")  # the variant box is put away: its label too
    settle()
    variant = win.playground.variant
    assert not variant.isVisible()
    labels = [w for w in win.playground.findChildren(QLabel) if w.buddy() is variant]
    assert labels and not any(label.isVisible() for label in labels)
    win.lessons.set_teacher_mode(False)
    settle()
    assert all(label.isVisible() for label in labels) or not win.playground.isVisible()


@pytest.mark.parametrize(("key", "step"), [("vanishing-gradients", 3), ("momentum-landscape", 3)])
def test_an_empty_plots_hint_stays_inside_it(qtbot, open_window, key: str, step: int) -> None:  # type: ignore[no-untyped-def]
    win = _window(qtbot, open_window, 1024, 700)
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key(key)
    win.lessons.go_to_step(step)  # beside the Designer, beside the loss curve
    settle()
    if key == "vanishing-gradients":
        text, box = win.layer_stats.empty_text, win.layer_stats.grad_plot.getViewBox()
    else:
        qtbot.waitUntil(lambda: win.landscape.empty_text.isVisible(), timeout=10000)
        text, box = win.landscape.empty_text, win.landscape.plot.getPlotItem().getViewBox()
    assert text.isVisible()
    # it ran past both edges ("pace): each layer's gradient size appears here,")
    assert box.sceneBoundingRect().contains(text.sceneBoundingRect()), (
        text.sceneBoundingRect(), box.sceneBoundingRect())
