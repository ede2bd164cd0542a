"""In Chromium at 1366 px: the agreement page's participants-against-the-reference tables, with kappa's, AC1's
and AC2's intervals, scroll inside their card rather than widen the page; the full list of each row's
coefficients opens under the table."""

import pytest
from django.urls import reverse
from django.utils.timezone import now

from studies.assessment import references
from studies.models import Judgment, SearchSession

from .conftest import build_study

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_wide_tables_scroll_inside_their_card(
    chromium, live_server, designed_study, collection_docs, client
):
    build_study(designed_study, collection_docs, participants=16)
    documents = list(collection_docs.values())
    sessions = SearchSession.objects.filter(assignment__participant__study=designed_study)
    Judgment.objects.bulk_create(
        Judgment(
            session=session, document=documents[k], grade=(k * 7 + i) % 4, created_at=now(), updated_at=now()
        )
        for i, session in enumerate(sessions)
        for k in range(8)
    )
    # The reference grades document k (k * 7) % 4 in every topic: participants agree on some, not all.
    topics = set(designed_study.scenarios.values_list("topic_id", flat=True))
    lines = [f"{topic} 0 {documents[k].external_id} {(k * 7) % 4}" for topic in topics for k in range(8)]
    references.reference_version_import_qrels(
        study=designed_study, lines=lines, path="r", created_by=designed_study.owner
    )
    client.force_login(designed_study.owner)
    context = chromium.new_context(viewport={"width": 1366, "height": 900})
    context.add_cookies(
        [{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}]
    )
    page = context.new_page()
    page.goto(live_server.url + reverse("assessment:agreement", args=[designed_study.slug]))
    intervals = page.locator("#agreement-per-participant td.interval").all_inner_texts()
    assert any(text.startswith("[") for text in intervals)  # defined intervals, as wide as they get
    width, visible = page.evaluate(
        "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert width <= visible
    for table in ("#agreement-per-participant", "#agreement-per-scenario"):
        box = page.locator(table).locator("xpath=..").bounding_box()
        card = page.locator(table).locator("xpath=ancestor::section").bounding_box()
        assert box["x"] + box["width"] <= card["x"] + card["width"]
    details = page.locator("details.participant-estimates")
    assert not page.is_visible("details.participant-estimates table")
    details.locator("summary").click()
    assert details.locator("table.agreement-estimates").count() == 16
    context.close()
