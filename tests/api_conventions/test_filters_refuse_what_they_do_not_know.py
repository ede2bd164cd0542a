"""Lists refuse an unknown query parameter and a value that is none of its choices with a 400 naming the
parameter (a misspelt filter, or a code the study does not have, used to answer the whole list, or an empty
one); the filters that are right still filter."""

import pytest

from tests.interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

LISTS = [
    "participants",
    "sessions",
    "queries",
    "judgments",
    "events",
    "scenarios",
    "systems",
    "reference-versions",
    "grade-levels",
    "scoring-runs",
]


@pytest.mark.parametrize("name", LISTS)
def test_an_unknown_parameter_is_a_400_naming_it(worked_study, alice, name):
    response = client_for(alice).get(f"/api/studies/{worked_study.pk}/{name}/", {"sytem": "A"})
    assert response.status_code == 400, response.content
    assert "unknown query parameter" in response.json()["sytem"]
    assert "page_size" in response.json()["sytem"]  # and says which it takes


def test_the_top_level_lists_refuse_them_too(worked_study, alice):
    client = client_for(alice)
    for url in ("/api/studies/", "/api/collections/"):
        response = client.get(url, {"ownr": "alice"})
        assert response.status_code == 400 and "ownr" in response.json(), url


def test_the_parameters_a_list_takes_are_accepted(worked_study, alice, scored_run):
    client = client_for(alice)
    base = f"/api/studies/{worked_study.pk}"
    runs = f"{base}/scoring-runs/{scored_run.pk}"
    for url, params in [
        (f"{base}/sessions/", {"page": 1, "page_size": 10, "format": "json", "system": "A"}),
        (f"{runs}/sessions/", {"curves": "1", "unjudged": "false"}),
        (f"{runs}/query-scores/", {"by_rank": "1", "is_last": "true", "page_size": 5}),
    ]:
        assert client.get(url, params).status_code == 200, (url, client.get(url, params).content)


@pytest.mark.parametrize(
    ("name", "params", "words"),
    [
        ("sessions", {"end_reason": "bored"}, "is not one of satisfied, gave_up, timed_out, withdrawn"),
        ("sessions", {"system": "Z"}, "'Z' is not a system code of this study"),
        ("sessions", {"scenario": "S9"}, "'S9' is not a scenario code of this study"),
        ("queries", {"participant": "P999"}, "'P999' is not a participant code of this study"),
        ("judgments", {"grade": 7}, "'7' is not one of 0, 1, 2, 3"),
        ("judgments", {"grade": "high"}, "expected an integer"),
        ("events", {"participant": "nobody"}, "not a participant code"),
        ("systems", {"backend": "solr"}, "is not one of builtin, http"),
        ("participants", {"consented": "maybe"}, "expected true or false"),
        ("scoring-runs", {"status": "finished"}, "is not one of pending, running, done, failed"),
    ],
)
def test_an_invalid_value_is_a_400_naming_the_parameter(worked_study, alice, name, params, words):
    response = client_for(alice).get(f"/api/studies/{worked_study.pk}/{name}/", params)
    assert response.status_code == 400, response.content
    [(parameter, message)] = response.json().items()
    assert parameter == next(iter(params))
    assert words in str(message), message


def test_valid_choices_still_filter(worked_study, alice):
    client = client_for(alice)
    base = f"/api/studies/{worked_study.pk}"
    assert client.get(f"{base}/sessions/", {"end_reason": "satisfied"}).json()["count"] == 2
    assert client.get(f"{base}/sessions/", {"end_reason": "gave_up"}).json()["count"] == 0  # a choice: empty
    assert client.get(f"{base}/judgments/", {"grade": 3}).json()["count"] == 2
    assert client.get(f"{base}/systems/", {"backend": "builtin"}).json()["count"] == 2
    assert client.get(f"{base}/queries/", {"participant": "P002"}).json()["count"] == 0  # known, no queries


def test_a_page_size_that_is_no_positive_integer_is_a_400(worked_study, alice, scored_run):
    client = client_for(alice)
    for url in (
        f"/api/studies/{worked_study.pk}/sessions/",
        "/api/studies/",
        f"/api/studies/{worked_study.pk}/scoring-runs/{scored_run.pk}/query-scores/",
    ):
        for size in ("ten", "0", "-5", "1.5"):
            response = client.get(url, {"page_size": size})
            assert response.status_code == 400 and "page_size" in response.json(), (url, size)
        assert client.get(url, {"page_size": "2"}).status_code == 200
