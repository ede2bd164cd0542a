"""The API key is write-only: every answer of the LLM assessor's endpoints (creates, changes, refusals, lists,
runs, requests, publications), the study's and the schema is read for the key's text, and none carries it.
The zipped downloads (archive, tables) are unzipped and read in test_the_api_key_is_never_shown.py."""

from django.urls import reverse

from studies.assessment import adjudication

from .conftest import API_KEY

SECOND_KEY = "sk-second-0a1b2c3d4e5f60718293a4b5c6d7e8f9"


def test_no_answer_of_any_endpoint_carries_the_key(
    api, pooled_study, model_server, alice, django_capture_on_commit_callbacks
):
    study = f"/api/studies/{pooled_study.pk}"
    answers = []

    def send(method, path, body=None):
        kwargs = {"content_type": "application/json"} if body is not None else {}
        answer = (
            getattr(api, method)(path, body, **kwargs) if body is not None else getattr(api, method)(path)
        )
        answers.append((method, path, answer))
        return answer

    created = send(
        "post",
        f"{study}/llm-assessors/",
        {"endpoint_url": model_server.endpoint, "model_name": "m", "api_key": API_KEY},
    )
    assert created.status_code == 201 and created.json()["key_set"] is True
    pk = created.json()["id"]
    # Refusals carrying a key, on create and on change: the key is not echoed back.
    send(
        "post",
        f"{study}/llm-assessors/",
        {"endpoint_url": "ftp://x.example/", "model_name": "m", "api_key": API_KEY},
    )
    send(
        "post",
        f"{study}/llm-assessors/",
        {"endpoint_url": model_server.endpoint, "model_name": "m", "api_key": API_KEY * 200},
    )
    send("patch", f"{study}/llm-assessors/{pk}/", {"api_key": SECOND_KEY, "passage_max_chars": 1})
    assert send("patch", f"{study}/llm-assessors/{pk}/", {"api_key": SECOND_KEY}).json()["key_set"] is True
    with django_capture_on_commit_callbacks(execute=True):
        run = send("post", f"{study}/llm-assessors/{pk}/runs/", {}).json()
    assert model_server.requests[0]["headers"]["Authorization"] == f"Bearer {SECOND_KEY}"  # it was used
    adjudication.adjudicate(study=pooled_study, preset="majority", decided_by=alice)
    llm_id = pk
    send("post", f"{study}/reference-versions/publish/", {"machine": llm_id, "rules": ["fill_unjudged"]})
    send(
        "post",
        f"{study}/reference-versions/publish/",
        {"machine": llm_id, "rules": ["break_ties"], "allow_pending": True},
    )
    send("post", f"{study}/llm-runs/{run['id']}/cancel/")
    for path in (
        f"{study}/llm-assessors/",
        f"{study}/llm-assessors/{pk}/",
        f"{study}/llm-assessors/{pk}/runs/",
        f"{study}/llm-runs/{run['id']}/",
        f"{study}/llm-runs/{run['id']}/requests/",
        f"{study}/reference-versions/",
        f"{study}/",
        reverse("api-schema"),
    ):
        send("get", path)

    assert [a.status_code for _m, _p, a in answers[:4]] == [201, 400, 400, 400]
    for method, path, answer in answers:
        assert answer.status_code < 500, (method, path)
        body = b"".join(answer.streaming_content) if answer.streaming else answer.content
        for key in (API_KEY, SECOND_KEY):
            assert key.encode() not in body, (method, path)
            assert key not in str(answer.headers), (method, path)


def _frames_of(call) -> dict[str, str]:
    """The variables an error report would show for each frame of the exception `call` raises, the test's
    own frames and the test client's (which holds the body it sends) left out."""
    import sys
    from pathlib import Path

    from django.views.debug import ExceptionReporter

    try:
        call()
    except RuntimeError:
        frames = ExceptionReporter(None, *sys.exc_info()).get_traceback_data()["frames"]
    else:
        raise AssertionError("the call did not fail")
    tests = str(Path(__file__).parents[2])
    return {
        frame["function"]: str(frame["vars"])
        for frame in frames
        if not frame["filename"].startswith(tests) and "/django/test/" not in frame["filename"]
    }


def _broken(*args, **kwargs):
    raise RuntimeError("a bug below the API")


def test_an_error_report_of_a_create_or_change_masks_the_key(
    api, pooled_study, llm_assessor, monkeypatch, settings
):
    from types import SimpleNamespace

    from studies.assessment.llm import setup

    settings.DEBUG = False
    study = f"/api/studies/{pooled_study.pk}"
    monkeypatch.setattr(setup, "StudyAssessor", SimpleNamespace(objects=SimpleNamespace(create=_broken)))
    body = {"endpoint_url": "http://127.0.0.1:9/v1", "model_name": "m", "api_key": API_KEY}
    created = _frames_of(lambda: api.post(f"{study}/llm-assessors/", body, content_type="application/json"))
    assert {"post", "llm_assessor_create"} <= set(created)
    assert API_KEY not in str(created)

    monkeypatch.setattr(setup, "grade_map_for", _broken)
    changed = _frames_of(
        lambda: api.patch(
            f"{study}/llm-assessors/{llm_assessor.pk}/",
            {"api_key": SECOND_KEY},
            content_type="application/json",
        )
    )
    assert {"patch", "llm_assessor_update"} <= set(changed)
    assert SECOND_KEY not in str(changed)
