"""The planner's form groups the fields that only some modes read in fieldsets marked with their modes; the
page shows the chosen mode's (a static script switches them), and the server ignores the other modes'
fields, even when they hold what that mode would refuse."""

import re

import pytest
from django.urls import reverse

from scoring.models import PowerPlan

from .formdata import form_data

pytestmark = pytest.mark.django_db


def _fieldset_of(page: str, field: str) -> str:
    """The data-modes of the fieldset holding a field ('' for the fields every mode reads)."""
    position = page.index(f'data-field="{field}"')
    opened = page.rfind("<fieldset", 0, position)
    if opened == -1 or page.rfind("</fieldset>", 0, position) > opened:
        return ""
    return re.match(r'<fieldset class="plan-mode" data-modes="([a-z ]+)"', page[opened:]).group(1)


def test_each_field_is_marked_with_the_modes_that_read_it(client, designed_study):
    client.force_login(designed_study.owner)
    page = client.get(reverse("scoring:planning", args=[designed_study.slug])).content.decode()
    assert {f: _fieldset_of(page, f) for f in ("difference", "spread", "between")} == dict.fromkeys(
        ("difference", "spread", "between"), "specified"
    )
    assert _fieldset_of(page, "run") == "pilot simulated" == _fieldset_of(page, "population")
    for field in ("simulated_participants", "queries", "stopping", "depth", "cost_query", "agreement"):
        assert _fieldset_of(page, field) == "simulated", field
    for field in ("summary", "test", "first_system", "effect", "counts", "replications", "seed"):
        assert _fieldset_of(page, field) == "", field
    _data, fieldsets = form_data(page, "planning-form")
    shown = {f["data-modes"] for f in fieldsets if "hidden" not in f}
    assert shown == {"specified"}  # the default mode's, before any script runs
    assert 'src="/static/js/planning-form.js"' in page and "<script>" not in page


def test_a_pilot_plan_ignores_the_specified_and_simulated_fields(
    client, scored, django_capture_on_commit_callbacks
):
    study = scored[0].study
    client.force_login(study.owner)
    url = reverse("scoring:planning", args=[study.slug])
    data, _fieldsets = form_data(client.get(url).content.decode(), "planning-form")
    data.update(
        effect="pilot", difference="not a number", spread="-1", between="", depth="999", counts="8,16"
    )
    data["replications"] = "50"
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, data)
    assert response.status_code == 302, response.context["form"].errors
    plan = PowerPlan.objects.get()
    assert plan.effect == "pilot" and plan.difference is None and plan.spread is None and plan.between == 0
    page = client.post(url, {**data, "effect": "specified"}).content.decode()
    assert "Enter a number." in page  # the same value refused where the mode reads it
