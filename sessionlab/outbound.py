"""Outbound HTTP: the one way SessionLab calls another server (a researcher's search engine now; an assessor
or a webhook later). `fetch(url)` answers a Response or raises an OutboundError whose `category` is all a
researcher is shown; the `detail` goes to the server log only. `post_json(url, payload, timeout=...)` is the
same for a POST of JSON (a language-model assessor's request), with its redirects refused, not followed.

What a call may reach (docs/security.md, "Outbound HTTP"):
- http and https only, at every hop; redirects are followed here, at most OUTBOUND_MAX_REDIRECTS of them;
- the host name is resolved at each hop and every address it resolves to is checked: loopback, private,
  link-local, multicast, unspecified and reserved addresses (IPv4, IPv6 and IPv4 inside IPv6) are refused
  unless an OUTBOUND_ALLOW entry opens them: the network or the host, and only the port and the path prefix
  the entry names when it names them (`models.lab.internal:8000/v1`); the connection goes to the very
  address checked (a name that resolves elsewhere a moment later changes nothing), https keeping its SNI
  and certificate check on the host name;
- one deadline for the whole call (OUTBOUND_DEADLINE_SECONDS: name lookups, connections, redirects and
  reading), and at most OUTBOUND_MAX_BYTES of body;
- a circuit breaker per caller's scope (a study: one lab's failures never open another's) and target
  (host:port), in the Django cache, so every node sees it: after
  OUTBOUND_BREAKER_FAILURES failures in a row the target is not called for OUTBOUND_BREAKER_COOLDOWN_SECONDS,
  then one trial call decides. A cache that fails turns the breaker off; it never fails the call.
"""

from __future__ import annotations

import concurrent.futures
import functools
import http.client
import ipaddress
import json
import logging
import math
import socket
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.views.decorators.debug import sensitive_variables

from sessionlab.env import AllowEntry, allow_entry_parse

logger = logging.getLogger(__name__)

REDIRECTS = frozenset({301, 302, 303, 307, 308})
SCHEMES = {"http": 80, "https": 443}
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Name lookups have no timeout of their own: they run here, and the call stops waiting at its deadline.
_lookups = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-lookup")


class OutboundError(Exception):
    """A call that got no usable answer. `category`: a short text a researcher may read (never a value the
    other side sent, nor what a name resolved to); `detail`: for the server log. `counts`: whether it is the
    target's failure (the breaker counts it), not a refusal of ours."""

    category = "failed"
    counts = True

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


class AddressRefused(OutboundError):
    category = "refused (address not allowed)"
    counts = False


class UrlRefused(OutboundError):
    category = "refused (not a usable http or https URL)"
    counts = False


class TooManyRedirects(OutboundError):
    category = "refused (too many redirects)"


class ConnectFailed(OutboundError):
    category = "could not connect"


class TimedOut(OutboundError):
    category = "timed out"


class NotHttp(OutboundError):
    category = "not an HTTP answer"


class TlsFailed(OutboundError):
    category = "TLS failed (certificate or handshake)"


class TooLarge(OutboundError):
    category = "response too large"


class RedirectRefused(OutboundError):
    category = "refused (a redirect of a POST)"
    counts = False


class CircuitOpen(OutboundError):
    counts = False

    def __init__(self, detail: str, retry_in: int):
        super().__init__(detail)
        self.retry_in = retry_in
        self.category = f"circuit open (retry in {retry_in} s)"


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    url: str  # the last hop's
    retry_after: str | None = None  # the Retry-After header as sent (a 429's or 503's wait), if any


def fetch(
    url: str, *, timeout: float | None = None, accept: str = "application/json", scope: str = ""
) -> Response:
    """GET `url` under the rules above; `timeout` may shorten the deadline (OUTBOUND_DEADLINE_SECONDS), never
    lengthen it. A status of 500 or more counts as the target's failure; any other status is returned.
    `scope` keys the breaker with the target (`study:<id>`): failures in one scope open no other's."""
    limit = float(settings.OUTBOUND_DEADLINE_SECONDS)
    deadline = time.monotonic() + (limit if timeout is None else min(float(timeout), limit))
    return _breaker_guarded(url, scope, lambda: _follow(url, deadline, accept))


