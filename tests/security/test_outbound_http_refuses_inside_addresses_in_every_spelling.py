"""Outbound HTTP refuses loopback, private, link-local, multicast, unspecified and reserved addresses, however
the URL spells them, before any connection (the listener on loopback receives nothing); the operator's
allow-list (OUTBOUND_ALLOW) opens a network or a host name, and nothing else."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from sessionlab import outbound
from sessionlab.env import envhosts

from .local_servers import serving

SPELLINGS = [
    "http://127.0.0.1:{port}/",
    "http://localhost:{port}/",
    "http://LocalHost:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://2130706433:{port}/",
    "http://0x7f000001:{port}/",
    "http://0x7f.1:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://0.0.0.0:{port}/",
    "http://0:{port}/",
    "https://127.0.0.1:{port}/",
    "http://user:pass@127.0.0.1:{port}/",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_loopback_in_any_spelling_is_refused_and_never_reached(spelling):
    with serving() as server:
        with pytest.raises(outbound.AddressRefused) as refused:
            outbound.fetch(spelling.format(port=server.port))
        assert server.paths == []
    assert refused.value.category == "refused (address not allowed)"


REFUSED = [
    "10.1.2.3",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",  # a cloud's metadata service
    "100.64.0.1",  # carrier-grade NAT
    "127.0.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.1",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "fec0::1",
    "ff02::1",
    "::ffff:10.0.0.1",
    "::ffff:127.0.0.1",
    "::127.0.0.1",
    "2002:7f00:1::1",  # 6to4 around 127.0.0.1
    "2002:a00:1::1",  # 6to4 around 10.0.0.1
    "64:ff9b::a00:1",  # NAT64 around 10.0.0.1
    "2001:db8::1",
]


@pytest.mark.parametrize("address", REFUSED)
def test_every_inside_address_is_refused_by_default(address):
    assert not outbound.address_allowed(address, "engine.example")


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_are_allowed(address):
    assert outbound.address_allowed(address, "engine.example")


def test_the_allow_list_opens_a_network_or_a_host_and_nothing_else(settings):
    settings.OUTBOUND_ALLOW = ["10.0.0.0/8", "fd00::/8", "Engine.Lab.Internal"]
    assert outbound.address_allowed("10.1.2.3", "x.example")
    assert outbound.address_allowed("::ffff:10.1.2.3", "x.example")
    assert outbound.address_allowed("fd12::1", "x.example")
    assert outbound.address_allowed("192.168.1.9", "engine.lab.internal.")
    assert not outbound.address_allowed("192.168.1.9", "other.lab.internal")
    assert not outbound.address_allowed("127.0.0.1", "x.example")
    assert not outbound.address_allowed("172.16.0.1", "x.example")


def test_a_name_that_resolves_to_one_inside_address_is_refused_whole(monkeypatch):
    monkeypatch.setattr(outbound, "_resolve", lambda host, port: ["93.184.216.34", "127.0.0.1"])
    monkeypatch.setattr(outbound, "_open_socket", pytest.fail)
    with pytest.raises(outbound.AddressRefused):
        outbound.fetch("http://mixed.example/")


def test_the_allow_list_reaches_the_listener(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1/32"]
    with serving() as server:
        response = outbound.fetch(f"http://localhost:{server.port}/search?q=x")
        assert response.status == 200 and response.body.startswith(b"[") and server.paths == ["/search?q=x"]


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/", "file:///etc/passwd", "gopher://x/", "http:///nohost"])
def test_only_http_and_https_urls_are_called(url):
    with pytest.raises(outbound.UrlRefused) as refused:
        outbound.fetch(url)
    assert refused.value.category.startswith("refused (")


def test_the_environment_s_allow_list_refuses_an_entry_that_is_neither_network_nor_name(monkeypatch):
    monkeypatch.setenv("OUTBOUND_ALLOW", " 10.0.0.0/8, engine.lab.internal ,fd00::/8,")
    assert envhosts("OUTBOUND_ALLOW") == ["10.0.0.0/8", "engine.lab.internal", "fd00::/8"]
    monkeypatch.setenv("OUTBOUND_ALLOW", "10.0.0.0/8, http://engine/")
    with pytest.raises(ImproperlyConfigured, match="http://engine/"):
        envhosts("OUTBOUND_ALLOW")
