"""InProcessPort: the SessionPort over a Session on the UI thread behaves as the
training process's port does, for the views built on it."""

from __future__ import annotations

import numpy as np

from gradbox.port.in_process import InProcessPort
from gradbox.training.config import TrainingConfig
from gradbox.training.session import Session
from gradbox.training.trainer import Trainer
from gradbox.views.panels.training_loop import TrainingLoopPanel

CONFIG = TrainingConfig(hidden=(4,), n_samples=40)


def test_a_step_shows_the_trainers_numbers_with_no_process(qtbot, make_port) -> None:  # type: ignore[no-untyped-def]
    port = make_port(hidden=(4,), n_samples=40)
    with qtbot.waitSignal(port.snapshot_changed, timeout=5000):
        port.step()
    twin = Trainer(CONFIG)
    twin.step()
    assert port.snapshot.step == 1
    assert np.array_equal(port.snapshot.params, twin.snapshot().params)


def test_an_answer_comes_later_never_inside_ask(qtbot, port) -> None:  # type: ignore[no-untyped-def]
    answers: list[object] = []
    port.ask(Session.state, callback=answers.append)
    assert answers == []  # as from the training process: on a later turn
    qtbot.waitUntil(lambda: len(answers) == 1, timeout=5000)
    assert answers[0].step == 0


def test_a_run_reaches_its_goal_and_says_so(qtbot, port) -> None:  # type: ignore[no-untyped-def]
    messages: list[str] = []
    port.message.connect(messages.append)
    port.run(5)
    assert port.running
    qtbot.waitUntil(lambda: not port.running, timeout=10000)
    assert port.snapshot.step == 5
    assert any("Run stopped" in m for m in messages)


def test_pause_stops_a_run_on_a_step_shown(qtbot, port) -> None:  # type: ignore[no-untyped-def]
    port.run()
    qtbot.waitUntil(lambda: port.snapshot.step >= 3, timeout=10000)
    port.pause()
    qtbot.waitUntil(lambda: not port.running, timeout=5000)
    step = port.snapshot.step
    assert step == port.session.trainer.step_count


def test_a_command_the_session_does_not_have_is_refused_in_words(qtbot, port) -> None:  # type: ignore[no-untyped-def]
    with qtbot.waitSignal(port.error, timeout=5000) as blocker:
        port.send(Session.replace_run, "x")  # type: ignore[arg-type]
    assert "no session command" in blocker.args[0]
    port.step()
    qtbot.waitUntil(lambda: port.snapshot.step == 1, timeout=5000)


def test_a_panel_is_built_on_the_port_alone(qtbot) -> None:  # type: ignore[no-untyped-def]
    port = InProcessPort(Session.fresh(CONFIG))
    panel = TrainingLoopPanel(port)
    qtbot.addWidget(panel)
    before = port.snapshot.phase
    with qtbot.waitSignal(port.snapshot_changed, timeout=5000):
        port.substep()
    assert port.snapshot.phase != before and port.snapshot.step == 0
    port.shutdown()


def _protocol_names() -> set[str]:
    from gradbox.port.protocol import SessionPort

    return set(SessionPort.__annotations__) | {
        name for name in vars(SessionPort) if not name.startswith("_")}


def test_both_ports_have_everything_the_protocol_names(port, process_controller) -> None:  # type: ignore[no-untyped-def]
    for implementation in (port, process_controller):
        missing = sorted(n for n in _protocol_names() if not hasattr(implementation, n))
        assert not missing, (type(implementation).__name__, missing)


def test_views_use_nothing_of_a_port_but_the_protocol() -> None:
    # A view reaching for something only SessionController has could not be built on
    # the in-process port (nor on another one): what views use is what the protocol names.
    import re
    from pathlib import Path

    import gradbox.views

    used: dict[str, set[str]] = {}
    for path in Path(gradbox.views.__file__).parent.rglob("*.py"):
        for match in re.finditer(r"\bcontroller\.([a-z_]\w*)", path.read_text(encoding="utf-8")):
            used.setdefault(match.group(1), set()).add(path.name)
    assert {name: where for name, where in used.items() if name not in _protocol_names()} == {}
