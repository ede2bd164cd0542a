"""An OUTBOUND_ALLOW entry may name a port and a path prefix (`models.lab.internal:8000/v1`): then it opens
that port and the paths under that prefix and nothing else on the host, however the path is spelled (percent-
encoded dots, backslashes, `..`). The model server's host named in the allow-list no longer opens its other
ports and paths to every researcher."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from sessionlab import outbound
from sessionlab.env import allow_entry_parse, envhosts

from .local_servers import serving


def test_a_host_port_path_entry_opens_that_port_and_the_paths_below_it(settings):
    settings.OUTBOUND_ALLOW = ["models.lab.internal:8000/v1"]
    opens = outbound.address_allowed
    assert opens("10.0.0.5", "models.lab.internal", 8000, "/v1/chat/completions")
    assert opens("10.0.0.5", "models.lab.internal", 8000, "/v1")
    assert not opens("10.0.0.5", "models.lab.internal", 8001, "/v1/chat/completions")
    assert not opens("10.0.0.5", "models.lab.internal", 8000, "/admin")
    assert not opens("10.0.0.5", "models.lab.internal", 8000, "/v10/chat")
    assert not opens("10.0.0.5", "other.lab.internal", 8000, "/v1/chat/completions")


@pytest.mark.parametrize(
    "path", ["/v1/../admin", "/v1/%2e%2e/admin", "/v1/%2E%2E%2Fadmin", "/v1/..%5cadmin", "/v1/./x/../../a"]
)
def test_a_path_that_climbs_out_of_the_prefix_is_refused(settings, path):
    settings.OUTBOUND_ALLOW = ["127.0.0.1:8000/v1"]
    assert not outbound.address_allowed("127.0.0.1", "127.0.0.1", 8000, path)


def test_the_listener_is_reached_on_its_path_and_refused_elsewhere(settings):
    with serving() as server:
        settings.OUTBOUND_ALLOW = [f"127.0.0.1:{server.port}/v1"]
        assert outbound.fetch(f"{server.base}/v1/search?q=x").status == 200
        with pytest.raises(outbound.AddressRefused):
            outbound.fetch(f"{server.base}/admin")
        with pytest.raises(outbound.AddressRefused):
            outbound.post_json(f"{server.base}/v1/../admin", {}, timeout=2)
        with serving() as other:
            with pytest.raises(outbound.AddressRefused):
                outbound.fetch(f"{other.base}/v1/search")
        assert server.paths == ["/v1/search?q=x"]
        assert other.paths == []


def test_a_redirect_off_the_path_is_refused_at_its_hop(settings):
    with serving() as server:
        settings.OUTBOUND_ALLOW = [f"127.0.0.1:{server.port}/redirect"]
        with pytest.raises(outbound.AddressRefused):
            outbound.fetch(f"{server.base}/redirect?to={server.base}/admin")
        assert server.paths == [f"/redirect?to={server.base}/admin"]


@pytest.mark.parametrize(
    "entry, parsed",
    [
        ("models.lab.internal:8000/v1/", ("models.lab.internal", 8000, "/v1")),
        ("Engine.Lab.Internal.:8080", ("engine.lab.internal", 8080, None)),
        ("127.0.0.1:11434/v1", ("127.0.0.1/32", 11434, "/v1")),
        ("[fd00::7]:8000/v1", ("fd00::7/128", 8000, "/v1")),
        ("10.0.0.0/8", ("10.0.0.0/8", None, None)),
    ],
)
def test_the_entry_grammar(entry, parsed):
    got = allow_entry_parse(entry)
    assert (str(got.network) if got.network else got.name, got.port, got.path) == parsed


@pytest.mark.parametrize(
    "entry, why",
    [
        ("models:99999/v1", "port"),
        ("models:80/v1/../x", "segment"),
        ("models:80/v1%2f", "segment"),
        ("[fd00::7:8000", "closing"),
        ("bad_host:80", "neither"),
    ],
)
def test_a_malformed_entry_refuses_to_start_naming_it(monkeypatch, entry, why):
    monkeypatch.setenv("OUTBOUND_ALLOW", f"10.0.0.0/8,{entry}")
    with pytest.raises(ImproperlyConfigured, match=why) as refused:
        envhosts("OUTBOUND_ALLOW")
    assert entry in str(refused.value)
