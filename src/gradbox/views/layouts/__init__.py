"""How the main window arranges its panels for what a person is doing.

    workspaces    Train, Graph, Playground, Lesson: each one's designed layout, remembered
    presentation  teacher mode: the current lesson step's panels, large
    docks         the docks' sizes for the window's size; what a tab puts away for its room
    room          each view's readable size, and the room a view too small asks for
    host          the `Frame` every layout is given: the window's docks, tabs, message bar

Each layout is given the frame, the panels it arranges and the fellow layouts it works
with; it never imports the main window nor reads its members.
"""
