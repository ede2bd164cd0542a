"""Queue again the scoring runs whose pass is owed (e.g. after the broker was down): scoring.services."""

from django.conf import settings
from django.core.management.base import BaseCommand

from scoring.services import stale_runs_requeue


class Command(BaseCommand):
    help = (
        "Queue a full pass of every stale, never-started or stuck scoring run (after a broker outage; the "
        "beat schedule does this every REQUEUE_STALE_RUNS_SECONDS)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--stuck-minutes",
            type=int,
            default=settings.REQUEUE_STUCK_MINUTES,
            help="a run still running after this many minutes is queued again "
            "(default REQUEUE_STUCK_MINUTES, 30)",
        )

    def handle(self, *args, stuck_minutes, **options):
        queued = stale_runs_requeue(stuck_after_minutes=stuck_minutes)
        self.stdout.write(f"queued {len(queued)} run(s): {', '.join(map(str, queued)) or '-'}")
