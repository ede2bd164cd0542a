"""Production settings come from the environment and pass `manage.py check --deploy` with no warning; the
only secret in the repository is the development key, refused when DEBUG is off."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OVERRIDES = (
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
)


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in OVERRIDES and not k.startswith("PYTEST")}
    env.update({"DJANGO_SETTINGS_MODULE": "sessionlab.settings", "PYTHONPATH": str(ROOT)}, **extra)
    return env


def _production(**extra):
    return _env(
        DEBUG="0", SECRET_KEY=secrets.token_urlsafe(50), ALLOWED_HOSTS="sessionlab.example.org", **extra
    )


def _run(args, env):
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def _settings(env) -> dict:
    names = [
        "DEBUG",
        "SECURE_SSL_REDIRECT",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
        "SESSION_COOKIE_HTTPONLY",
        "X_FRAME_OPTIONS",
        "SECURE_CONTENT_TYPE_NOSNIFF",
    ]
    code = (
        "import json, django; from django.conf import settings; django.setup(); "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {names!r}}}))"
    )
    result = _run(["-c", code], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_check_deploy_is_clean_with_production_settings():
    # Shared sign-in counts; without CACHE_URL, sessionlab.W001
    # (test_deploy_check_warns_of_a_per_process_cache.py). Reset links by SMTP; printed, sessionlab.W003
    # (test_deploy_check_warns_of_reset_links_in_the_logs.py).
    result = _run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        _production(CACHE_URL="redis://127.0.0.1:6379/2", EMAIL_BACKEND="smtp"),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_defaults_turn_on_https_hsts_and_secure_cookies():
    values = _settings(_production())
    assert values["DEBUG"] is False
    assert values["SECURE_SSL_REDIRECT"] and values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"]
    assert values["SECURE_HSTS_SECONDS"] >= 31536000 and values["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    assert values["SESSION_COOKIE_HTTPONLY"] and values["X_FRAME_OPTIONS"] == "DENY"
    assert values["SECURE_PROXY_SSL_HEADER"] is None  # trusting X-Forwarded-Proto is opt-in


def test_a_reverse_proxy_deployment_overrides_from_the_environment():
    values = _settings(_production(SECURE_SSL_REDIRECT="0", SECURE_PROXY_SSL_HEADER="1"))
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_development_keeps_plain_http():
    values = _settings(_env(DEBUG="1"))
    assert not values["SECURE_SSL_REDIRECT"] and not values["SESSION_COOKIE_SECURE"]
    assert values["SECURE_HSTS_SECONDS"] == 0


def test_production_without_a_secret_key_refuses_to_start():
    env = _production()
    del env["SECRET_KEY"]
    result = _run(["manage.py", "check"], env)
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_a_malformed_flag_is_refused_by_name():
    result = _run(["manage.py", "check"], _production(SECURE_SSL_REDIRECT="maybe"))
    assert result.returncode != 0 and "SECURE_SSL_REDIRECT" in result.stderr


def test_the_only_secret_in_the_settings_is_the_development_default():
    source = (ROOT / "sessionlab" / "settings.py").read_text()
    assert source.count('SECRET_KEY = "') == 1 and "dev-only-insecure-key" in source
    assert "if not DEBUG:" in source.split("dev-only-insecure-key")[0]  # refused before the default is used
