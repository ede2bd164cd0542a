"""`manage.py check --deploy` warns (sessionlab.W002) when SECURE_PROXY_SSL_HEADER says a proxy stands in
front but neither TRUSTED_PROXY_COUNT nor TRUSTED_PROXIES is set: the client's address is then the proxy's,
and one client's failed sign-ins lock out every client (sessionlab/client_address.py, docs/security.md)."""

import ipaddress

import pytest
from django.core.checks import Warning

from sessionlab.checks import check_proxy_without_client_address

from .test_deploy_settings import _production, _run

BEHIND_A_PROXY = ("HTTP_X_FORWARDED_PROTO", "https")


def _configured(settings, header=BEHIND_A_PROXY, count=0, proxies=(), meta="REMOTE_ADDR"):
    settings.SECURE_PROXY_SSL_HEADER = header
    settings.TRUSTED_PROXY_COUNT, settings.TRUSTED_PROXIES, settings.LOGIN_RATE_IP_META = count, proxies, meta


def test_it_warns_behind_a_proxy_with_no_trusted_hops(settings):
    _configured(settings)
    [warning] = check_proxy_without_client_address()
    assert isinstance(warning, Warning) and warning.id == "sessionlab.W002"
    assert "neither TRUSTED_PROXY_COUNT nor TRUSTED_PROXIES" in warning.msg
    assert "TRUSTED_PROXY_COUNT" in warning.hint


@pytest.mark.parametrize(
    "count, proxies, meta",
    [
        (1, (), "REMOTE_ADDR"),
        (0, [ipaddress.ip_network("10.0.0.0/8")], "REMOTE_ADDR"),
        (0, (), "HTTP_X_REAL_IP"),
    ],
)
def test_it_is_quiet_once_the_client_s_address_is_read_past_the_proxy(settings, count, proxies, meta):
    _configured(settings, count=count, proxies=proxies, meta=meta)
    assert check_proxy_without_client_address() == []


def test_it_is_quiet_without_a_proxy(settings):
    _configured(settings, header=None)
    assert check_proxy_without_client_address() == []


def test_check_deploy_reports_it_and_not_once_the_count_is_set():
    env = _production(CACHE_URL="redis://127.0.0.1:6379/2", SECURE_PROXY_SSL_HEADER="1", EMAIL_BACKEND="smtp")
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode != 0 and "sessionlab.W002" in result.stderr

    result = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"], {**env, "TRUSTED_PROXY_COUNT": "1"}
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "sessionlab.W002" not in result.stdout + result.stderr