@sensitive_variables("headers", "sent")  # an error report shows locals: an Authorization header is a secret
def post_json(
    url: str, payload: object, *, timeout: float, headers: dict[str, str] | None = None, scope: str = ""
) -> Response:
    """POST `payload` as JSON to `url` under the same rules as `fetch` (address checks, allow-list, body cap,
    breaker), with its own deadline: `timeout`, at most OUTBOUND_POST_DEADLINE_SECONDS (a language model may
    take far longer than a search engine to answer). A redirect is refused, not followed: a POST's body is
    not ours to resend to wherever the server points. `headers` (an Authorization, say) are sent and never
    logged: no error's detail names them."""
    limit = float(settings.OUTBOUND_POST_DEADLINE_SECONDS)
    deadline = time.monotonic() + min(float(timeout), limit)
    body = json.dumps(payload).encode()
    sent = {"Content-Type": "application/json", **(headers or {})}

    @sensitive_variables("sent")
    def call() -> Response:
        try:
            status, answer, location, retry_after = _get(
                url, deadline, "application/json", method="POST", body=body, headers=sent
            )
        except ValueError as error:  # http.client's InvalidURL
            raise UrlRefused(f"{url!r}: {error}") from None
        if location is not None:
            raise RedirectRefused(f"{url} answered {status}, a redirect of a POST")
        return Response(status, answer, url, retry_after)

    return _breaker_guarded(url, scope, call)


def _breaker_guarded(url: str, scope: str, call) -> Response:
    host, port = _host_port(url)
    breaker = _Breaker(f"{host}:{port}", scope)
    try:
        response = call()
    except OutboundError as error:
        if error.counts:
            breaker.failed()
        raise
    if response.status >= 500:
        breaker.failed()
    else:
        breaker.succeeded()
    return response


# --- what may be reached ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _allow_list(entries: tuple[str, ...]) -> tuple[AllowEntry, ...]:
    return tuple(allow_entry_parse(entry) for entry in entries)


def _name(host: str) -> str:
    return host.strip().lower().rstrip(".")


