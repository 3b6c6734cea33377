"""Launch gradbox: `gradbox [SESSION] [--screenshot PATH [--steps N]]`, or check a
learner's engine in a terminal: `gradbox check [--stage N] [--json] FILE` (no Qt)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from PySide6.QtWidgets import QApplication

    from gradbox.views.window.main_window import MainWindow

from gradbox import __version__, resource

log = logging.getLogger("gradbox")
ICON = "gradbox.svg"


# --- the window's process: how it shares its cores and collects its garbage ---------------
_collector: Any = None  # the QTimer that runs the cyclic collector (see below)


def collect_garbage_on_the_ui_thread() -> None:
    """Run Python's cyclic collector only from the UI thread, on a timer: left automatic,
    a collection may start in another thread (the session writer's, the landscape's)
    and destroy Qt objects of the UI thread from there. Before any second Python thread
    exists; needs the application."""
    global _collector
    if _collector is None:
        import gc

        from PySide6.QtCore import QTimer
        gc.disable()
        _collector = QTimer()
        _collector.setInterval(500)
        _collector.timeout.connect(_collect_young)
        _collector.start()


def _collect_young() -> None:
    import gc
    threshold0, threshold1, threshold2 = gc.get_threshold()
    young, middle, old = gc.get_count()
    if young <= threshold0:
        return
    gc.collect(0)
    if middle > threshold1:
        gc.collect(1)
        if old > threshold2:
            gc.collect(2)


def leave_cores_for_the_threads() -> None:
    """Cap numpy's BLAS threads in the window's process at one per core beyond two, and
    have Qt paint on the UI thread alone. (The training process keeps its own threads.)

    OpenBLAS starts a thread per core and keeps them spinning after each product: on two
    cores they took turns with the UI thread and training, and the heat map's small
    products (10,000 x 16 x 16) took 4.8 ms a frame, 13 ms at worst, under load; with one
    BLAS thread 2.4 and 4.2 ms.

    Qt's raster engine splits a large fill (a scaled heat map, an antialiased axis, a
    scroll bar's groove) over a pool of threads and waits for them: on two cores shared
    with training they were seldom free, and a repaint of the whole W1 window took
    6.8-11 ms of wall time and 7-8 ms of the process's CPU; painted by the UI thread
    alone, 2.7-5.1 ms and 2.6-3.3 ms (load ~4). Qt reads QT_NO_GUI_THREADPOOL at its
    first large fill: this runs before the window paints.
    """
    from threadpoolctl import threadpool_limits
    threadpool_limits(limits=max(1, (os.cpu_count() or 1) - 2), user_api="blas")
    os.environ.setdefault("QT_NO_GUI_THREADPOOL", "1")


def set_window_process_policy() -> None:
    """The window's process-wide policy (both above), once the application exists and
    before the window or a second thread: `main` sets it, so do the tests and the
    benchmarks that build windows. Safe to call again."""
    collect_garbage_on_the_ui_thread()
    leave_cores_for_the_threads()


def freeze_what_lives_now() -> None:
    """Once the window is up: collect, then put every object alive into the collector's
    permanent generation. The app's ~100,000 long-lived objects (modules, widgets, plot
    items) were scanned again by each full collection, which took 50 ms on the UI thread
    about once a minute; frozen, a full collection scans only what came later. (What is
    frozen and later becomes cyclic garbage stays: they live as long as the app.)"""
    import gc
    gc.collect()
    gc.freeze()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="gradbox", description="A desktop sandbox that makes automatic differentiation "
        "visible: design a network, step training, watch every gradient.",
        epilog="gradbox check [--stage N] [--json] FILE checks your own autograd engine, "
        "stage by stage, in the terminal (no window; see gradbox check --help).")
    parser.add_argument("--version", action="version", version=f"gradbox {__version__}")
    parser.add_argument("session", nargs="?", type=Path, help="a session file to open")
    parser.add_argument("--session", dest="session_option", type=Path,
                        help="same as the positional SESSION")
    parser.add_argument("--screenshot", type=Path, metavar="PATH",
                        help="render the main window offscreen to PATH (PNG) and exit")
    parser.add_argument("--steps", type=int, default=0,
                        help="with --screenshot: training steps to run first")
    parser.add_argument("--size", default="1400x900", help="with --screenshot: window size WxH")
    parser.add_argument("--export-pytorch", nargs=2, type=Path, metavar=("FILE", "OUT.py"),
                        help="write a standalone PyTorch script that retrains session FILE, "
                        "then exit (no window)")
    args = parser.parse_args(argv)
    args.session = args.session_option or args.session
    return args


def export_pytorch(session: Path, out: Path) -> int:
    """Headless: session file -> PyTorch script. No Qt is loaded."""
    from gradbox.files import sessions as persistence
    from gradbox.files.export_torch import pytorch_script

    try:
        trainer = persistence.load_session(session)
        out.write_text(pytorch_script(trainer), encoding="utf-8")
    except (persistence.SessionError, OSError) as error:
        print(f"gradbox: {session}: {error}", file=sys.stderr)
        return 2
    print(f"wrote {out}: retrains {session.name} for {trainer.step_count} steps with torch")
    return 0


def _end_on_signals(app: QApplication, window: MainWindow) -> None:
    """SIGTERM and SIGINT end the app as Quit does (the autosave is not left behind as
    if it had crashed). Python runs a signal handler only when it next gets control,
    which Qt's event loop never gives it: a socket the handler's wakeup byte is written
    to wakes a notifier in the loop instead (no polling timer)."""
    from PySide6.QtCore import QSocketNotifier, QTimer

    receiver, sender = socket.socketpair()
    receiver.setblocking(False)
    sender.setblocking(False)
    signal.set_wakeup_fd(sender.fileno())
    notifier = QSocketNotifier(receiver.fileno(), QSocketNotifier.Type.Read, app)

    def drain() -> None:
        with contextlib.suppress(OSError):
            receiver.recv(64)
    notifier.activated.connect(drain)
    app._signal_sockets = (receiver, sender, notifier)  # type: ignore[attr-defined]

    def handle(number: int, _frame: object) -> None:
        # From inside the event loop: a quit() before exec() has started is lost.
        name = signal.Signals(number).name
        QTimer.singleShot(0, lambda: window.end_by_signal(name))
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, handle)


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["check"]:  # `gradbox check FILE`: no window, no Qt
        from gradbox.build.cli import main as check
        return check(words[1:])
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.export_pytorch:
        return export_pytorch(*args.export_pytorch)
    if args.screenshot:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    import pyqtgraph as pg
    from PySide6.QtCore import QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from gradbox.files import sessions as persistence
    from gradbox.port.controller import SessionController
    from gradbox.runner.process import CommandError
    from gradbox.training import calibration
    from gradbox.views.fonts import install_fonts
    from gradbox.views.window.errors import install_excepthook, log_to_file
    from gradbox.views.window.files.autosave import crash_copy, default_autosave_path
    from gradbox.views.window.files.quitting import ENDED_BY_KEY
    from gradbox.views.window.files.resume import last_session_path, starts_fresh
    from gradbox.views.window.main_window import MainWindow, load_saved_config

    pg.setConfigOptions(antialias=True, background="w", foreground="k")
    app = QApplication.instance() or QApplication(sys.argv[:1])
    install_fonts(app)  # the same text metrics (and so layout) on every desktop
    app.setApplicationName("gradbox")
    app.setOrganizationName("gradbox")
    # Before any second Python thread exists (the cyclic collector runs on this thread
    # only) and before the window paints (Qt's paint pool is off).
    set_window_process_policy()
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("gradbox")  # the .desktop file (and its icon) on Wayland
    from PySide6.QtGui import QIcon
    app.setWindowIcon(QIcon(str(resource(ICON))))

    settings = None if args.screenshot else QSettings()
    autosave_path = None if args.screenshot else default_autosave_path()
    crashed = crash_copy(autosave_path) if autosave_path else None
    if args.session and args.screenshot:  # no window to keep answering: read it now
        try:
            # Read and checked here; the network is built once, in the training process.
            start = persistence.load_state(args.session)
        except (persistence.SessionError, OSError) as error:
            print(f"gradbox: cannot open {args.session}: {error}", file=sys.stderr)
            return 2
    else:
        # The window opens at once on a fresh run; a session to open (the file named,
        # the crash copy, the one kept at the last quit) is read off the UI thread once
        # the window is up, and arrives in it (SessionFiles.open_at_start). While a file
        # that replaces it is read, the fresh run is the default one, small and quick to
        # build: the Designer's last settings may be the file's own large network.
        replaced = args.session is not None or (
            crashed is None and autosave_path is not None and not starts_fresh(settings)
            and last_session_path(autosave_path).is_file())
        start = load_saved_config(settings) if settings is not None and not replaced \
            else None
    try:  # the run is built once, in the training process
        controller = SessionController(start)
    except CommandError as error:  # the run could not be built (too big for memory...)
        what = f"open {args.session}" if args.session else "start training"
        print(f"gradbox: cannot {what}: {error}", file=sys.stderr)
        return 2
    for _ in range(max(args.steps, 0)):
        controller.step()
    try:  # a training thread still running when Python exits aborts the process
        window = MainWindow(controller, settings, autosave_path)
        install_excepthook(window.errors)
        if autosave_path is not None:
            log_path = autosave_path.with_name("gradbox.log")
            if log_to_file(log_path):
                window.errors.log_path = log_path
        if args.screenshot:
            width, height = (int(v) for v in args.size.lower().split("x"))
            window.resize(width, height)
            window.show()
            _wait_for_step(controller, max(args.steps, 0))
            for _ in range(5):  # let layouts settle and the first snapshot paint
                app.processEvents()
            window.grab().save(str(args.screenshot))
            print(f"saved {args.screenshot} after {controller.snapshot.step} steps")
            window.close()
            return 0
        window.show()
        _end_on_signals(app, window)
        log.info("window shown; autosave at %s", autosave_path)
        # Step-time estimates (the designer's warnings) use costs measured on this
        # machine, on a thread of their own -- once the window is up: measured while the
        # training thread started, the app died of a segfault in that new thread at
        # about 1 launch in 20 (PySide6 6.11; a guess serves until the figures are in).
        # The session (in the training process) words the warning after a change: it
        # uses the same figures.
        QTimer.singleShot(0, lambda: calibration.measure_in_background(
            _shared_step_costs(controller)))
        QTimer.singleShot(0, freeze_what_lives_now)
        # What saves killed mid-way (kill -9, a power cut) left beside the files the
        # user works with: removed at start, as the saving code promises.
        kept_beside = [*window.document.recent()]
        if autosave_path is not None:
            kept_beside.append(last_session_path(autosave_path))
        QTimer.singleShot(0, lambda: persistence.clean_in_background(kept_beside))
        ended_by = ""
        if crashed is not None and not args.session and settings is not None:
            ended_by = str(settings.value(ENDED_BY_KEY, ""))
            settings.remove(ENDED_BY_KEY)
        QTimer.singleShot(0, lambda: window.files.open_at_start(args.session, crashed,
                                                                ended_by))
        return app.exec()
    finally:
        controller.shutdown()


def _shared_step_costs(controller: Any) -> Callable[[Any], None]:
    """A calibration report: the window's estimates use the costs, and the training
    process's session is sent them (from the UI thread)."""
    from superqt.utils import ensure_main_thread

    from gradbox.training import limits
    from gradbox.training.session import Session

    @ensure_main_thread
    def share(costs: limits.StepCosts) -> None:
        if not controller.died:
            controller.send(Session.use_step_costs, costs)

    def report(costs: limits.StepCosts) -> None:
        limits.calibrated(costs)
        share(costs)

    return report


def _wait_for_step(controller: Any, step: int, timeout_s: float = 120.0) -> None:
    """Run the event loop until the window shows `step` (or the steps stopped early)."""
    from PySide6.QtCore import QEventLoop, QTimer
    loop = QEventLoop()
    check = QTimer()
    check.setInterval(10)
    deadline = time.monotonic() + timeout_s

    def test() -> None:
        if controller.snapshot.step >= step or controller.died \
                or time.monotonic() > deadline:
            loop.quit()
    check.timeout.connect(test)
    check.start()
    loop.exec()
    check.stop()


if __name__ == "__main__":
    raise SystemExit(main())
