"""The exclusion rule on a participant's agreement with the reference ("Checks"): the researcher
sets it on the study (API, validated), it marks exactly the participants below the minimum with the figure and
the reason, the stored sessions stay as they were (the tidy CSV and the API show the mark), and the dashboards
leave the marked participants' sessions out by default, say so, count them, and include them on request."""

import csv
import io

import pytest
from django.urls import reverse
from django.utils import timezone

from studies.assessment.exclusion import exclusion_apply
from studies.interchange.tidy_csv import study_tables
from studies.models import Judgment, Participant, Query, SearchSession, ShownResult
from tests.dashboards.conftest import (  # noqa: F401  (fixtures)
    _fresh_chart_cache,
    collection_docs,
    constructed,
    scored,
)
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

DISAGREEING = ("P001", "P002")  # judge every reference document at the opposite end of the scale
FEW = "P003"  # disagrees too, but on 4 documents: fewer than the rule's least number (5 by default)


def _judge(built, docs):
    """Every participant judges, in each session, the reference's documents of its topic: as the reference
    does, except DISAGREEING (3 - grade, on all 12) and FEW (3 - grade, on 1 of them only)."""
    now = timezone.now()
    rows = []
    for record in built.sessions:
        grades = built.grades[record["topic"]]
        items = sorted(grades.items())
        if record["participant"] == FEW:
            items = items[:1]
        for ext, grade in items:
            own = 3 - grade if record["participant"] in (*DISAGREEING, FEW) else grade
            rows.append(
                Judgment(
                    session_id=record["id"], document=docs[ext], grade=own, created_at=now, updated_at=now
                )
            )
    Judgment.objects.bulk_create(rows)


@pytest.fixture
def judged(scored, collection_docs):  # noqa: F811  (the imported fixture)
    built, run = scored
    _judge(built, collection_docs)
    return built, run


def _snapshot(study):
    return (
        list(SearchSession.objects.filter(assignment__participant__study=study).order_by("pk").values()),
        list(Query.objects.filter(session__assignment__participant__study=study).order_by("pk").values()),
        list(
            ShownResult.objects.filter(query__session__assignment__participant__study=study)
            .order_by("pk")
            .values_list("pk", "document_id", "rank")
        ),
        list(
            Judgment.objects.filter(session__assignment__participant__study=study)
            .order_by("pk")
            .values_list("pk", "grade", "updated_at")
        ),
    )


def _set_rule(client, study, **fields):
    return client.patch(f"/api/studies/{study.pk}/", fields, format="json")


def test_the_rule_marks_exactly_the_participants_below_it_and_changes_no_session(judged):
    built, _run = judged
    study = built.study
    before = _snapshot(study)
    response = _set_rule(
        client_for(study.owner), study, exclusion_min_agreement=0.5, exclusion_min_documents=5
    )
    assert response.status_code == 200, response.content
    assert (response.json()["exclusion_min_agreement"], response.json()["exclusion_min_documents"]) == (
        0.5,
        5,
    )
    marked = Participant.objects.filter(study=study, excluded_at__isnull=False)
    assert sorted(marked.values_list("code", flat=True)) == list(DISAGREEING)
    for person in marked:
        assert person.excluded_agreement < 0.5
        assert "linear weighted kappa" in person.excluded_reason
        assert (
            f"{person.excluded_agreement:.3f}" in person.excluded_reason
            and "minimum 0.5" in person.excluded_reason
        )
    assert _snapshot(study) == before  # the mark is on the participant only

    # The API and the tidy CSV show the mark; every session is still there.
    rows = {
        row["code"]: row
        for row in client_for(study.owner)
        .get(f"/api/studies/{study.pk}/participants/?page_size=100")
        .json()["results"]
    }
    assert rows["P001"]["excluded_reason"] and rows["P001"]["excluded_at"]
    assert rows["P004"]["excluded_at"] is None and rows["P004"]["excluded_reason"] is None
    header, *sessions = study_tables(study=study)["sessions"]
    assert len(sessions) == 32
    flagged = {row[header.index("participant")] for row in sessions if row[header.index("excluded")] == 1}
    assert flagged == set(DISAGREEING)

    # P003 (4 documents in common) is marked once the least
    # number allows it; percent agreement is 0 for all 3.
    study.refresh_from_db()
    study.exclusion_min_documents, study.exclusion_measure = 4, "percent"
    study.save(update_fields=["exclusion_min_documents", "exclusion_measure"])
    outcome = exclusion_apply(study=study)
    assert outcome.excluded == (*DISAGREEING, FEW) and outcome.cleared == ()
    assert Participant.objects.get(study=study, code=FEW).excluded_agreement == 0
    study.exclusion_min_documents = 5
    study.save(update_fields=["exclusion_min_documents"])
    assert exclusion_apply(study=study).cleared == (FEW,)
    # Turning the rule off clears every mark.
    response = _set_rule(client_for(study.owner), study, exclusion_min_agreement=None)
    assert response.status_code == 200
    assert not Participant.objects.filter(study=study, excluded_at__isnull=False).exists()
    assert _snapshot(study) == before


