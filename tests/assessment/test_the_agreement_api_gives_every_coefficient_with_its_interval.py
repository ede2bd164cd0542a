"""GET /api/studies/<id>/agreement/: the agreement page's figures for scripts, per scenario and overall, per
pair and over all assessors, every coefficient with se, interval, p-value, method and n (null where
undefined); `?format=csv` is the study's agreement.csv download, byte for byte."""

import math

import pytest
from django.urls import reverse

from studies.assessment import adjudication
from studies.assessment.agreement_estimates import PAIR_COEFFICIENTS
from tests.interchange.api_helpers import client_for

from .conftest import grade_all

S1 = {"d1": [0, 0, 1], "d2": [1, 2, 2], "d3": [3, 3, 3], "d4": [2, 1, 2], "d5": [0, 0, 0], "d6": [0, 1, 0]}
S2 = {"d7": [0, 0, None], "d8": [3, 2, 3], "d9": [0, 0, 0]}
FIELDS = ["coefficient", "estimate", "se", "ci_low", "ci_high", "p_value", "n", "method"]


@pytest.fixture
def graded(assessed_study, make_assessors, settings):
    settings.AGREEMENT_BOOTSTRAP_REPLICATES = 200
    users = make_assessors(assessed_study, "ann", "ben", "cat", per_document=3)
    grade_all(assessed_study, S1, users)
    grade_all(assessed_study, S2, users, code="S2")
    return assessed_study


def url(study, query=""):
    return f"/api/studies/{study.pk}/agreement/{query}"


def same(number, value):
    return number is None if math.isnan(value) else number == pytest.approx(value, abs=1e-15)


def test_the_json_holds_every_block_pair_and_coefficient_as_the_page(graded, alice):
    response = client_for(alice).get(url(graded))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["scale"] == [0, 1, 2, 3] and body["level"] == 0.95
    blocks = adjudication.assessor_agreement(study=graded)
    assert [b["scenario"] for b in body["blocks"]] == ["S1", "S2", "S3", "S4", None]
    s1 = body["blocks"][0]
    assert s1["documents"] == len(S1)
    assert [e["coefficient"] for e in s1["all_assessors"]] == [e.coefficient for e in blocks[0].estimates]
    for shown, estimate in zip(s1["all_assessors"], blocks[0].estimates, strict=True):
        assert list(shown) == FIELDS
        assert shown["n"] == estimate.n and shown["method"] == estimate.method
        for field in ("estimate", "se", "ci_low", "ci_high", "p_value"):
            assert same(shown[field], getattr(estimate, field)), (field, shown)
    ann_ben = s1["pairs"][0]
    assert (ann_ben["first"], ann_ben["second"], ann_ben["n"]) == ("ann", "ben", len(S1))
    assert ann_ben["confusion_matrix"] == blocks[0].pairs[0].matrix.tolist()
    assert len(ann_ben["estimates"]) == len(PAIR_COEFFICIENTS)
    kappa = ann_ben["estimates"][2]
    assert kappa["coefficient"] == "Cohen's kappa (linear weights)"
    assert kappa["ci_low"] < kappa["estimate"] < kappa["ci_high"]
    assert "analytic" in kappa["method"]
    ordinal_alpha = s1["all_assessors"][6]
    assert ordinal_alpha["method"] == "bootstrap over documents, B = 200, seed 2014, percentile interval"
    overall = body["blocks"][-1]
    assert overall["all_assessors"][0]["n"] == len(S1) + len(S2)
    # a scenario nobody graded: its coefficients are listed, undefined, never a made-up figure
    s3 = body["blocks"][2]
    assert s3["pairs"] == [] and s3["all_assessors"][1]["estimate"] is None
    assert s3["all_assessors"][1]["n"] == 0


def test_the_csv_is_the_downloads_agreement_csv(graded, alice, client):
    api = client_for(alice)
    as_csv = api.get(url(graded, "?format=csv"))
    assert as_csv.status_code == 200
    assert as_csv["Content-Type"] == "text/csv; charset=utf-8"
    assert as_csv["Content-Disposition"] == f'attachment; filename="{graded.slug}-agreement.csv"'
    client.force_login(alice)
    download = client.get(reverse("exports:agreement_csv", args=[graded.slug]))
    assert as_csv.content == download.content
    by_accept = api.get(url(graded), HTTP_ACCEPT="text/csv")
    assert by_accept.content == download.content
    raw = api.get(url(graded, "?format=csv&raw=1"))
    assert raw.content == client.get(reverse("exports:agreement_csv", args=[graded.slug]) + "?raw=1").content


def test_an_unknown_parameter_or_a_bad_raw_is_a_json_400(graded, alice):
    api = client_for(alice)
    unknown = api.get(url(graded, "?format=csv&level=0.9"))
    assert unknown.status_code == 400 and unknown["Content-Type"] == "application/json"
    assert "level" in unknown.json()
    bad_raw = api.get(url(graded, "?raw=maybe"))
    assert bad_raw.status_code == 400 and bad_raw.json() == {"raw": "expected true or false"}


def test_another_researchers_study_is_not_found(graded, charlie):
    assert client_for(charlie).get(url(graded)).status_code == 404


def test_the_endpoint_is_in_the_openapi_schema(alice):
    schema = client_for(alice).get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/studies/{study_pk}/agreement/"]["get"]
    content = operation["responses"]["200"]["content"]
    assert set(content) == {"application/json", "text/csv"}
    assert "StudyAgreement" in content["application/json"]["schema"]["$ref"]
    blocks = schema["components"]["schemas"]["AgreementBlock"]["properties"]
    assert {"scenario", "documents", "all_assessors", "pairs"} <= set(blocks)


def test_the_query_count_does_not_grow_with_the_scenarios_or_the_pairs(graded, alice, make_assessors):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    api = client_for(alice)
    with CaptureQueriesContext(connection) as before:
        assert api.get(url(graded)).status_code == 200
    dan = make_assessors(graded, "dan")
    grade_all(graded, {"d10": [1], "d11": [2]}, dan, code="S3")
    with CaptureQueriesContext(connection) as after:
        assert api.get(url(graded)).status_code == 200
    assert len(after) == len(before) <= 12, [q["sql"][:120] for q in after]
