"""A participant's state as the rules read it (the enumeration is studies.models.ParticipantState; its rules
are studies/participation/recruitment/states.py). Compare what it gives with ParticipantState's members,
never with bare strings."""

from __future__ import annotations

from studies.models import Participant, ParticipantState


def state_of(participant: Participant) -> str:
    """The participant's state (one of ParticipantState's values); a null column reads as invited (enrolled,
    link never opened)."""
    return participant.state or ParticipantState.INVITED
