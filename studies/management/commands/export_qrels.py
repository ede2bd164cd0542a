"""manage.py export_qrels SLUG [--version N] [-o FILE]: a reference version as TREC qrels."""

from django.core.management.base import BaseCommand, CommandError

from studies.interchange.command_helpers import study_by_slug, write
from studies.interchange.trec import ExportError, study_qrels


class Command(BaseCommand):
    help = "Export a study's reference judgments (default: the latest version) as TREC qrels: topic 0 docid grade."

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--number", type=int, help="reference version number (default: the latest)")
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        try:
            _version, text = study_qrels(study=study_by_slug(options["study"]), number=options["number"])
        except ExportError as error:
            raise CommandError(str(error)) from None
        write(self, options["output"], text)