def address_allowed(address: str, host: str, port: int | None = None, path: str | None = None) -> bool:
    """Whether a call to `host` (at `port`, for `path`) may connect to `address`, one it resolved to: a public
    address, or one an OUTBOUND_ALLOW entry opens (its network or the host by name, and the entry's port and
    path prefix when it names them)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # an IPv6 scope (fe80::1%eth0) is not an address
    if _public(ip):
        return True
    inner = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    candidates = [candidate for candidate in (ip, inner) if candidate is not None]
    return any(
        _opens(entry, candidates, host, port, path) for entry in _allow_list(tuple(settings.OUTBOUND_ALLOW))
    )


def _opens(entry: AllowEntry, candidates: list[IPAddress], host: str, port, path) -> bool:
    if entry.network is not None:
        if not any(candidate in entry.network for candidate in candidates):
            return False
    elif entry.name != _name(host):
        return False
    if entry.port is not None and entry.port != port:
        return False
    return entry.path is None or _path_under(path, entry.path)


def _path_under(path: str | None, prefix: str) -> bool:
    """`path` is `prefix` or below it, read as a server would: percent-decoded, and no `.`/`..` segment nor
    backslash that could climb out of it."""
    if path is None:
        return False
    decoded = urllib.parse.unquote(path or "/")
    if "\\" in decoded or any(segment in (".", "..") for segment in decoded.split("/")):
        return False
    return prefix == "/" or decoded == prefix or decoded.startswith(prefix + "/")


def _public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return _public(ip.ipv4_mapped)
        # An IPv4 address carried inside (6to4, Teredo) is where the packets end up.
        embedded = [ip.sixtofour, ip.teredo[1] if ip.teredo else None]
        if any(inner is not None and not _public(inner) for inner in embedded) or ip.is_site_local:
            return False
    return ip.is_global and not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_unspecified
        or ip.is_reserved
    )


def _host_port(url: str) -> tuple[str, int]:
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UrlRefused(f"not a URL: {error}") from None
    if parts.scheme not in SCHEMES:
        raise UrlRefused(f"scheme {parts.scheme!r} is not http or https")
    if not parts.hostname:
        raise UrlRefused("the URL names no host")
    return parts.hostname, port or SCHEMES[parts.scheme]


def _resolve(host: str, port: int) -> list[str]:
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def _addresses_checked(host: str, port: int, deadline: float, path: str = "/") -> list[str]:
    """The addresses `host` resolves to now, all of them allowed (a name with one refused address is
    refused whole: it is not ours to pick the harmless one)."""
    try:
        addresses = _lookups.submit(_resolve, host, port).result(timeout=_left(deadline))
    except concurrent.futures.TimeoutError:
        raise TimedOut(f"no answer from the resolver for {host}") from None
    except (OSError, UnicodeError) as error:
        raise ConnectFailed(f"cannot resolve {host}: {error}") from None
    refused = [address for address in addresses if not address_allowed(address, host, port, path)]
    if refused or not addresses:
        raise AddressRefused(f"{host}:{port} resolves to {', '.join(refused) or 'nothing'}")
    return addresses


# --- the call -----------------------------------------------------------------------------------------


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimedOut("the deadline passed")
    return left


def _open_socket(address: str, port: int, timeout: float) -> socket.socket:
    return socket.create_connection((address, port), timeout)


@functools.cache
def _tls() -> ssl.SSLContext:
    return ssl.create_default_context()


class _Connection(http.client.HTTPConnection):
    """Connects to `address`, the one that was checked, whatever the host name resolves to by then."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self.address = address
        self.seconds = timeout
        # The socket the watchdog shuts: http.client drops `self.sock` once a response says it will close
        # (HTTP/1.0, "Connection: close") while the body is still read through it.
        self.watched: socket.socket | None = None

    def connect(self) -> None:
        self.sock = self.watched = _open_socket(self.address, self.port, self.seconds)


class _TlsConnection(_Connection):
    def connect(self) -> None:
        super().connect()
        self.sock = _tls().wrap_socket(self.sock, server_hostname=self.host)  # SNI and the check: the name
        self.watched = self.sock


def _follow(url: str, deadline: float, accept: str) -> Response:
    for _hop in range(settings.OUTBOUND_MAX_REDIRECTS + 1):
        try:
            status, body, location, _retry_after = _get(url, deadline, accept)
            if status not in REDIRECTS or not location:
                return Response(status, body, url)
            url = urllib.parse.urljoin(url, location)
        except ValueError as error:  # a URL that cannot be parsed or sent (http.client's InvalidURL)
            raise UrlRefused(f"{url!r}: {error}") from None
    raise TooManyRedirects(f"more than {settings.OUTBOUND_MAX_REDIRECTS} redirects, the last to {url}")


@sensitive_variables("headers", "sent")
def _get(
    url: str,
    deadline: float,
    accept: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes, str | None, str | None]:
    """One hop: (status, body, Location of a redirect, Retry-After). The addresses checked are tried in order
    until one connects."""
    host, port = _host_port(url)
    parts = urllib.parse.urlsplit(url)
    addresses = _addresses_checked(host, port, deadline, parts.path or "/")
    kind = _TlsConnection if parts.scheme == "https" else _Connection
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    refusals = []
    for address in addresses:
        connection = kind(host, port, address=address, timeout=_left(deadline))
        # The deadline holds however slowly the other side trickles its bytes (a TLS handshake, a status
        # line, a body): at it, the socket is shut.
        watchdog = threading.Timer(_left(deadline), _shut, (connection,))
        watchdog.daemon = True
        watchdog.start()
        try:
            try:
                connection.connect()
            except (TimeoutError, ssl.SSLError, ssl.CertificateError):
                raise
            except OSError as refused:  # refused, unreachable: the next address may answer
                refusals.append(f"{address}: {refused!r}")
                continue
            sent = {"Accept": accept, "User-Agent": "SessionLab", **(headers or {})}
            connection.request(method, target, body=body, headers=sent)
            response = connection.getresponse()
            if response.status in REDIRECTS:
                return response.status, b"", response.getheader("Location"), None
            return response.status, _body(response, deadline), None, response.getheader("Retry-After")
        except (OSError, http.client.HTTPException) as error:
            raise _failure(url, error, deadline) from None
        finally:
            watchdog.cancel()
            connection.close()
    raise ConnectFailed(f"cannot connect to {host}:{port}: {'; '.join(refusals)}")


