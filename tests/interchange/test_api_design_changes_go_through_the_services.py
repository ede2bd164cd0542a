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
