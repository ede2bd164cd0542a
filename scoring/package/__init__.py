"""A study package (docs/package.md): the study's tables in a Psych-DS-like layout with RO-Crate metadata,
its JSON archive, qrels with provenance, the scoring runs' exact parameters and their scores. It lives in
scoring because it holds scores and the import re-scores; studies never imports scoring."""

from scoring.package.export import study_package_members, study_package_zip
from scoring.package.importer import PackageImport, study_package_import

__all__ = ["PackageImport", "study_package_import", "study_package_members", "study_package_zip"]
