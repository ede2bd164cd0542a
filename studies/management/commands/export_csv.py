"""manage.py export_csv SLUG --output DIR: tidy CSV tables (sessions, queries, shown results, judgments)."""

from django.core.management.base import BaseCommand

from studies.interchange.command_helpers import study_by_slug
from studies.interchange.tidy_csv import write_study_csv


class Command(BaseCommand):
    help = ("Export tidy CSV: sessions.csv, queries.csv, shown_results.csv, judgments.csv, with participant code, "
            "position, scenario, topic and system on every row (pseudonymous codes only).")

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("-o", "--output", required=True, help="directory to write the CSV files into")

    def handle(self, *args, **options):
        paths = write_study_csv(study=study_by_slug(options["study"]), directory=options["output"])
        self.stdout.write("wrote " + ", ".join(str(p) for p in paths))
