"""Middleware that steps aside on the paths listed in settings.MIDDLEWARE_LEAN_PATHS (docs/security.md,
"Lean paths").

The participant's event batches (`/p/<token>/events/`, the busiest endpoint: docs/performance-load.md) are
found by the token in their URL and answer JSON; their view reads no session, no signed-in user and no
messages. These subclasses of Django's session, authentication and messages middleware pass such a request
straight on, so it does not pay for a session store, a lazy user and a message storage it never uses. Every
other middleware still runs there as it does everywhere: the CSRF check (the batches carry the CSRF header or
field), the host check, the HTTPS redirect, HSTS and the other security headers, X-Frame-Options and the
Content-Security-Policy.

On a lean path `request.session`, `request.user` and `request._messages` are not set: a view there that
reads one fails loudly (AttributeError, a 500 in the tests) rather than reading an empty session.
"""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware as DjangoAuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware as DjangoMessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.utils.deprecation import MiddlewareMixin


def lean_path_pattern() -> re.Pattern:
    """One pattern of all settings.MIDDLEWARE_LEAN_PATHS (each a regular expression of a whole path)."""
    return re.compile("|".join(f"(?:{path})" for path in settings.MIDDLEWARE_LEAN_PATHS) or r"(?!)")


class _SkippedOnLeanPaths(MiddlewareMixin):
    """Put before a Django middleware class: on a lean path, the request goes straight on."""

    def __init__(self, get_response):
        super().__init__(get_response)
        self._lean = lean_path_pattern()  # read once a process, as Django builds its middleware once

    def __call__(self, request):
        if self._lean.fullmatch(request.path_info):
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_SkippedOnLeanPaths, DjangoSessionMiddleware):
    pass


class AuthenticationMiddleware(_SkippedOnLeanPaths, DjangoAuthenticationMiddleware):
    pass


class MessageMiddleware(_SkippedOnLeanPaths, DjangoMessageMiddleware):
    pass
