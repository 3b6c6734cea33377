"""The Build workspace: the learner writes the engine stage by stage, gradbox checks it.

    editor       the code editor: line numbers, Python colours, Tab indenting, the
                 failing line marked
    code_store   the learner's code per stage, written off the UI thread, atomically
    stage_text   the stage's passage, its hints one at a time, the "predict first" box
    feedback     the first failing case: its code, yours vs expected, your prints, the
                 mistake named
    case_graph   the failing case's graph in gradbox's graph view, yours vs expected
    checking     Check off the UI thread: busy, Cancel, the report back as plain data
    watch        Watch a file: re-check the learner's own engine.py on every save
    training     Train on your engine: its loss beside gradbox's own as a ghost
    panel        the workspace's page: all of the above together

The checks themselves, the stages and the sandbox are `gradbox.build` (no Qt).
"""

from gradbox.teaching.lessons import BUILD_TAB  # the page's objectName (teacher mode's too)

__all__ = ["BUILD_TAB"]
