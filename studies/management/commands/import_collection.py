"""manage.py import_collection: load a document collection, its topics and judgments
(see docs/running-a-study.md)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from sessionlab.plurals import counted
from studies.library.collection_import import CollectionImportError, collection_import, parse_grade_map
from studies.models import Study


class Command(BaseCommand):
    help = (
        "Import a document collection (Cranfield folder, TREC or JSON-lines files, or an ir_datasets id). "
        "Topics can become a study's scenarios; judgments become the study's reference judgments through "
        "--grade-map. On bad input nothing is imported and the error names the file and line."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "paths", nargs="*", help="cranfield: the folder; trec/jsonl: one or more document files"
        )
        parser.add_argument("--format", choices=["cranfield", "trec", "jsonl"], help="input format")
        parser.add_argument(
            "--ir-datasets",
            metavar="ID",
            help="load through the ir_datasets package instead "
            "(needs the package and network access to its sources)",
        )
        parser.add_argument("--name", required=True, help="name of the new collection (unique)")
        parser.add_argument("--description", default="")
        parser.add_argument("--topics", metavar="FILE", help="TREC topics file (trec/jsonl formats)")
        parser.add_argument("--qrels", metavar="FILE", help="TREC qrels file of graded judgments")
        parser.add_argument(
            "--grade-map",
            metavar="MAP",
            help="source grade -> study grade, e.g. 1:3,2:2,3:1,4:1,-1:0 "
            "(cranfield default: 1:3,2:2,3:1,4:1,-1:0; qrels default: grades as they are)",
        )
        parser.add_argument(
            "--owner",
            metavar="USER",
            help="the researcher who owns the new collection (with "
            "--study: the study's owner); without either, only superusers may use it",
        )
        parser.add_argument(
            "--study",
            metavar="SLUG",
            help="attach to this study: its collection, scenarios, "
            "and a new reference version from the judgments",
        )
        parser.add_argument(
            "--scenarios",
            metavar="TOPIC_IDS",
            default="",
            help="comma-separated topic ids to turn into the study's scenarios",
        )

    def handle(self, *args, **options):
        paths = options["paths"]
        if options["ir_datasets"]:
            if paths or options["format"]:
                raise CommandError("--ir-datasets takes no paths and no --format")
            fmt, paths = "ir_datasets", [options["ir_datasets"]]
        else:
            fmt = options["format"]
            if not fmt:
                raise CommandError("give --format cranfield|trec|jsonl (or --ir-datasets ID)")
        owner = None
        if options["owner"]:
            owner = get_user_model().objects.filter(username=options["owner"], is_staff=True).first()
            if owner is None:
                raise CommandError(f"no researcher account {options['owner']!r}")
        study = None
        if options["study"]:
            study = Study.objects.filter(slug=options["study"]).first()
            if study is None:
                raise CommandError(f"no study with slug {options['study']!r}")
        try:
            grade_map = parse_grade_map(options["grade_map"]) if options["grade_map"] else None
            result = collection_import(
                name=options["name"],
                format=fmt,
                paths=paths,
                topics_path=options["topics"],
                qrels_path=options["qrels"],
                grade_map=grade_map,
                description=options["description"],
                study=study,
                scenario_topics=[t for t in options["scenarios"].split(",") if t.strip()],
                owner=owner,
            )
        except CollectionImportError as exc:
            raise CommandError(f"{exc} (nothing was imported)") from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Collection {result.collection.name!r} (id {result.collection.pk}): "
                f"{counted(result.documents, 'document')}, "
                f"{counted(result.topics, 'topic')}, {counted(result.judgments, 'judgment')} read."
            )
        )
        if study is not None:
            self.stdout.write(
                f"Study {study.slug!r}: {counted(len(result.scenarios), 'scenario')} added"
                + (
                    f", reference version {result.reference_version.number} with "
                    f"{counted(result.judgments, 'judgment')}"
                    if result.reference_version
                    else ""
                )
                + "."
            )
        elif result.judgments:
            self.stdout.write("Judgments were checked but not stored: pass --study SLUG to store them.")
        self.stdout.write(f"Next: manage.py build_index {result.collection.pk}")
