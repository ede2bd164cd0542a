"""manage.py import_package FILE.zip --owner USER: a study package (export_package) as a new study, scored
again with each of the package's runs; says whether the new scores equal the package's."""

from django.core.management.base import BaseCommand, CommandError

from scoring.lib.errors import InputError
from scoring.models import ScoringRun
from scoring.package.importer import package_scores_compared, study_package_import
from sessionlab.plurals import counted
from studies.interchange.command_helpers import user_by_name


class Command(BaseCommand):
    help = (
        "Import a study package (from export_package) as a new study owned by --owner and score it again "
        "with the package's runs; all or nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="the package (zip)")
        parser.add_argument("--owner", required=True, help="username of the new study's owner")
        parser.add_argument("--name", help="name of the new study (default: the packaged name)")

    def handle(self, *args, path, owner, name, **options):
        try:
            done = study_package_import(path=path, owner=user_by_name(owner), name=name)
        except InputError as error:
            raise CommandError(str(error)) from None
        study = done.study
        self.stdout.write(
            f"imported study {study.slug!r}: {counted(study.participants.count(), 'participant')}, "
            f"{counted(len(done.runs), 'scoring run')}"
        )
        if any(run.status != ScoringRun.Status.DONE for run in done.runs.values()):
            self.stdout.write("the runs are queued; compare once a worker has scored them")
            return
        differences = package_scores_compared(path=path, imported=done)
        for line in differences[:20]:
            self.stdout.write(f"differs: {line}")
        if differences:
            raise CommandError(f"{counted(len(differences), 'difference')} from the package's scores")
        self.stdout.write("the scores are identical to the package's")
