"""Teaching: lessons, the wrong variants they show, and the code the learner reads.

    lessons         the guided lessons, read from builtin_lessons/*.toml
    lesson_model    what a lesson is: setup, steps, the panels' names
    lesson_files    lessons as TOML files: written, read strictly (line and field)
    claims          a claim as data (quantity, comparison, step) and how it reads a run
    claim_checks    claims checked against runs: trained over seeds, or on the screen
    pitfalls        the broken variants of autograd (each a short function)
    expression      the Playground's expression language, on the engine
    playground      the Playground's state: forward, backward (correct or broken), the check
    loop_code       the training loop as the learner would type it

May import: `gradbox.autograd`, `gradbox.training`, `gradbox.formatting`, numpy, tomllib. Never Qt
or `.views` (tests/test_architecture.py checks).
"""
