"""manage.py export_study SLUG [-o FILE] [--include-panel-ids]: the whole study as one JSON archive
(docs/file-formats.md); the participants' panel ids only when asked for by name."""

from django.core.management.base import BaseCommand, CommandError

from studies.interchange.archive import ExportError, study_archive_stream
from studies.interchange.command_helpers import PANEL_IDS_WRITTEN, study_by_slug, write_chunks


class Command(BaseCommand):
    help = (
        "Export a whole study (design, participants, sessions, judgments, events, reference "
        "versions) as JSON; the participants' panel ids only with --include-panel-ids."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")
        parser.add_argument(
            "--include-panel-ids",
            action="store_true",
            help="write the participants' panel ids (panel_id, panel_study_id, panel_session_id): they "
            "identify people on the panel, so the archive is then for the lab alone",
        )

    def handle(self, *args, **options):
        panel_ids = options["include_panel_ids"]
        try:
            chunks = study_archive_stream(study=study_by_slug(options["study"]), panel_ids=panel_ids)
        except ExportError as error:
            raise CommandError(str(error)) from None
        write_chunks(self, options["output"], chunks)
        if panel_ids:
            self.stderr.write(PANEL_IDS_WRITTEN)
