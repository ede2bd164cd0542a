"""An error report (the DEBUG page, a 500 mail to ADMINS) shows the broker's and the cache's URLs without the
Redis password in them: Django's own filter hid only settings named like a secret."""

import sys

from django.test import RequestFactory
from django.views.debug import get_default_exception_reporter_filter, technical_500_response

SECRET = "s3cret-redis-password"


def test_the_settings_shown_hide_the_userinfo_of_every_url(settings):
    settings.CELERY_BROKER_URL = f"redis://:{SECRET}@10.0.0.5:6379/0"
    settings.CELERY_RESULT_BACKEND = f"redis://default:{SECRET}@10.0.0.5:6379/1"
    reporter = get_default_exception_reporter_filter()
    shown = reporter.get_safe_settings()
    assert SECRET not in repr(shown)
    assert shown["CELERY_BROKER_URL"] == "redis://********************@10.0.0.5:6379/0"
    # Nested values too (CACHES is not swapped here: the test's cache would then try to reach that host).
    caches = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"rediss://:{SECRET}@cache.example:6380/2",
        }
    }
    assert reporter.cleanse_setting("CACHES", caches)["default"]["LOCATION"] == (
        "rediss://********************@cache.example:6380/2"
    )
    assert shown["STATIC_URL"] == settings.STATIC_URL  # a URL without a password is shown as it is


def test_the_debug_page_itself_does_not_show_it(settings):
    settings.CELERY_BROKER_URL = f"redis://:{SECRET}@10.0.0.5:6379/0"
    settings.DEBUG = True
    request = RequestFactory().get("/")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "boom" in page and "10.0.0.5:6379/0" in page
    assert SECRET not in page
