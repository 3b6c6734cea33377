"""Every test runs without a display: Qt renders offscreen."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest


@pytest.fixture(autouse=True)
def _window_process_policy(request):  # type: ignore[no-untyped-def]
    """A test with Qt runs under the window's process-wide policy, as the app does
    (`gradbox.app.set_window_process_policy`: the cyclic collector on the UI thread
    alone, numpy's BLAS threads capped, Qt's paint pool off)."""
    if "qtbot" in request.fixturenames:
        request.getfixturevalue("qapp")
        from gradbox.app import set_window_process_policy

        set_window_process_policy()


@pytest.fixture(scope="session")
def qapp(qapp):  # type: ignore[no-untyped-def]
    """pytest-qt's QApplication with the app's own fonts and style, as `gradbox.app.main`
    sets them: layouts measured here are the ones every desktop gets."""
    from gradbox.views.fonts import install_fonts

    install_fonts(qapp)
    return qapp


def pytest_configure(config):  # type: ignore[no-untyped-def]
    config.addinivalue_line(
        "markers", "in_process: the module tests widgets, built on an InProcessPort (the "
        "session on the UI thread, no training process): `controller` and `make_session` "
        "give one")
    config.addinivalue_line(
        "markers", "window_in_process: the `window` fixture's MainWindow is built on an "
        "InProcessPort (a test of the window's wiring that needs no training process)")


@pytest.fixture
def controller(request):  # type: ignore[no-untyped-def]
    """The port a test's widgets are built on, on the default configuration: an
    InProcessPort in a module marked `in_process` (a widget's test), else a
    SessionController over a training process."""
    in_process = request.node.get_closest_marker("in_process") is not None
    return request.getfixturevalue("port" if in_process else "process_controller")


@pytest.fixture
def make_session(request):  # type: ignore[no-untyped-def]
    """`make_session(**config)`: a port on `TrainingConfig(**config)`, for a test that
    needs another network or data than `controller`'s -- in-process as `controller` is."""
    in_process = request.node.get_closest_marker("in_process") is not None
    return request.getfixturevalue("make_port" if in_process else "make_process_session")


@pytest.fixture
def process_controller(qtbot):  # type: ignore[no-untyped-def]
    """A SessionController on the default configuration; its training process is stopped after."""
    from gradbox.port.controller import SessionController
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer

    session = SessionController(Trainer(TrainingConfig()))
    yield session
    session.shutdown()


@pytest.fixture
def port(qtbot):  # type: ignore[no-untyped-def]
    """An InProcessPort on the default configuration: the session runs on the UI thread,
    no training process (for a test of one widget); stopped after the test."""
    from gradbox.port.in_process import InProcessPort

    session = InProcessPort()
    yield session
    session.shutdown()


@pytest.fixture
def make_port(qtbot):  # type: ignore[no-untyped-def]
    """`make_port(**config)`: an InProcessPort on `TrainingConfig(**config)`, as
    `make_session` but with no training process; stopped after the test."""
    from gradbox.port.in_process import InProcessPort
    from gradbox.training.config import TrainingConfig

    ports = []

    def make(**config):  # type: ignore[no-untyped-def]
        ports.append(InProcessPort(TrainingConfig(**config)))
        return ports[-1]

    yield make
    for session in ports:
        session.shutdown()


@pytest.fixture
def after_snapshot(qtbot):  # type: ignore[no-untyped-def]
    """`after_snapshot(controller, action, *args)`: run `action(*args)` (a controller
    method such as `controller.rewind`), wait for the snapshot that follows and return it.
    The views have drawn it by then: they update in the same signal."""

    def run(controller, action, *args):  # type: ignore[no-untyped-def]
        with qtbot.waitSignal(controller.snapshot_changed):
            action(*args)
        return controller.snapshot

    return run


@pytest.fixture
def step_session(after_snapshot):  # type: ignore[no-untyped-def]
    """`step_session(controller, n=1)`: n single steps, each waited for until its snapshot
    has been shown, so what a test reads next is what the views drew for the last step."""

    def step(controller, n: int = 1) -> None:  # type: ignore[no-untyped-def]
        for _ in range(n):
            after_snapshot(controller, controller.step)

    return step


@pytest.fixture
def show_widget(qtbot):  # type: ignore[no-untyped-def]
    """`show_widget(widget)`: on screen at 700 x 500 (room for every control), exposed,
    and closed after the test."""

    def show(widget, width: int = 700, height: int = 500):  # type: ignore[no-untyped-def]
        qtbot.addWidget(widget)
        widget.resize(width, height)
        widget.show()
        qtbot.waitExposed(widget)
        return widget

    return show


@pytest.fixture
def toolbar(controller, show_widget):  # type: ignore[no-untyped-def]
    """The training toolbar alone on `controller` (the in-process port in a test marked
    `in_process`), its two rows one above the other at 1400 x 120: for a test of the
    toolbar's buttons, run controls and timeline, not of the window around them."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from gradbox.views.window.toolbar import TrainingToolbar

    host = QWidget()
    bar = TrainingToolbar(controller, host)
    rows = QVBoxLayout(host)
    rows.addWidget(bar)
    rows.addWidget(bar.timeline_bar)
    show_widget(host, 1400, 120)
    yield bar  # (pytest-qt holds the host weakly: held here until the test is done)


@pytest.fixture
def make_process_session(qtbot):  # type: ignore[no-untyped-def]
    """`make_process_session(**config)`: a SessionController on `TrainingConfig(**config)`;
    stopped after the test."""
    from gradbox.port.controller import SessionController
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer

    sessions = []

    def make(**config):  # type: ignore[no-untyped-def]
        sessions.append(SessionController(Trainer(TrainingConfig(**config))))
        return sessions[-1]

    yield make
    for session in sessions:
        session.shutdown()


@pytest.fixture
def open_window(request, qtbot, tmp_path):  # type: ignore[no-untyped-def]
    """`open_window(size=(1400, 900), controller=None, settings=None, autosave_path=None,
    **config)`: the real MainWindow, shown at `size` and active. Without a controller it
    runs a new one on `TrainingConfig(**config)`, stopped after the test; without settings
    it keeps them in a throw-away file; with an autosave path it autosaves there and keeps
    the session at quit beside it, as the launcher's window does. The one recipe for a
    window in the tests. In a test marked `window_in_process` the new one is an
    InProcessPort: the window's wiring without a training process."""
    from PySide6.QtCore import QSettings

    from gradbox.port.controller import SessionController
    from gradbox.port.in_process import InProcessPort
    from gradbox.training.config import TrainingConfig
    from gradbox.training.trainer import Trainer
    from gradbox.views.window.main_window import MainWindow

    in_process = request.node.get_closest_marker("window_in_process") is not None
    controllers = []
    opened = 0

    def open_(size=(1400, 900), controller=None, settings=None, autosave_path=None,  # type: ignore[no-untyped-def]
              **config):
        nonlocal opened
        opened += 1
        if controller is None:
            controller = (InProcessPort(TrainingConfig(**config)) if in_process
                          else SessionController(Trainer(TrainingConfig(**config))))
            controllers.append(controller)
        if settings is None:
            settings = QSettings(str(tmp_path / f"settings{opened}.ini"), QSettings.IniFormat)
        win = MainWindow(controller, settings, autosave_path)
        qtbot.addWidget(win)
        win.resize(*size)
        # (20 s, not pytest-qt's 5: on two cores at load 10 a window's first activation
        # was seen to take longer, and failed a test that had not started)
        with qtbot.waitActive(win, timeout=20000):
            win.show()
            win.activateWindow()
        return win

    yield open_
    for controller in controllers:
        controller.shutdown()


@pytest.fixture
def settings(tmp_path):  # type: ignore[no-untyped-def]
    """The throw-away settings file `window` keeps its settings in (a test reads it back)."""
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)


