"""A small limiter of failed sign-ins, kept in the Django cache: failures are counted per username and per
client address (sessionlab/client_address.py; behind proxies, TRUSTED_PROXY_COUNT) within a fixed window that
starts at the first failure. Past either limit, sign-in answers 429 until the window ends; nothing is locked
for good, and the real user's own success clears the username's
count (docs/security.md).

Every sign-in goes through django.contrib.auth.authenticate(), so the limiter sits there:
`RateLimitedModelBackend` (AUTHENTICATION_BACKENDS) refuses a blocked username or address before any password
is checked, and the user_login_failed / user_logged_in signals count failures and clear them. That covers the
login page, the admin's login and the API token endpoint alike; the first two views also answer 429 with a
message (sessionlab/auth_views.py).

With the default per-process cache each worker counts on its own; CACHE_URL (Redis) shares the counts, and
`manage.py check --deploy` warns (sessionlab.W001, sessionlab/checks.py) while it is unset.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver

from .client_address import client_address

PREFIX = "ratelimit:login"


@dataclass(frozen=True)
class Limit:
    scope: str  # "username" or "ip"
    key: str
    allowed: int


def _limits(request, username: str) -> list[Limit]:
    # Hashed: usernames (and whatever is typed instead) stay out of cache keys, which have a length and
    # character limit on some backends.
    name = hashlib.sha256(username.strip().lower().encode("utf-8", "surrogatepass")).hexdigest()
    address = hashlib.sha256(client_address(request).encode()).hexdigest()
    return [
        Limit("username", f"{PREFIX}:user:{name}", settings.LOGIN_RATE_PER_USERNAME),
        Limit("ip", f"{PREFIX}:ip:{address}", settings.LOGIN_RATE_PER_IP),
    ]


def retry_after(request, username: str) -> int | None:
    """Seconds until sign-in is allowed again for this username and address, or None when it is allowed
    now."""
    waits = []
    for limit in _limits(request, username):
        values = cache.get_many([limit.key, limit.key + ":until"])
        if values.get(limit.key, 0) >= limit.allowed:
            waits.append(max(1, int(values.get(limit.key + ":until", time.time() + 1) - time.time())))
    return max(waits) if waits else None


def failure(request, username: str) -> None:
    """Count one failed sign-in against the username and the address."""
    window = settings.LOGIN_RATE_WINDOW_SECONDS
    for limit in _limits(request, username):
        # add() starts the window only if none is running, so the window never slides while failures go on.
        cache.add(limit.key + ":until", time.time() + window, window)
        if not cache.add(limit.key, 1, window):
            try:
                cache.incr(limit.key)
            except ValueError:  # expired between add() and incr()
                cache.set(limit.key, 1, window)


def success(request, username: str) -> None:
    """The right password: forget the username's failures (the address keeps its count)."""
    limit = _limits(request, username)[0]
    cache.delete_many([limit.key, limit.key + ":until"])


def message(seconds: int) -> str:
    minutes = max(1, round(seconds / 60))
    return (
        f"Too many failed sign-ins for this account or from this address. Try again in {minutes} "
        f"minute{'s' if minutes != 1 else ''}."
    )


RESET_PREFIX = "ratelimit:reset"


def reset_retry_after(request, email: str) -> int | None:
    """Password reset requests, counted whatever their outcome, per e-mail address and per client
    address within LOGIN_RATE_WINDOW_SECONDS: the seconds until another is allowed, or None, counting this
    one when allowed. Each request may send an e-mail; the limit keeps the form from mailing an inbox
    without end."""
    name = hashlib.sha256(email.strip().lower().encode("utf-8", "surrogatepass")).hexdigest()
    address = hashlib.sha256(client_address(request).encode()).hexdigest()
    limits = [
        Limit("email", f"{RESET_PREFIX}:email:{name}", settings.PASSWORD_RESET_RATE_PER_EMAIL),
        Limit("ip", f"{RESET_PREFIX}:ip:{address}", settings.PASSWORD_RESET_RATE_PER_IP),
    ]
    window = settings.LOGIN_RATE_WINDOW_SECONDS
    waits = []
    for limit in limits:
        values = cache.get_many([limit.key, limit.key + ":until"])
        if values.get(limit.key, 0) >= limit.allowed:
            waits.append(max(1, int(values.get(limit.key + ":until", time.time() + 1) - time.time())))
    if waits:
        return max(waits)
    for limit in limits:
        cache.add(limit.key + ":until", time.time() + window, window)
        if not cache.add(limit.key, 1, window):
            try:
                cache.incr(limit.key)
            except ValueError:  # expired between add() and incr()
                cache.set(limit.key, 1, window)
    return None


class RateLimitedModelBackend(ModelBackend):
    """Django's ModelBackend that first refuses (PermissionDenied stops authenticate()) while the limit for
    this username or address is reached. One backend, not a gate beside ModelBackend: force_login() and the
    session use the first backend listed, which must be able to load users."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is not None and isinstance(username, str) and retry_after(request, username) is not None:
            raise PermissionDenied("too many failed sign-ins")
        return super().authenticate(request, username=username, password=password, **kwargs)


# Connected when this module is imported, which authenticate() does (loading the backend) before it can send
# either signal.
@receiver(user_login_failed, dispatch_uid="sessionlab.ratelimit.failed")
def _login_failed(sender, credentials, request=None, **kwargs):
    username = credentials.get("username")
    if request is not None and isinstance(username, str):
        failure(request, username)


@receiver(user_logged_in, dispatch_uid="sessionlab.ratelimit.logged_in")
def _logged_in(sender, request, user, **kwargs):
    if request is not None:
        success(request, user.get_username())
