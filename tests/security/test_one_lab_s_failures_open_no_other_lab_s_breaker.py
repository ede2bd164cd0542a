"""The circuit breaker is keyed by the study (a lab's) and the target, not by the target alone: lab B's
engine calls that time out or fail open B's breaker, and lab A's next call to the same engine is still made
(before, five failures by lab B failed lab A's next run with "circuit open"). The same holds for a
language-model assessor's requests (`post_json`, scope `study:<id>`)."""

import pytest
from django.core.cache import cache

from sessionlab import outbound
from studies.design import services
from studies.models import System

from .local_servers import serving


@pytest.fixture
def failing_engine(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    settings.OUTBOUND_BREAKER_FAILURES = 3
    settings.OUTBOUND_BREAKER_COOLDOWN_SECONDS = 60
    cache.clear()
    with serving() as server:
        server.answer = (500, "oops")
        yield server


def system_tested(client, user, study, url_template) -> str:
    system = services.system_add(
        study=study,
        code="H",
        name="Engine",
        backend=System.Backend.HTTP,
        config={"url_template": url_template},
    )
    client.force_login(user)
    page = client.post(f"/studies/{study.slug}/setup/systems/{system.pk}/test/", {"query": "wing"})
    assert page.status_code == 200
    return page.content.decode().split('id="test-error"', 1)[1].split("</div>", 1)[0]


@pytest.mark.django_db
def test_lab_b_s_failures_leave_lab_a_s_calls_to_the_engine_alone(
    client, alice, charlie, study, failing_engine
):
    charlie_study = services.study_create(
        owner=charlie, name="Charlie's study", consent_text="C.", status="open"
    )
    template = failing_engine.base + "/?q={query}"
    for _ in range(3):
        assert "HTTP 500" in system_tested(client, charlie, charlie_study, template)
        charlie_study.systems.all().delete()
    assert "circuit open" in system_tested(client, charlie, charlie_study, template)
    calls_before = len(failing_engine.paths)

    assert "HTTP 500" in system_tested(client, alice, study, template)  # called, not skipped
    assert len(failing_engine.paths) == calls_before + 1


def test_a_post_s_breaker_is_the_scope_s_own(failing_engine):
    url = failing_engine.base + "/v1/chat/completions"
    for _ in range(3):
        assert outbound.post_json(url, {}, timeout=2, scope="study:2").status == 500
    with pytest.raises(outbound.CircuitOpen):
        outbound.post_json(url, {}, timeout=2, scope="study:2")
    assert outbound.post_json(url, {}, timeout=2, scope="study:1").status == 500
    assert len(failing_engine.posted) == 4
