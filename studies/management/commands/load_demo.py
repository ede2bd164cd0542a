from django.core.management.base import BaseCommand

from studies.demo import SIMULATED, demo_study_load


class Command(BaseCommand):
    help = "Load the demo study (re-creating it if present): simulated sessions, scored; prints the logins."

    def add_arguments(self, parser):
        parser.add_argument("--participants", type=int, default=SIMULATED, help="simulated participants")
        parser.add_argument("--data", default=None, help="the Cranfield folder (default: $DEMO_DATA)")

    def handle(self, *args, participants, data, **options):
        loaded = demo_study_load(participants=participants, data_dir=data)
        study = loaded.study
        self.stdout.write(self.style.SUCCESS(
            f"Demo study “{study.name}”: {participants} simulated participants worked {loaded.sessions} sessions "
            f"on {loaded.collection_source}; {loaded.scoring_note}."
        ))
        links = "\n".join(f"         http://127.0.0.1:8000{link}" for link in loaded.try_links)
        self.stdout.write(
            f"\n  Study       http://127.0.0.1:8000/studies/{study.slug}/\n"
            f"  Dashboards  http://127.0.0.1:8000/scoring/{study.slug}/\n"
            f"  Login       {loaded.username} / {loaded.password}   (researcher)\n"
            f"  Assessor    http://127.0.0.1:8000/assess/  as  assessor / {loaded.assessor_password}\n"
            f"  Take part as a participant (private links):\n{links}\n"
        )
