"""Submitting the planner's form as it comes (its defaults: a specified difference of 0.1 and a spread of 0.2)
computes a power curve, rather than answering 400 "a specified effect needs the difference"."""

import pytest
from django.urls import reverse

from scoring.models import PowerPlan

from .formdata import form_data

pytestmark = pytest.mark.django_db


def test_the_default_form_gives_a_done_plan(client, designed_study, django_capture_on_commit_callbacks):
    client.force_login(designed_study.owner)
    url = reverse("scoring:planning", args=[designed_study.slug])
    data, _fieldsets = form_data(client.get(url).content.decode(), "planning-form")
    assert data["effect"] == "specified" and data["difference"] == "0.1" and data["spread"] == "0.2"
    assert "depth" not in data and "run" not in data  # the other modes' fieldsets are disabled
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, data)
    assert response.status_code == 302, response.context["form"].errors
    plan = PowerPlan.objects.get()
    plan.refresh_from_db()
    assert plan.status == "done", plan.error
    assert (plan.difference, plan.spread, plan.counts) == (0.1, 0.2, [8, 16, 24, 32, 40, 48, 56, 64, 72, 80])
