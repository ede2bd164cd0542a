"""The client's address, for every per-address limit (sign-in lockout: sessionlab/ratelimit.py). One home, so
that no limit reads a header on its own (docs/security.md, "Behind a load balancer").

Behind proxies, REMOTE_ADDR is the nearest proxy's address: every client would share it, and one client's
failures would lock everyone out. X-Forwarded-For lists the hops, each proxy appending the address it saw; the
leftmost entries are whatever the client wrote, so the address is read from the RIGHT, past the hops the
operator trusts:

- TRUSTED_PROXY_COUNT=n (n proxies in front of this server): the n-th entry from the right of
  "X-Forwarded-For, REMOTE_ADDR" is the address the outermost proxy saw.
- TRUSTED_PROXIES=networks: walking from REMOTE_ADDR leftwards, the first address outside those networks.
- Neither (the default): REMOTE_ADDR, headers ignored.

An entry that is not an IP address (a proxy misconfigured, or a client's text reaching a trusted position)
stops the walk at the last address a trusted hop vouched for: clients may then share an address, but no
client picks its own.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings

UNKNOWN = "unknown"


def _parse(entry: str) -> str | None:
    """An entry as a normalised IP address, or None. Accepts "1.2.3.4:80" and "[::1]:80" (some proxies
    add the port)."""
    entry = entry.strip()
    if entry.startswith("[") and "]" in entry:
        entry = entry[1 : entry.index("]")]
    elif entry.count(":") == 1:
        entry = entry.split(":", 1)[0]
    try:
        return str(ipaddress.ip_address(entry))
    except ValueError:
        return None


def address_from_chain(
    forwarded_for: str, remote_addr: str, *, proxy_count: int = 0, proxies: list | tuple = ()
) -> str:
    """The client's address from an X-Forwarded-For value and the peer's address (pure)."""
    nearest = _parse(remote_addr) or UNKNOWN
    if not proxy_count and not proxies:
        return nearest
    # Nearest first: what each proxy appended, read from the right.
    forwarded: list[str | None] = (
        [_parse(entry) for entry in reversed(forwarded_for.split(","))] if forwarded_for else []
    )
    if proxy_count and len(forwarded) < proxy_count:
        # Fewer hops than proxies: the request did not pass them all; only the peer's address is certain.
        return nearest
    # The peer is the nearest proxy; a peer with no IP address (a Unix socket) is a local one.
    last = nearest
    if proxies and nearest != UNKNOWN and not _within(nearest, proxies):
        return nearest
    for position, hop in enumerate(forwarded, start=1):
        if hop is None:
            return last
        last = hop
        if position == proxy_count or (proxies and not _within(hop, proxies)):
            return hop
    return last


def _within(address: str, networks) -> bool:
    return any(ipaddress.ip_address(address) in network for network in networks)


def client_address(request) -> str:
    """The address of the client that sent `request` (see the module's docstring for the settings)."""
    meta = request.META
    legacy = getattr(settings, "LOGIN_RATE_IP_META", "REMOTE_ADDR")
    if legacy != "REMOTE_ADDR" and meta.get(legacy):
        # Deprecated: a single-address header the proxy sets (X-Real-IP). Its last entry, the one the proxy
        # wrote, should a list arrive.
        return _parse(str(meta[legacy]).split(",")[-1]) or _parse(meta.get("REMOTE_ADDR", "")) or UNKNOWN
    return address_from_chain(
        meta.get("HTTP_X_FORWARDED_FOR", ""),
        meta.get("REMOTE_ADDR", ""),
        proxy_count=settings.TRUSTED_PROXY_COUNT,
        proxies=settings.TRUSTED_PROXIES,
    )
