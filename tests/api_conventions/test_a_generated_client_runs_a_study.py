"""A client generated from the served OpenAPI schema by openapi-python-client (pinned in requirements-dev.txt)
runs a study end to end against a live server: sign in with a token, create a study with its design, enrol a
participant, take them the whole way through the participant endpoints (consent, questionnaire, a session,
its post-task questions), upload qrels (the one multipart body), start a
scoring run and read every per-query score. The generator must accept the schema without a warning, and every
module it writes must import: a schema that breaks generated clients fails here (docs/api.md, "A generated
client").

No marker: it runs in both CI passes (SQLite with Celery eager; PostgreSQL, where the run is still scored
in-process: tests/conftest.py keeps Celery eager for tests not marked needs_worker)."""

import importlib
import io
import pkgutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.core.management import call_command

from scoring.models import QueryScore
from studies.models import Collection, Document

PACKAGE = "sessionlab_generated_client"
GENERATOR = Path(sys.executable).parent / "openapi-python-client"
# No post hooks (they run ruff, which may want a network-less cache); the Session Track download is XML,
# which the generator reads as text.
CONFIG = f"""\
package_name_override: {PACKAGE}
post_hooks: []
content_type_overrides:
  application/xml: text/plain
  application/zip: application/octet-stream
"""
WORDS = ["flow", "boundary", "layer", "shock", "heat", "transfer", "panel", "buckling", "shell", "pressure"]


@pytest.fixture
def researcher(django_user_model, settings, tmp_path):
    """A researcher account with a password, owning a small indexed collection."""
    settings.INDEX_ROOT = tmp_path / "indexes"
    user = django_user_model.objects.create_user("rita", password="rita-password", is_staff=True)
    collection = Collection.objects.create(name="Generated client", owner=user)
    Document.objects.bulk_create(
        Document(
            collection=collection,
            external_id=str(n),
            title=f"Report {n}",
            text=" ".join(WORDS[(n + k) % len(WORDS)] for k in range(12)) + (" wing" if n <= 12 else ""),
        )
        for n in range(1, 31)
    )
    call_command("build_index", str(collection.pk), verbosity=0)
    return user, collection


@pytest.fixture
def generated(live_server, tmp_path):
    """The client package, generated from the schema the live server serves, imported (every module)."""
    schema = httpx.get(f"{live_server.url}/api/schema/")
    assert schema.status_code == 200
    (tmp_path / "schema.yaml").write_bytes(schema.content)
    (tmp_path / "config.yaml").write_text(CONFIG)
    out = tmp_path / "client"
    result = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(tmp_path / "schema.yaml"),
            "--output-path",
            str(out / PACKAGE),
            "--meta",
            "none",
            "--config",
            str(tmp_path / "config.yaml"),
            "--fail-on-warning",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(out))
    try:
        package = importlib.import_module(PACKAGE)
        failures = []
        for module in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
            try:
                importlib.import_module(module.name)
            except Exception as error:  # noqa: BLE001 (each failing module is reported)
                failures.append(f"{module.name}: {error!r}")
        assert not failures, "generated modules that do not import:\n" + "\n".join(failures)
        yield package
    finally:
        sys.path.remove(str(out))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]


def _module(package, name):
    return importlib.import_module(f"{package.__name__}.{name}")


def _ok(response, status=200):
    assert response.status_code == status, response.content
    return response.parsed


