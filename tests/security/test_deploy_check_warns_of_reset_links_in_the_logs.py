"""`manage.py check --deploy` warns (sessionlab.W003) when DEBUG is off and password reset e-mails go to the
console backend (the default): their links, which set an account's password, would be in the server's logs.
EMAIL_BACKEND=smtp (or dummy) silences it."""

import pytest

from sessionlab.checks import check_reset_links_not_printed

from .test_deploy_settings import _production, _run


def test_it_warns_in_production_with_the_console_backend(settings):
    settings.DEBUG, settings.EMAIL_BACKEND_NAME = False, "console"
    [warning] = check_reset_links_not_printed()
    assert warning.id == "sessionlab.W003" and "EMAIL_BACKEND=smtp" in warning.hint


@pytest.mark.parametrize("debug, backend", [(False, "smtp"), (False, "dummy"), (True, "console")])
def test_it_is_quiet_with_a_real_backend_or_in_development(settings, debug, backend):
    settings.DEBUG, settings.EMAIL_BACKEND_NAME = debug, backend
    assert check_reset_links_not_printed() == []


def test_check_deploy_reports_it_with_the_default_backend():
    env = {k: v for k, v in _production(CACHE_URL="redis://127.0.0.1:6379/2").items() if k != "EMAIL_BACKEND"}
    result = _run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode != 0 and "sessionlab.W003" in result.stderr