def _failure(url: str, error: Exception, deadline: float) -> OutboundError:
    if isinstance(error, http.client.InvalidURL):
        return UrlRefused(f"{url!r}: {error}")
    if time.monotonic() >= deadline or isinstance(error, TimeoutError):
        return TimedOut(f"{url}: {error!r}")
    if isinstance(error, ssl.SSLError | ssl.CertificateError):
        return TlsFailed(f"{url}: {error!r}")
    if isinstance(error, http.client.HTTPException):
        return NotHttp(f"{url}: {error!r}")
    return ConnectFailed(f"{url}: {error!r}")


def _shut(connection: _Connection) -> None:
    sock = connection.watched
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _body(response: http.client.HTTPResponse, deadline: float) -> bytes:
    limit = settings.OUTBOUND_MAX_BYTES
    length = response.getheader("Content-Length")
    if length and length.isdigit() and int(length) > limit:
        raise TooLarge(f"Content-Length {length} is over {limit} bytes")
    body = bytearray()
    while True:
        _left(deadline)
        chunk = response.read(min(65536, limit + 1 - len(body)))
        if not chunk:
            _left(deadline)  # an end that the watchdog made is no body
            return bytes(body)
        body += chunk
        if len(body) > limit:
            raise TooLarge(f"more than {limit} bytes")


# --- the breaker --------------------------------------------------------------------------------------


class _Breaker:
    """Failures in a row of one target in one scope, in the cache: (failures, open until, as time.time())."""

    def __init__(self, target: str, scope: str = ""):
        self.key = f"outbound:breaker:{scope}|{target}"
        self.failures = 0
        self.on = True
        try:
            self.failures, open_until = cache.get(self.key) or (0, 0.0)
            if self.failures >= settings.OUTBOUND_BREAKER_FAILURES:
                if time.time() < open_until:
                    _raise_open(target, open_until)
                # Cooled down: one trial call, whichever node gets there first; the others wait for it.
                if not cache.add(self.key + ":trial", 1, settings.OUTBOUND_BREAKER_COOLDOWN_SECONDS):
                    _raise_open(target, time.time() + settings.OUTBOUND_DEADLINE_SECONDS)
        except CircuitOpen:
            raise
        except Exception:  # noqa: BLE001 (a cache that is down turns the breaker off, not the call)
            logger.warning("outbound breaker: the cache cannot be read; the breaker is off", exc_info=True)
            self.on = False

    def failed(self) -> None:
        if not self.on:
            return
        failures = self.failures + 1
        cooldown = settings.OUTBOUND_BREAKER_COOLDOWN_SECONDS
        open_until = time.time() + cooldown if failures >= settings.OUTBOUND_BREAKER_FAILURES else 0.0
        try:
            cache.set(self.key, (failures, open_until), max(3600, 10 * cooldown))
            cache.delete(self.key + ":trial")
        except Exception:  # noqa: BLE001
            logger.warning("outbound breaker: the cache cannot be written", exc_info=True)

    def succeeded(self) -> None:
        if not self.on or not self.failures:
            return
        try:
            cache.delete_many([self.key, self.key + ":trial"])
        except Exception:  # noqa: BLE001
            logger.warning("outbound breaker: the cache cannot be written", exc_info=True)


def _raise_open(target: str, until: float) -> None:
    retry_in = max(1, math.ceil(until - time.time()))
    raise CircuitOpen(f"{target}: too many failures in a row; not called for {retry_in} s", retry_in)
