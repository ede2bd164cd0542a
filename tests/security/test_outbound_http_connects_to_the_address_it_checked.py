"""DNS rebinding cannot win: a host name is resolved once per hop, its addresses checked, and the connection
goes to the very address checked, whatever the name resolves to a moment later; https still presents and
checks the host name (SNI and certificate), not the address."""

import socket

import pytest

from sessionlab import outbound

from .local_servers import serving

PUBLIC = "93.184.216.34"


def test_a_name_that_turns_to_loopback_after_the_check_is_not_followed_there(monkeypatch):
    lookups, connects = [], []

    def resolve(host, port):  # public when checked, loopback for anyone who asks again
        lookups.append(host)
        return [PUBLIC] if len(lookups) == 1 else ["127.0.0.1"]

    def open_socket(address, port, timeout):
        connects.append((address, port))
        raise ConnectionRefusedError("no network in the test")

    monkeypatch.setattr(outbound, "_resolve", resolve)
    monkeypatch.setattr(outbound, "_open_socket", open_socket)
    with serving() as server:
        with pytest.raises(outbound.ConnectFailed) as failed:
            outbound.fetch(f"http://rebind.example:{server.port}/")
        assert server.paths == []
    assert lookups == ["rebind.example"] and connects == [(PUBLIC, server.port)]
    assert failed.value.category == "could not connect"


def test_a_name_that_resolves_to_loopback_is_never_connected(monkeypatch):
    monkeypatch.setattr(outbound, "_resolve", lambda host, port: ["127.0.0.1"])
    monkeypatch.setattr(outbound, "_open_socket", pytest.fail)
    with pytest.raises(outbound.AddressRefused):
        outbound.fetch("https://rebind.example/")


def test_https_connects_to_the_address_and_checks_the_name(monkeypatch):
    seen = []

    class Context:
        def wrap_socket(self, sock, server_hostname):
            seen.append(("tls", server_hostname))
            return sock

    ours, theirs = socket.socketpair()
    monkeypatch.setattr(outbound, "_tls", Context)
    monkeypatch.setattr(outbound, "_open_socket", lambda address, port, timeout: seen.append(address) or ours)
    connection = outbound._TlsConnection("engine.example", 443, address=PUBLIC, timeout=1)
    connection.connect()
    assert seen == [PUBLIC, ("tls", "engine.example")]
    connection.close()
    theirs.close()


def test_the_tls_context_checks_certificates_and_names():
    context = outbound._tls()
    assert context.check_hostname and context.verify_mode.name == "CERT_REQUIRED"


def test_the_next_checked_address_is_tried_when_one_refuses(monkeypatch, settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.0/8"]
    monkeypatch.setattr(outbound, "_resolve", lambda host, port: ["127.0.0.3", "127.0.0.1"])
    with serving() as server:  # on 127.0.0.1 only: 127.0.0.3 refuses
        response = outbound.fetch(f"http://two.example:{server.port}/")
    assert response.status == 200 and len(server.paths) == 1


def test_https_to_a_port_that_speaks_no_tls_reads_as_a_tls_failure(settings):
    settings.OUTBOUND_ALLOW = ["127.0.0.1"]
    with serving() as server:
        with pytest.raises(outbound.TlsFailed) as failed:
            outbound.fetch(f"https://127.0.0.1:{server.port}/")
    assert failed.value.category == "TLS failed (certificate or handshake)"
