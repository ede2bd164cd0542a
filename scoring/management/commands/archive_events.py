"""manage.py archive_events [--study SLUG ...] [--closed-days 365] [--dry-run]: archive the events of old,
closed, scored studies to the upload storage, verify the archive read back, then delete the rows
(studies/retention.py, docs/deploying.md, "The event log"). In scoring, as load_demo is: it asks both apps
(the study's state, and whether its default run has scored the events)."""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from scoring.services.staleness import study_scores_current_refusal
from sessionlab.plurals import counted
from studies.errors import EventArchiveError
from studies.interchange.command_helpers import study_by_slug
from studies.retention import archive_plans, study_events_archive


class Command(BaseCommand):
    help = "Archive the events of studies closed before the cut-off, verified, then delete them from the log."

    def add_arguments(self, parser):
        parser.add_argument(
            "--study", action="append", help="a study's slug (repeatable; default: every closed one)"
        )
        parser.add_argument(
            "--closed-days",
            type=int,
            default=365,
            help="only studies closed at least this many days ago (365)",
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be archived; change nothing"
        )

    def handle(self, *args, **options):
        if options["closed_days"] < 0:
            raise CommandError(f"--closed-days {options['closed_days']}: a number of days, 0 or more")
        cutoff = timezone.now() - timedelta(days=options["closed_days"])
        named = [study_by_slug(slug) for slug in options["study"]] if options["study"] else None
        plans = archive_plans(closed_before=cutoff, studies=named)
        for plan in plans:  # the time measures and observed depths are computed from the events
            plan.refusal = plan.refusal or study_scores_current_refusal(plan.study)
        refused = [plan for plan in plans if plan.refusal]
        for plan in refused:
            self.stdout.write(f"{plan.study.slug}: kept ({counted(plan.events, 'event')}): {plan.refusal}")
        for plan in plans:
            if plan.refusal:
                continue
            if options["dry_run"]:
                self.stdout.write(
                    f"{plan.study.slug}: would archive {counted(plan.events, 'event')}, then delete them"
                )
                continue
            try:
                archive = study_events_archive(study=plan.study, closed_before=cutoff)
            except EventArchiveError as error:
                raise CommandError(str(error)) from None
            self.stdout.write(
                f"{plan.study.slug}: archived {counted(archive.events, 'event')} to {archive.key} "
                f"({archive.compressed_bytes} bytes, sha256 {archive.sha256}), verified, deleted from the log"
            )
        if named and refused:  # the studies asked for by name must not be skipped in silence
            raise CommandError(f"{len(refused)} of the studies named were not archived (above: why)")
