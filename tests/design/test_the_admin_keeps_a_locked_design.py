"""Once participants are enrolled the study's scenarios, systems and design are fixed (the Latin square's
balance), and the admin asks the same rule as the pages, the API and the importers: it refuses to add,
change or remove one, or to change the design (within or between subjects, practice scenarios)."""

from html.parser import HTMLParser

import pytest

from studies.design import services
from studies.models import Scenario, System

pytestmark = pytest.mark.django_db


class _FormFields(HTMLParser):
    """The values a browser would post from the admin's change form, as the page renders them."""

    def __init__(self):
        super().__init__()
        self.data: dict[str, list[str]] = {}
        self._textarea = self._select = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.data.setdefault(name, []).append(a.get("value") or "")
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = [""]
        elif tag == "select" and name:
            self._select = name
            self.data.setdefault(name, [])
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select].append(a.get("value") or "")

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea][0] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None


def _change_form(client, study) -> tuple[str, dict]:
    url = f"/admin/studies/study/{study.pk}/change/"
    parser = _FormFields()
    parser.feed(client.get(url).content.decode())
    data = {k: v if len(v) != 1 else v[0] for k, v in parser.data.items()}
    data["questionnaire"] = data["questionnaire"].strip()
    data["post_task_questionnaire"] = data["post_task_questionnaire"].strip()
    return url, data


def _with_a_new_row(data: dict, prefix: str, **fields) -> dict:
    """The change form's data with one more row in the inline `prefix` (scenarios, systems)."""
    n = int(data[f"{prefix}-TOTAL_FORMS"])
    return {
        **data,
        f"{prefix}-TOTAL_FORMS": str(n + 1),
        **{f"{prefix}-{n}-{k}": v for k, v in fields.items()},
    }


def _with_a_third_system(data: dict) -> dict:
    return _with_a_new_row(data, "systems", code="C", name="System C", backend="builtin", config="{}")


def _with_a_fifth_scenario(data: dict) -> dict:
    return _with_a_new_row(data, "scenarios", code="S5", title="Scenario 5", text="Text 5", topic_id="5")


def test_before_enrolment_the_admin_adds_a_system(admin_client, designed_study):
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, _with_a_third_system(data))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert designed_study.systems.filter(code="C").exists()


def test_after_enrolment_the_admin_refuses_a_third_system(admin_client, designed_study):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, _with_a_third_system(data))
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    assert sorted(designed_study.systems.values_list("code", flat=True)) == ["A", "B"]


def test_after_enrolment_the_admin_refuses_a_new_scenario(admin_client, designed_study):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, _with_a_fifth_scenario(data))
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    assert designed_study.scenarios.count() == 4


@pytest.mark.parametrize("prefix, model", [("scenarios", Scenario), ("systems", System)])
def test_after_enrolment_the_admin_refuses_to_remove_one(admin_client, designed_study, prefix, model):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, {**data, f"{prefix}-0-DELETE": "on"})
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    assert model.objects.filter(study=designed_study).count() == (4 if model is Scenario else 2)


@pytest.mark.parametrize(
    "prefix, field, value",
    [("scenarios", "text", "A silently changed task."), ("systems", "name", "Renamed")],
)
def test_after_enrolment_the_admin_refuses_to_change_one(admin_client, designed_study, prefix, field, value):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    before = data[f"{prefix}-0-{field}"]
    response = admin_client.post(url, {**data, f"{prefix}-0-{field}": value})
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    model = Scenario if prefix == "scenarios" else System
    assert not model.objects.filter(study=designed_study, **{field: value}).exists()
    assert model.objects.filter(study=designed_study, **{field: before.strip()}).exists()


def test_after_enrolment_the_admin_still_saves_the_study_itself(admin_client, designed_study):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, {**data, "description": "Edited after enrolment."})
    assert response.status_code == 302, response.content.decode()[:2000]
    designed_study.refresh_from_db()
    assert designed_study.description == "Edited after enrolment."


def test_after_enrolment_the_admin_refuses_another_design(admin_client, designed_study):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, {**data, "design": "between"})
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    designed_study.refresh_from_db()
    assert designed_study.design is None


def test_after_enrolment_the_admin_refuses_to_mark_a_scenario_practice(admin_client, designed_study):
    services.participants_enrol(study=designed_study, count=2)
    url, data = _change_form(admin_client, designed_study)
    response = admin_client.post(url, {**data, "scenarios-0-practice": "on"})
    assert response.status_code == 200
    assert "already has participants" in response.content.decode()
    assert not designed_study.scenarios.filter(practice=True).exists()
