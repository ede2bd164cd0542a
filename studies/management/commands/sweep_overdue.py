"""manage.py sweep_overdue [SLUG]: end overdue sessions and time out overdue participants now (what the beat's
studies.tasks.overdue_sweep_task does every OVERDUE_SWEEP_SECONDS), for a server run without a beat (cron)."""

from django.core.management.base import BaseCommand

from sessionlab.plurals import counted
from studies.interchange.command_helpers import study_by_slug
from studies.tasks import overdue_sweep_task


class Command(BaseCommand):
    help = "End overdue sessions and time out participants past the study-level limit (docs/recruitment.md)."

    def add_arguments(self, parser):
        parser.add_argument("study", nargs="?", help="one study's slug (default: every study)")

    def handle(self, *args, **options):
        study_id = study_by_slug(options["study"]).pk if options["study"] else None
        totals = overdue_sweep_task(study_id)
        self.stdout.write(
            f"{counted(totals['studies'], 'study')} swept: "
            f"{counted(totals['sessions_ended'], 'session')} ended, "
            f"{counted(totals['timed_out'], 'participant')} timed out, "
            f"{counted(totals['states_changed'], 'state')} moved on"
        )
