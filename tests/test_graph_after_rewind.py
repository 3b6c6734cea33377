"""The Graph tab shows a run's last step after an Undo, a move on the timeline or a
reopened run (issue 32, item 7): it used to say 'No graph yet: press Step' on a run of
90 steps, where a Step would have replaced the later steps."""

from __future__ import annotations

import numpy as np

from gradbox.training.session import Session, trace_last_step_again
from gradbox.training.trainer import Trainer, TrainingConfig
from gradbox.views.graph.panel import graph_is_current


def _same_graph(a: Trainer, b: Trainer) -> None:
    ga, gb = a.last_graph, b.last_graph
    assert ga is not None and gb is not None
    ids = [gb.find_parameter(n) for n in b.param_names]
    assert all(i is not None for i in ids)
    np.testing.assert_array_equal([gb.grad(i) for i in ids],
                                  [ga.grad(ga.find_parameter(n)) for n in a.param_names])
    np.testing.assert_array_equal([gb.data(i) for i in ids],
                                  [ga.data(ga.find_parameter(n)) for n in a.param_names])
    np.testing.assert_array_equal(gb.values(3), ga.values(3))  # every node, a sample's


def test_a_rewound_run_traces_its_last_step_again() -> None:
    config = TrainingConfig(batch_size=10, hidden=(4,))
    straight = Trainer(config)
    straight.capture_graph = True
    for _ in range(12):
        straight.step()
    straight.capture_current_graph()
    rewound = Trainer(config)
    for _ in range(30):
        rewound.step()
    rewound.rewind(12)
    assert rewound.last_graph is None
    trace_last_step_again(rewound)
    _same_graph(straight, rewound)
    assert graph_is_current(rewound.snapshot())
    assert rewound.step_count == 12 and len(rewound.history) == 12  # nothing moved


def test_a_reopened_run_with_forget_zero_grad_shows_its_last_step() -> None:
    trainer = Trainer(TrainingConfig(hidden=(3,)))
    trainer.set_forget_zero_grad(True)
    for _ in range(7):
        trainer.step()
    opened = Trainer.from_state(trainer.state())
    trace_last_step_again(opened)
    assert graph_is_current(opened.snapshot())


def test_the_graph_tab_after_undo_shows_the_steps_graph(qtbot, open_window,  # type: ignore[no-untyped-def]
                                                         step_session, after_snapshot) -> None:
    win = open_window((1366, 768))
    win.tabs.setCurrentWidget(win.graph)
    step_session(win.controller, 6)
    after_snapshot(win.controller, win.controller.send, Session.reset)
    after_snapshot(win.controller, win.controller.send, Session.undo)
    snapshot = win.controller.snapshot
    assert snapshot.step == 6
    assert snapshot.graph is not None and graph_is_current(snapshot)
    qtbot.waitUntil(lambda: "No graph yet" not in win.graph.caption.text())
