"""The plots follow the palette, a dark desktop theme too (issue 32, 'Also'): they stayed
white panels with dark axes on a dark window."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from gradbox.views.palette import TRAIN
from qt_waits import settle

# The window's wiring, not the training process: the window on an InProcessPort.
pytestmark = pytest.mark.window_in_process


def _dark() -> QPalette:
    palette = QPalette()
    for role, colour in ((QPalette.ColorRole.Window, "#2b2b2b"),
                         (QPalette.ColorRole.Base, "#1e1e1e"),
                         (QPalette.ColorRole.Text, "#e6e6e6"),
                         (QPalette.ColorRole.WindowText, "#e6e6e6"),
                         (QPalette.ColorRole.Button, "#353535"),
                         (QPalette.ColorRole.ButtonText, "#e6e6e6")):
        palette.setColor(role, QColor(colour))
    return palette


@pytest.fixture
def dark_app(qapp):  # type: ignore[no-untyped-def]
    before = QPalette(qapp.palette())
    QApplication.setPalette(_dark())
    yield qapp
    QApplication.setPalette(before)


def _plots(win):  # type: ignore[no-untyped-def]
    return {"boundary": win.boundary.plot, "loss": win.loss_curve.graphics,
            "layers": win.layer_stats.graphics, "landscape": win.landscape.plot,
            "history": win.parameters.history}


def _show_each_tab(win) -> None:  # type: ignore[no-untyped-def]
    """As a user looks at them: a plot built while its tab was hidden takes its
    colours when shown."""
    for page in (win.layer_stats, win.landscape, win.boundary):
        win.tabs.setCurrentWidget(page)
        settle()


def _axes_text(widget) -> list[QColor]:  # type: ignore[no-untyped-def]
    return [item.textPen().color() for item in widget.scene().items()
            if isinstance(item, pg.AxisItem) and item.isVisible()]


def test_a_dark_palette_gives_dark_plots_with_light_axes(qtbot, dark_app, open_window,  # type: ignore[no-untyped-def]
                                                         step_session) -> None:
    win = open_window((1366, 768))
    step_session(win.controller, 2)
    _show_each_tab(win)
    for name, plot in _plots(win).items():
        assert plot.backgroundBrush().color().lightness() < 80, name
        texts = _axes_text(plot)
        assert texts and all(c.lightness() > 150 for c in texts), name
    QApplication.setPalette(QApplication.style().standardPalette())  # back to light
    _show_each_tab(win)
    for name, plot in _plots(win).items():
        assert plot.backgroundBrush().color() == QColor("white"), name
        assert all(c.lightness() < 100 for c in _axes_text(plot)), name


def test_text_on_the_highlight_and_the_legend_are_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window, step_session) -> None:
    """Seen in the real window with a dark palette: the loop's line just run was light
    text on the light highlight, and the loss legend's labels dark on the dark plot."""
    win = open_window((1024, 700))
    step_session(win.controller, 1)
    assert "color:#1a1a1a" in win.training_loop.code.toHtml().replace(" ", "")
    labels = [label for _sample, label in win.loss_curve.loss_legend.items]
    assert labels and all(QColor(label.opts["color"]).lightness() > 150 for label in labels)


def test_the_too_small_band_is_readable_in_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window: light text on the band's light ground."""
    win = open_window((1024, 700))
    band = win.room.guards["parameters"]
    text = band.label.palette().color(band.label.foregroundRole())
    assert text.lightness() < 100, text.name()


def test_the_layer_plots_titles_are_light_in_a_dark_theme(qtbot, dark_app, open_window,  # type: ignore[no-untyped-def]
                                                          step_session) -> None:
    """Seen in the real window: 'hidden 1 · 0% saturated' in #222 on the dark plot."""
    win = open_window((1366, 768), hidden=(4, 4))
    win.tabs.setCurrentWidget(win.layer_stats)
    step_session(win.controller, 1)
    titles = [plot.titleLabel.text for plot in win.layer_stats.act_plots]
    assert titles and all("#222" not in t for t in titles), titles


