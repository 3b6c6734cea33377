"""The window: main window, menus, toolbar, message bar, error dialogs, keys.

    files/   the file side: saving, autosave, Open/Save dialogs, resume, exports, quitting
"""
