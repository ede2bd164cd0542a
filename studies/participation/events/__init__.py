"""The search page's event batch: the shell (ingest.py), its reads, state, handlers, checks and SQL, the
search caps, the clock, exposure, and the rules every action obeys (rules.py)."""
