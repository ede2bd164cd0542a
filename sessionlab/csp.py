"""Content-Security-Policy on every response (docs/security.md, "Content-Security-Policy").

Django 5.2 has none built in; this is the whole of ours. Everything the pages load comes from our own origin
(static files, WhiteNoise); no page has an inline script or an on* handler, so scripts are 'self' only and an
injected <script> or onerror= in a participant's text would not run. Styles are 'self' only as well, except
where a vendored library needs more (settings.CSP_PATH_DIRECTIVES, by path prefix).
"""

from __future__ import annotations

from django.conf import settings

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    # data: and blob: images: Plotly's PNG export and Swagger UI's icons are drawn from them.
    "img-src": "'self' data: blob:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy_for(path: str, **directives: str) -> str:
    """POLICY, with the directives CSP_PATH_DIRECTIVES sets for the path's prefixes (docs/security.md), then
    those given (a view's own for one response: form-action="'self' https://..."; underscores for dashes)."""
    policy = dict(POLICY)
    for prefix, by_path in settings.CSP_PATH_DIRECTIVES.items():
        if path.startswith(prefix):
            policy.update(by_path)
    policy.update({name.replace("_", "-"): sources for name, sources in directives.items()})
    return "; ".join(f"{directive} {sources}" for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    """Sets the header unless a view set its own; first in MIDDLEWARE, so WhiteNoise's answers get it too."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy_for(request.path)
        return response
