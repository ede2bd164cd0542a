"""The event log's retention: a study's events archived to the upload storage, verified, and only then
deleted (studies/interchange/event_archive.py, docs/deploying.md, "The event log"). Import the models from
`studies.models`."""

from django.db import models

from studies.models.core import Study


class EventArchive(models.Model):
    """One archive of a study's events: a gzipped JSON Lines file in the upload storage, read back and checked
    (count and sha256) before the rows were deleted. `restored_at`: its rows are back in the log."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="event_archives")
    key = models.CharField(max_length=300, unique=True)  # the file's name in the upload storage
    events = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)  # of the uncompressed JSON Lines, as written and as read back
    compressed_bytes = models.BigIntegerField()
    first_event_id = models.BigIntegerField()
    last_event_id = models.BigIntegerField()
    first_server_time = models.DateTimeField()
    last_server_time = models.DateTimeField()
    archived_at = models.DateTimeField()  # verified and the rows deleted, in one transaction
    restored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "archived_at"]

    def __str__(self):
        return f"{self.study}: {self.events} events in {self.key}"
