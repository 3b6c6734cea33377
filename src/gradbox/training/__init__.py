"""Training: a run of a network on a dataset, step by step, and everything it remembers.

    trainer     the `Trainer` and its four phases (forward, zero_grad, backward, update)
    state       a whole run as one immutable value
    datasets    the 2-D datasets (their CSV form: gradbox.files.points_csv)
    history     what every step measured
    timeline    moving back and forth between steps
    undo        the undo stack of replaced runs
    limits      what a network costs, and when to warn
    statistics  per-layer gradient and activation statistics
    landscape   the loss surface around the current weights
    compare     a pinned run beside the current one

May import: `gradbox.autograd`, `gradbox.formatting`, numpy. Never Qt, `.views`,
`.files` or `.teaching` (tests/test_architecture.py checks).
"""
