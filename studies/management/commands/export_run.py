"""manage.py export_run SLUG --output DIR [--unit query|session] [--system CODE] [--repeats keep|first]
[--practice leave|mark]: what participants were shown, as TREC runs (topic = the scenario's topic, tag = the
system's code; a document shown again in the same list written <docid>#<k>, which
`export_qrels --repeats UNIT` maps back; practice tasks left out unless marked;
docs/file-formats.md)."""

from django.core.management.base import BaseCommand, CommandError

from studies.interchange.command_helpers import study_by_slug
from studies.interchange.trec import (
    PRACTICE,
    REPEAT_MARK,
    REPEATS,
    UNITS,
    ExportError,
    study_runs,
    write_runs,
)


class Command(BaseCommand):
    help = (
        "Export each session's queries as TREC runs, one file per query (or per session with --unit "
        "session): topic = scenario topic id, tag = system code, readable by trec_eval, ir_measures and "
        "python -m scoring eval."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's slug")
        parser.add_argument("-o", "--output", required=True, help="directory to write the run files into")
        parser.add_argument(
            "--unit", choices=UNITS, default="query", help="one run per query (default) or per session"
        )
        parser.add_argument("--system", help="only the sessions on this system (code)")
        parser.add_argument(
            "--repeats",
            choices=REPEATS,
            default="keep",
            help="keep (default): every shown position, a document's k-th showing in a list "
            f"written <docid>{REPEAT_MARK}<k> (score with the qrels of export_qrels --repeats UNIT);"
            " first: each document at its first showing only, later ones moving up",
        )

        parser.add_argument(
            "--practice",
            choices=PRACTICE,
            default="leave",
            help="leave (default): practice tasks' sessions are left out, as the scores leave them out;"
            " mark: written too, their files named ..._practice_q<k>.run",
        )

    def handle(self, *args, **options):
        try:
            runs = study_runs(
                study=study_by_slug(options["study"]),
                unit=options["unit"],
                system=options["system"],
                repeats=options["repeats"],
                practice=options["practice"],
            )
        except ExportError as error:
            raise CommandError(str(error)) from None
        paths = write_runs(runs=runs, directory=options["output"])
        self.stdout.write(f"wrote {len(paths)} run files into {options['output']}")
        repeated = sum(any(REPEAT_MARK in line.split()[2] for line in run.text.splitlines()) for run in runs)
        if repeated:
            self.stdout.write(
                f"{repeated} of them show a document again in the same list (<docid>{REPEAT_MARK}<k>):"
                f" score them with the qrels of export_qrels --repeats {options['unit']}"
            )
