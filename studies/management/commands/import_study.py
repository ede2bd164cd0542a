"""manage.py import_study FILE --owner USER: a study archive as a new study, all or nothing."""

from django.core.management.base import BaseCommand, CommandError

from scoring.lib.errors import InputError
from sessionlab.plurals import counted
from studies.interchange.archive import study_archive_import
from studies.interchange.command_helpers import user_by_name


class Command(BaseCommand):
    help = (
        "Import a JSON study archive (from export_study) as a new study owned by --owner. On an "
        "error nothing "
        "is imported and the message names the file, line and field."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", help="the archive")
        parser.add_argument("--owner", required=True, help="username of the new study's owner")
        parser.add_argument("--name", help="name of the new study (default: the archived name)")

    def handle(self, *args, **options):
        owner = user_by_name(options["owner"])
        try:
            study = study_archive_import(path=options["path"], owner=owner, name=options["name"])
        except InputError as error:
            raise CommandError(str(error)) from None
        for note in getattr(study, "import_notes", []):
            self.stdout.write(f"note: {note}")
        self.stdout.write(
            f"imported study {study.slug!r}: {counted(study.participants.count(), 'participant')}"
        )
