"""A generative system's API key, encrypted at rest (Fernet) as the LLM assessors' keys are
(studies/assessment/llm/keys.py, which this layer may not import), under its own derived key, and bound to the
endpoint it is sent to: a key stored for one endpoint is never sent to another, whoever changed the config
and by whichever way in (page, API, admin)."""

from __future__ import annotations

import base64
import hashlib
import json
import urllib.parse

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    secret = settings.LLM_KEY_SECRET or settings.SECRET_KEY
    digest = hashlib.sha256(b"sessionlab.generative-api-key:" + secret.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def endpoint_target(endpoint_url: str) -> str:
    """Where a key goes: scheme, host, port (the scheme's default when none is written) and path."""
    parts = urllib.parse.urlsplit(endpoint_url or "")
    scheme = parts.scheme.lower()
    try:
        port = parts.port or {"http": 80, "https": 443}.get(scheme)
    except ValueError:
        port = None
    return f"{scheme}://{(parts.hostname or '').rstrip('.')}:{port}{parts.path.rstrip('/')}"


def key_seal(api_key: str, endpoint_url: str) -> str:
    if not api_key:
        return ""
    sealed = json.dumps({"key": api_key, "to": endpoint_target(endpoint_url)})
    return _fernet().encrypt(sealed.encode()).decode()


def key_for(token: str, endpoint_url: str) -> str:
    """The key in clear for a call to `endpoint_url`; "" when none is stored, when it was stored for another
    endpoint, or when the secret it was stored under has changed (the call goes without a key, and the
    server's 401 says so)."""
    if not token:
        return ""
    try:
        sealed = json.loads(_fernet().decrypt(token.encode()))
    except (InvalidToken, ValueError):
        return ""
    if not isinstance(sealed, dict) or sealed.get("to") != endpoint_target(endpoint_url):
        return ""
    key = sealed.get("key")
    return key if isinstance(key, str) else ""


def key_still_bound(token: str, endpoint_url: str) -> bool:
    return bool(key_for(token, endpoint_url))


def system_key_update(*, system, api_key: str = "", clear: bool = False) -> None:
    """After a save: store a new key for the system's endpoint as it is now (`api_key`), or remove it
    (`clear`, or an endpoint that moved away from the stored key's: a key is never kept for another server);
    else leave it. Never reads the key back out."""
    endpoint = (system.config or {}).get("endpoint_url", "") if isinstance(system.config, dict) else ""
    if api_key:
        system.api_key_encrypted = key_seal(api_key, endpoint)
    elif system.api_key_encrypted and (clear or not key_still_bound(system.api_key_encrypted, endpoint)):
        system.api_key_encrypted = ""
    else:
        return
    system.save(update_fields=["api_key_encrypted"])
