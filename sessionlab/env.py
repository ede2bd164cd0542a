"""Read settings from the environment, refusing malformed values with a message that names the variable."""

import ipaddress
import os
import re

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


def envhosts(name: str) -> list[str]:
    """A comma-separated list of IP networks (10.0.0.0/8, fd00::/8, 192.0.2.7) and host names
    (engine.lab.internal); refuses an entry that is neither."""
    entries = [entry.strip() for entry in os.environ.get(name, "").split(",") if entry.strip()]
    for entry in entries:
        try:
            ipaddress.ip_network(entry, strict=False)
        except ValueError:
            if not _HOST_NAME.fullmatch(entry):
                raise ImproperlyConfigured(
                    f"{name}: {entry!r} is neither an IP network (10.0.0.0/8) nor a host name"
                ) from None
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
