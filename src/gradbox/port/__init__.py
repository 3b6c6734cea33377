"""The views' port onto a training session: what a widget holds instead of the session.

    protocol      `SessionPort`: everything a view may use (the snapshot and its signals,
                  the pacer, the selection, the named commands)
    controller    `SessionController`: the port over a training process (the app's),
                  listening to its pipe (a socket notifier)
    in_process    `InProcessPort`: the port over a `Session` on the UI thread (widget
                  tests, benchmarks)
    common        what both share: the signals, the frames, the window's side of commands
    frame_pacer   the display-paced frames, rate tiers, work off the UI thread

Qt, but no widget: between the runner and the views. May import `gradbox.runner` and
what it may import, PySide6's QtCore; never `gradbox.views` (tests/test_architecture.py
checks).
"""
