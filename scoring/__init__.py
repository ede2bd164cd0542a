"""SessionLab scoring: pure numpy measures (no Django import in the library modules) plus a Django app.

The library modules (`metrics`, `session`, `trec_io`, `errors`, `cli`) must stay importable without Django,
so `python -m scoring` works on plain files.
"""
