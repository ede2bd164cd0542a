"""manage.py export_study SLUG [-o FILE]: the whole study as one JSON archive (docs/file-formats.md)."""

from django.core.management.base import BaseCommand, CommandError

from studies.interchange.archive import ExportError, study_archive_stream
from studies.interchange.command_helpers import study_by_slug, write_chunks


class Command(BaseCommand):
    help = (
        "Export a whole study (design, participants, sessions, judgments, events, reference "
        "versions) as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        try:
            chunks = study_archive_stream(study=study_by_slug(options["study"]))
        except ExportError as error:
            raise CommandError(str(error)) from None
        write_chunks(self, options["output"], chunks)
