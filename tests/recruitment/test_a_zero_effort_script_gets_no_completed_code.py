"""The issue's script: through the public link and the participant API, consent, the questionnaire, and
every task ended at once with no query. With the default rules ("none") it gets the completed code (so this
test can fail); once a minimum-effort rule is set it gets the failed-checks code and never the completed one,
or (outcome "flagged") the completed code with the shortfall recorded. An honest participant who meets the
rules gets the completed code."""

from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from studies.models import AuditEntry, Participant, ParticipantState, Recruitment
from studies.participation.recruitment.effort import participant_flags
from studies.participation.recruitment.panels import recruitment_update

from .conftest import prolific_pid

pytestmark = pytest.mark.django_db


def arrive(client, study) -> tuple[APIClient, Participant]:
    """Open the public link as a new Prolific participant; the API client holds their access token."""
    token = Recruitment.objects.get(study=study).public_token
    pid = prolific_pid()
    landing = client.get(f"/join/{token}/", {"PROLIFIC_PID": pid, "STUDY_ID": "S", "SESSION_ID": "X"})
    assert landing.status_code == 302, landing.content
    access_token = landing.url.strip("/").split("/")[-1]
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Participant {access_token}")
    return api, Participant.objects.get(study=study, panel_id=pid)


def step(api) -> dict:
    answer = api.get("/api/participant/step/")
    assert answer.status_code == 200, answer.content
    return answer.json()


def post(api, what: str, body: dict) -> dict:
    answer = api.post(f"/api/participant/{what}/", body, format="json")
    assert answer.status_code in (200, 201), answer.content
    return answer.json()


def answers_for(items) -> dict:
    by_kind = {"scale": "min", "integer": "min", "number": "min"}
    return {
        i["name"]: i.get(by_kind.get(i["kind"], ""), 1) if i["kind"] != "choice" else i["choices"][0]
        for i in items
        if i["kind"] != "text"
    } | {i["name"]: "fine" for i in items if i["kind"] == "text"}