@pytest.mark.django_db(transaction=True)
def test_a_generated_client_signs_in_runs_a_study_and_reads_its_scores(live_server, researcher, generated):
    user, collection = researcher
    c = generated
    api = lambda name: _module(c, f"api.{name}")  # noqa: E731
    models = _module(c, "models")

    # Sign in: the token endpoint takes JSON only.
    anonymous = c.Client(base_url=live_server.url)
    token = _ok(
        api("auth.auth_token_create").sync_detailed(
            client=anonymous, body=models.AuthTokenRequest(username="rita", password="rita-password")
        )
    ).token
    rita = c.AuthenticatedClient(base_url=live_server.url, token=token, prefix="Token")
    refused = api("studies.studies_list").sync_detailed(client=anonymous)
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == "Token"

    # A study with its design.
    study = _ok(
        api("studies.studies_create").sync_detailed(
            client=rita,
            body=models.StudyCreateRequest(
                name="Generated", collection=collection.pk, consent_text="Consent."
            ),
        ),
        201,
    )
    for code, text, topic in (("S1", "Find reports on wings.", "1"), ("S2", "Find reports on heat.", "2")):
        _ok(
            api("studies.studies_scenarios_create").sync_detailed(
                study.id,
                client=rita,
                body=models.ScenarioRequest(code=code, title=code, text=text, topic_id=topic),
            ),
            201,
        )
    for code, configuration in (("A", "bm25_title_text"), ("B", "bm25_text")):
        _ok(
            api("studies.studies_systems_create").sync_detailed(
                study.id,
                client=rita,
                body=models.SystemRequest(code=code, name=code, config={"configuration": configuration}),
            ),
            201,
        )

    # A new study is a draft: opened once its set-up checklist passes.
    opened = _ok(
        api("studies.studies_status_create").sync_detailed(
            study.id, client=rita, body=models.StudyStatusRequest(status=models.StudyStatusStatusEnum.OPEN)
        )
    )
    assert opened.status.value == "open"

    # Enrol one participant; their own interface takes them the whole way through the participant endpoints.
    [participant] = _ok(
        api("studies.studies_participants_enrol_create").sync_detailed(
            study.id, client=rita, body=models.EnrolRequest(count=1)
        ),
        201,
    )
    p = c.AuthenticatedClient(base_url=live_server.url, token=participant.access_token, prefix="Participant")
    step = _ok(api("participant.participant_step_retrieve").sync_detailed(client=p))
    assert step.kind.value == "consent" and step.consent.version == "1"
    step = _ok(
        api("participant.participant_consent_create").sync_detailed(
            client=p,
            body=models.ConsentRequest(
                decision=models.DecisionEnum.AGREE,
                consent_version=step.consent.version,
                client_event_id="consent",
            ),
        )
    ).step
    assert step.kind.value == "questionnaire"
    answers = {item.name: str(int(item.min_)) if item.min_ is not None else "x" for item in step.items}
    step = _ok(
        api("participant.participant_questionnaire_create").sync_detailed(
            client=p,
            body=models.QuestionnaireAnswersRequest(
                answers=models.QuestionnaireAnswersRequestAnswers.from_dict(answers), client_event_id="q"
            ),
        )
    ).step
    assert (
        step.kind.value == "scenario" and step.assignment == 1 and step.task.text == "Find reports on wings."
    )

    session = _ok(
        api("participant.participant_sessions_create").sync_detailed(
            client=p, body=models.SessionStartRequest(assignment=1, client_event_id="start-1")
        ),
        201,
    )
    events = [
        ("q1", "query", {"text": "wing"}),
        ("q2", "query", {"text": "wing flow"}),
        ("j1", "judgment", {"doc": "1", "grade": 2}),
        ("end", "session_end", {"reason": "satisfied"}),
    ]
    acks = _ok(
        api("participant.participant_events_create").sync_detailed(
            client=p,
            body=models.EventBatchDocRequest(
                events=[
                    models.ClientEventRequest(
                        id=i, type_=t, session=session.id, data=models.ClientEventRequestData.from_dict(d)
                    )
                    for i, t, d in events
                ]
            ),
        )
    ).acks
    assert [(ack.id, ack.ok) for ack in acks] == [(i, True) for i, _t, _d in events], [
        a.to_dict() for a in acks
    ]
    step = _ok(api("participant.participant_step_retrieve").sync_detailed(client=p))
    assert step.kind.value == "post_task" and step.session == session.id
    answers = {item.name: str(int(item.min_)) if item.min_ is not None else "x" for item in step.items}
    step = _ok(
        api("participant.participant_post_task_create").sync_detailed(
            client=p,
            body=models.PostTaskAnswersRequest(
                session=session.id,
                answers=models.PostTaskAnswersRequestAnswers.from_dict(answers),
                client_event_id="post-1",
            ),
        )
    ).step
    assert step.kind.value == "scenario" and step.assignment == 2

    # Reference judgments as an uploaded qrels file (multipart), then a scoring run.
    qrels = "".join(f"{topic} 0 {doc} {(doc + topic) % 4}\n" for topic in (1, 2) for doc in range(1, 31))
    upload = c.types.File(payload=io.BytesIO(qrels.encode()), file_name="team.qrels", mime_type="text/plain")
    version = _ok(
        api("studies.studies_reference_versions_import_qrels_create").sync_detailed(
            study.id, client=rita, body=models.QrelsImportRequest(file=upload, note="generated client")
        ),
        201,
    )
    assert version.judgment_count == 60
    run = _ok(
        api("studies.studies_scoring_runs_create").sync_detailed(
            study.id, client=rita, body=models.ScoringRunCreateRequest(label="generated client")
        ),
        201,
    )
    deadline = time.monotonic() + 60
    while run.status.value not in ("done", "failed") and time.monotonic() < deadline:
        time.sleep(0.2)
        run = _ok(api("studies.studies_scoring_runs_retrieve").sync_detailed(study.id, run.id, client=rita))
    assert run.status.value == "done", run.error

    # Every per-query score of the run, page by page (cursor), equal to the stored rows.
    scores, cursor = [], None
    while True:
        page = _ok(
            api("studies.studies_scoring_runs_query_scores_list").sync_detailed(
                study.id, run.id, client=rita, page_size=1, **({"cursor": cursor} if cursor else {})
            )
        )
        scores.extend(page.results)
        if not page.next_:
            break
        cursor = httpx.URL(page.next_).params["cursor"]
    stored = list(
        QueryScore.objects.filter(run_id=run.id).order_by("position").values_list("query_id", "sdcg")
    )
    assert len(stored) == 2
    assert [(row.query, row.sdcg) for row in scores] == stored
    assert [(row.session, row.position, row.text, row.system) for row in scores] == [
        (session.id, 1, "wing", session.system),
        (session.id, 2, "wing flow", session.system),
    ]
    assert scores[-1].is_last and not scores[0].is_last
