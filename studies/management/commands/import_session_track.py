"""manage.py import_session_track LOG.xml [--qrels QRELS] --owner USER --name NAME: a TREC Session Track log
as a new study (docs/file-formats.md)."""

import datetime as dt

from django.core.management.base import BaseCommand, CommandError

from scoring.lib.errors import InputError
from sessionlab.plurals import counted
from studies.interchange.command_helpers import user_by_name
from studies.interchange.session_track import DEFAULT_DAY, NEGATIVE_GRADES, session_track_import


class Command(BaseCommand):
    help = (
        "Import a TREC Session Track XML log (sessions, queries, results, clicks, current queries) as a new "
        "study, and its qrels as the study's first reference version. All or nothing; errors name file, line "
        "and field."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="the Session Track XML")
        parser.add_argument("--qrels", help="the track's qrels (topic 0 docid grade)")
        parser.add_argument("--owner", required=True, help="username of the new study's owner")
        parser.add_argument("--name", required=True, help="name of the new study")
        parser.add_argument(
            "--negative-grades",
            choices=NEGATIVE_GRADES,
            default="keep",
            help="what a negative qrels grade (-2: spam) becomes: keep = as judged, each scoring "
            "formulation applies its own rule (default), clip = 0, drop = left out "
            "(unjudged), refuse = fail the import",
        )
        parser.add_argument(
            "--date",
            default=DEFAULT_DAY.isoformat(),
            help="the day (UTC) the log's times of day are placed on (default %(default)s)",
        )
        parser.add_argument(
            "--collection",
            default="ClueWeb09",
            help="collection holding the documents (created if missing; default %(default)s)",
        )

    def handle(self, *args, **options):
        owner = user_by_name(options["owner"])
        try:
            day = dt.date.fromisoformat(options["date"])
        except ValueError:
            raise CommandError(f"--date {options['date']!r} is not YYYY-MM-DD") from None
        try:
            summary = session_track_import(
                path=options["path"],
                qrels_path=options["qrels"],
                owner=owner,
                name=options["name"],
                negative_grades=options["negative_grades"],
                day=day,
                collection_name=options["collection"],
            )
        except InputError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(
            f"study {summary.study.slug!r}: {counted(summary.sessions, 'session')}, "
            f"{counted(summary.interactions, 'interaction')}, {counted(summary.results, 'result')}, "
            f"{counted(summary.clicks, 'click')}, {counted(summary.documents_created, 'new document')}"
        )
        if summary.reference_version is not None:
            self.stdout.write(
                f"reference version {summary.reference_version.number}: {summary.reference_judgments} "
                f"judgments "
                f"({summary.negatives_mapped} negative grades: {summary.negative_grades})"
            )
