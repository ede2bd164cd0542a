"""SessionLab scoring: the pure library in `scoring.lib` (no Django import) plus a Django app (runs, tasks,
dashboards) around it. `python -m scoring` runs the library's command (scoring/lib/cli.py)."""
