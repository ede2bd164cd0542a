"""manage.py export_csv SLUG --output DIR: tidy CSV tables (participants, sessions, queries, shown results,
judgments, exposures, attention)."""

from django.core.management.base import BaseCommand

from studies.interchange.command_helpers import study_by_slug
from studies.interchange.tidy_csv import write_study_csv


class Command(BaseCommand):
    help = (
        "Export tidy CSV: participants.csv (one row per participant), then sessions.csv, queries.csv, "
        "shown_results.csv, judgments.csv, exposures.csv, attention.csv, with "
        "participant code, position, scenario, topic and system on every row (pseudonymous codes only). "
        "Spreadsheet-safe: text cells starting with =, +, -, @, tab or CR get a leading ' unless --raw."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("-o", "--output", required=True, help="directory to write the CSV files into")
        parser.add_argument(
            "--raw",
            action="store_true",
            help="write text cells as they are: no leading ' on cells a spreadsheet would run as a "
            "formula (=, +, -, @, tab, CR); for pipelines that read the CSV as data",
        )

    def handle(self, *args, **options):
        paths = write_study_csv(
            study=study_by_slug(options["study"]), directory=options["output"], raw=options["raw"]
        )
        self.stdout.write("wrote " + ", ".join(str(p) for p in paths))
