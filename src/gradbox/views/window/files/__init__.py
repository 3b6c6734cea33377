"""The window's file side: what it reads and writes, and quitting without losing work.

    saving          the writer thread: sessions are written off the UI thread
    autosave        the crash copy, kept up to date while there are unsaved changes
    session_files   Open, Save, Save As, imports: the File menu's dialogs
    resume          a normal quit keeps the session for the next start
    class_exports   exports of the run as code, CSV, images
    quitting        Quit, a window closed, a signal: every write made before the run stops
    dialogs         where a file dialog opens, and the name it returns (suffix added)
    document        the session as a document: its file, title, unsaved mark, recent files

May import anything in gradbox below `views.window`, never the main window: the window
gives each helper, when it builds it, what it works with (the port, the document, the
error reporter, the writers, the views it exports); none reads the window's members.
"""
