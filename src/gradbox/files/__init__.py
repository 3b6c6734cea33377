"""Files: what leaves the app and comes back.

    sessions        session files (a zip of a manifest and .npy arrays), read defensively
    session_json    the manifest's JSON, read strictly
    session_v1      the old one-file JSON format
    session_writer  the writer thread's side of saving
    exports         CSV, JSON and images of a run's numbers
    points_csv      a dataset's points as CSV: written back, read strictly (line and cell)
    export_torch    the run as a PyTorch script
    session_controls  the run controls a session keeps (speed, stop, timeline position...)
    notebook        the run as a Jupyter notebook in gradbox's own API (nbformat)
    animation       a run's states replayed at a range of steps; GIF, MP4, PNG writers

May import: `gradbox.autograd`, `gradbox.training`, `gradbox.formatting`, numpy, nbformat,
Pillow, PyAV. Never Qt
or `.views` (tests/test_architecture.py checks).
"""
