"""manage.py repair_reference: give studies made without their collection's judgments (the
New-study form's, before the fix) those judgments as a reference version (docs/setting-up-a-study.md)."""

from django.core.management.base import BaseCommand, CommandError

from studies.assessment.collection_reference import reference_version_from_collection
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Give a study (--study ID) or every study (--all) its collection's judgments as a reference version "
        "when no version holds them yet. Idempotent: a study that has them is left as it is."
    )

    def add_arguments(self, parser):
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--study", metavar="ID", help="the study's id (or its slug)")
        which.add_argument("--all", action="store_true", help="every study built on a collection")

    def handle(self, *args, **options):
        if options["all"]:
            studies = list(Study.objects.filter(collection__isnull=False).order_by("pk"))
        else:
            given = str(options["study"]).strip()
            found = Study.objects.filter(**({"pk": int(given)} if given.isdigit() else {"slug": given}))
            studies = list(found)
            if not studies:
                raise CommandError(f"--study: no study {given!r}")
        made = 0
        for study in studies:
            outcome = reference_version_from_collection(study=study)
            made += outcome.created
            if outcome.created or not options["all"]:
                self.stdout.write(f"{study.pk} {study.slug}: {outcome.words}")
        self.stdout.write(f"{made} of {len(studies)} studies given their collection's judgments.")
