"""manage.py export_csv SLUG --output DIR: tidy CSV tables (participants, sessions, queries, shown results,
judgments, exposures, attention); the participants' panel ids only with --include-panel-ids."""

from django.core.management.base import BaseCommand, CommandError

from studies.interchange.command_helpers import PANEL_IDS_WRITTEN, study_by_slug
from studies.interchange.tidy_csv import write_study_csv
from studies.population import Population, PopulationError, study_population


class Command(BaseCommand):
    help = (
        "Export tidy CSV: participants.csv (one row per participant), then sessions.csv, queries.csv, "
        "shown_results.csv, judgments.csv, exposures.csv, attention.csv, with "
        "participant code, position, scenario, topic and system on every row (pseudonymous codes only; "
        "the panel ids only with --include-panel-ids). "
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
        parser.add_argument(
            "--population",
            default="",
            help="whose sessions: completers, itt, or either with leave-outs after a colon "
            "(itt:excluded,timed_out; itt alone is every session); the study's default when not given. "
            "population.txt says which",
        )
        parser.add_argument(
            "--include-panel-ids",
            action="store_true",
            help="write the participants' panel ids (panel_id, panel_study_id, panel_session_id) in "
            "participants.csv: they identify people on the panel, so the files are then for the lab alone",
        )

    def handle(self, *args, **options):
        study = study_by_slug(options["study"])
        text = options["population"].strip()
        try:
            population = Population.parse(text) if text else study_population(study)
        except PopulationError as exc:
            raise CommandError(f"--population: {exc}") from None
        panel_ids = options["include_panel_ids"]
        paths = write_study_csv(
            study=study,
            directory=options["output"],
            raw=options["raw"],
            population=population,
            panel_ids=panel_ids,
        )
        self.stdout.write("wrote " + ", ".join(str(p) for p in paths))
        if panel_ids:
            self.stderr.write(PANEL_IDS_WRITTEN)
