"""Who reaches what: every URL pattern of the project against the whole cast (tests/security/conftest.py).

MATRIX holds one row per (route, method): how to build its path and body, and what each role gets. A route
missing from MATRIX fails `test_every_route_is_in_the_matrix`, so a new endpoint cannot go unchecked. Admin
pages follow one rule (staff with model permissions; researchers have none) and their rows are generated
from the admin's registry, so a newly registered model is checked too.

Outcomes: OK (through the access check: below 500 and not 401/403/404/405 or a login redirect), LOGIN (a
redirect to the login page), ADMIN_LOGIN (to the admin's), or an exact status. 404, not 403, wherever the
answer would tell a caller that an object they may not know of exists; 403 only where the refusal is the
same for every object (an assessor on a researcher page) or the caller already sees the object (Bob may
not delete Alice's study). A refused request must change nothing in the database.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.apps import apps
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from .conftest import ROLES, World, cid

OK, LOGIN, ADMIN_LOGIN = "ok", "login", "admin-login"
UNKNOWN_TOKEN = secrets.token_urlsafe(32)

# --- expectations shared by many routes ------------------------------------------------------------------

NOBODY_LOGGED_IN = {"anonymous": LOGIN, "participant": LOGIN, "other_participant": LOGIN}
RESEARCHER_PAGE = {
    **NOBODY_LOGGED_IN,
    "assessor": 403,
    "other_assessor": 403,
    "other_researcher": 404,
    "researcher": OK,
}
RESEARCHER_ANY_STUDY = {**RESEARCHER_PAGE, "other_researcher": OK}
ASSESSOR_PAGE = {
    **NOBODY_LOGGED_IN,
    "assessor": OK,
    "other_assessor": 404,
    "other_researcher": 404,
    "researcher": 404,
}
LOGGED_IN = {
    **NOBODY_LOGGED_IN,
    "assessor": OK,
    "other_assessor": OK,
    "other_researcher": OK,
    "researcher": OK,
}
PUBLIC = dict.fromkeys(ROLES, OK)
# /p/<token>/: the participant uses their link; the other participant their own link, naming the first
# participant's objects in the body; everyone else an unknown token.
PARTICIPANT_OWN = {**dict.fromkeys(ROLES, 404), "participant": OK, "other_participant": OK}
PARTICIPANT_OBJECT = {**dict.fromkeys(ROLES, 404), "participant": OK}
# The API: researchers by session or token; the researcher endpoints do not take a participant token, so
# without a researcher's credentials it is a 401 (WWW-Authenticate: Token), a known account not allowed a 403.
API_NOT_RESEARCHER = {
    "anonymous": 401,
    "participant": 401,
    "other_participant": 401,
    "assessor": 403,
    "other_assessor": 403,
}
API_STUDY = {**API_NOT_RESEARCHER, "other_researcher": 404, "researcher": OK}
API_ANY_STUDY = {**API_NOT_RESEARCHER, "other_researcher": OK, "researcher": OK}
API_PARTICIPANT = {**dict.fromkeys(ROLES, 401), "participant": OK, "other_participant": OK}


@dataclass
class Row:
    method: str
    path: Callable[[World, str], str]
    expect: dict
    data: Callable[[World], object] | None = None
    json: bool = False
    kwargs: dict = field(default_factory=dict)


def study_path(template: str) -> Callable[[World, str], str]:
    return lambda w, role: template.format(slug=w.study.slug, pk=w.study.pk, run=w.run.pk, w=w)


def plan_path(suffix: str) -> Callable[[World, str], str]:
    """A power plan of the study, made on first use (the planner's pages need one; plans are not watched)."""

    def build(w, role):
        from scoring.models import PowerPlan

        plan, _ = PowerPlan.objects.get_or_create(
            study=w.study,
            label="permission matrix",
            defaults={"difference": 0.1, "spread": 0.2, "counts": [4, 8]},
        )
        return f"/scoring/{w.study.slug}/planning/{plan.pk}/{suffix}"

    return build


def participant_path(suffix: str) -> Callable[[World, str], str]:
    def build(w, role):
        token = {
            "participant": w.participant.access_token,
            "other_participant": w.other_participant.access_token,
        }.get(role, UNKNOWN_TOKEN)
        return f"/p/{token}/{suffix}"

    return build


def public_link(suffix: str) -> Callable[[World, str], str]:
    """The study's public link (its recruitment made open on first use), with a fixed Prolific id."""

    def build(w, role):
        from studies.models import Recruitment

        recruitment, _ = Recruitment.objects.get_or_create(study=w.study, defaults={"public_link_open": True})
        return f"/join/{recruitment.public_token}/{suffix}"

    return build


def fixed(path: str) -> Callable[[World, str], str]:
    return lambda w, role: path


def first_assignment(w):
    return w.participant.assignments.order_by("position").first()


def design_row_path(kind: str, suffix: str) -> Callable[[World, str], str]:
    """A page of the study's first system or scenario on the set-up pages."""
    return lambda w, role: (
        f"/studies/{w.study.slug}/setup/{kind}/{getattr(w.study, kind).first().pk}/{suffix}"
    )


def bobs_upload(w):
    """A collection upload of Bob's (the researcher role): only its uploader follows it."""
    from studies.models import CollectionUpload

    upload, _ = CollectionUpload.objects.get_or_create(
        owner=w.users["bob"], name="bob's upload", format="jsonl"
    )
    return upload.pk


MATRIX: dict[tuple[str, str], Row] = {
    ("home", "GET"): Row("GET", fixed("/"), {**LOGGED_IN}),
    ("login", "GET"): Row("GET", fixed("/accounts/login/"), PUBLIC),
    ("logout", "POST"): Row("POST", fixed("/accounts/logout/"), dict.fromkeys(ROLES, LOGIN)),
    # Researcher pages.
    # Every account changes its own password (sessionlab/urls.py; Django's views).
    ("password_change", "GET"): Row("GET", fixed("/accounts/password/"), LOGGED_IN),
    ("password_change", "POST"): Row("POST", fixed("/accounts/password/"), LOGGED_IN, lambda w: {}),
    ("password_change_done", "GET"): Row("GET", fixed("/accounts/password/done/"), LOGGED_IN),
    # The documentation (sessionlab/docs_views.py): public, as the repository is.
    ("docs_index", "GET"): Row("GET", fixed("/docs/"), PUBLIC),
    ("doc_page", "GET"): Row("GET", fixed("/docs/scoring-sessions/"), PUBLIC),
    ("studies:study_list", "GET"): Row("GET", fixed("/studies/"), RESEARCHER_ANY_STUDY),
    ("studies:study_create", "GET"): Row("GET", fixed("/studies/new/"), RESEARCHER_ANY_STUDY),
    ("studies:study_create", "POST"): Row("POST", fixed("/studies/new/"), RESEARCHER_ANY_STUDY, lambda w: {}),
    ("studies:study_detail", "GET"): Row("GET", study_path("/studies/{slug}/"), RESEARCHER_PAGE),
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
    ("studies:setup_questionnaires", "GET"): Row(
        "GET", study_path("/studies/{slug}/setup/questionnaires/"), RESEARCHER_PAGE
    ),
    ("studies:setup_questionnaires", "POST"): Row(
        "POST",
        study_path("/studies/{slug}/setup/questionnaires/"),
        RESEARCHER_PAGE,
        lambda w: {"action": "item"},
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
    # Scoring dashboards.
    ("scoring:runs", "GET"): Row("GET", study_path("/scoring/{slug}/"), RESEARCHER_PAGE),
    ("scoring:runs", "POST"): Row("POST", study_path("/scoring/{slug}/"), RESEARCHER_PAGE, lambda w: {}),
    ("scoring:compare", "GET"): Row("GET", study_path("/scoring/{slug}/compare/"), RESEARCHER_PAGE),
    ("scoring:meta_evaluation", "GET"): Row(
        "GET", study_path("/scoring/{slug}/runs/{run}/meta-evaluation/"), RESEARCHER_PAGE
    ),
    ("scoring:planning", "GET"): Row("GET", study_path("/scoring/{slug}/planning/"), RESEARCHER_PAGE),
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
    ("panel:join", "GET"): Row(
        "GET", lambda w, role: public_link("")(w, role) + "?PROLIFIC_PID=" + "ab" * 12, PUBLIC
    ),
    ("panel:status", "POST"): Row(
        "POST",
        public_link("status/"),
        dict.fromkeys(ROLES, 403),
        lambda w: {"participant_id": "ab" * 12, "status": "returned"},
        json=True,
    ),
    # The API.
    ("api:token", "POST"): Row(
        "POST", fixed("/api/auth/token/"), PUBLIC, lambda w: {"username": "alice", "password": "wrong"}
    ),
    ("api-schema", "GET"): Row("GET", fixed("/api/schema/"), PUBLIC),
    ("api-docs", "GET"): Row("GET", fixed("/api/docs/"), PUBLIC),
    ("api-redoc", "GET"): Row("GET", fixed("/api/redoc/"), PUBLIC),
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

# --- the admin: staff with model permissions only (researchers are staff without any) --------------------

ADMIN_STAFF = {**dict.fromkeys(ROLES, ADMIN_LOGIN), "other_researcher": OK, "researcher": OK}
ADMIN_MODEL = {**ADMIN_STAFF, "other_researcher": 403, "researcher": 403}
ADMIN_HISTORY = {**ADMIN_MODEL, "other_researcher": (403, OK), "researcher": (403, OK)}
ADMIN_ROUTES = {
    ("admin:index", "GET"): Row("GET", fixed("/admin/"), ADMIN_STAFF),
    ("admin:login", "GET"): Row("GET", fixed("/admin/login/"), PUBLIC),
    ("admin:logout", "POST"): Row(
        "POST", fixed("/admin/logout/"), {**PUBLIC, "other_researcher": LOGIN, "researcher": LOGIN}
    ),
    ("admin:password_change", "GET"): Row("GET", fixed("/admin/password_change/"), ADMIN_STAFF),
    ("admin:password_change_done", "GET"): Row("GET", fixed("/admin/password_change/done/"), ADMIN_STAFF),
    ("admin:autocomplete", "GET"): Row("GET", fixed("/admin/autocomplete/"), ADMIN_MODEL),
    ("admin:jsi18n", "GET"): Row("GET", fixed("/admin/jsi18n/"), ADMIN_STAFF),
    ("admin:view_on_site", "GET"): Row(
        "GET",
        lambda w, r: f"/admin/r/1/{w.study.pk}/",
        {**ADMIN_STAFF, "other_researcher": 404, "researcher": 404},
    ),
    ("admin:app_list", "GET"): Row(
        "GET", fixed("/admin/studies/"), {**ADMIN_STAFF, "other_researcher": 404, "researcher": 404}
    ),
    ("admin:auth_user_password_change", "GET"): Row(
        "GET", lambda w, r: f"/admin/auth/user/{w.users['alice'].pk}/password/", ADMIN_MODEL
    ),
    # Anything else under /admin/ (the catch-all).
    ("admin/(?P<url>.*)$", "GET"): Row(
        "GET", fixed("/admin/no-such-page/"), {**ADMIN_STAFF, "other_researcher": 404, "researcher": 404}
    ),
}


def _admin_model_rows():
    rows = {}
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        name = f"admin:{model._meta.app_label}_{model._meta.model_name}"

        def obj(w, r, model=model, base=base):
            row = model._default_manager.order_by("pk").first()
            return f"{base}{row.pk if row else 1}/"

        rows[(name + "_changelist", "GET")] = Row("GET", fixed(base), ADMIN_MODEL)
        rows[(name + "_add", "GET")] = Row("GET", fixed(base + "add/"), ADMIN_MODEL)
        rows[(name + "_change", "GET")] = Row("GET", lambda w, r, o=obj: o(w, r) + "change/", ADMIN_MODEL)
        rows[(name + "_delete", "GET")] = Row("GET", lambda w, r, o=obj: o(w, r) + "delete/", ADMIN_MODEL)
        # Django's history page redirects staff away from an id that does not exist before it checks the
        # model permission (an admin oracle, docs/security.md): 403 or that redirect.
        rows[(name + "_history", "GET")] = Row("GET", lambda w, r, o=obj: o(w, r) + "history/", ADMIN_HISTORY)
        # The unnamed admin/<app>/<model>/<id>/ redirect to the change page.
        rows[(base.removeprefix("/") + "<path:object_id>/", "GET")] = Row("GET", obj, ADMIN_STAFF)
    return rows


ALL_ROWS = {**MATRIX, **ADMIN_ROUTES, **_admin_model_rows()}


# --- the tests --------------------------------------------------------------------------------------------


def _routes(patterns=None, prefix="", namespace=""):
    """(route key, pattern) for every URL pattern: the namespaced name, or the full pattern if unnamed."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            yield from _routes(
                p.url_patterns,
                prefix + str(p.pattern),
                namespace + (f"{p.namespace}:" if p.namespace else ""),
            )
        elif isinstance(p, URLPattern):
            full = prefix + str(p.pattern)
            yield (namespace + p.name if p.name else full), full


def test_every_route_is_in_the_matrix():
    covered = {name for name, _method in ALL_ROWS}
    missing = sorted(f"{name} ({pattern})" for name, pattern in _routes() if name not in covered)
    assert not missing, "routes without a row in tests/security/test_permission_matrix.py:\n" + "\n".join(
        missing
    )


def test_the_matrix_names_only_routes_that_exist():
    names = {name for name, _pattern in _routes()}
    assert not sorted({name for name, _m in ALL_ROWS} - names)


def _clients(world: World) -> dict[str, Client]:
    clients = {
        "anonymous": Client(),
        "participant": Client(HTTP_AUTHORIZATION=f"Participant {world.participant.access_token}"),
        "other_participant": Client(HTTP_AUTHORIZATION=f"Participant {world.other_participant.access_token}"),
    }
    for role, user in (
        ("assessor", "ann"),
        ("other_assessor", "zoe"),
        ("other_researcher", "charlie"),
        ("researcher", "bob"),
    ):
        clients[role] = Client()
        clients[role].force_login(world.users[user])
    return clients


WATCHED = [
    ("studies", m)
    for m in (
        "Study",
        "Scenario",
        "System",
        "Participant",
        "Assignment",
        "SearchSession",
        "Query",
        "Judgment",
        "Event",
        "ReferenceVersion",
        "ReferenceJudgment",
        "PoolDocument",
        "StudyAssessor",
        "AuditEntry",
        "AdjudicationDecision",
        "AssessorJudgment",
    )
] + [("scoring", "ScoringRun"), ("auth", "User")]


def _snapshot(world: World) -> dict:
    counts = {m: apps.get_model(a, m).objects.count() for a, m in WATCHED}
    p = type(world.participant).objects.get(pk=world.participant.pk)
    study = type(world.study).objects.get(pk=world.study.pk)
    counts["participant state"] = (p.consented_at, p.withdrawn_at, p.questionnaire_answers)
    counts["study"] = (study.name, study.description)
    counts["default run"] = list(
        world.run.__class__.objects.filter(is_default=True).values_list("pk", flat=True)
    )
    return counts


def _outcome(response) -> str | int:
    if response.status_code in (301, 302):
        location = response["Location"]
        if location.startswith("/admin/login/"):
            return ADMIN_LOGIN
        if location.startswith("/accounts/login/"):
            return LOGIN
    if response.status_code < 500 and response.status_code not in (401, 403, 404, 405):
        return OK
    return response.status_code


def _send(client: Client, row: Row, world: World, role: str):
    path = row.path(world, role)
    data = row.data(world) if row.data else None
    method = getattr(client, row.method.lower())
    if row.json:
        return method(path, data, content_type="application/json")
    if data is None:
        return method(path)
    return method(path, data)


@pytest.mark.parametrize("key", sorted(ALL_ROWS, key=str), ids=lambda k: f"{k[1]} {k[0]}")
def test_each_role_gets_exactly_its_share(key, world):
    row = ALL_ROWS[key]
    clients = _clients(world)
    wrong = []
    for role in ROLES:  # the allowed researcher last: some of the requests change things
        before = _snapshot(world)
        response = _send(clients[role], row, world, role)
        got = _outcome(response)
        allowed = row.expect[role] if isinstance(row.expect[role], tuple) else (row.expect[role],)
        if got not in allowed:
            wrong.append(f"{role}: expected {row.expect[role]}, got {got} ({response.status_code})")
        elif got != OK and _snapshot(world) != before:
            wrong.append(f"{role}: refused ({got}) but the database changed")
    assert not wrong, f"{key[1]} {row.path(world, 'researcher')}:\n" + "\n".join(wrong)
