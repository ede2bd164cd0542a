"""manage.py restore_events SLUG [--print]: put a study's archived events back in the log (checked against the
archive's count and sha256), or with --print write them to stdout as JSON Lines (studies/retention.py)."""

import json

from django.core.management.base import BaseCommand, CommandError

from sessionlab.plurals import counted
from studies.errors import EventArchiveError
from studies.interchange.command_helpers import study_by_slug
from studies.models import EventArchive
from studies.retention import archived_events, study_events_restore


class Command(BaseCommand):
    help = "Restore a study's archived events into the log, or print them (--print)."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument(
            "--print", action="store_true", help="write the archived events to stdout instead"
        )

    def handle(self, *args, **options):
        study = study_by_slug(options["study"])
        archives = EventArchive.objects.filter(study=study, restored_at__isnull=True).order_by("archived_at")
        if not archives:
            raise CommandError(f"{study.slug}: no archived events to restore")
        for archive in archives:
            if options["print"]:
                for row in archived_events(archive):
                    self.stdout.write(json_line(row))
                continue
            try:
                count = study_events_restore(archive=archive)
            except EventArchiveError as error:
                raise CommandError(str(error)) from None
            self.stderr.write(f"{study.slug}: {counted(count, 'event')} restored from {archive.key}")


def json_line(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True)
