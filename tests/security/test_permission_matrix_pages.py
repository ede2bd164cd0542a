"""Who reaches what on the site's pages: the researchers', the assessors', the participants' (/p/<token>/) and
the public link's (tests/security/permission_matrix.py says how a row reads)."""

from __future__ import annotations

import secrets

import pytest

from .conftest import ROLES, cid
from .permission_matrix import (
    ASSESSOR_PAGE,
    LOGGED_IN,
    LOGIN,
    NOBODY_LOGGED_IN,
    OK,
    PARTICIPANT_OBJECT,
    PARTICIPANT_OWN,
    PUBLIC,
    RESEARCHER_ANY_STUDY,
    RESEARCHER_PAGE,
    Row,
    bobs_upload,
    check_each_role,
    design_row_path,
    first_assignment,
    fixed,
    llm_path,
    participant_path,
    plan_path,
    public_link,
    study_path,
)

PAGE_ROWS: dict[tuple[str, str], Row] = {
    ("home", "GET"): Row("GET", fixed("/"), {**LOGGED_IN}),
    ("login", "GET"): Row("GET", fixed("/accounts/login/"), PUBLIC),
    ("logout", "POST"): Row("POST", fixed("/accounts/logout/"), dict.fromkeys(ROLES, LOGIN)),
    # Researcher pages.
    # Every account changes its own password (sessionlab/urls.py; Django's views).
    ("password_change", "GET"): Row("GET", fixed("/accounts/password/"), LOGGED_IN),
    ("password_change", "POST"): Row("POST", fixed("/accounts/password/"), LOGGED_IN, lambda w: {}),
    ("password_change_done", "GET"): Row("GET", fixed("/accounts/password/done/"), LOGGED_IN),
    # A forgotten password: public, as the login page; the same answer for every caller (a link
    # that is no account's reads as used up).
    ("password_reset", "GET"): Row("GET", fixed("/accounts/password/reset/"), PUBLIC),
    ("password_reset", "POST"): Row("POST", fixed("/accounts/password/reset/"), PUBLIC, lambda w: {}),
    ("password_reset_done", "GET"): Row("GET", fixed("/accounts/password/reset/sent/"), PUBLIC),
    ("password_reset_confirm", "GET"): Row("GET", fixed("/accounts/reset/MQ/set-password/"), PUBLIC),
    ("password_reset_complete", "GET"): Row("GET", fixed("/accounts/reset/done/"), PUBLIC),
    # The documentation (sessionlab/docs_views.py): public, as the repository is.
    ("docs_index", "GET"): Row("GET", fixed("/docs/"), PUBLIC),
    ("favicon", "GET"): Row("GET", fixed("/favicon.ico"), PUBLIC),
    ("doc_page", "GET"): Row("GET", fixed("/docs/scoring-sessions/"), PUBLIC),
    ("doc_image", "GET"): Row("GET", fixed("/docs/img/setup-2-progress.png"), PUBLIC),
    ("studies:study_list", "GET"): Row("GET", fixed("/studies/"), RESEARCHER_ANY_STUDY),
    ("new_study:study_create", "GET"): Row("GET", fixed("/studies/new/"), RESEARCHER_ANY_STUDY),
    ("new_study:study_create", "POST"): Row(
        "POST", fixed("/studies/new/"), RESEARCHER_ANY_STUDY, lambda w: {}
    ),
    # Another researcher's account: any researcher; adding them to a study is the owner's only.
    ("studies:researcher_invite", "GET"): Row(
        "GET", fixed("/studies/researchers/new/"), RESEARCHER_ANY_STUDY
    ),
    ("studies:researcher_invite", "POST"): Row(
        "POST", fixed("/studies/researchers/new/"), RESEARCHER_ANY_STUDY, lambda w: {}
    ),
    ("studies:study_detail", "GET"): Row("GET", study_path("/studies/{slug}/"), RESEARCHER_PAGE),
    ("studies:study_progress", "GET"): Row("GET", study_path("/studies/{slug}/progress/"), RESEARCHER_PAGE),
    ("copying:study_copy", "GET"): Row("GET", study_path("/studies/{slug}/copy/"), RESEARCHER_PAGE),
    ("copying:study_copy", "POST"): Row(
        "POST", study_path("/studies/{slug}/copy/"), RESEARCHER_PAGE, lambda w: {"name": "A copy"}
    ),
    ("studies:scenario_add", "POST"): Row(
        "POST", study_path("/studies/{slug}/scenarios/add/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:system_add", "POST"): Row(
        "POST", study_path("/studies/{slug}/systems/add/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:participants_enrol", "POST"): Row(
        "POST",
        study_path("/studies/{slug}/participants/enrol/"),
        RESEARCHER_PAGE,
        lambda w: {"enrol-count": "1"},
    ),
    # The life cycle and the preview (studies/design/lifecycle_views.py).
    ("studies:study_status", "POST"): Row(
        "POST", study_path("/studies/{slug}/status/"), RESEARCHER_PAGE, lambda w: {"status": "paused"}
    ),
    ("studies:preview_start", "POST"): Row("POST", study_path("/studies/{slug}/preview/"), RESEARCHER_PAGE),
    ("studies:preview_delete", "POST"): Row(
        "POST", study_path("/studies/{slug}/preview/delete/"), RESEARCHER_PAGE
    ),
    # The set-up checklist and its steps (studies/design/setup_views.py). The world's design is locked (two
    # participants): Bob's edits and removals are refused with the reason, on a page or after a redirect.
    ("studies:setup", "GET"): Row("GET", study_path("/studies/{slug}/setup/"), RESEARCHER_PAGE),
    ("studies:setup_systems", "GET"): Row(
        "GET", study_path("/studies/{slug}/setup/systems/"), RESEARCHER_PAGE
    ),
    ("studies:setup_systems", "POST"): Row(
        "POST", study_path("/studies/{slug}/setup/systems/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:setup_system_edit", "GET"): Row("GET", design_row_path("systems", ""), RESEARCHER_PAGE),
    ("studies:setup_system_edit", "POST"): Row(
        "POST", design_row_path("systems", ""), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:setup_system_delete", "POST"): Row(
        "POST", design_row_path("systems", "delete/"), RESEARCHER_PAGE
    ),
    ("studies:setup_system_test", "POST"): Row(
        "POST", design_row_path("systems", "test/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:setup_scenarios", "GET"): Row(
        "GET", study_path("/studies/{slug}/setup/scenarios/"), RESEARCHER_PAGE
    ),
    ("studies:setup_scenarios", "POST"): Row(
        "POST", study_path("/studies/{slug}/setup/scenarios/"), RESEARCHER_PAGE, lambda w: {"action": "write"}
    ),
    ("studies:setup_scenario_edit", "GET"): Row("GET", design_row_path("scenarios", ""), RESEARCHER_PAGE),
    ("studies:setup_scenario_edit", "POST"): Row(
        "POST", design_row_path("scenarios", ""), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:setup_scenario_delete", "POST"): Row(
        "POST", design_row_path("scenarios", "delete/"), RESEARCHER_PAGE
    ),
    ("studies:setup_design", "GET"): Row("GET", study_path("/studies/{slug}/setup/design/"), RESEARCHER_PAGE),
    ("studies:setup_design", "POST"): Row(
        "POST", study_path("/studies/{slug}/setup/design/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("studies:setup_questionnaires", "GET"): Row(
        "GET", study_path("/studies/{slug}/setup/questionnaires/"), RESEARCHER_PAGE
    ),
    ("studies:setup_questionnaires", "POST"): Row(
        "POST",
        study_path("/studies/{slug}/setup/questionnaires/"),
        RESEARCHER_PAGE,
        lambda w: {"action": "item"},
    ),
    ("studies:setup_questionnaire_preview", "GET"): Row(
        "GET", study_path("/studies/{slug}/setup/questionnaires/questionnaire/preview/"), RESEARCHER_PAGE
    ),
    ("studies:setup_questionnaire_preview", "POST"): Row(
        "POST",
        study_path("/studies/{slug}/setup/questionnaires/questionnaire/preview/"),
        RESEARCHER_PAGE,
        lambda w: {"page": "1"},
    ),
    ("studies:setup_consent", "GET"): Row(
        "GET", study_path("/studies/{slug}/setup/consent/"), RESEARCHER_PAGE
    ),
    ("studies:setup_consent", "POST"): Row(
        "POST", study_path("/studies/{slug}/setup/consent/"), RESEARCHER_PAGE, lambda w: {"action": "consent"}
    ),
    # The study's downloads (studies/interchange/views.py).
    ("exports:downloads", "GET"): Row("GET", study_path("/studies/{slug}/downloads/"), RESEARCHER_PAGE),
    ("exports:archive", "GET"): Row(
        "GET", study_path("/studies/{slug}/downloads/archive.json"), RESEARCHER_PAGE
    ),
    ("exports:tidy_csv", "GET"): Row(
        "GET", study_path("/studies/{slug}/downloads/tables.zip"), RESEARCHER_PAGE
    ),
    ("exports:runs", "GET"): Row(
        "GET", study_path("/studies/{slug}/downloads/runs-query.zip"), RESEARCHER_PAGE
    ),
    ("exports:qrels", "GET"): Row(
        "GET", study_path("/studies/{slug}/downloads/reference-v1.qrels"), RESEARCHER_PAGE
    ),
    ("exports:session_track", "GET"): Row(
        "GET", study_path("/studies/{slug}/downloads/session-track.xml"), RESEARCHER_PAGE
    ),
    ("exports:agreement_csv", "GET"): Row(
        "GET", study_path("/studies/{slug}/downloads/agreement.csv"), RESEARCHER_PAGE
    ),
    # The lab-only panel ids: the study's owner alone; Bob, who sees the study, is told why (403).
    ("exports:panel_ids_csv", "GET"): Row(
        "GET",
        study_path("/studies/{slug}/downloads/panel-ids.csv"),
        {**RESEARCHER_PAGE, "researcher": 403},
    ),
    # Collections (studies/library): the world's collection has no owner; Bob sees it through Alice's study
    # (sharing or deleting it is refused with a message: he is not its owner), Charlie does not (404).
    ("library:collection_list", "GET"): Row("GET", fixed("/collections/"), RESEARCHER_ANY_STUDY),
    ("library:collection_upload", "POST"): Row(
        "POST", fixed("/collections/upload/"), RESEARCHER_ANY_STUDY, lambda w: {}
    ),
    ("library:upload_detail", "GET"): Row(
        "GET", lambda w, r: f"/collections/uploads/{bobs_upload(w)}/", RESEARCHER_PAGE
    ),
    ("library:upload_status", "GET"): Row(
        "GET", lambda w, r: f"/collections/uploads/{bobs_upload(w)}/status.json", RESEARCHER_PAGE
    ),
    ("library:collection_detail", "GET"): Row(
        "GET", lambda w, r: f"/collections/{w.study.collection_id}/", RESEARCHER_PAGE
    ),
    ("library:collection_share", "POST"): Row(
        "POST",
        lambda w, r: f"/collections/{w.study.collection_id}/share/",
        RESEARCHER_PAGE,
        lambda w: {"username": "charlie"},
    ),
    ("library:collection_unshare", "POST"): Row(
        "POST",
        lambda w, r: f"/collections/{w.study.collection_id}/unshare/",
        RESEARCHER_PAGE,
        lambda w: {"username": "charlie"},
    ),
    ("library:collection_delete", "POST"): Row(
        "POST", lambda w, r: f"/collections/{w.study.collection_id}/delete/", RESEARCHER_PAGE
    ),
    ("library:study_collection", "GET"): Row(
        "GET", study_path("/collections/for-study/{slug}/"), RESEARCHER_PAGE
    ),
    ("library:study_collection", "POST"): Row(
        "POST", study_path("/collections/for-study/{slug}/"), RESEARCHER_PAGE, lambda w: {}
    ),
    # The repair of a study made without its collection's judgments: the owner's alone.
    ("library:study_collection_reference", "POST"): Row(
        "POST",
        study_path("/collections/for-study/{slug}/reference/"),
        {**RESEARCHER_PAGE, "researcher": 403},
        lambda w: {},
    ),
    # Scoring dashboards.
    ("scoring:runs", "GET"): Row("GET", study_path("/scoring/{slug}/"), RESEARCHER_PAGE),
    ("scoring:runs", "POST"): Row("POST", study_path("/scoring/{slug}/"), RESEARCHER_PAGE, lambda w: {}),
    ("scoring:compare", "GET"): Row("GET", study_path("/scoring/{slug}/compare/"), RESEARCHER_PAGE),
    # The study package (scoring/package/views.py), linked from the downloads page.
    ("scoring:package", "GET"): Row("GET", study_path("/scoring/{slug}/package.zip"), RESEARCHER_PAGE),
    ("scoring:reference_change", "GET"): Row(
        "GET", study_path("/scoring/{slug}/reference-change/"), RESEARCHER_PAGE
    ),
    ("scoring:reference_change_json", "GET"): Row(
        "GET", study_path("/scoring/{slug}/reference-change.json"), RESEARCHER_PAGE
    ),
    ("scoring:run_sessions", "GET"): Row(
        "GET", study_path("/scoring/{slug}/runs/{run}/sessions/"), RESEARCHER_PAGE
    ),
    ("scoring:population_default", "POST"): Row(
        "POST", study_path("/scoring/{slug}/population/"), RESEARCHER_PAGE, lambda w: {"population": "itt"}
    ),
    ("scoring:meta_evaluation", "GET"): Row(
        "GET", study_path("/scoring/{slug}/runs/{run}/meta-evaluation/"), RESEARCHER_PAGE
    ),
    ("scoring:planning", "GET"): Row("GET", study_path("/scoring/{slug}/planning/"), RESEARCHER_PAGE),
    ("scoring:preregistration", "GET"): Row(
        "GET", study_path("/scoring/{slug}/preregistration/"), RESEARCHER_PAGE
    ),
    ("scoring:preregistration", "POST"): Row(
        "POST",
        study_path("/scoring/{slug}/preregistration/"),
        RESEARCHER_PAGE,
        lambda w: {"action": "save", "hypotheses": "B beats A.", "primary_summary": "normalized_final"},
    ),
    ("scoring:preregistration_markdown", "GET"): Row(
        "GET", study_path("/scoring/{slug}/preregistration.md"), RESEARCHER_PAGE
    ),
    ("scoring:preregistration_json", "GET"): Row(
        "GET", study_path("/scoring/{slug}/preregistration.json"), RESEARCHER_PAGE
    ),
    ("scoring:planning_plan", "GET"): Row("GET", plan_path(""), RESEARCHER_PAGE),
    ("scoring:planning_status", "GET"): Row("GET", plan_path("status.json"), RESEARCHER_PAGE),
    ("scoring:planning_chart", "GET"): Row("GET", plan_path("curve.json"), RESEARCHER_PAGE),
    ("scoring:planning_csv", "GET"): Row("GET", plan_path("curve.csv"), RESEARCHER_PAGE),
    ("scoring:run_detail", "GET"): Row("GET", study_path("/scoring/{slug}/runs/{run}/"), RESEARCHER_PAGE),
    ("scoring:run_status", "GET"): Row(
        "GET", study_path("/scoring/{slug}/runs/{run}/status.json"), RESEARCHER_PAGE
    ),
    ("scoring:run_make_default", "POST"): Row(
        "POST", study_path("/scoring/{slug}/runs/{run}/default/"), RESEARCHER_PAGE
    ),
    ("scoring:chart_json", "GET"): Row(
        "GET", study_path("/scoring/{slug}/runs/{run}/charts/curves.json"), RESEARCHER_PAGE
    ),
    ("scoring:chart_csv", "GET"): Row(
        "GET", study_path("/scoring/{slug}/runs/{run}/charts/statistics.csv"), RESEARCHER_PAGE
    ),
    # Assessment: the researchers' pages, then the assessors'.
    ("assessment:home", "GET"): Row("GET", fixed("/assess/"), LOGGED_IN),
    # Zoe (of Charlie's lab) answers her invitation to Alice's
    # study; it is nobody else's to answer, or to learn of.
    ("assessment:invitation_answer", "POST"): Row(
        "POST",
        lambda w, r: f"/assess/invitations/{w.invitation.pk}/answer/",
        {
            **NOBODY_LOGGED_IN,
            "assessor": 404,
            "other_assessor": OK,
            "other_researcher": 404,
            "researcher": 404,
        },
        lambda w: {"answer": "decline"},
    ),
    ("assessment:manage", "GET"): Row("GET", study_path("/assess/manage/{slug}/"), RESEARCHER_PAGE),
    ("assessment:pool_build", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/pool/build/"), RESEARCHER_PAGE, lambda w: {"pool-rule": "x"}
    ),
    ("assessment:pool_refresh", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/pool/refresh/"), RESEARCHER_PAGE
    ),
    ("assessment:pool_add", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/pool/add/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:pool_import", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/pool/import/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:plan_set", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/plan/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:assessor_invite", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/assessors/invite/"), RESEARCHER_PAGE, lambda w: {}
    ),
    # Assessor work: an empty form is refused with a message, nothing changed.
    ("assessment:assessor_scenarios", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/assessors/scenarios/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:guidelines", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/guidelines/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:agreement", "GET"): Row(
        "GET", study_path("/assess/manage/{slug}/agreement/"), RESEARCHER_PAGE
    ),
    ("assessment:agreement", "POST"): Row(
        "POST",
        study_path("/assess/manage/{slug}/agreement/"),
        RESEARCHER_PAGE,
        lambda w: {"exclusion_min_agreement": "0.4", "exclusion_measure": "kappa_linear"},
    ),
    ("assessment:disagreements", "GET"): Row(
        "GET", study_path("/assess/manage/{slug}/disagreements/"), RESEARCHER_PAGE
    ),
    ("assessment:adjudicate", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/adjudicate/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:decide", "POST"): Row(
        "POST",
        study_path("/assess/manage/{slug}/decide/"),
        RESEARCHER_PAGE,
        lambda w: {"pool_document": w.pool_document.pk, "grade": "1"},
    ),
    ("assessment:publish", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/publish/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:publish", "GET"): Row("GET", study_path("/assess/manage/{slug}/publish/"), RESEARCHER_PAGE),
    ("assessment:version_qrels", "GET"): Row(
        "GET", study_path("/assess/manage/{slug}/versions/1.qrels"), RESEARCHER_PAGE
    ),
    ("assessment:version_import", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/versions/import/"), RESEARCHER_PAGE, lambda w: {}
    ),
    # Language-model assessors: the study's researchers only.
    ("assessment:llm_assessor_add", "GET"): Row(
        "GET", study_path("/assess/manage/{slug}/llm/add/"), RESEARCHER_PAGE
    ),
    ("assessment:llm_assessor_add", "POST"): Row(
        "POST", study_path("/assess/manage/{slug}/llm/add/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:llm_assessor", "GET"): Row("GET", llm_path("{pk}/"), RESEARCHER_PAGE),
    ("assessment:llm_assessor", "POST"): Row("POST", llm_path("{pk}/"), RESEARCHER_PAGE, lambda w: {}),
    ("assessment:llm_run_start", "POST"): Row("POST", llm_path("{pk}/run/"), RESEARCHER_PAGE, lambda w: {}),
    ("assessment:llm_endpoint_test", "POST"): Row(
        "POST", llm_path("{pk}/test/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:llm_run", "GET"): Row("GET", llm_path("runs/{run}/"), RESEARCHER_PAGE),
    ("assessment:llm_run_cancel", "POST"): Row("POST", llm_path("runs/{run}/cancel/"), RESEARCHER_PAGE),
    ("assessment:llm_audit_start", "POST"): Row(
        "POST", llm_path("{pk}/audit/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("assessment:llm_audit", "GET"): Row("GET", llm_path("audits/{audit}/"), RESEARCHER_PAGE),
    ("assessment:assessor_study", "GET"): Row("GET", study_path("/assess/study/{slug}/"), ASSESSOR_PAGE),
    ("assessment:assessor_form", "GET"): Row("GET", study_path("/assess/study/{slug}/S1/"), ASSESSOR_PAGE),
    ("assessment:assessor_form", "POST"): Row(
        "POST",
        study_path("/assess/study/{slug}/S1/"),
        ASSESSOR_PAGE,
        lambda w: {"pool_document": w.pool_document.pk, "grade": "1"},
    ),
    # The participant's pages.
    ("participate:home", "GET"): Row("GET", participant_path(""), PARTICIPANT_OWN),
    ("participate:consent", "POST"): Row(
        "POST",
        participant_path("consent/"),
        PARTICIPANT_OWN,
        lambda w: {"decision": "accept", "consent_version": "1", "client_event_id": secrets.token_hex(8)},
    ),
    ("participate:questionnaire", "POST"): Row(
        "POST",
        participant_path("questionnaire/"),
        PARTICIPANT_OWN,
        lambda w: {"client_event_id": secrets.token_hex(8)},
    ),
    ("participate:start", "POST"): Row(
        "POST",
        participant_path("start/"),
        PARTICIPANT_OBJECT,
        lambda w: {"assignment": first_assignment(w).pk, "client_event_id": secrets.token_hex(8)},
    ),
    ("participate:pre_task", "POST"): Row(
        "POST",
        participant_path("pre-task/"),
        PARTICIPANT_OBJECT,  # the participant: 409, the study asks none
        lambda w: {"assignment": first_assignment(w).pk, "client_event_id": secrets.token_hex(8)},
    ),
    ("participate:post_task", "POST"): Row(
        "POST",
        participant_path("post-task/"),
        PARTICIPANT_OBJECT,  # the participant: 409, not ended yet
        lambda w: {"session": w.session.pk, "client_event_id": secrets.token_hex(8)},
    ),
    ("participate:gold", "POST"): Row(
        "POST",
        participant_path("gold/"),
        PARTICIPANT_OBJECT,  # the participant: 409, not ended yet
        lambda w: {"session": w.session.pk, "grade-1": "1", "client_event_id": secrets.token_hex(8)},
    ),
    ("participate:events", "POST"): Row(
        "POST",
        participant_path("events/"),
        PARTICIPANT_OWN,
        lambda w: {
            "events": [{"id": secrets.token_hex(8), "type": "page_view", "session": w.session.pk, "data": {}}]
        },
        json=True,
    ),
    # A generative turn: the other participant naming the first one's session is refused by its reason (409).
    ("participate:answer", "POST"): Row(
        "POST",
        participant_path("answer/"),
        PARTICIPANT_OWN,
        lambda w: {"session": w.session.pk, "turn": secrets.token_hex(8), "question": "wing flutter"},
        json=True,
    ),
    ("participate:withdraw", "GET"): Row("GET", participant_path("withdraw/"), PARTICIPANT_OWN),
    # The other participant withdraws themselves: their link, their decision.
    ("participate:withdraw", "POST"): Row("POST", participant_path("withdraw/"), PARTICIPANT_OWN),
    ("participate:completion", "GET"): Row("GET", participant_path("completion/"), PARTICIPANT_OWN),
    ("participate:check", "POST"): Row(
        "POST",
        participant_path("check/"),
        PARTICIPANT_OWN,
        lambda w: {"check": "attention_1", "answer": "Blue", "client_event_id": cid()},
    ),
    # The public link: whoever has it joins (the same panel id, the same participant); the panel's status
    # endpoint takes only the study's secret, which no role here holds.
    ("recruitment:settings", "GET"): Row("GET", study_path("/studies/{slug}/recruitment/"), RESEARCHER_PAGE),
    ("recruitment:settings", "POST"): Row(
        "POST",
        study_path("/studies/{slug}/recruitment/"),
        RESEARCHER_PAGE,
        lambda w: {
            "panel": "prolific",
            "code_completed": "C1",
            "code_screened_out": "C2",
            "code_failed_checks": "C3",
        },
    ),
    ("recruitment:reconciliation", "GET"): Row(
        "GET", study_path("/studies/{slug}/recruitment/reconciliation/"), RESEARCHER_PAGE
    ),
    ("recruitment:import", "POST"): Row(
        "POST", study_path("/studies/{slug}/recruitment/import/"), RESEARCHER_PAGE, lambda w: {}
    ),
    ("recruitment:typed_codes", "POST"): Row(
        "POST", study_path("/studies/{slug}/recruitment/typed-codes/"), RESEARCHER_PAGE, lambda w: {}
    ),
    # A session's replay and the exclusion decided there (studies/replay/views.py).
    ("replay:session", "GET"): Row(
        "GET", study_path("/studies/{slug}/sessions/{w.session.pk}/replay/"), RESEARCHER_PAGE
    ),
    ("replay:exclusion", "POST"): Row(
        "POST",
        study_path("/studies/{slug}/sessions/{w.session.pk}/exclusion/"),
        RESEARCHER_PAGE,
        lambda w: {"reason": "matrix"},
    ),
    ("panel:join", "GET"): Row(
        "GET", lambda w, role: public_link("")(w, role) + "?PROLIFIC_PID=" + "ab" * 12, PUBLIC
    ),
    # A resume code for an id nobody has: the same refusal for every caller, and no token.
    ("panel:resume", "POST"): Row(
        "POST",
        public_link("resume/"),
        dict.fromkeys(ROLES, 403),
        lambda w: {"panel_id": "cd" * 12, "code": "ABCDE-FGHJK"},
    ),
    ("panel:status", "POST"): Row(
        "POST",
        public_link("status/"),
        dict.fromkeys(ROLES, 403),
        lambda w: {"participant_id": "ab" * 12, "status": "returned"},
        json=True,
    ),
}


@pytest.mark.parametrize("key", sorted(PAGE_ROWS, key=str), ids=lambda k: f"{k[1]} {k[0]}")
def test_each_role_gets_exactly_its_share(key, world):
    check_each_role(key, PAGE_ROWS[key], world)
