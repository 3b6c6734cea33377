"""The Qt side: widgets that observe snapshots and send named commands, each built on a
`gradbox.port.protocol.SessionPort` (never on a concrete session).

    palette     the app's colours, each named once by what it means
    fit_text    numbers rounded to fit a cell, names shortened from their shared prefix
    named       a widget named once for lessons, screen readers and people (tooltip)
    window/     the main window, menus, toolbar, messages, saving, keys
    layouts/    workspaces and teacher mode's presentation of a lesson step
    plots/      pyqtgraph views: boundary, loss curve, landscape, layer statistics
    graph/      the computation graph drawn in Qt's graphics view
    panels/     designer, parameters, lessons, training loop, playground

May import anything in gradbox. Nothing outside `views/` and `app.py` imports this.
"""
