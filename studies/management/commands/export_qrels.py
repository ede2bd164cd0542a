"""manage.py export_qrels SLUG [--number N] [--repeats query|session] [-o FILE]: a reference version as
TREC qrels (with --repeats, also the repeated showings of that unit's export_run files, <docid>#<k>, with
their document's grade)."""

from django.core.management.base import BaseCommand, CommandError

from studies.interchange.command_helpers import study_by_slug, write
from studies.interchange.trec import UNITS, ExportError, study_qrels


class Command(BaseCommand):
    help = (
        "Export a study's reference judgments (default: the latest version) as TREC qrels: topic "
        "0 docid grade."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("--number", type=int, help="reference version number (default: the latest)")
        parser.add_argument(
            "--repeats",
            choices=UNITS,
            help="also judge each repeated showing that export_run's files of this unit write "
            "(<docid>#<k>) with its document's grade, so trec_eval scores every position shown",
        )
        parser.add_argument("-o", "--output", help="file to write (default: standard output)")

    def handle(self, *args, **options):
        try:
            _version, text = study_qrels(
                study=study_by_slug(options["study"]), number=options["number"], repeats=options["repeats"]
            )
        except ExportError as error:
            raise CommandError(str(error)) from None
        write(self, options["output"], text)
