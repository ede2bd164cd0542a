"""Proof that a later arrival through the public link is the person who arrived first (docs/recruitment.md,
"Coming back through the public link"). A panel id is no secret, so it alone never resumes; one of two proofs
does:

- the resume cookie, set in the first arrival's browser: the participant's id signed (salted with
  RESUME_SALT, so no other signed value of the site passes for it), at most RESUME_COOKIE_SECONDS old;
- the resume code shown on the participant's own pages: ten characters of an HMAC of their id and their
  private token under SECRET_KEY (nothing stored; a new token or SECRET_KEY makes a new code). At most
  RESUME_CODE_TRIES wrong codes per participant within RESUME_CODE_WINDOW_SECONDS, counted in the cache, so
  50 bits cannot be guessed online; the real participant waits out the window at worst.
"""

from __future__ import annotations

import hmac

from django.core import signing
from django.core.cache import cache
from django.utils.crypto import salted_hmac

from studies.models import Participant

RESUME_SALT = "sessionlab.join.resume"
RESUME_COOKIE_SECONDS = 180 * 24 * 3600
RESUME_CODE_SALT = "sessionlab.join.resume-code"
RESUME_CODE_LENGTH = 10  # 50 bits, shown as two groups of five
RESUME_CODE_TRIES = 10
RESUME_CODE_WINDOW_SECONDS = 3600
# Crockford's base 32: no I, L, O or U, so a code read aloud or copied by hand has one spelling.
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_TYPED_ALIASES = str.maketrans({"O": "0", "I": "1", "L": "1"})
_TRIES_PREFIX = "sessionlab:resume-code-tries"


def resume_cookie_name(recruitment_pk: int) -> str:
    return f"sessionlab_join_{recruitment_pk}"


def resume_cookie_value(participant: Participant) -> str:
    return signing.dumps(participant.pk, salt=RESUME_SALT)


def resume_cookie_proves(value: str, participant: Participant) -> bool:
    """Whether the cookie's value names `participant` (a forged, expired, another participant's or another
    salt's value proves nothing)."""
    try:
        return signing.loads(value, salt=RESUME_SALT, max_age=RESUME_COOKIE_SECONDS) == participant.pk
    except signing.BadSignature:
        return False


def resume_code_of(participant: Participant) -> str:
    """The participant's resume code, e.g. "7K2QD-X9M4T"."""
    digest = salted_hmac(RESUME_CODE_SALT, f"{participant.pk}:{participant.access_token}").digest()
    number = int.from_bytes(digest[:8], "big")
    letters = "".join(_ALPHABET[(number >> (5 * i)) & 31] for i in range(RESUME_CODE_LENGTH))
    return f"{letters[:5]}-{letters[5:]}"


def resume_code_normalised(typed: str) -> str:
    """As typed, in the code's own spelling: without spaces or dashes, capitals, O as 0, I and L as 1."""
    return "".join(typed.split()).replace("-", "").upper().translate(_TYPED_ALIASES)


def resume_tries_left(participant: Participant) -> int:
    return max(0, RESUME_CODE_TRIES - (cache.get(f"{_TRIES_PREFIX}:{participant.pk}") or 0))


def resume_code_matches(participant: Participant, typed: str) -> bool:
    """Whether `typed` is the participant's resume code, compared in constant time; a wrong one counts as one
    try (see resume_tries_left; the caller refuses without comparing once none is left)."""
    expected = resume_code_of(participant).replace("-", "")
    if hmac.compare_digest(resume_code_normalised(typed).encode("utf-8", "surrogatepass"), expected.encode()):
        return True
    key = f"{_TRIES_PREFIX}:{participant.pk}"
    # add() starts the window only if none is running: it never slides while wrong codes go on.
    if not cache.add(key, 1, RESUME_CODE_WINDOW_SECONDS):
        try:
            cache.incr(key)
        except ValueError:  # expired between add() and incr()
            cache.set(key, 1, RESUME_CODE_WINDOW_SECONDS)
    return False
