"""The runner: the trainer in its own process, so training never waits for the window.

    process  the window's handle: start the training process, send named commands,
             receive snapshots and answers, notice a death and say it in words
    child    the training process: hosts the trainer, runs, abandons a step on Pause
    leftovers  an abandoned step's graph, freed in pieces between the window's messages
    wire     a snapshot across the boundary: arrays in shared memory, metadata pickled
    shared   shared memory blocks with numpy views that keep their mapping alive
    worker   other work in a process of its own (an animation export), with progress
             and Cancel: work that would hold the interpreter lock away from the window

May import: `gradbox.training`, `gradbox.files` (the training process opens a session
file itself: the window never builds a second copy of the run) and what they may import,
numpy, the standard library. Never Qt, `.views` or `.teaching` (tests/test_architecture.py
checks).
"""
