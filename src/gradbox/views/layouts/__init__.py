"""How the main window arranges its panels for what a person is doing.

    workspaces    Train, Graph, Playground, Lesson: each one's designed layout, remembered
    presentation  teacher mode: the current lesson step's panels, large
    docks         the docks' sizes for the window's size; what a tab puts away for its room
    room          each view's readable size, and the room a view too small asks for
    host          the QMainWindow methods every layout calls (`DockedWindow`)

Works on the main window through what each layout declares beside itself (a Protocol on
`DockedWindow`: the docks, tabs and panels it arranges); never imports the main window.
"""
