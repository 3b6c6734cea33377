"""Build it yourself: the learner writes the engine stage by stage, gradbox checks it.

    report   what a check found, as plain frozen records (and JSON): stages, cases, the
             failing case's graph with the learner's and the expected numbers, the
             stable mistake ids
    stages   the stages as data files (stages/*.toml): text, starter code, hints, the
             built-in cases each runs, an optional "predict first" question
    sandbox  the learner's code in a fresh child process with time and memory limits:
             `check_source` (blocking) and `start_check` (a handle to poll or cancel)
    child    what runs inside that child: reads the code, runs the cases, writes JSON
    ending   what to say when the child ended without its report (a hang, a crash)
    cases    the built-in checks of each stage, by name, each with the code it runs
    kinds    what each kind of case checks, and run_case
    checks   one case's two runs (the learner's names, the reference's), compared and
             the mistake named
    explain  Python's errors and wrong numbers in the article's words
    graphs   the learner's graph as plain records beside the expected numbers
    randomgraphs  random expressions (Hypothesis), shrunk to the smallest that fails
    reference  gradbox's own answer, written to the learner's API
    train    the last stage's payoff: moons trained on the learner's own MLP
    cli      `gradbox check [--stage N] [--json] FILE`

May import: `gradbox.autograd`, `gradbox.graph`, `gradbox.training`, `gradbox.teaching`,
`gradbox.formatting`, numpy, the standard library. Never Qt or `.views`
(tests/test_architecture.py checks). The learner's code is never imported in the caller's
process: only `child` runs it, and only inside the sandbox's child process.
"""
