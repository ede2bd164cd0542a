"""ReDoc's script for /api/redoc/: the sidecar package's bundle, served from here with one change. The bundle
draws Redocly's logo in its sidebar footer from https://cdn.redoc.ly, which our Content-Security-Policy
(img-src 'self') blocks, a violation on every visit; the logo's address is emptied, so the image fails without
a request and ReDoc's own error handler leaves it out. Nothing else differs, and the policy stays as it is."""

from __future__ import annotations

import functools
import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import Http404, HttpResponse, HttpResponseNotModified
from django.views.decorators.http import require_safe

REDOC_BUNDLE = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
REDOCLY_LOGO = b'"https://cdn.redoc.ly/redoc/logo-mini.svg"'


@dataclass(frozen=True)
class Bundle:
    plain: bytes
    gzipped: bytes
    etag: str


@functools.cache
def redoc_bundle() -> Bundle:
    """The bundle without the CDN logo, read once per process (1.1 MB; 0.3 MB gzipped)."""
    found = finders.find(REDOC_BUNDLE)
    if not found:
        raise Http404("ReDoc's bundle is not installed (drf-spectacular-sidecar)")
    plain = Path(found).read_bytes().replace(REDOCLY_LOGO, b'""')
    etag = '"' + hashlib.sha256(plain).hexdigest()[:20] + '"'
    return Bundle(plain, gzip.compress(plain, compresslevel=9, mtime=0), etag)


@require_safe
def redoc_script(request):
    bundle = redoc_bundle()
    if request.headers.get("If-None-Match") == bundle.etag:
        return HttpResponseNotModified(headers={"ETag": bundle.etag})
    gzipped = "gzip" in request.headers.get("Accept-Encoding", "")
    response = HttpResponse(
        bundle.gzipped if gzipped else bundle.plain, content_type="text/javascript; charset=utf-8"
    )
    if gzipped:
        response["Content-Encoding"] = "gzip"
    response["Vary"] = "Accept-Encoding"
    response["ETag"] = bundle.etag
    response["Cache-Control"] = "public, max-age=3600"
    return response
