"""Adding pool documents from a qrels file: all or nothing, errors name the file and line."""

import pytest

from scoring.lib.errors import InputError
from studies.assessment import pools
from studies.models import PoolDocument

from .conftest import pool_ids


def test_qrels_import_adds_each_document_to_its_topics_pool(assessed_study, alice):
    lines = ["1 0 d1 2", "1 0 d2 0", "3 0 d5 1", ""]
    assert pools.pool_import_qrels(study=assessed_study, lines=lines, path="team.qrels", added_by=alice) == 3
    assert pool_ids(assessed_study, "S1") == {"d1", "d2"}
    assert pool_ids(assessed_study, "S3") == {"d5"}
    assert PoolDocument.objects.get(document__external_id="d5").source_detail == "team.qrels:3"


@pytest.mark.parametrize(
    ("lines", "line", "reason"),
    [
        (["1 0 d1 2", "1 0 d2"], 2, "expected 4 fields"),
        (["1 0 d1 2", "9 0 d2 1"], 2, "topic '9' is not a scenario topic"),
        (["1 0 d1 2", "2 0 d2 1", "2 0 missing 1"], 3, "document 'missing' is not in the study's collection"),
        (["1 0 d1 x"], 1, "grade 'x' is not an integer"),
    ],
)
def test_a_bad_qrels_line_imports_nothing_and_names_file_and_line(assessed_study, alice, lines, line, reason):
    with pytest.raises(InputError) as caught:
        pools.pool_import_qrels(study=assessed_study, lines=lines, path="bad.qrels", added_by=alice)
    assert (caught.value.path, caught.value.line) == ("bad.qrels", line)
    assert reason in caught.value.reason
    assert str(caught.value).startswith(f"bad.qrels:{line}: ")
    assert not PoolDocument.objects.exists()