def _contrast(a: QColor, b: QColor) -> float:
    """WCAG's contrast ratio of two colours (4.5 is the floor for text)."""
    def luminance(c: QColor) -> float:
        channels = [(v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4)
                    for v in (c.redF(), c.greenF(), c.blueF())]
        return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_teacher_modes_phase_bar_is_readable_in_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window with a dark palette: teacher mode's large 'step 1 · done:
    4/4 update → next: 1/4 forward', the line the back of the room reads, was the app's
    dark blue on the dark window (contrast 2.2)."""
    import re
    win = open_window((1024, 700))
    win.lessons.set_teacher_mode(True)
    win.lessons.apply_key("zero-grad")
    settle()
    bar = win.phase_bar
    assert bar.isVisible()
    ground = bar.label.palette().color(bar.label.backgroundRole())
    colours = re.findall(r"color:\s*(#[0-9a-fA-F]{6})", bar.label.styleSheet() + bar.label.text())
    assert colours
    for colour in colours:
        assert _contrast(QColor(colour), ground) >= 4.5, colour


def _ink(icon) -> QColor:  # type: ignore[no-untyped-def]
    """The mean colour of an icon's drawn pixels."""
    image = icon.pixmap(32, 32).toImage()
    picked = [image.pixelColor(x, y) for x in range(image.width())
              for y in range(image.height()) if image.pixelColor(x, y).alpha() > 200]
    assert picked
    n = len(picked)
    return QColor(sum(c.red() for c in picked) // n, sum(c.green() for c in picked) // n,
                  sum(c.blue() for c in picked) // n)


def test_the_toolbars_icons_show_on_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window with a dark palette: Step, Sub-step, Run, Reset and
    Re-initialize kept their dark navy icons (#1f3f66) on the dark toolbar, all but
    invisible; only the words showed."""
    win = open_window((1024, 700))
    bar = win.toolbar
    ground = bar.palette().color(bar.backgroundRole())
    for action in (bar.step_action, bar.substep_action, bar.run_action, bar.reset_action,
                   bar.reinit_action):
        assert _contrast(_ink(action.icon()), ground) >= 3.0, action.text()
    QApplication.setPalette(QApplication.style().standardPalette())  # back to light
    settle()
    ground = bar.palette().color(bar.backgroundRole())
    assert _contrast(_ink(bar.step_action.icon()), ground) >= 3.0


def test_the_training_loops_figures_are_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window) -> None:
    """Seen in the real window with a dark palette: lesson 4's '# step size |Δw| = 2.145',
    the numbers its steps quote, were dark purple on the dark panel (contrast 2.4), the
    struck-out zero_grad dark red, the ▶ dark blue."""
    import re
    win = open_window((1024, 700))
    win.toolbar.forget_zero_grad.setChecked(True)
    qtbot.waitUntil(lambda: win.controller.snapshot.forget_zero_grad)
    for _ in range(4):
        win.toolbar.substep_action.trigger()
    qtbot.waitUntil(lambda: win.controller.snapshot.step == 1, timeout=10000)
    settle()
    code = win.training_loop.code
    ground = code.palette().color(code.backgroundRole())
    html = code.toHtml()
    assert "step size" in code.toPlainText()
    colours = set(re.findall(r"color:\s*(#[0-9a-fA-F]{6})", html)) - {"#1a1a1a"}
    assert colours
    for colour in colours:
        assert _contrast(QColor(colour), ground) >= 4.5, colour


def test_the_headline_numbers_are_readable_in_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window with a dark palette: teacher mode's big 'Train loss
    0.7045' and 'Train accuracy 51.2%' in the app's dark blue on the dark window
    (contrast 2.2); the test figures' orange read well."""
    win = open_window((1024, 700))
    headline = win.headline
    for key, value in headline.values.items():
        colour = value.palette().color(value.foregroundRole())
        ground = headline.palette().color(headline.backgroundRole())
        assert _contrast(colour, ground) >= 4.5, (key, colour.name())
    QApplication.setPalette(QApplication.style().standardPalette())  # back to light
    settle()
    value = headline.values["loss"]
    colour = value.palette().color(value.foregroundRole())
    assert _contrast(colour, headline.palette().color(headline.backgroundRole())) >= 4.5


def test_the_current_steps_number_shows_in_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window with a dark palette: in the list of a lesson's steps the
    current one's number ('1.', '3.') was missing -- drawn in the highlight's dark text
    colour, but beside the highlight, on the dark panel."""
    win = open_window((1024, 700))
    win.lessons.apply_key("moons")
    win.lessons.go_to_step(2)
    settle()
    text = win.lessons.text
    ground = text.palette().color(text.viewport().backgroundRole())
    step = win.lessons.lesson.steps[2]
    block = text.document().find(step.do).block()
    assert block.textList() is not None  # a numbered list item
    marker = block.charFormat().foreground().color() if block.charFormat().hasProperty(
        block.charFormat().Property.ForegroundBrush) else text.palette().color(
        text.foregroundRole())
    assert _contrast(marker, ground) >= 4.5, marker.name()


def test_a_lessons_formulas_are_readable_in_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window with a dark palette: a lesson's 'Local derivatives'
    ('∂(x + c)/∂x = 1') were the theme's light text on their light box."""
    win = open_window((1024, 700))
    win.lessons.apply_key("chain-rule")
    settle()
    document = win.lessons.text.document()
    formula = win.lessons.lesson.formulas[0]
    cursor = document.find(formula[:10])
    assert not cursor.isNull()
    table = cursor.currentTable()
    assert table is not None
    cell = table.cellAt(cursor).format()
    ground = (cell.background() if cell.hasProperty(cell.Property.BackgroundBrush)
              else table.format().background()).color()
    assert ground.lightness() > 200  # the formulas' light box
    fmt = cursor.charFormat()
    text = (fmt.foreground().color() if fmt.hasProperty(fmt.Property.ForegroundBrush)
            else win.lessons.text.palette().color(win.lessons.text.foregroundRole()))
    assert _contrast(text, ground) >= 4.5, (text.name(), ground.name())


def test_the_graphs_key_and_replay_counter_are_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window) -> None:
    """Seen in the real window with a dark palette: over the graph, the '▸ key' box was
    empty and the replay's 'backward: 5 of 5 steps' missing -- the theme's light text
    on their white boxes."""
    win = open_window((1024, 700))
    overlays = win.graph.view.overlays
    white = QColor("white")
    label = overlays.legend._label
    label.ensurePolished()  # (never shown: the key is drawn from it)
    counter = overlays.replay_bar.counter
    counter.ensurePolished()
    assert _contrast(label.palette().color(QPalette.ColorRole.WindowText), white) >= 4.5
    assert _contrast(counter.palette().color(QPalette.ColorRole.WindowText), white) >= 4.5


def test_the_playgrounds_red_cells_are_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window) -> None:
    """Seen in the real window with a dark palette: lesson 3 step 1, 'Wrong order: 8, in
    red' -- the 8 was the theme's light text on the light red cell, unreadable."""
    from PySide6.QtCore import Qt as _Qt
    win = open_window((1024, 700))
    win.playground.animation_ms = 1
    win.lessons.apply_key("topological-order")
    settle()
    qtbot.mouseClick(win.playground.backward_button, _Qt.MouseButton.LeftButton)
    table = win.playground.table
    qtbot.waitUntil(lambda: any(table.item(r, c) is not None and table.item(r, c).text() == "8"
                                for r in range(table.rowCount())
                                for c in range(table.columnCount())), timeout=3000)
    item = next(table.item(r, c) for r in range(table.rowCount())
                for c in range(table.columnCount())
                if table.item(r, c) is not None and table.item(r, c).text() == "8")
    ground = item.background().color()
    text = (item.foreground().color() if item.foreground().style() != _Qt.BrushStyle.NoBrush
            else table.palette().color(QPalette.ColorRole.Text))
    assert _contrast(text, ground) >= 4.5, (text.name(), ground.name())


