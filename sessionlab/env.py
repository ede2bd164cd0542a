"""Read settings from the environment, refusing malformed values with a message that names the variable."""

import ipaddress
import os
import re
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def envbool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean; use one of 1/0, true/false, yes/no, on/off")


def envint(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}")
    return value


def envstr(name: str, default: str) -> str:
    return os.environ.get(name, default)


def envurl(name: str, schemes: tuple[str, ...]) -> str | None:
    """A URL variable, or None when unset; refuses a scheme outside `schemes`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    scheme = raw.split("://", 1)[0] if "://" in raw else ""
    if scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name}={raw!r} must start with one of: {', '.join(s + '://' for s in schemes)}"
        )
    return raw


_HOST_NAME = re.compile(
    r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?"
)


@dataclass(frozen=True)
class AllowEntry:
    """One OUTBOUND_ALLOW entry: a network or a host name, and optionally the one port and the path prefix a
    call may use there (`models.lab.internal:8000/v1`); None is any port, any path."""

    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    name: str | None
    port: int | None = None
    path: str | None = None


def allow_entry_parse(entry: str) -> AllowEntry:
    """`10.0.0.0/8`, `192.0.2.7`, `fd00::/8`, `engine.lab.internal`, `engine.lab.internal:8080`,
    `models.lab.internal:8000/v1`, `127.0.0.1:11434/v1`, `[fd00::7]:8000/v1`.
    ValueError says what is wrong."""
    text = entry.strip()
    try:
        return AllowEntry(ipaddress.ip_network(text, strict=False), None)
    except ValueError:
        pass
    if text.startswith("["):
        close = text.find("]")
        if close < 0:
            raise ValueError("an IPv6 address in [ ] has no closing ]")
        host, rest = text[1:close], text[close + 1 :]
        if rest and not rest.startswith((":", "/")):
            raise ValueError("after [address] comes :port or /path")
    else:
        cut = min((i for i in (text.find(":"), text.find("/")) if i >= 0), default=len(text))
        host, rest = text[:cut], text[cut:]
    port = None
    if rest.startswith(":"):
        digits, slash, tail = rest[1:].partition("/")
        if not digits.isascii() or not digits.isdigit() or not 0 < int(digits) < 65536:
            raise ValueError(f"the port {digits!r} is not a number from 1 to 65535")
        port, rest = int(digits), slash + tail
    path = None
    if rest:
        if not rest.startswith("/") or any(seg in (".", "..") for seg in rest.split("/")) or "%" in rest:
            raise ValueError(f"the path {rest!r} must start with / and hold no . or .. segment nor %")
        path = rest.rstrip("/") or "/"
    try:
        return AllowEntry(ipaddress.ip_network(host, strict=False), None, port, path)
    except ValueError:
        if not _HOST_NAME.fullmatch(host):
            raise ValueError(f"{host!r} is neither an IP network (10.0.0.0/8) nor a host name") from None
        return AllowEntry(None, host.lower().rstrip("."), port, path)


def envhosts(name: str) -> list[str]:
    """A comma-separated list of allow-list entries (`allow_entry_parse`): IP networks (10.0.0.0/8,
    192.0.2.7) or host names (engine.lab.internal), each optionally with a port and a path prefix
    (models.lab.internal:8000/v1); refuses an entry that is none of these, saying why."""
    entries = [entry.strip() for entry in os.environ.get(name, "").split(",") if entry.strip()]
    for entry in entries:
        try:
            allow_entry_parse(entry)
        except ValueError as error:
            raise ImproperlyConfigured(f"{name}: {entry!r}: {error}") from None
    return entries


# Names that reach only this machine: Django's test client ("testserver"), localhost and loopback addresses.
_LOOPBACK = {"localhost", "testserver"}


def _is_loopback(name: str) -> bool:
    if name in _LOOPBACK or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def debug_exposed_hosts(hosts: list[str]) -> list[str]:
    """The ALLOWED_HOSTS entries that let other machines reach the server ("*" and any non-loopback name)."""
    exposed = []
    for host in hosts:
        if not _is_loopback(host.strip().lower().lstrip(".")):
            exposed.append(host)
    return exposed


def envnetworks(name: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """A comma-separated list of IP networks or single addresses (10.0.0.0/8, 192.0.2.7, fd00::/8); refuses
    an entry that is not one (a host name would need a lookup per request)."""
    networks = []
    for entry in (e.strip() for e in os.environ.get(name, "").split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {entry!r} is not an IP address or network (10.0.0.0/8, 192.0.2.7)"
            ) from None
    return networks
