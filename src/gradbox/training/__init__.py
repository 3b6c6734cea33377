"""Training: a run of a network on a dataset, step by step, and everything it remembers.

    trainer     the `Trainer`: its four phases (forward, zero_grad, backward, update)
                and time travel (a rewind replays the phases from a checkpoint)
    config      a run's configuration: what it may be, what changing it means
    goals       when a Run stops: a step count, a loss reached, a loss diverging
    session     what the training process does with the window's commands
    network     the live model and optimizer, and what the data says of it
    record      what a run keeps of its past: history, events, checkpoints, path
    snapshots   what views see of a run, and the revision numbers
    state       a whole run as one immutable value (and a run pinned to compare with)
    datasets    the 2-D datasets (their CSV form: gradbox.files.points_csv)
    history     what every step measured, per-layer statistics too
    timeline    moving back and forth between steps, and undo of replaced runs
    limits      what a network costs on this machine, and when to warn
    calibration the machine's step time, measured at launch from whole steps
    landscape   the loss surface around the current weights

May import: `gradbox.autograd`, `gradbox.formatting`, numpy. Never Qt, `.views`,
`.files` or `.teaching` (tests/test_architecture.py checks).
"""
