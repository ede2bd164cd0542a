"""Files in and out of SessionLab: TREC qrels and runs (trec.py), TREC Session Track XML (session_track/),
tidy CSV (tidy_csv.py) and the whole-study JSON archive (archive/). docs/file-formats.md describes each.

Every import runs in one transaction and raises `ImportFailure` (file, line, field, reason) before anything
is written, or rolls back whatever it wrote."""

from scoring.lib.errors import InputError


class ImportFailure(InputError):
    """A file that cannot be imported: which file, which line (None when not tied to one), which field."""

    def __init__(self, path: str, line: int | None, field: str | None, reason: str):
        self.field = field
        super().__init__(path, line, f"{field}: {reason}" if field else reason)
        self.reason = reason
