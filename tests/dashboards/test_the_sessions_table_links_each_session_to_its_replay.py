"""A run's sessions table, one row per session the dashboard's filters keep, with the run's scores,
the session's time and active time, the results seen and its replay link; linked from the dashboard."""

import html
import re

import pytest
from django.urls import reverse

from scoring.models import SessionScore
from studies.models import AttentionSpan, ResultExposure, SearchSession, ShownResult

pytestmark = pytest.mark.django_db


def _rows(page: str) -> list[list[str]]:
    body = page.split('id="sessions-table"', 1)[1].split("</tbody>", 1)[0].split("<tbody>", 1)[1]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in re.findall(r"<td>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
    ]


def test_every_scored_session_has_a_row_with_its_scores_and_replay(scored, client, alice):
    built, run = scored
    study = built.study
    session = SearchSession.objects.get(pk=built.sessions[0]["id"])  # 5 minutes long (conftest)
    AttentionSpan.objects.create(session=session, kind="hidden", start_ms=10_000, duration_ms=60_000)
    first, second = ShownResult.objects.filter(query__session=session).order_by("query__position", "rank")[:2]
    ResultExposure.objects.create(shown_result=first, first_visible_ms=0, visible_ms=4_000, max_permille=1000)
    ResultExposure.objects.create(shown_result=second, first_visible_ms=0, visible_ms=200, max_permille=400)
    client.force_login(alice)

    response = client.get(reverse("scoring:run_sessions", args=[study.slug, run.pk]))

    assert response.status_code == 200
    page = response.content.decode()
    rows = _rows(page)
    judged = SessionScore.objects.filter(run=run, unjudged=False)
    assert len(rows) == judged.count() > 0
    score = judged.get(session=session)
    row = next(r for r in rows if r[0] == score.participant.code and r[1] == score.scenario.code)
    assert row[2] == score.system.code
    assert row[4] == str(score.n_queries)
    assert row[5] == f"{score.final:.3f}" and row[6] == f"{score.normalized_final:.3f}"
    assert row[7] == "300.0" and row[8] == "240.0"  # 5 minutes, a minute hidden
    assert row[9] == "1" and row[10] == "1"  # one result on screen >= 1000 ms; one stretch away
    assert reverse("replay:session", args=[study.slug, session.pk]) in page


def test_the_filters_apply_and_the_dashboard_links_the_table(scored, client, alice):
    built, run = scored
    study = built.study
    client.force_login(alice)
    url = reverse("scoring:run_sessions", args=[study.slug, run.pk])

    only_a = _rows(client.get(url, {"system": "A"}).content.decode())

    assert only_a and {row[2] for row in only_a} == {"A"}
    assert len(only_a) == SessionScore.objects.filter(run=run, unjudged=False, system__code="A").count()
    dashboard = client.get(reverse("scoring:run_detail", args=[study.slug, run.pk]), {"system": "A"})
    assert f'href="{url}?system=A"' in dashboard.content.decode()


def test_a_filter_naming_nothing_is_a_400(scored, client, alice):
    built, run = scored
    client.force_login(alice)

    response = client.get(reverse("scoring:run_sessions", args=[built.study.slug, run.pk]), {"system": "Z"})

    assert response.status_code == 400 and b"Bad filter" in response.content
