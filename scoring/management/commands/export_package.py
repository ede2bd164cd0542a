"""manage.py export_package SLUG -o FILE.zip: the study package (docs/package.md): Psych-DS-like tables with
their codebook, RO-Crate metadata, the JSON archive, qrels, scoring parameters and scores; never panel ids."""

from django.core.management.base import BaseCommand

from scoring.package import study_package_zip
from studies.interchange.command_helpers import study_by_slug, write


class Command(BaseCommand):
    help = "Write a study's package (a zip: data/ tables, codebook, RO-Crate metadata, archive, scores)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("-o", "--output", required=True, help="the zip file to write")

    def handle(self, *args, slug, output, **options):
        write(self, output, study_package_zip(study=study_by_slug(slug)))