def test_the_train_curves_show_on_a_dark_plot(qtbot, dark_app, open_window, step_session) -> None:  # type: ignore[no-untyped-def]
    """Seen in the real window with a dark palette: the loss curve's train line, the one
    lesson 4 calls 'the broken run (blue)', was the app's dark blue on the dark plot
    (contrast 2.5), dimmer than the grey ghost beside it."""
    win = open_window((1024, 700))
    step_session(win.controller, 2)
    settle()
    curves = win.loss_curve.curves
    ground = win.loss_curve.graphics.backgroundBrush().color()
    for name in ("loss", "accuracy"):
        colour = curves[name].opts["pen"].color()
        assert _contrast(colour, ground) >= 3.0, (name, colour.name())
    QApplication.setPalette(QApplication.style().standardPalette())  # back to light
    settle()
    qtbot.waitUntil(lambda: win.loss_curve.graphics.backgroundBrush().color() == QColor("white"))
    assert curves["loss"].opts["pen"].color() == QColor(TRAIN)


def test_the_forget_zero_grad_switch_is_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window) -> None:
    """Seen in the real window with a dark palette: the switch lesson 4 says to untick,
    'Forget zero_grad', dark red on the dark toolbar (contrast 2.2)."""
    import re
    win = open_window((1024, 700))
    box = win.toolbar.forget_zero_grad
    ground = win.toolbar.timeline_bar.palette().color(win.toolbar.timeline_bar.backgroundRole())
    colours = re.findall(r"color:\s*(#[0-9a-fA-F]{6})", box.styleSheet())
    assert colours
    assert all(_contrast(QColor(c), ground) >= 4.5 for c in colours), colours


