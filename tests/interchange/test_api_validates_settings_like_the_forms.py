"""The study API checks every settings field as the pages' forms do, naming the field in the 400, and changes
nothing on a refusal. A malformed questionnaire (accepted
before) broke every participant's questionnaire page."""

import pytest

from studies.design.forms import StudyForm, SystemForm
from studies.models import Study, System

from .api_helpers import client_for

pytestmark = pytest.mark.django_db

VALID = [
    {"name": "years", "label": "Years of search", "kind": "integer", "min": 0, "max": 80},
    {"name": "skill", "label": "Skill", "kind": "scale", "min": 1, "max": 5},
    {"name": "role", "label": "Your role", "kind": "choice", "choices": ["GP", "nurse"]},
    {"name": "score", "label": "A number", "kind": "number", "min": -0.5, "max": 2.5},
    {"name": "comments", "label": "Anything else?", "kind": "text", "required": False},
]

MALFORMED = {
    "not a list": ({"name": "x"}, "must be a list"),
    "an item not an object": (["age"], "item 1: must be an object"),
    "no name": ([{"label": "Age", "kind": "integer"}], "item 1: name must be"),
    "a name no form can carry": ([{"name": 'a b"', "label": "Age"}], "name must be"),
    "no label": ([{"name": "age", "kind": "integer"}], "item 1 (age): label must be"),
    "unknown kind": ([{"name": "age", "label": "Age", "kind": "slider"}], "kind must be one of"),
    "min not a number": ([{"name": "age", "label": "Age", "kind": "integer", "min": "0"}], "min must be"),
    "scale without max": (
        [{"name": "s", "label": "S", "kind": "scale", "min": 1}],
        "a scale needs min and max",
    ),
    "a scale of a billion buttons": (
        [{"name": "s", "label": "S", "kind": "scale", "min": 1, "max": 10**9}],
        "at most 100 steps",
    ),
    "min above max": (
        [{"name": "s", "label": "S", "kind": "integer", "min": 5, "max": 1}],
        "min must not be above",
    ),
    "choice without choices": ([{"name": "r", "label": "R", "kind": "choice"}], "choices must be"),
    "choices not a list": (
        [{"name": "r", "label": "R", "kind": "choice", "choices": "GP"}],
        "choices must be",
    ),
    "required not a boolean": (
        [{"name": "r", "label": "R", "required": "no"}],
        "required must be true or false",
    ),
    "unknown key": ([{"name": "r", "label": "R", "colour": "red"}], "unknown key(s) colour"),
    "a name twice": (
        [{"name": "r", "label": "R"}, {"name": "r", "label": "R2"}],
        "item 2 (r): the name is used",
    ),
}


@pytest.mark.parametrize("field", ["questionnaire", "post_task_questionnaire"])
@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_questionnaire_is_a_400_naming_the_field_and_item(alice, study, field, case):
    value, reason = MALFORMED[case]
    response = client_for(alice).patch(f"/api/studies/{study.pk}/", {field: value}, format="json")
    assert response.status_code == 400, response.content
    assert any(reason in message for message in response.json()[field]), response.json()
    study.refresh_from_db()
    assert getattr(study, field) == []


def test_a_valid_questionnaire_is_stored(alice, study):
    response = client_for(alice).patch(
        f"/api/studies/{study.pk}/",
        {"questionnaire": VALID, "post_task_questionnaire": VALID[:2]},
        format="json",
    )
    assert response.status_code == 200, response.content
    study.refresh_from_db()
    assert study.questionnaire == VALID and study.post_task_questionnaire == VALID[:2]


@pytest.mark.parametrize("minutes", [0, -1, 7 * 24 * 60 + 1, 10**15])
def test_the_time_limit_has_the_forms_bounds(alice, study, minutes):
    response = client_for(alice).patch(
        f"/api/studies/{study.pk}/", {"time_limit_minutes": minutes}, format="json"
    )
    assert response.status_code == 400 and "time_limit_minutes" in response.json()
    created = client_for(alice).post(
        "/api/studies/", {"name": "T", "time_limit_minutes": minutes}, format="json"
    )
    assert created.status_code == 400 and "time_limit_minutes" in created.json()
    assert not StudyForm(
        data={"name": "T", "grade_labels": "a\nb", "consent_version": "1", "time_limit_minutes": minutes}
    ).is_valid()
    study.refresh_from_db()
    assert study.time_limit_minutes is None and Study.objects.count() == 1


@pytest.mark.parametrize("field, value", [("name", ""), ("name", "n" * 201), ("consent_version", "v" * 41)])
def test_text_fields_have_the_forms_lengths(alice, study, field, value):
    response = client_for(alice).patch(f"/api/studies/{study.pk}/", {field: value}, format="json")
    assert response.status_code == 400 and field in response.json()


BAD_CONFIGS = [
    ("builtin", ["bm25_text"], "must be a JSON object"),
    ("builtin", {"configuration": "bm99"}, "configuration must be one of"),
    ("http", {}, "has no {query} placeholder"),
    ("http", {"url_template": "ftp://engine/?q={query}"}, "is not an http:// or https:// URL"),
    ("http", {"url_template": "http://engine/?q={query}", "timeout": -1}, "timeout"),
]


@pytest.mark.parametrize("backend, config, reason", BAD_CONFIGS)
def test_a_system_config_that_cannot_work_is_a_400_naming_config(alice, study, backend, config, reason):
    client = client_for(alice)
    response = client.post(
        f"/api/studies/{study.pk}/systems/",
        {"code": "X", "name": "X", "backend": backend, "config": config},
        format="json",
    )
    assert response.status_code == 400 and reason in " ".join(response.json()["config"]), response.content
    assert not System.objects.filter(study=study).exists()
    form = SystemForm(
        data={"code": "X", "name": "X", "backend": backend, "config": __import__("json").dumps(config)}
    )
    assert not form.is_valid() and reason in " ".join(form.errors["config"])


def test_a_config_changed_to_something_unworkable_is_refused(alice, designed_study):
    system = designed_study.systems.get(code="A")
    response = client_for(alice).patch(
        f"/api/studies/{designed_study.pk}/systems/{system.pk}/", {"backend": "http"}, format="json"
    )
    assert response.status_code == 400 and "config" in response.json()
    system.refresh_from_db()
    assert system.backend == "builtin"


def test_workable_configs_are_accepted(alice, study):
    client = client_for(alice)
    for code, backend, config in [
        ("A", "builtin", {"configuration": "bm25_text"}),
        ("B", "builtin", {}),
        ("C", "http", {"url_template": "https://engine.example/?q={query}", "timeout": 2}),
    ]:
        response = client.post(
            f"/api/studies/{study.pk}/systems/",
            {"code": code, "name": code, "backend": backend, "config": config},
            format="json",
        )
        assert response.status_code == 201, response.content
