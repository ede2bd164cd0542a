"""An LLM assessor's API key, encrypted at rest (Fernet: AES-128-CBC with an HMAC) under a key derived from
LLM_KEY_SECRET, or SECRET_KEY when that is unset. Only the request to the model server reads it back."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from studies.errors import AssessmentError


def _fernet() -> Fernet:
    secret = settings.LLM_KEY_SECRET or settings.SECRET_KEY
    # A purpose prefix, so the derived key is not one any other use of SECRET_KEY would derive.
    digest = hashlib.sha256(b"sessionlab.llm-api-key:" + secret.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def api_key_encrypt(api_key: str) -> str:
    return _fernet().encrypt(api_key.encode()).decode()


def api_key_decrypt(token: str) -> str:
    """The key in clear; an AssessmentError (without the token) when the secret it was stored under has
    changed since."""
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise AssessmentError(
            "The API key cannot be read: LLM_KEY_SECRET (or SECRET_KEY) changed since it was stored. "
            "Enter the key again."
        ) from None
