"""The window: main window, menus, toolbar, message bar, error dialogs, keys, saving."""
