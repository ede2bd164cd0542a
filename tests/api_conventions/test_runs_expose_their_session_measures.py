"""The other session measures over the API: a run is created with the measures it should compute (each name
checked, a 400 naming the field and the item otherwise), shows them with their parameters, and each session's
values come in its `measures`, as stored; the OpenAPI schema names every measure and parameter."""

import dataclasses

import pytest
import yaml
from django.core.management import call_command

from scoring.lib.session_measures import MEASURES, MeasureParams
from scoring.models import ScoringRun, SessionScore
from studies.assessment import references
from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged_study(worked_study, alice):
    lines = [f"{topic} 0 d{n} {(n + topic) % 4}" for topic in range(1, 5) for n in range(1, 9)]
    references.reference_version_import_qrels(
        study=worked_study, lines=lines, path="ref.qrels", created_by=alice
    )
    return worked_study


def runs_url(study, suffix=""):
    return f"/api/studies/{study.pk}/scoring-runs/{suffix}"


def create(client, study, data, capture):
    with capture(execute=True):
        return client.post(runs_url(study), data, format="json")


def test_a_run_created_with_measures_shows_them_and_each_sessions_values(
    judged_study, alice, django_capture_on_commit_callbacks
):
    client = client_for(alice)
    response = create(
        client,
        judged_study,
        {"measures": ["nsdcg", "srbp", "nsdcg", "ndcg_last"], "top": 5, "bq": 2},
        django_capture_on_commit_callbacks,
    )
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["measures"] == ["nsdcg", "srbp", "ndcg_last"]  # in order, a repeated name once
    run = ScoringRun.objects.get(pk=created["id"])
    assert run.measures == ["nsdcg", "srbp", "ndcg_last"]
    params = created["measure_params"]
    assert set(params) == {f.name for f in dataclasses.fields(MeasureParams)}
    assert (params["k"], params["b"], params["bq"], params["grade_max"]) == (5, 2.0, 2.0, 3)
    assert params["p_down"] == MeasureParams().p_down

    detail = client.get(runs_url(judged_study, f"{run.pk}/")).json()
    assert detail["status"] == "done" and detail["measures"] == created["measures"]
    assert detail["measure_params"] == params
    rows = client.get(runs_url(judged_study, f"{run.pk}/sessions/")).json()["results"]
    stored = dict(SessionScore.objects.filter(run=run).values_list("session_id", "measures"))
    assert len(rows) == len(stored) == 2
    for row in rows:
        assert set(row["measures"]) == {"nsdcg", "srbp", "ndcg_last"}
        assert row["measures"] == stored[row["session"]]
        assert all(0.0 <= value <= 1.0 for value in row["measures"].values())
    assert any(value > 0 for row in rows for value in row["measures"].values())


def test_a_run_without_measures_shows_empty_ones(judged_study, alice, django_capture_on_commit_callbacks):
    client = client_for(alice)
    created = create(client, judged_study, {}, django_capture_on_commit_callbacks).json()
    assert created["measures"] == []
    assert created["measure_params"]["k"] == 10
    rows = client.get(runs_url(judged_study, f"{created['id']}/sessions/")).json()["results"]
    assert [row["measures"] for row in rows] == [{}, {}]


@pytest.mark.parametrize(
    ("measures", "expected"),
    [
        (["nsdcg", "ndgc"], {"1": ['unknown measure "ndgc"; choose from ' + ", ".join(MEASURES)]}),
        (["esNDCG"], {"0": ['unknown measure "esNDCG"; choose from ' + ", ".join(MEASURES)]}),
        ([3], {"0": ['unknown measure "3"; choose from ' + ", ".join(MEASURES)]}),
        ([None], {"0": ["This field may not be null."]}),
        ("nsdcg", ['Expected a list of items but got type "str".']),
        ({"nsdcg": 1}, ['Expected a list of items but got type "dict".']),
        (["nsdcg"] * 101, ["Ensure this field has no more than 100 elements."]),
    ],
)
def test_an_unknown_or_malformed_measure_is_a_400_naming_the_field_and_the_item(
    judged_study, alice, measures, expected, django_capture_on_commit_callbacks
):
    response = create(
        client_for(alice), judged_study, {"measures": measures}, django_capture_on_commit_callbacks
    )
    assert response.status_code == 400, response.content
    assert response.json() == {"measures": expected}
    assert not ScoringRun.objects.exists()


def test_measure_parameters_cannot_be_given_rather_than_being_ignored(
    judged_study, alice, django_capture_on_commit_callbacks
):
    response = create(
        client_for(alice),
        judged_study,
        {"measures": ["esndcg"], "measure_params": {"p_down": 0.5}},
        django_capture_on_commit_callbacks,
    )
    assert response.status_code == 400
    assert list(response.json()) == ["measure_params"]
    assert not ScoringRun.objects.exists()


def test_the_schema_names_every_measure_and_parameter(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    components = yaml.safe_load(path.read_text())["components"]["schemas"]
    create_measures = components["ScoringRunCreateRequest"]["properties"]["measures"]
    enum = components[create_measures["items"]["$ref"].rsplit("/", 1)[1]]["enum"]
    assert enum == list(MEASURES)
    run = components["ScoringRun"]["properties"]
    assert run["measures"]["readOnly"] and run["measure_params"]["readOnly"]
    assert set(components["MeasureParams"]["properties"]) == {
        f.name for f in dataclasses.fields(MeasureParams)
    }
    session = components["SessionScore"]["properties"]["measures"]
    assert session["type"] == "object" and session["additionalProperties"]["type"] == "number"
