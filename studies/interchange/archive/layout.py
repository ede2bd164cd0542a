"""The archive's name and version, which the export writes and the import checks, and the row ids the raw
event payloads keep (docs/file-formats.md)."""

from studies.models import ResultExposure

FORMAT = "sessionlab-study-archive"
VERSION = 1
# Ids the server writes into an event's acknowledgement, and the table each points to.
ACK_IDS = {"session": "session", "query_id": "query", "open_document_id": "document"}
# A shown result's exposure in the archive: ResultExposure's figures (null when none was reported).
EXPOSURE_FIELDS = ResultExposure.FIGURES
