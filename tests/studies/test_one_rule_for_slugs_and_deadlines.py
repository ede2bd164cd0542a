"""A study's slug and a session's deadline each have one rule (services.study_slug_free,
participation.rules.deadline_at), used by every path that needs one."""

from datetime import UTC, datetime, timedelta

import pytest

from studies.design import services
from studies.interchange.archive import study_archive_import, study_archive_json
from studies.kernel.deadlines import deadline_at

pytestmark = pytest.mark.django_db


def test_a_second_study_of_the_same_name_gets_the_next_free_slug(alice):
    first = services.study_create(owner=alice, name="Same name")
    second = services.study_create(owner=alice, name="Same name")
    assert (first.slug, second.slug) == ("same-name", "same-name-2")
    assert services.study_create(owner=alice, name="!!!").slug == "study"


def test_an_imported_archive_takes_a_free_slug_by_the_same_rule(alice, study, tmp_path):
    path = tmp_path / "study.json"
    path.write_text(study_archive_json(study=study), encoding="utf-8")
    copy = study_archive_import(path=path, owner=alice)
    assert copy.slug == f"{study.slug}-2"
    assert services.study_slug_free(study.slug) == f"{study.slug}-3"
    assert services.study_slug_free("", "!!!", "Fallback name") == "fallback-name"


def test_the_deadline_is_the_start_plus_the_time_limit():
    start = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    assert deadline_at(start, 20) == start + timedelta(minutes=20)
    assert deadline_at(start, None) is None
    assert deadline_at(start, 0) is None