@pytest.fixture
def window_size() -> tuple[int, int]:
    """The size `window` opens at; a module overrides it (1024 x 700: a classroom's)."""
    return (1400, 900)


@pytest.fixture
def window(request, open_window, settings, window_size):  # type: ignore[no-untyped-def]
    """The real MainWindow on a training process -- `controller`, which a module may
    override (a run 40 steps in...), or a fresh one in an `in_process` module, where
    `controller` is the widgets' in-process port -- shown at `window_size` and active,
    with `settings`; closed and stopped after the test. Marked `window_in_process`, the
    window itself is on an InProcessPort (its wiring, not the training process, is tested)."""
    if request.node.get_closest_marker("window_in_process") is not None:
        chosen = request.getfixturevalue("port")
    elif request.node.get_closest_marker("in_process") is not None:
        chosen = request.getfixturevalue("process_controller")
    else:
        chosen = request.getfixturevalue("controller")
    return open_window(window_size, chosen, settings)


@pytest.fixture
def settle(qtbot):  # type: ignore[no-untyped-def]
    """`settle()`: what is already queued on the UI thread is handled now (qt_waits)."""
    from qt_waits import settle

    return settle


@pytest.fixture
def drained(qtbot, settle):  # type: ignore[no-untyped-def]
    """`drained(controller)`: every command sent to the training process before it has
    run, and what it sent back to the UI thread has been handled (a question queued
    behind them is answered last)."""

    from gradbox.training.session import Session

    def run(controller) -> None:  # type: ignore[no-untyped-def]
        answered: list[object] = []
        controller.ask(Session.timeline_view, callback=answered.append)
        qtbot.waitUntil(lambda: bool(answered), timeout=10000)
        settle()

    return run
