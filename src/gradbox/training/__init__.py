"""Training: a run of a network on a dataset, step by step, and everything it remembers.

    trainer     the `Trainer`: its four phases (forward, zero_grad, backward, update)
                and time travel (a rewind replays the phases from a checkpoint)
    network     the live model and optimizer, and what the data says of it
    record      what a run keeps of its past: history, events, checkpoints, path
    snapshots   what views see of a run, and the revision numbers
    state       a whole run as one immutable value
    datasets    the 2-D datasets (their CSV form: gradbox.files.points_csv)
    history     what every step measured
    timeline    moving back and forth between steps, and undo of replaced runs
    limits      what a network costs, and when to warn
    statistics  per-layer gradient and activation statistics
    landscape   the loss surface around the current weights
    compare     a pinned run beside the current one

May import: `gradbox.autograd`, `gradbox.formatting`, numpy. Never Qt, `.views`,
`.files` or `.teaching` (tests/test_architecture.py checks).
"""
