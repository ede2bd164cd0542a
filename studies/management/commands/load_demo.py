from django.core.management.base import BaseCommand

from studies.demo import demo_study_load


class Command(BaseCommand):
    help = "Load the demo study (re-creating it if present) and print the researcher login."

    def add_arguments(self, parser):
        parser.add_argument("--participants", type=int, default=30)

    def handle(self, *args, participants, **options):
        loaded = demo_study_load(participants=participants)
        study = loaded.study
        self.stdout.write(self.style.SUCCESS(
            f"Demo study “{study.name}”: {study.participants.count()} participants, "
            f"{study.scenarios.count()} scenarios, {study.systems.count()} systems."
        ))
        self.stdout.write(
            "\n  Open   http://127.0.0.1:8000/studies/" + study.slug + "/\n"
            f"  Login  {loaded.username} / {loaded.password}\n"
        )
