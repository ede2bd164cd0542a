"""`manage.py check --deploy` warns (sessionlab.W001) when DEBUG is off and the sign-in rate limit counts in
a cache that processes do not share: with the default local-memory cache each gunicorn worker counts on its
own. CACHE_URL (Redis) silences it."""

import pytest
from django.core.checks import Warning

from sessionlab.checks import check_login_rate_limit_cache

from .test_deploy_settings import _production, _run

LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "x"}}
DUMMY = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
# A cache every process on the machine shares, and one that needs no server (never written to here).
FILES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": "/tmp/x"}}


def test_it_warns_in_production_with_the_local_memory_cache(settings):
    settings.DEBUG, settings.CACHES = False, LOCMEM
    [warning] = check_login_rate_limit_cache()
    assert isinstance(warning, Warning) and warning.id == "sessionlab.W001"
    assert "each process's memory" in warning.msg and "CACHE_URL" in warning.hint


def test_it_warns_that_a_dummy_cache_limits_nothing(settings):
    settings.DEBUG, settings.CACHES = False, DUMMY
    [warning] = check_login_rate_limit_cache()
    assert warning.id == "sessionlab.W001" and "not limited at all" in warning.msg


@pytest.mark.parametrize("debug, caches", [(False, FILES), (True, LOCMEM)])
def test_it_is_quiet_with_a_shared_cache_or_in_development(settings, debug, caches):
    settings.DEBUG, settings.CACHES = debug, caches
    assert check_login_rate_limit_cache() == []


def test_check_deploy_reports_it_without_CACHE_URL_and_not_with_it():
    env = {k: v for k, v in _production(EMAIL_BACKEND="smtp").items() if k != "CACHE_URL"}
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode != 0 and "sessionlab.W001" in result.stderr
    assert "LocMemCache" in result.stderr

    result = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        {**env, "CACHE_URL": "redis://127.0.0.1:6379/2"},
    )
    assert result.returncode == 0 and "sessionlab.W001" not in result.stdout + result.stderr


def test_development_is_not_warned():
    # Development serves loopback only: DEBUG=1 with a public ALLOWED_HOSTS refuses to start.
    env = {k: v for k, v in _production().items() if k not in ("CACHE_URL", "DEBUG", "ALLOWED_HOSTS")}
    result = _run(["manage.py", "check", "--deploy"], {**env, "DEBUG": "1"})
    assert "sessionlab.W001" not in result.stdout + result.stderr
    assert "security.W018" in result.stderr  # Django's own DEBUG warning: the deploy checks did run
