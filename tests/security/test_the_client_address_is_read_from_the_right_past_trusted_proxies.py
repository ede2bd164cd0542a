"""Behind proxies the client's address comes from X-Forwarded-For read from the RIGHT past the trusted hops
(sessionlab/client_address.py): a client's own leftmost entries never pick its address, and one client's
failed sign-ins do not lock out another client behind the same balancer."""

import ipaddress

import pytest
from django.core.cache import cache
from django.test import Client

from sessionlab.client_address import address_from_chain, client_address

BALANCER = "10.0.0.2"


def test_without_trusted_proxies_the_header_is_ignored():
    assert address_from_chain("203.0.113.9", "10.0.0.2") == "10.0.0.2"


def test_a_spoofed_leftmost_entry_is_ignored():
    # The client wrote 1.1.1.1; the one proxy appended the address it saw.
    assert address_from_chain("1.1.1.1, 198.51.100.4", BALANCER, proxy_count=1) == "198.51.100.4"


def test_the_count_of_proxies_is_honoured():
    chain = "1.1.1.1, 198.51.100.4, 10.0.0.7"  # spoofed, the client, the outer proxy
    assert address_from_chain(chain, BALANCER, proxy_count=2) == "198.51.100.4"
    assert address_from_chain(chain, BALANCER, proxy_count=1) == "10.0.0.7"


def test_fewer_hops_than_proxies_falls_back_to_the_peer():
    assert address_from_chain("198.51.100.4", BALANCER, proxy_count=3) == BALANCER
    assert address_from_chain("", BALANCER, proxy_count=1) == BALANCER


def test_trusted_networks_are_skipped_from_the_right():
    networks = [ipaddress.ip_network("10.0.0.0/8")]
    chain = "1.1.1.1, 198.51.100.4, 10.0.0.7"
    assert address_from_chain(chain, BALANCER, proxies=networks) == "198.51.100.4"
    # A peer outside the trusted networks is the client, whatever it claims.
    assert address_from_chain(chain, "203.0.113.50", proxies=networks) == "203.0.113.50"


@pytest.mark.parametrize("junk", ["not-an-ip", "", "1.2.3.4.5", "<script>"])
def test_a_malformed_entry_stops_at_the_last_vouched_address(junk):
    assert address_from_chain(f"198.51.100.4, {junk}", BALANCER, proxy_count=1) == BALANCER
    networks = [ipaddress.ip_network("10.0.0.0/8")]
    assert address_from_chain(f"198.51.100.4, {junk}, 10.0.0.7", BALANCER, proxies=networks) == "10.0.0.7"
    assert address_from_chain("198.51.100.4", junk, proxy_count=1) == "198.51.100.4"


def test_ports_and_brackets_a_proxy_adds_are_read():
    assert address_from_chain("198.51.100.4:5123", BALANCER, proxy_count=1) == "198.51.100.4"
    assert address_from_chain("[2001:db8::1]:443", BALANCER, proxy_count=1) == "2001:db8::1"


def test_the_request_reads_the_settings(settings, rf):
    settings.TRUSTED_PROXY_COUNT = 1
    request = rf.get("/", HTTP_X_FORWARDED_FOR="1.1.1.1, 198.51.100.4", REMOTE_ADDR=BALANCER)
    assert client_address(request) == "198.51.100.4"
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_address(request) == BALANCER


@pytest.mark.django_db
def test_failures_from_one_client_do_not_lock_out_another_behind_the_same_balancer(settings, alice):
    settings.TRUSTED_PROXY_COUNT = 1
    settings.LOGIN_RATE_PER_IP = 50
    settings.LOGIN_RATE_PER_USERNAME = 1000
    cache.clear()

    def login(client_ip, username, password, spoof="9.9.9.9"):
        return Client().post(
            "/accounts/login/",
            {"username": username, "password": password},
            REMOTE_ADDR=BALANCER,
            HTTP_X_FORWARDED_FOR=f"{spoof}, {client_ip}",
        )

    for number in range(50):
        # The attacker changes its spoofed leftmost entry each time: it must not matter.
        login("203.0.113.66", f"guess{number}", "wrong", spoof=f"9.9.9.{number}")
    assert login("203.0.113.66", "alice", "alice-password").status_code == 429
    assert login("198.51.100.4", "alice", "alice-password").status_code == 302
    cache.clear()


def test_a_peer_on_a_unix_socket_is_a_local_proxy():
    # gunicorn bound to a Unix socket behind nginx: REMOTE_ADDR is empty.
    networks = [ipaddress.ip_network("10.0.0.0/8")]
    assert address_from_chain("1.1.1.1, 198.51.100.4", "", proxies=networks) == "198.51.100.4"
    assert address_from_chain("1.1.1.1, 198.51.100.4", "", proxy_count=1) == "198.51.100.4"


def test_trusted_proxies_must_be_addresses_or_networks(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from sessionlab.env import envnetworks

    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8, 192.0.2.7,fd00::/8")
    assert [str(n) for n in envnetworks("TRUSTED_PROXIES")] == ["10.0.0.0/8", "192.0.2.7/32", "fd00::/8"]
    monkeypatch.setenv("TRUSTED_PROXIES", "10.0.0.0/8,balancer.lab.internal")
    with pytest.raises(ImproperlyConfigured, match="TRUSTED_PROXIES: 'balancer.lab.internal'"):
        envnetworks("TRUSTED_PROXIES")


def test_two_ways_of_choosing_the_address_at_once_are_refused_at_start():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        DJANGO_SETTINGS_MODULE="sessionlab.settings",
        PYTHONPATH=str(root),
        DEBUG="1",
        TRUSTED_PROXY_COUNT="1",
        LOGIN_RATE_IP_META="HTTP_X_REAL_IP",
    )
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "Set only one of TRUSTED_PROXY_COUNT, TRUSTED_PROXIES and LOGIN_RATE_IP_META" in result.stderr


def test_the_deprecated_header_setting_reads_its_last_entry(settings, rf):
    settings.LOGIN_RATE_IP_META = "HTTP_X_FORWARDED_FOR"
    request = rf.get("/", HTTP_X_FORWARDED_FOR="1.1.1.1, 198.51.100.4", REMOTE_ADDR=BALANCER)
    assert client_address(request) == "198.51.100.4"
    junk = rf.get("/", HTTP_X_FORWARDED_FOR="not-an-ip", REMOTE_ADDR=BALANCER)
    assert client_address(junk) == BALANCER
