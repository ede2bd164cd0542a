"""The API answers what it cannot read with a JSON 4xx that says why, never an HTML page or a 500.

- `JSONParser`: JSON nested beyond Python's recursion limit is a 400 "nested too deeply" (DRF's own parser
  lets the RecursionError through: a 500).
- `exception_handler`: a body over DATA_UPLOAD_MAX_MEMORY_SIZE (or a form with too many fields) is a JSON 413
  naming the limit; Django's own answer is an HTML 400 without a reason.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
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


# What views that name their parsers use instead of DRF's defaults.
PARSERS = [JSONParser, parsers.FormParser, parsers.MultiPartParser]


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