def events(api, batch: list[dict]) -> list[dict]:
    answer = api.post("/api/participant/events/", {"events": batch}, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()["acks"]


def begin(api, study) -> dict:
    post(
        api,
        "consent",
        {"decision": "agree", "consent_version": study.consent_version, "client_event_id": "c"},
    )
    now = post(api, "questionnaire", {"answers": answers_for(step(api)["items"]), "client_event_id": "q"})
    return now["step"]


def script(api, study) -> dict:
    """The zero-effort script: every task started and ended at once, its questions answered; the last step."""
    now = begin(api, study)
    while now["kind"] not in ("done", "ended"):
        assert now["kind"] == "scenario", now
        position = now["assignment"]
        session = post(api, "sessions", {"assignment": position, "client_event_id": f"s{position}"})["id"]
        end = {
            "id": f"e{position}",
            "type": "session_end",
            "session": session,
            "data": {"reason": "satisfied"},
        }
        assert events(api, [end])[0]["ok"]
        items = step(api)["items"]
        body = {"session": session, "answers": answers_for(items), "client_event_id": f"p{position}"}
        now = post(api, "post-task", body)["step"]
    return now


def honest(api, study) -> dict:
    """A participant who searches, judges and spends minutes on each task (their client's times, replayed)."""
    now = begin(api, study)
    start = datetime.now(UTC)
    while now["kind"] != "done":
        assert now["kind"] == "scenario", now
        position = now["assignment"]
        t0 = start + timedelta(minutes=5 * position)

        def at(seconds: float, t0=t0) -> str:
            return (t0 + timedelta(seconds=seconds)).isoformat()

        body = {"assignment": position, "client_event_id": f"s{position}", "time": at(0)}
        session = post(api, "sessions", body)["id"]
        queries = [
            {
                "id": f"q{position}-{n}",
                "type": "query",
                "session": session,
                "data": {"text": text},
                "time": at(t),
            }
            for n, (text, t) in enumerate([("wing flow", 7.5), ("wing", 24.0)])
        ]
        shown = events(api, queries)[-1]["results"]
        judged = [
            {
                "id": f"j{position}-{n}",
                "type": "judgment",
                "session": session,
                "time": at(31 + 17 * n + n * n),
                "data": {"doc": shown[n]["doc"], "grade": 2},
            }
            for n in range(3)
        ]
        end = {
            "id": f"e{position}",
            "type": "session_end",
            "session": session,
            "data": {"reason": "satisfied"},
        }
        assert all(a["ok"] for a in events(api, [*judged, {**end, "time": at(140)}]))
        items = step(api)["items"]
        body = {"session": session, "answers": answers_for(items), "client_event_id": f"p{position}"}
        now = post(api, "post-task", body)["step"]
    return now


def rules(study, preset: str = "standard", outcome: str = "failed"):
    recruitment_update(study=study, effort_preset=preset, effort_outcome=outcome)
    return Recruitment.objects.get(study=study)


def test_with_no_rules_the_script_gets_the_completed_code(client, panel_study):
    api, participant = arrive(client, panel_study)
    done = script(api, panel_study)
    assert done["completion"]["kind"] == "completed"
    assert done["completion"]["code"] == Recruitment.objects.get(study=panel_study).code_completed
    assert Participant.objects.get(pk=participant.pk).state == ParticipantState.COMPLETED


@pytest.mark.parametrize("preset", ["light", "standard", "strict"])
def test_with_a_rule_the_script_gets_the_failed_checks_code_and_never_the_completed_one(
    client, panel_study, preset
):
    settings = rules(panel_study, preset)
    api, participant = arrive(client, panel_study)
    done = script(api, panel_study)
    assert done["kind"] == "ended" and done["completion"]["kind"] == "failed_checks"
    assert done["completion"]["code"] == settings.code_failed_checks
    assert settings.code_completed not in str(done) and settings.code_completed not in str(step(api))
    stored = Participant.objects.get(pk=participant.pk)
    assert stored.state == ParticipantState.SCREENED_OUT
    assert stored.state_reason.startswith("failed checks: effort below the study's rules: task 1: 0 queries")
    # Its link's status (the page's last step) says the same.
    status = client.get(f"/p/{stored.access_token}/completion/").json()
    assert status["completion"]["code"] == settings.code_failed_checks


def test_an_honest_participant_meeting_the_strictest_rules_gets_the_completed_code(client, panel_study):
    settings = rules(panel_study, "strict")
    api, participant = arrive(client, panel_study)
    done = honest(api, panel_study)
    assert done["completion"] == {
        "kind": "completed",
        "code": settings.code_completed,
        "redirect_url": f"https://app.prolific.com/submissions/complete?cc={settings.code_completed}",
        "message": "",
    }
    stored = Participant.objects.get(pk=participant.pk)
    assert stored.state == ParticipantState.COMPLETED and not stored.state_reason
    flags = participant_flags(stored)
    assert not [f for f in flags if f.code in ("below_rules", "no_queries", "speeder", "machine_regular")]


def test_flagged_gives_the_completed_code_and_records_the_shortfall(client, panel_study):
    settings = rules(panel_study, "standard", outcome="flagged")
    api, participant = arrive(client, panel_study)
    done = script(api, panel_study)
    assert done["completion"]["kind"] == "completed"
    assert done["completion"]["code"] == settings.code_completed
    stored = Participant.objects.get(pk=participant.pk)
    assert stored.state == ParticipantState.COMPLETED
    assert stored.state_reason.startswith("effort below the study's rules: task 1: 0 queries < 1")
    audit = AuditEntry.objects.filter(participant_code=stored.code, detail__to="completed").get()
    assert audit.detail["effort_flags"][0].startswith("task 1: 0 queries < 1")
