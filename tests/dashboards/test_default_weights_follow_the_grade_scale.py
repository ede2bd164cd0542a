"""The default weights follow the study's grade scale: the paper's 0,1,10,100 on 0..3, and each grade ten
times the one below on other scales, so the first run on
a Session Track import (grades 0..4) is not refused."""

import pytest
from django.urls import reverse

from scoring.lib.session import default_weights
from scoring.models import ScoringRun
from studies.models import GradeLevel

from .conftest import reference_version

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("scale", "weights"),
    [
        ([0, 1, 2, 3], (0, 1, 10, 100)),
        ([0, 1, 2, 3, 4], (0, 1, 10, 100, 1000)),
        ([0, 1], (0, 1)),
        ([1, 2, 3, 4], (0, 0, 1, 10, 100)),
        ([], (0, 1, 10, 100)),
    ],
)
def test_default_weights_extend_the_papers_to_any_scale(scale, weights):
    assert default_weights(scale) == weights


@pytest.fixture
def scale_0_to_4(constructed):
    """The constructed study on the Session Track's scale
    0..4, with some documents graded 4 (navigational)."""
    study = constructed.study
    GradeLevel.objects.create(study=study, value=4, label="navigational")
    grades = {topic: dict(judged) for topic, judged in constructed.grades.items()}
    for judged in grades.values():
        judged[next(iter(judged))] = 4
    docs = {d.external_id: d for d in study.collection.documents.all()}
    reference_version(study, grades, docs=docs)
    return study


def test_the_default_run_on_a_0_to_4_scale_succeeds(client, scale_0_to_4, django_capture_on_commit_callbacks):
    study = scale_0_to_4
    client.force_login(study.owner)
    url = reverse("scoring:runs", args=[study.slug])
    page = client.get(url)
    form = page.context["form"]
    assert form["weights"].value() == "0,1,10,100,1000"
    # The form says which grade gets which weight.
    assert "4 (navigational) = 1000" in page.content.decode()
    assert [(g, w) for g, _, w in form.grade_weights] == [(0, 0), (1, 1), (2, 10), (3, 100), (4, 1000)]

    defaults = {name: form[name].value() for name in form.fields if form[name].value() not in (None, False)}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, defaults)
    assert response.status_code == 302, response.content.decode()[:2000]
    run = ScoringRun.objects.get(study=study)
    run.refresh_from_db()
    assert run.weights == [0, 1, 10, 100, 1000] and run.status == "done", run.error


def test_the_api_defaults_to_the_scales_weights(client, scale_0_to_4):
    client.force_login(scale_0_to_4.owner)
    response = client.post(
        f"/api/studies/{scale_0_to_4.pk}/scoring-runs/", {}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    assert response.json()["weights"] == [0, 1, 10, 100, 1000]
