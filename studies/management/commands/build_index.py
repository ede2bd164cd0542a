"""manage.py build_index: build the search indexes the built-in systems need (never built at request time)."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from sessionlab.plurals import counted
from studies.models import Collection, Study, System
from studies.search.engines.search import CONFIGURATIONS
from studies.search.index_versions import index_build_here
from studies.search.systems import collection_index_build, collection_index_dir, system_configuration
from studies.tasks import collection_index_build_task


class Command(BaseCommand):
    help = "Build a collection's search indexes, one per configuration (default: every configuration)."

    def add_arguments(self, parser):
        parser.add_argument("collection", nargs="?", help="collection id or name")
        parser.add_argument("--study", metavar="SLUG", help="build what this study's built-in systems use")
        parser.add_argument(
            "--configuration",
            action="append",
            choices=sorted(CONFIGURATIONS),
            help="only this configuration (repeatable)",
        )
        parser.add_argument(
            "--queue", action="store_true", help="queue Celery tasks instead of building here"
        )
        parser.add_argument(
            "--local",
            action="store_true",
            help="only bring this server's copy up to the current version (no new version for the others)",
        )

    def handle(self, *args, collection, study, configuration, queue, local, **options):
        if bool(collection) == bool(study):
            raise CommandError("name a collection (id or name) or --study SLUG")
        if queue and local:
            raise CommandError("--local builds on this server: it cannot be queued")
        configurations = configuration
        if study:
            found = Study.objects.filter(slug=study).select_related("collection").first()
            if found is None:
                raise CommandError(f"no study with slug {study!r}")
            if found.collection is None:
                raise CommandError(
                    f"study {study!r} has no collection yet (manage.py import_collection --study)"
                )
            target = found.collection
            used = {
                system_configuration(s.config) for s in found.systems.filter(backend=System.Backend.BUILTIN)
            }
            configurations = configurations or sorted(c for c in used if c in CONFIGURATIONS)
            if not configurations:
                raise CommandError(f"study {study!r} has no built-in systems")
        else:
            lookup = {"pk": int(collection)} if collection.isdigit() else {"name": collection}
            target = Collection.objects.filter(**lookup).first()
            if target is None:
                raise CommandError(f"no collection {collection!r}")
        for name in configurations or sorted(CONFIGURATIONS):
            if queue:
                transaction.on_commit(lambda n=name: collection_index_build_task.delay(target.pk, n))
                self.stdout.write(f"queued {name} for {target.name!r}")
                continue
            if local:
                count = index_build_here(collection_id=target.pk, configuration=name)
            else:
                count = collection_index_build(collection=target, configuration=name)
            where = collection_index_dir(collection=target, configuration=name)
            self.stdout.write(self.style.SUCCESS(f"{name}: {counted(count, 'document')} indexed in {where}"))
