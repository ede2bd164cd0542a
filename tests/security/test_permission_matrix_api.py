"""Who reaches what in the API: the researchers' endpoints (by session or token), the participant's (by
participant token) and the public ones (tests/security/permission_matrix.py says how a row reads)."""

from __future__ import annotations

import secrets

import pytest

from .conftest import ROLES, cid
from .permission_matrix import (
    API_ANY_STUDY,
    API_NOT_RESEARCHER,
    API_PARTICIPANT,
    API_STUDY,
    PUBLIC,
    Row,
    api_llm_path,
    check_each_role,
    fixed,
    study_path,
)

API_ROWS: dict[tuple[str, str], Row] = {
    ("api:token", "POST"): Row(
        "POST", fixed("/api/auth/token/"), PUBLIC, lambda w: {"username": "alice", "password": "wrong"}
    ),
    ("api-schema", "GET"): Row("GET", fixed("/api/schema/"), PUBLIC),
    ("api-docs", "GET"): Row("GET", fixed("/api/docs/"), PUBLIC),
    ("api-redoc", "GET"): Row("GET", fixed("/api/redoc/"), PUBLIC),
    ("api-redoc-script", "GET"): Row("GET", fixed("/api/redoc/redoc.standalone.js"), PUBLIC),
    # Any other /api/ URL: a JSON 404 for everyone, whatever the method (tests/api_conventions).
    ("api-not-found", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/no-such-endpoint/"), dict.fromkeys(ROLES, 404)
    ),
    ("api:collection_list", "GET"): Row("GET", fixed("/api/collections/"), API_ANY_STUDY),
    # The world's collection has no owner: Bob sees it through Alice's study (403: he is not its owner, which
    # he knows), Charlie does not (404).
    ("api:collection_share", "POST"): Row(
        "POST",
        lambda w, r: f"/api/collections/{w.study.collection_id}/shared-with/",
        {**API_NOT_RESEARCHER, "other_researcher": 404, "researcher": 403},
        lambda w: {"username": "charlie"},
        json=True,
    ),
    ("api:collection_unshare", "DELETE"): Row(
        "DELETE",
        lambda w, r: f"/api/collections/{w.study.collection_id}/shared-with/charlie/",
        {**API_NOT_RESEARCHER, "other_researcher": 404, "researcher": 403},
    ),
    ("api:study_list", "GET"): Row("GET", fixed("/api/studies/"), API_ANY_STUDY),
    ("api:study_list", "POST"): Row("POST", fixed("/api/studies/"), API_ANY_STUDY, lambda w: {}, json=True),
    ("api:study_detail", "GET"): Row("GET", study_path("/api/studies/{pk}/"), API_STUDY),
    ("api:study_detail", "PATCH"): Row(
        "PATCH", study_path("/api/studies/{pk}/"), API_STUDY, lambda w: {"description": "changed"}, json=True
    ),
    # Bob sees the study but only its owner may delete it: 403 is no news to him.
    ("api:study_detail", "DELETE"): Row(
        "DELETE", study_path("/api/studies/{pk}/"), {**API_STUDY, "researcher": 403}
    ),
    ("api:grade_level_list", "GET"): Row("GET", study_path("/api/studies/{pk}/grade-levels/"), API_STUDY),
    ("api:scenario_list", "GET"): Row("GET", study_path("/api/studies/{pk}/scenarios/"), API_STUDY),
    ("api:scenario_list", "POST"): Row(
        "POST", study_path("/api/studies/{pk}/scenarios/"), API_STUDY, lambda w: {}, json=True
    ),
    ("api:scenario_detail", "GET"): Row(
        "GET", lambda w, r: f"/api/studies/{w.study.pk}/scenarios/{w.study.scenarios.first().pk}/", API_STUDY
    ),
    ("api:scenario_detail", "PATCH"): Row(
        "PATCH",
        lambda w, r: f"/api/studies/{w.study.pk}/scenarios/{w.study.scenarios.first().pk}/",
        API_STUDY,
        lambda w: {"title": "changed"},
        json=True,
    ),
    ("api:system_list", "GET"): Row("GET", study_path("/api/studies/{pk}/systems/"), API_STUDY),
    ("api:system_detail", "GET"): Row(
        "GET", lambda w, r: f"/api/studies/{w.study.pk}/systems/{w.study.systems.first().pk}/", API_STUDY
    ),
    ("api:system_detail", "DELETE"): Row(
        "DELETE", lambda w, r: f"/api/studies/{w.study.pk}/systems/{w.study.systems.first().pk}/", API_STUDY
    ),
    ("api:participant_list", "GET"): Row("GET", study_path("/api/studies/{pk}/participants/"), API_STUDY),
    ("api:study_status", "POST"): Row(
        "POST", study_path("/api/studies/{pk}/status/"), API_STUDY, lambda w: {"status": "paused"}, json=True
    ),
    ("api:participant_enrol", "POST"): Row(
        "POST",
        study_path("/api/studies/{pk}/participants/enrol/"),
        API_STUDY,
        lambda w: {"count": 1},
        json=True,
    ),
    ("api:participant_detail", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/participants/{w.participant.pk}/"), API_STUDY
    ),
    ("api:participant_withdraw", "POST"): Row(
        "POST", study_path("/api/studies/{pk}/participants/{w.participant.pk}/withdraw/"), API_STUDY
    ),
    ("api:session_list", "GET"): Row("GET", study_path("/api/studies/{pk}/sessions/"), API_STUDY),
    ("api:session_detail", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/sessions/{w.session.pk}/"), API_STUDY
    ),
    ("api:query_list", "GET"): Row("GET", study_path("/api/studies/{pk}/queries/"), API_STUDY),
    ("api:judgment_list", "GET"): Row("GET", study_path("/api/studies/{pk}/judgments/"), API_STUDY),
    ("api:event_list", "GET"): Row("GET", study_path("/api/studies/{pk}/events/"), API_STUDY),
    ("api:study_session_track", "GET"): Row("GET", study_path("/api/studies/{pk}/session-track/"), API_STUDY),
    ("api:study_agreement", "GET"): Row("GET", study_path("/api/studies/{pk}/agreement/"), API_STUDY),
    ("api:study_archive", "GET"): Row("GET", study_path("/api/studies/{pk}/archive/"), API_STUDY),
    ("api:study_tables", "GET"): Row("GET", study_path("/api/studies/{pk}/tables/"), API_STUDY),
    ("api:study_runs", "GET"): Row("GET", study_path("/api/studies/{pk}/runs/"), API_STUDY),
    ("api:reference_version_list", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/reference-versions/"), API_STUDY
    ),
    ("api:reference_version_import", "POST"): Row(
        "POST",
        study_path("/api/studies/{pk}/reference-versions/import-qrels/"),
        API_STUDY,
        lambda w: {"text": "1 0 d3 1"},
    ),  # multipart, the upload's one content type
    ("api:reference_version_detail", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/reference-versions/{w.version.pk}/"), API_STUDY
    ),
    ("api:reference_version_qrels", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/reference-versions/{w.version.pk}/qrels/"), API_STUDY
    ),
    ("api:reference_judgment_list", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/reference-versions/{w.version.pk}/judgments/"), API_STUDY
    ),
    ("api:reference_version_publish", "POST"): Row(
        "POST",
        study_path("/api/studies/{pk}/reference-versions/publish/"),
        API_STUDY,  # the researcher: 409, nothing adjudicated
        lambda w: {"mode": "merge"},
        json=True,
    ),
    # LLM assessors: the world's assessor and its finished run.
    ("api:llm_assessor_list", "GET"): Row("GET", study_path("/api/studies/{pk}/llm-assessors/"), API_STUDY),
    ("api:llm_assessor_list", "POST"): Row(
        "POST",
        study_path("/api/studies/{pk}/llm-assessors/"),
        API_STUDY,
        lambda w: {"endpoint_url": "http://192.0.2.1/v1", "model_name": "second-model", "api_key": "sk-x"},
        json=True,
    ),
    ("api:llm_assessor_detail", "GET"): Row("GET", api_llm_path("llm-assessors/{assessor}/"), API_STUDY),
    ("api:llm_assessor_detail", "PATCH"): Row(
        "PATCH",
        api_llm_path("llm-assessors/{assessor}/"),
        API_STUDY,
        lambda w: {"model_name": "renamed-model", "api_key": ""},
        json=True,
    ),
    ("api:llm_run_list", "GET"): Row("GET", api_llm_path("llm-assessors/{assessor}/runs/"), API_STUDY),
    ("api:llm_run_list", "POST"): Row(
        "POST", api_llm_path("llm-assessors/{assessor}/runs/"), API_STUDY, lambda w: {}, json=True
    ),
    ("api:llm_run_detail", "GET"): Row("GET", api_llm_path("llm-runs/{run}/"), API_STUDY),
    ("api:llm_run_cancel", "POST"): Row(
        "POST",
        api_llm_path("llm-runs/{run}/cancel/"),
        API_STUDY,  # the researcher: 409, it has ended
    ),
    ("api:llm_request_list", "GET"): Row(
        "GET", api_llm_path("llm-runs/{run}/requests/?status=ok"), API_STUDY
    ),
    ("api:scoring_run_list", "GET"): Row("GET", study_path("/api/studies/{pk}/scoring-runs/"), API_STUDY),
    ("api:scoring_run_list", "POST"): Row(
        "POST", study_path("/api/studies/{pk}/scoring-runs/"), API_STUDY, lambda w: {}, json=True
    ),
    ("api:scoring_run_detail", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/scoring-runs/{run}/"), API_STUDY
    ),
    ("api:scoring_run_make_default", "POST"): Row(
        "POST", study_path("/api/studies/{pk}/scoring-runs/{run}/make-default/"), API_STUDY
    ),
    ("api:scoring_run_session_list", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/scoring-runs/{run}/sessions/?curves=1"), API_STUDY
    ),
    ("api:scoring_run_query_list", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/scoring-runs/{run}/sessions/{w.session.pk}/queries/"), API_STUDY
    ),
    ("api:scoring_run_query_score_list", "GET"): Row(
        "GET", study_path("/api/studies/{pk}/scoring-runs/{run}/query-scores/?format=csv"), API_STUDY
    ),
    ("api:participant_me", "GET"): Row("GET", fixed("/api/participant/"), API_PARTICIPANT),
    ("api:participant_session_start", "POST"): Row(
        "POST",
        fixed("/api/participant/sessions/"),
        API_PARTICIPANT,
        lambda w: {"assignment": 1, "client_event_id": secrets.token_hex(8)},
        json=True,
    ),
    ("api:participant_events", "POST"): Row(
        "POST",
        fixed("/api/participant/events/"),
        API_PARTICIPANT,
        lambda w: {
            "events": [{"id": secrets.token_hex(8), "type": "page_view", "session": w.session.pk, "data": {}}]
        },
        json=True,
    ),
    # The rest of the participant's way: each participant acts on their own way only. A session of someone
    # else's (the other participant naming P001's) is a 400 naming the field, as one that does not exist
    # (tests/participation/test_participant_api_whole_way.py), so it reads as OK here.
    ("api:participant_step", "GET"): Row("GET", fixed("/api/participant/step/"), API_PARTICIPANT),
    ("api:participant_consent", "POST"): Row(
        "POST",
        fixed("/api/participant/consent/"),
        API_PARTICIPANT,
        lambda w: {"decision": "agree", "consent_version": "1", "client_event_id": cid()},
        json=True,
    ),
    ("api:participant_questionnaire", "POST"): Row(
        "POST",
        fixed("/api/participant/questionnaire/"),
        API_PARTICIPANT,
        lambda w: {"answers": {}, "client_event_id": cid()},
        json=True,
    ),
    ("api:participant_check", "POST"): Row(
        "POST",
        fixed("/api/participant/checks/"),
        API_PARTICIPANT,
        lambda w: {"check": "attention_1", "answer": "Blue", "client_event_id": cid()},
        json=True,
    ),
    ("api:participant_pre_task", "POST"): Row(
        "POST",
        fixed("/api/participant/pre-task/"),
        API_PARTICIPANT,  # 409: the study asks none
        lambda w: {"assignment": 1, "answers": {}, "client_event_id": cid()},
        json=True,
    ),
    ("api:participant_gold", "POST"): Row(
        "POST",
        fixed("/api/participant/gold/"),
        API_PARTICIPANT,  # the participant: 409, not ended yet
        lambda w: {"session": w.session.pk, "grades": {"1": 1}, "client_event_id": cid()},
        json=True,
    ),
    ("api:participant_post_task", "POST"): Row(
        "POST",
        fixed("/api/participant/post-task/"),
        API_PARTICIPANT,  # the participant: 409, not ended yet
        lambda w: {"session": w.session.pk, "answers": {}, "client_event_id": cid()},
        json=True,
    ),
    # Each participant withdraws themselves: their token, their decision.
    ("api:participant_withdraw_self", "POST"): Row(
        "POST",
        fixed("/api/participant/withdraw/"),
        API_PARTICIPANT,
        lambda w: {"client_event_id": cid()},
        json=True,
    ),
}


@pytest.mark.parametrize("key", sorted(API_ROWS, key=str), ids=lambda k: f"{k[1]} {k[0]}")
def test_each_role_gets_exactly_its_share(key, world):
    check_each_role(key, API_ROWS[key], world)
