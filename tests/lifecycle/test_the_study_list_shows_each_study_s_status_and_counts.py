"""The researcher's study list shows each study's life-cycle status, whether its design is locked, and its
counts (participants enrolled, previews left out; sessions completed and in progress), in a fixed number of
queries however many studies there are (selectors.studies_listed)."""

import datetime as dt
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from studies.design import lifecycle, services
from studies.models import SearchSession
from tests.factories import study_designed, study_with_sessions

pytestmark = pytest.mark.django_db


def row_of(html: str, slug: str) -> dict[str, str]:
    row = re.search(rf'<tr data-study="{re.escape(slug)}">(.*?)</tr>', html, re.S)
    assert row, f"no row for {slug}"
    cells = dict(re.findall(r'<td class="study-([a-z-]+)"[^>]*>(.*?)</td>', row.group(1), re.S))
    return {name: re.sub(r"<[^>]+>", "", text).strip() for name, text in cells.items()}


def in_progress_session(participant):
    return SearchSession.objects.create(
        assignment=participant.assignments.get(position=1),
        started_at=timezone.now() - dt.timedelta(minutes=2),
    )


@pytest.fixture
def two_studies(designed_study, collection, alice):
    """A worked, locked study (P001 finished two sessions, P002 has one open, a preview one more), paused; and
    a fresh one of Alice's, closed before anyone enrolled."""
    worked = study_with_sessions(designed_study, collection)
    in_progress_session(worked.participants.get(code="P002"))
    preview = lifecycle.preview_start(study=worked, by=alice)
    in_progress_session(preview)
    lifecycle.study_status_change(study=worked, status="paused", by=alice)
    fresh = services.study_create(owner=alice, name="Fresh study")
    lifecycle.study_status_change(study=fresh, status="closed", by=alice)
    return worked, fresh


def test_each_study_shows_its_status_lock_and_counts(client, alice, two_studies):
    worked, fresh = two_studies
    client.force_login(alice)
    html = client.get(reverse("studies:study_list")).content.decode()
    assert row_of(html, worked.slug) == {
        "status": "Paused",
        "design": "Locked",
        "enrolled": "2",  # the preview participant is not counted
        "completed": "2",
        "in-progress": "1",  # P002's; the preview's open session is not counted
    }
    assert row_of(html, fresh.slug) == {
        "status": "Closed",
        "design": "Editable",
        "enrolled": "0",
        "completed": "0",
        "in-progress": "0",
    }


def test_a_study_with_no_status_reads_as_open(client, alice, study):
    client.force_login(alice)
    html = client.get(reverse("studies:study_list")).content.decode()
    assert row_of(html, study.slug)["status"] == "Open"


def test_another_researcher_s_studies_are_not_listed(client, charlie, two_studies):
    client.force_login(charlie)
    html = client.get(reverse("studies:study_list")).content.decode()
    assert "data-study=" not in html and "No studies yet." in html


def test_the_list_takes_the_same_queries_for_one_study_or_many(
    client, alice, two_studies, collection, django_assert_max_num_queries, django_assert_num_queries
):
    client.force_login(alice)
    with django_assert_max_num_queries(5) as one:  # session, user, the list; two studies so far
        assert client.get(reverse("studies:study_list")).status_code == 200
    for n in range(6):
        extra = study_designed(services.study_create(owner=alice, name=f"More {n}", status="open"))
        study_with_sessions(extra, collection)
    with django_assert_num_queries(len(one.captured_queries)):
        html = client.get(reverse("studies:study_list")).content.decode()
    assert html.count("data-study=") == 8