@pytest.mark.parametrize(
    "field, value",
    [
        ("exclusion_min_agreement", 1.5),
        ("exclusion_min_agreement", -0.1),
        ("exclusion_min_agreement", "high"),
        ("exclusion_measure", "accuracy"),
        ("exclusion_min_documents", 0),
    ],
)
def test_a_bad_setting_is_a_400_naming_the_field(judged, field, value):
    built, _run = judged
    response = _set_rule(client_for(built.study.owner), built.study, **{field: value})
    assert response.status_code == 400 and field in response.json()
    assert not Participant.objects.filter(study=built.study, excluded_at__isnull=False).exists()


def _chart(client, run, chart, fmt="json", status=200, **query):
    response = client.get(reverse(f"scoring:chart_{fmt}", args=[run.study.slug, run.pk, chart]), query)
    assert response.status_code == status, response.content[:500]
    if status != 200:
        return response
    return list(csv.reader(io.StringIO(response.content.decode()))) if fmt == "csv" else response.json()


def test_the_dashboards_leave_them_out_by_default_count_them_and_include_them_on_request(client, judged):
    built, run = judged
    study = built.study
    assert _set_rule(client_for(study.owner), study, exclusion_min_agreement=0.5).status_code == 200
    client.force_login(study.owner)
    n = {system: sum(s["system"] == system for s in built.sessions) for system in ("A", "B")}
    gone = {
        system: sum(s["system"] == system and s["participant"] in DISAGREEING for s in built.sessions)
        for system in ("A", "B")
    }

    payload = _chart(client, run, "curves")
    names = {t["name"] for t in payload["figure"]["data"] if t.get("name")}
    assert names == {f"{system} (n={n[system] - gone[system]})" for system in ("A", "B")}
    assert any("Excluded participants (P001, P002): 8 sessions left out" in note for note in payload["notes"])
    assert "2 excluded participants left out" in payload["figure"]["layout"]["title"]["text"]
    table = _chart(client, run, "curves", "csv")
    assert table[0][-1] == "excluded_sessions_left_out" and {row[-1] for row in table[1:]} == {"8"}

    included = _chart(client, run, "curves", excluded="include")
    assert {t["name"] for t in included["figure"]["data"] if t.get("name")} == {
        f"{system} (n={n[system]})" for system in ("A", "B")
    }
    assert any(
        "Excluded participants (P001, P002): counted, 8 sessions" in note for note in included["notes"]
    )

    # Every chart and table names the rule in its notes.
    from scoring.dashboards.registry import CHARTS

    for chart in CHARTS:
        notes = _chart(client, run, chart)["notes"]
        assert any(note.startswith("Excluded participants") for note in notes), chart
    queries = _chart(client, run, "queries")
    assert any("8 sessions left out" in note for note in queries["notes"])

    page = client.get(reverse("scoring:run_detail", args=[study.slug, run.pk]))
    assert (
        page.status_code == 200 and b"Excluded participants (P001, P002): 8 sessions left out" in page.content
    )


def test_a_bad_excluded_value_is_a_400(client, judged):
    built, run = judged
    client.force_login(built.study.owner)
    response = _chart(client, run, "curves", status=400, excluded="maybe")
    assert b"excluded is exclude or include" in response.content
    assert (
        client.get(
            reverse("scoring:run_detail", args=[built.study.slug, run.pk]), {"excluded": "maybe"}
        ).status_code
        == 400
    )


def test_without_a_rule_nothing_is_left_out_and_the_notes_say_so(client, judged):
    built, run = judged
    client.force_login(built.study.owner)
    payload = _chart(client, run, "curves")
    assert any("the study has no agreement rule" in note for note in payload["notes"])
    assert _chart(client, run, "curves", "csv")[0][-1] == "unjudged_sessions_left_out"


def test_the_agreement_page_sets_the_rule_and_shows_the_marks(client, judged):
    built, _run = judged
    study = built.study
    client.force_login(study.owner)
    url = reverse("assessment:agreement", args=[study.slug])
    bad = client.post(url, {"exclusion_min_agreement": "2", "exclusion_measure": "kappa_linear"})
    assert (
        bad.status_code == 400
        and not Participant.objects.filter(study=study, excluded_at__isnull=False).exists()
    )
    response = client.post(url, {"exclusion_min_agreement": "0.5", "exclusion_measure": "kappa_linear"})
    assert response.status_code == 302
    study.refresh_from_db()
    assert (study.exclusion_min_agreement, study.exclusion_measure, study.exclusion_min_documents) == (
        0.5,
        "kappa_linear",
        None,
    )
    marked = Participant.objects.filter(study=study, excluded_at__isnull=False).values_list("code", flat=True)
    assert sorted(marked) == list(DISAGREEING)
    page = client.get(url)
    assert page.status_code == 200 and page.content.count(b">excluded</span>") == 2
