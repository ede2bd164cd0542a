"""The API's PUT, PATCH and DELETE of a scenario or a system are written by services.design_row_update and
design_row_delete, which ask the design-lock rule themselves: the API is one caller among others."""

import pytest

from studies.design import services

from .api_helpers import client_for

pytestmark = pytest.mark.django_db


def _spy(monkeypatch, name):
    calls, original = [], getattr(services, name)

    def spy(**kwargs):
        calls.append({**kwargs, "pk": kwargs["row"].pk})  # before a delete clears it
        return original(**kwargs)

    monkeypatch.setattr(services, name, spy)
    return calls


@pytest.mark.parametrize("kind", ["scenarios", "systems"])
def test_patch_and_delete_call_the_services(designed_study, alice, monkeypatch, kind):
    updates, deletes = _spy(monkeypatch, "design_row_update"), _spy(monkeypatch, "design_row_delete")
    row = getattr(designed_study, kind).order_by("id").first()
    url = f"/api/studies/{designed_study.pk}/{kind}/{row.pk}/"
    client = client_for(alice)
    field = "title" if kind == "scenarios" else "name"
    assert client.patch(url, {field: "Renamed"}, format="json").status_code == 200
    assert [(c["pk"], c[field]) for c in updates] == [(row.pk, "Renamed")]
    assert client.delete(url).status_code == 204
    assert [c["pk"] for c in deletes] == [row.pk]
    assert not type(row).objects.filter(pk=row.pk).exists()


def test_the_services_refuse_once_the_design_is_locked(designed_study):
    services.participants_enrol(study=designed_study, count=2)
    scenario, system = designed_study.scenarios.first(), designed_study.systems.first()
    with pytest.raises(services.DesignLockedError):
        services.design_row_update(study=designed_study, row=scenario, title="Changed")
    with pytest.raises(services.DesignLockedError):
        services.design_row_delete(study=designed_study, row=system)
    scenario.refresh_from_db()
    assert scenario.title == "Scenario 1" and designed_study.systems.filter(pk=system.pk).exists()


def test_the_services_refuse_a_row_of_another_study(designed_study, alice):
    other = services.study_create(owner=alice, name="Other")
    with pytest.raises(services.DesignError):
        services.design_row_delete(study=other, row=designed_study.scenarios.first())
    assert designed_study.scenarios.count() == 4


LOCKED = "already has participants; its scenarios and systems are fixed"  # the service's DesignLockedError


@pytest.mark.parametrize(
    ("kind", "new", "change"),
    [
        ("scenarios", {"code": "S9", "title": "Nine", "text": "t", "topic_id": "9"}, {"title": "Changed"}),
        ("systems", {"code": "C", "name": "C", "backend": "builtin"}, {"name": "Changed"}),
    ],
)
def test_the_api_refuses_every_design_change_once_participants_are_enrolled(
    designed_study, alice, monkeypatch, kind, new, change
):
    updates, deletes = _spy(monkeypatch, "design_row_update"), _spy(monkeypatch, "design_row_delete")
    client = client_for(alice)
    base = f"/api/studies/{designed_study.pk}/{kind}/"
    assert (
        client.post(
            f"/api/studies/{designed_study.pk}/participants/enrol/", {"count": 2}, format="json"
        ).status_code
        == 201
    )
    rows = getattr(designed_study, kind)
    before = list(rows.order_by("id").values())
    row = rows.order_by("id").first()
    answers = [
        client.post(base, new, format="json"),
        client.patch(f"{base}{row.pk}/", change, format="json"),
        client.put(f"{base}{row.pk}/", {**new, "code": row.code}, format="json"),
        client.delete(f"{base}{row.pk}/"),
    ]
    assert [a.status_code for a in answers] == [409, 409, 409, 409]
    assert all(LOCKED in a.json()["detail"] for a in answers), [a.json() for a in answers]
    assert list(rows.order_by("id").values()) == before
    # The PATCH and PUT are refused by the rule before their body is read; the DELETE reaches the service,
    # which refuses it itself.
    assert updates == [] and [c["pk"] for c in deletes] == [row.pk]


def test_an_update_is_refused_by_the_service_even_past_the_view(designed_study, alice, monkeypatch):
    """The view asks the rule early (a 409 whatever the body); the service asks it again in its own
    transaction, so an enrolment that lands in between is still seen."""
    checks = []
    original = services.design_check_unlocked

    def enrol_after_the_views_check(**kwargs):
        checks.append(kwargs["study"].pk)
        if len(checks) == 1:  # the view's own check passes; participants arrive just after it
            original(**kwargs)
            services.participants_enrol(study=designed_study, count=2)
            return
        original(**kwargs)

    monkeypatch.setattr(services, "design_check_unlocked", enrol_after_the_views_check)
    scenario = designed_study.scenarios.order_by("id").first()
    response = client_for(alice).patch(
        f"/api/studies/{designed_study.pk}/scenarios/{scenario.pk}/", {"title": "Changed"}, format="json"
    )
    assert response.status_code == 409 and LOCKED in response.json()["detail"]
    assert len(checks) == 2
    scenario.refresh_from_db()
    assert scenario.title == "Scenario 1"


@pytest.mark.parametrize("service", ["scenario_add", "design_row_update", "design_row_delete"])
def test_a_bug_behind_a_design_write_is_a_500_not_a_refusal(designed_study, alice, monkeypatch, service):
    def broken(**kwargs):
        raise ValueError("a programming error")

    monkeypatch.setattr(services, service, broken)
    client = client_for(alice)
    client.raise_request_exception = True
    base = f"/api/studies/{designed_study.pk}/scenarios/"
    row = designed_study.scenarios.order_by("id").first()
    send = {
        "scenario_add": lambda: client.post(base, {"code": "S9", "title": "9", "text": "9", "topic_id": "9"}),
        "design_row_update": lambda: client.patch(f"{base}{row.pk}/", {"title": "x"}, format="json"),
        "design_row_delete": lambda: client.delete(f"{base}{row.pk}/"),
    }[service]
    with pytest.raises(ValueError, match="a programming error"):
        send()