def _readable_on_both(qtbot, label) -> None:  # type: ignore[no-untyped-def]
    """The label's text colour has a contrast of at least 4.5 with its ground on the
    dark palette, and again once the palette turns light while the text is shown."""
    import re

    def check() -> None:
        ground = label.palette().color(label.backgroundRole())
        colours = re.findall(r"color:\s*(#[0-9a-fA-F]{6})", label.styleSheet())
        assert colours, label.styleSheet()
        for colour in colours:
            assert _contrast(QColor(colour), ground) >= 4.5, (colour, ground.name())
    check()
    QApplication.setPalette(QApplication.style().standardPalette())  # back to light
    settle()
    check()


def test_the_zero_grad_warning_is_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window) -> None:
    """The parameters panel's 'zero_grad skipped…' warning was the dark red on the dark
    panel (contrast 2.2)."""
    win = open_window((1366, 768))
    win.toolbar.forget_zero_grad.setChecked(True)
    qtbot.waitUntil(lambda: win.controller.snapshot.forget_zero_grad)
    warning = win.parameters.warning
    qtbot.waitUntil(warning.isVisible)
    _readable_on_both(qtbot, warning)


def test_a_refused_weight_edit_is_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window, step_session) -> None:
    """'… not changed: 'abc' is not a number' under the parameter table, dark red on dark."""
    from PySide6.QtCore import Qt as _Qt
    from PySide6.QtWidgets import QAbstractItemView, QLineEdit
    win = open_window((1366, 768))
    step_session(win.controller, 1)
    view = win.parameters
    index = view.proxy.index(0, 1)  # the value column
    view.table.scrollTo(index)
    pos = view.table.visualRect(index).center()
    qtbot.mouseClick(view.table.viewport(), _Qt.MouseButton.LeftButton, pos=pos)
    qtbot.mouseDClick(view.table.viewport(), _Qt.MouseButton.LeftButton, pos=pos)
    qtbot.waitUntil(lambda: view.table.state() == QAbstractItemView.State.EditingState)
    editor = next(e for e in view.table.viewport().findChildren(QLineEdit) if e.isVisible())
    editor.selectAll()
    qtbot.keyClicks(editor, "abc")
    qtbot.keyClick(editor, _Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "not changed" in view.edit_status.text())
    _readable_on_both(qtbot, view.edit_status)


