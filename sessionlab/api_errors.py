"""The API answers what it cannot read with a JSON 4xx that says why, never an HTML page or a 500.

- `JSONParser`: JSON nested beyond Python's recursion limit is a 400 "nested too deeply" (DRF's own parser
  lets the RecursionError through: a 500).
- `exception_handler`: a body over DATA_UPLOAD_MAX_MEMORY_SIZE (or a form with too many fields) is a JSON 413
  naming the limit; Django's own answer is an HTML 400 without a reason.
- `not_found`: any /api/ URL no endpoint answers is a JSON 404 (sessionlab/urls.py routes them here), not
  Django's HTML page; a missing trailing slash still redirects a GET as Django's CommonMiddleware would.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from rest_framework import parsers, status
from rest_framework.exceptions import ParseError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply") from None


# What views that name their parsers use instead of DRF's defaults: JSON only (one content type per body in
# the OpenAPI schema; docs/api.md, "Conventions").
PARSERS = [JSONParser]


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {"detail": f"the request body is larger than the limit of {limit} bytes"},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, TooManyFieldsSent):
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS
        return Response(
            {"detail": f"the request has more than {limit} fields"},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    return drf_exception_handler(exc, context)


@csrf_exempt  # a 404 whatever the method: the CSRF check would answer an anonymous POST with an HTML 403
def not_found(request, *args, **kwargs):
    path = request.path
    if settings.APPEND_SLASH and not path.endswith("/") and _is_endpoint(path + "/"):
        if request.method in ("GET", "HEAD"):
            query = request.META.get("QUERY_STRING", "")
            return HttpResponsePermanentRedirect(path + "/" + (f"?{query}" if query else ""))
        return JsonResponse(
            {"detail": f"Not found: the endpoint is {path}/ (with a trailing slash)"}, status=404
        )
    return JsonResponse({"detail": f"Not found: no API endpoint at {path}"}, status=404)


def _is_endpoint(path: str) -> bool:
    try:
        return resolve(path).func is not not_found
    except Resolver404:
        return False
