"""A participant by their private link's token: every page and event batch of a participant starts here."""

from __future__ import annotations

import hmac
from typing import cast

from sessionlab import plain_sql
from studies.models import Participant, Study, access_token_digest


def participant_by_token(token: str) -> Participant | None:
    """The participant whose private-link token this is (with their study), or None. Looked up by the token's
    SHA-256 digest (an indexed column), then the token itself is compared in constant time: how long a wrong
    guess takes says nothing about how close it was (docs/security.md). Plain SQL: every page and event batch
    of a participant starts here (sessionlab/plain_sql.py says why)."""
    if not _plausible(token):
        return None
    found = plain_sql.rows(
        f"SELECT {plain_sql.select_list(Participant, 'p')}, {plain_sql.select_list(Study, 's')}"
        f" FROM {plain_sql.table(Participant)} p JOIN {plain_sql.table(Study)} s ON s.id = p.study_id"
        " WHERE p.access_token_digest = %s",
        [access_token_digest(token)],
    )
    if not found:
        return None
    found_participant, found_study = plain_sql.instances(found[0], Participant, Study)
    participant, study = (
        cast(Participant, found_participant),
        cast(Study, found_study),
    )  # inner join: both set
    if not hmac.compare_digest(participant.access_token.encode(), token.encode()):
        return None
    participant.study = study
    return participant


participant_for_events = participant_by_token  # the events endpoint's name for it


def _plausible(token) -> bool:
    return (
        isinstance(token, str) and bool(token) and len(token) <= 128 and token.isascii()
    )  # real ones: 43 chars
