"""The preview ("Try it as a participant"): its participant and sessions are stored apart, never counted in
the balance, the scores or the exports, and deleted in one click (studies/design/lifecycle.py)."""

import datetime as dt
import io
import zipfile

import pytest
from django.utils import timezone

from studies.design import lifecycle, selectors, services
from studies.interchange.archive import study_archive
from studies.interchange.downloads import study_csv_zip
from studies.interchange.session_track import session_track_export
from studies.interchange.trec import study_runs
from studies.models import Event, Participant, Query, SearchSession, ShownResult
from tests.factories import study_with_sessions


@pytest.fixture
def previewed(designed_study, collection, alice):
    """A worked study (P001 worked two sessions) and a
    preview participant who finished a session of its own."""
    study = study_with_sessions(designed_study, collection)
    preview = lifecycle.preview_start(study=study, by=alice)
    now = timezone.now()
    session = SearchSession.objects.create(
        assignment=preview.assignments.get(position=1),
        started_at=now - dt.timedelta(minutes=3),
        ended_at=now,
        end_reason="satisfied",
    )
    query = Query.objects.create(session=session, position=1, text="preview query", issued_at=now)
    ShownResult.objects.create(
        query=query, rank=1, document=collection.documents.get(external_id="d1"), shown_at=now
    )
    Event.objects.create(
        participant=preview,
        session=session,
        type="query",
        client_event_id="preview.q1",
        client_time=now,
        payload={"data": {"text": "preview query"}, "ack": {"ok": True}},
    )
    return study, preview


def test_a_preview_participant_is_marked_and_takes_no_plan_row(previewed):
    study, preview = previewed
    assert preview.preview_at is not None and preview.code.startswith("PREVIEW-")
    assert preview.enrolment_index >= lifecycle.PREVIEW_INDEX_BASE
    assert [p.code for p in services.participants_enrol(study=study, count=1)] == ["P003"]
    assert study.participants.get(code="P003").enrolment_index == 2


def test_the_balance_tables_leave_the_preview_out(previewed):
    study, _preview = previewed
    balance = selectors.study_balance(study=study)
    assert sum(cell.planned for _, cells in balance.system_rows() for cell in cells) == 2 * 4  # two real ones
    assert "PREVIEW" not in " ".join(p.code for p in selectors.study_participants_with_orders(study=study))


def test_no_export_holds_the_preview(previewed):
    study, preview = previewed
    archive = study_archive(study=study)
    assert preview.code not in str(archive) and "preview query" not in str(archive)
    with zipfile.ZipFile(io.BytesIO(study_csv_zip(study=study))) as tables:
        text = " ".join(tables.read(name).decode() for name in tables.namelist())
    assert preview.code not in text and "preview query" not in text and "P001" in text
    assert all(preview.code not in run.text for run in study_runs(study=study, unit="query"))
    assert b"preview query" not in session_track_export(study=study)


def test_scoring_runs_skip_the_preview(previewed, django_capture_on_commit_callbacks):
    from scoring import services as scoring_services
    from scoring.models import SessionScore

    study, _preview = previewed
    with django_capture_on_commit_callbacks(execute=True):
        run = scoring_services.scoring_run_create(study=study, judgments="participant")
    run.refresh_from_db()
    assert run.status == "done", run.error
    scored = set(
        SessionScore.objects.filter(run=run).values_list("session__assignment__participant__code", flat=True)
    )
    assert scored == {"P001"}


def test_delete_preview_data_removes_every_row_in_one_click(client, previewed, bob):
    study, preview = previewed
    client.force_login(bob)
    page = client.get(f"/studies/{study.slug}/").content.decode()
    assert "Delete preview data (1 preview participant)" in page and preview.code not in page
    response = client.post(f"/studies/{study.slug}/preview/delete/", follow=True)
    assert "Deleted the preview data (1 preview participant)" in response.content.decode()
    assert not Participant.objects.filter(preview_at__isnull=False).exists()
    assert not Event.objects.filter(client_event_id="preview.q1").exists()
    assert not Query.objects.filter(text="preview query").exists()
    assert study.participants.count() == 2


def test_try_it_as_a_participant_opens_the_preview_with_its_banner(client, designed_study, bob):
    client.force_login(bob)
    response = client.post(f"/studies/{designed_study.slug}/preview/")
    preview = Participant.objects.get(study=designed_study, preview_at__isnull=False)
    assert response.status_code == 302 and response["Location"] == f"/p/{preview.access_token}/"
    assert b'id="preview-banner"' in client.get(response["Location"]).content
    designed_study.refresh_from_db()
    assert designed_study.design_locked_at is None  # the design can still change
    services.design_row_delete(
        study=designed_study, row=designed_study.scenarios.last()
    )  # takes the preview along
    assert not Participant.objects.filter(study=designed_study).exists()


def test_a_preview_goes_on_while_paused_but_not_once_closed(designed_study, alice):
    from studies.errors import StudyStatusError

    lifecycle.study_status_change(study=designed_study, status="paused", by=alice)
    preview = lifecycle.preview_start(study=designed_study, by=alice)
    lifecycle.participant_check_accepting(Participant.objects.select_related("study").get(pk=preview.pk))
    lifecycle.study_status_change(study=designed_study, status="closed", by=alice)
    with pytest.raises(StudyStatusError, match="closed"):
        lifecycle.preview_start(study=designed_study, by=alice)


def test_assessment_pools_never_take_a_previews_documents(previewed):
    from studies.assessment import pools

    study, preview = previewed
    pools.pool_build(study=study, rule="top_x", top_x=10)
    scenario = preview.assignments.get(position=1).scenario
    pooled = set(scenario.assessment_pool.documents.values_list("document__external_id", flat=True))
    real = set(
        ShownResult.objects.filter(
            query__session__assignment__scenario=scenario,
            query__session__assignment__participant__preview_at=None,
        ).values_list("document__external_id", flat=True)
    )
    preview_only = (
        set(
            ShownResult.objects.filter(query__session__assignment__participant=preview).values_list(
                "document__external_id", flat=True
            )
        )
        - real
    )
    assert (
        pooled == real and preview_only
    )  # the preview showed a document nobody else did, and it is not pooled


def test_the_api_lists_no_preview_and_shows_the_status(client, previewed, alice):
    study, preview = previewed
    client.force_login(alice)
    listed = client.get(f"/api/studies/{study.pk}/participants/").json()
    codes = [row["code"] for row in listed.get("results", listed)]
    assert codes == ["P001", "P002"]
    assert client.get(f"/api/studies/{study.pk}/").json()["status"] == "open"
    client.logout()
    me = client.get("/api/participant/", headers={"Authorization": f"Participant {preview.access_token}"})
    assert me.status_code == 200 and me.json()["code"] == preview.code