def test_the_designers_refusal_and_notes_are_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app, open_window) -> None:
    """The Designer's 'Not applied: …' was dark red on the dark panel (contrast 2.2), its
    notes #555 (1.9), its 'this will train slowly' amber (2.4)."""
    win = open_window((1366, 768))
    designer = win.designer
    designer.lr.lineEdit().setText("1e999")
    qtbot.waitUntil(lambda: "Not applied" in designer.status.text())
    _readable_on_both(qtbot, designer.status)
    QApplication.setPalette(_dark())
    designer.lr.lineEdit().setText("0.1")
    designer.kind.setCurrentIndex(designer.kind.findText("sine"))  # a 1-D function: a note
    qtbot.waitUntil(lambda: "x₁ alone" in designer.status.text())
    _readable_on_both(qtbot, designer.status)


def test_the_build_tabs_training_plot_and_its_red_are_readable_in_a_dark_theme(  # type: ignore[no-untyped-def]
        qtbot, dark_app) -> None:
    """The Build tab's 'Train on your engine' plot stayed white under the dark theme's
    light axis text, and its error line and 'the runs part at step 3' were dark red."""
    from gradbox.build.train import TrainPoint, TrainProgress
    from gradbox.views.build.training import TrainOnYours
    before = pg.getConfigOption("background")
    pg.setConfigOption("background", "w")  # as the app sets it (app.py)
    try:
        panel = TrainOnYours(lambda: "")
    finally:
        pg.setConfigOption("background", before)
    qtbot.addWidget(panel)
    panel.show()
    points = tuple(TrainPoint(step, 1.0 / (step + 1), 0.5) for step in range(5))
    panel.show_progress(TrainProgress(ghost=points, yours=points[:4], seconds_per_step=0.1,
                                      done=True, error="Your engine failed at step 4",
                                      parted_at=3))
    qtbot.waitUntil(lambda: panel.plot_widget.backgroundBrush().color().lightness() < 80)
    ground = panel.plot_widget.backgroundBrush().color()
    axis = panel.plot_widget.getPlotItem().getAxis("left")
    assert _contrast(axis.textPen().color(), ground) >= 4.5
    assert _contrast(panel.parting.label.color, ground) >= 4.5, panel.parting.label.color.name()
    _readable_on_both(qtbot, panel.status)


def test_the_empty_plots_hints_are_readable_in_a_dark_theme(qtbot, dark_app, open_window) -> None:  # type: ignore[no-untyped-def]
    # "Press Step (Space) to train…" and the Layers tab's hint were #555 on the dark plot
    # (contrast 2.4); they follow the palette as the axes do, both ways.
    win = open_window((1366, 768))
    _show_each_tab(win)
    hints = {"loss": (win.loss_curve.empty_text, win.loss_curve.graphics),
             "layers": (win.layer_stats.empty_text, win.layer_stats.graphics)}
    for name, (hint, plot) in hints.items():
        ground = plot.backgroundBrush().color()
        assert ground.lightness() < 80, name
        assert _contrast(hint.color, ground) >= 4.5, (name, hint.color.name())
    QApplication.setPalette(QApplication.style().standardPalette())  # back to light
    _show_each_tab(win)
    for name, (hint, plot) in hints.items():
        assert plot.backgroundBrush().color() == QColor("white"), name
        assert _contrast(hint.color, QColor("white")) >= 4.5, (name, hint.color.name())
