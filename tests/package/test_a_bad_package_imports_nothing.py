"""A package that cannot be imported says which member, line and field, and imports nothing: not a zip, a
member missing, a run's parameter that is not a number, a run on a reference version the archive lacks."""

import csv
import io
import zipfile

import pytest

from scoring.package.importer import study_package_import
from studies.interchange import ImportFailure
from studies.models import Study

pytestmark = pytest.mark.django_db


def altered(package, tmp_path, change, drop=None):
    path = tmp_path / "altered.zip"
    with zipfile.ZipFile(package) as source, zipfile.ZipFile(path, "w") as target:
        for info in source.infolist():
            if drop is not None and info.filename == drop:
                continue
            data = source.read(info)
            if "_data-scoringruns_" in info.filename:
                data = change(data.decode()).encode()
            target.writestr(info, data)
    return path


def second_run(text, column, value):
    rows = list(csv.DictReader(io.StringIO(text)))
    rows[1][column] = value
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("top", "ten", ":3: top: not a whole number: 'ten'"),
        ("reference_version", "9", ":3: reference_version: no reference version 9 in the archive"),
        ("formulation", "1999", ":3: scoring_runs: unknown formulation"),
    ],
)
def test_a_bad_run_names_its_line_and_field_and_imports_nothing(
    package, tmp_path, alice, column, value, message
):
    before = Study.objects.count()
    path = altered(package, tmp_path, lambda text: second_run(text, column, value))
    with pytest.raises(ImportFailure, match=message):
        study_package_import(path=path, owner=alice)
    assert Study.objects.count() == before


def test_a_package_without_its_archive_or_not_a_zip_is_refused(package, tmp_path, alice):
    path = altered(package, tmp_path, lambda text: text, drop="sessionlab-archive.json")
    with pytest.raises(ImportFailure, match="sessionlab-archive.json: missing from the package"):
        study_package_import(path=path, owner=alice)
    other = tmp_path / "plain.zip"
    other.write_text("not a zip")
    with pytest.raises(ImportFailure, match="not a zip file"):
        study_package_import(path=other, owner=alice)
