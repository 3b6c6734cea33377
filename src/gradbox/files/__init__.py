"""Files: what leaves the app and comes back.

    sessions        session files (a zip of a manifest and .npy arrays), read defensively
    session_json    the manifest's JSON, read strictly
    session_v1      the old one-file JSON format
    session_writer  the writer thread's side of saving
    exports         CSV, JSON and images of a run's numbers
    export_torch    the run as a PyTorch script

May import: `gradbox.autograd`, `gradbox.training`, `gradbox.formatting`, numpy. Never Qt
or `.views` (tests/test_architecture.py checks).
"""
