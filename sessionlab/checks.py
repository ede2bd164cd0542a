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


@register(Tags.security, deploy=True)
def check_proxy_without_client_address(app_configs=None, **kwargs):
    """sessionlab.W002: SECURE_PROXY_SSL_HEADER says a proxy stands in front, yet the client's address is
    REMOTE_ADDR (sessionlab/client_address.py): every client then shares the proxy's address, and one
    client's failed sign-ins lock out everyone's."""
    if getattr(settings, "SECURE_PROXY_SSL_HEADER", None) is None:
        return []
    if settings.TRUSTED_PROXY_COUNT or settings.TRUSTED_PROXIES:
        return []
    if getattr(settings, "LOGIN_RATE_IP_META", "REMOTE_ADDR") != "REMOTE_ADDR":
        return []  # the deprecated header setting reads the address the proxy wrote
    return [
        Warning(
            "SECURE_PROXY_SSL_HEADER is set (a proxy or balancer stands in front of this server), but "
            "neither TRUSTED_PROXY_COUNT nor TRUSTED_PROXIES is: the client's address is the proxy's, so "
            "every client shares one per-address sign-in limit and one client's failures lock out all.",
            hint="Set TRUSTED_PROXY_COUNT to the number of proxies in front of this server (1 behind one "
            "balancer), or TRUSTED_PROXIES to their networks (docs/security.md, 'Behind a load balancer').",
            id="sessionlab.W002",
        )
    ]


@register(Tags.security, deploy=True)
def check_reset_links_not_printed(app_configs=None, **kwargs):
    """sessionlab.W003: with DEBUG off, the password reset e-mails go to the console backend, so
    each reset link, which logs its holder in as the account, is written to the server's output and logs."""
    if settings.DEBUG or getattr(settings, "EMAIL_BACKEND_NAME", "") != "console":
        return []
    return [
        Warning(
            "EMAIL_BACKEND is console: password reset e-mails, with links that set an account's password, "
            "are written to the server's output and whatever keeps its logs.",
            hint="Set EMAIL_BACKEND=smtp with EMAIL_HOST (and EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, "
            "EMAIL_USE_TLS), or EMAIL_BACKEND=dummy to send none (docs/security.md, 'Making accounts').",
            id="sessionlab.W003",
        )
    ]
