"""The researcher's "Test this system" shows a short category, never what the other side sent nor what a
port is: under the default rules a closed port and an open non-HTTP port on loopback read the same
"refused (address not allowed)" and neither is connected; an allowed internal service's JSON values never
appear in the page."""

import json

import pytest

from studies.design import services
from studies.models import System

from .local_servers import closed_port, not_http, serving


def error_shown(client, study, url_template):
    system = services.system_add(
        study=study, code="H", name="Mine", backend=System.Backend.HTTP, config={"url_template": url_template}
    )
    page = client.post(f"/studies/{study.slug}/setup/systems/{system.pk}/test/", {"query": "wing"})
    assert page.status_code == 200
    return page.content.decode().split('id="test-error"', 1)[1].split("</div>", 1)[0]


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.mark.django_db
def test_a_closed_and_an_open_port_on_loopback_read_the_same(alice_client, study):
    with not_http() as (open_port, accepted):
        for host in ("127.0.0.1", "localhost", "[::1]", "2130706433"):
            error_open = error_shown(alice_client, study, f"http://{host}:{open_port}/?q={{query}}")
            study.systems.all().delete()
            error_closed = error_shown(alice_client, study, f"http://{host}:{closed_port()}/?q={{query}}")
            study.systems.all().delete()
            assert error_open == error_closed
            assert "The cause: refused (address not allowed)" in error_open
            assert str(open_port) not in error_open and "connect" not in error_open
        assert accepted == []


@pytest.mark.django_db
def test_an_allowed_internal_service_s_values_stay_out_of_the_page(alice_client, study, settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    with serving() as server:
        server.answer = (200, json.dumps({"results": [{"name": "redis-password", "value": "hunter2"}]}))
        error = error_shown(alice_client, study, server.base + "/?q={query}")
    assert "The cause: wrong shape" in error
    assert "hunter2" not in error and "redis-password" not in error


@pytest.mark.django_db
@pytest.mark.parametrize(
    "answer, category", [((500, "stack trace: secret"), "HTTP 500"), ((200, "secret: not json"), "not JSON")]
)
def test_a_failing_engine_reads_as_its_category(alice_client, study, settings, answer, category):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    with serving() as server:
        server.answer = answer
        error = error_shown(alice_client, study, server.base + "/?q={query}")
    assert f"The cause: {category}<" in error and "secret" not in error
    assert "sent again in a moment" in error  # what a participant's query would do


@pytest.mark.django_db
def test_an_open_non_http_port_the_operator_allowed_reads_as_a_category(alice_client, study, settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    with not_http() as (open_port, accepted):
        error = error_shown(alice_client, study, f"http://127.0.0.1:{open_port}/?q={{query}}")
    assert "The cause: not an HTTP answer" in error and "ERR" not in error


@pytest.mark.django_db
@pytest.mark.parametrize("total, said", [(1, "1 result;"), (2, "2 results;")])
def test_the_test_page_counts_results_in_good_english(alice_client, study, settings, total, said):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    with serving() as server:
        server.answer = (200, json.dumps({"results": [{"id": "a", "title": "A"}], "total": total}))
        system = services.system_add(
            study=study,
            code="H",
            name="Mine",
            backend=System.Backend.HTTP,
            config={"url_template": server.base + "/?q={query}"},
        )
        page = alice_client.post(f"/studies/{study.slug}/setup/systems/{system.pk}/test/", {"query": "wing"})
    assert said in page.content.decode()
