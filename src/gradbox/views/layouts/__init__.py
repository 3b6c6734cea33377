"""How the main window arranges its panels for what a person is doing.

    workspaces    Train, Graph, Playground, Lesson: each one's designed layout, remembered
    presentation  teacher mode: the current lesson step's panels, large
    docks         the docks' sizes for the window's size; what a tab puts away for its room

Works on the main window through its public attributes (docks, tabs, lessons).
"""
