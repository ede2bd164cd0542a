"""The permission matrix's shared parts: who reaches what, every URL pattern of the project against the whole
cast (tests/security/conftest.py). The rows are in test_permission_matrix_pages.py (the site's pages),
test_permission_matrix_api.py (the API) and test_permission_matrix.py (the admin, and the check that every
route has a row).

A row per (route, method): how to build its path and body, and what each role gets. A route missing from the
rows fails `test_every_route_is_in_the_matrix`, so a new endpoint cannot go unchecked. Admin pages follow one
rule (staff with model permissions; researchers have none) and their rows are generated from the admin's
registry, so a newly registered model is checked too.

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

from django.apps import apps
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from .conftest import ROLES, World

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
    """The study's public link (its recruitment made on first use), with a fixed Prolific id."""

    def build(w, role):
        from studies.models import Recruitment

        recruitment, _ = Recruitment.objects.get_or_create(study=w.study)
        return f"/join/{recruitment.public_token}/{suffix}"

    return build


def llm_path(suffix: str) -> Callable[[World, str], str]:
    """A page of the study's LLM assessor ({pk}), of its run ({run}) or of its audit ({audit}), all made by
    the world fixture."""

    def build(w, role):
        from studies.models import LLMAudit, LLMRun

        run = LLMRun.objects.select_related("assessor").get(assessor__membership__study=w.study)
        audit = LLMAudit.objects.get(assessor__membership__study=w.study)
        return f"/assess/manage/{w.study.slug}/llm/" + suffix.format(
            pk=run.assessor_id, run=run.pk, audit=audit.pk
        )

    return build


def api_llm_path(suffix: str) -> Callable[[World, str], str]:
    """An API path under the study of its LLM assessor ({assessor}) or of its run ({run})."""

    def build(w, role):
        from studies.models import LLMRun

        run = LLMRun.objects.filter(assessor__membership__study=w.study).order_by("id").first()
        return f"/api/studies/{w.study.pk}/" + suffix.format(assessor=run.assessor_id, run=run.pk)

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


def routes(patterns=None, prefix="", namespace=""):
    """(route key, pattern) for every URL pattern: the namespaced name, or the full pattern if unnamed."""
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            yield from routes(
                p.url_patterns,
                prefix + str(p.pattern),
                namespace + (f"{p.namespace}:" if p.namespace else ""),
            )
        elif isinstance(p, URLPattern):
            full = prefix + str(p.pattern)
            yield (namespace + p.name if p.name else full), full


def role_clients(world: World) -> dict[str, Client]:
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


def db_snapshot(world: World) -> dict:
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


def send_row(client: Client, row: Row, world: World, role: str):
    path = row.path(world, role)
    data = row.data(world) if row.data else None
    method = getattr(client, row.method.lower())
    if row.json:
        return method(path, data, content_type="application/json")
    if data is None:
        return method(path)
    return method(path, data)


def check_each_role(key: tuple[str, str], row: Row, world: World) -> None:
    """Each role gets exactly its share of the row, and a refused request changes nothing."""
    clients = role_clients(world)
    wrong = []
    for role in ROLES:  # the allowed researcher last: some of the requests change things
        before = db_snapshot(world)
        response = send_row(clients[role], row, world, role)
        got = _outcome(response)
        allowed = row.expect[role] if isinstance(row.expect[role], tuple) else (row.expect[role],)
        if got not in allowed:
            wrong.append(f"{role}: expected {row.expect[role]}, got {got} ({response.status_code})")
        elif got != OK and db_snapshot(world) != before:
            wrong.append(f"{role}: refused ({got}) but the database changed")
    assert not wrong, f"{key[1]} {row.path(world, 'researcher')}:\n" + "\n".join(wrong)
