"""manage.py export_session_track SLUG [-o FILE]: a study's sessions as a TREC Session Track XML log
(docs/file-formats.md)."""

from django.core.management.base import BaseCommand

from studies.interchange.command_helpers import study_by_slug, write_chunks
from studies.interchange.session_track import session_track_stream


class Command(BaseCommand):
    help = (
        "Export a study's sessions as a TREC Session Track XML log (topics, queries, shown results, clicks, "
        "current queries). A study imported from a log is written back as it was read, each time in its "
        "year's notation."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        write_chunks(self, options["output"], session_track_stream(study=study_by_slug(options["study"])))
