"""The project's own `manage.py check --deploy` checks (registered by sessionlab/apps.py)."""

from django.conf import settings
from django.core.checks import Tags, Warning, register

# Cache backends whose sign-in counts (sessionlab/ratelimit.py) no other process sees, and what that means.
PROCESS_LOCAL_CACHES = {
    "django.core.cache.backends.locmem.LocMemCache": "which keeps them in each process's memory: every "
    "gunicorn worker counts on its own, so the limits are multiplied by the number of workers",
    "django.core.cache.backends.dummy.DummyCache": "which stores nothing: failed sign-ins are not limited "
    "at all",
}


@register(Tags.security, Tags.caches, deploy=True)
def check_login_rate_limit_cache(app_configs=None, **kwargs):
    """sessionlab.W001: with DEBUG off, the sign-in rate limit counts in a cache that processes do not
    share."""
    if settings.DEBUG:
        return []
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    if backend not in PROCESS_LOCAL_CACHES:
        return []
    return [
        Warning(
            f"Failed sign-ins are counted in the default cache ({backend.rsplit('.', 1)[-1]}), "
            f"{PROCESS_LOCAL_CACHES[backend]}.",
            hint="Set CACHE_URL=redis://... (a Redis database of its own, not the broker's) so that every "
            "process shares the counts (docs/security.md).",
            id="sessionlab.W001",
        )
    ]
