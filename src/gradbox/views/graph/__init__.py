"""The computation graph in Qt's graphics view: scenes, items, overlays, replay.

Draws what `gradbox.graph` (the Qt-free graph package) computes.
"""
