"""Who may call what.

Researchers authenticate by session or by DRF token and see only the studies `studies_visible_to` gives them;
any other study, and everything inside it, is a 404. Participants authenticate only by their own access token
(`Authorization: Participant <token>`) and reach only the participant endpoints.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser
from django.shortcuts import get_object_or_404
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions, permissions

from studies.accounts.access import studies_visible_to
from studies.kernel.tokens import participant_by_token
from studies.models import Participant, Study

PARTICIPANT_KEYWORD = "Participant"


class ParticipantTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Participant <access token>`: the participant's private-link token. request.user stays
    anonymous; request.auth is the Participant."""

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].decode("latin-1") != PARTICIPANT_KEYWORD:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("expected 'Authorization: Participant <token>'")
        try:
            token = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("the token is not ASCII") from None
        participant = participant_by_token(token)
        if participant is None:
            raise exceptions.AuthenticationFailed("unknown participant token")
        return (AnonymousUser(), participant)

    def authenticate_header(self, request):
        return PARTICIPANT_KEYWORD


class ParticipantTokenScheme(OpenApiAuthenticationExtension):
    target_class = ParticipantTokenAuthentication
    name = "participantToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Participant <access token>`: the token of the participant's private link.",
        }


class IsParticipant(permissions.BasePermission):
    def has_permission(self, request, view):
        return isinstance(request.auth, Participant)


class IsResearcher(permissions.IsAuthenticated):
    """A logged-in researcher account (session or token; is_staff, as for the researcher pages). Which studies
    it sees is `studies_visible_to`'s answer. Assessors (accounts without is_staff) are refused everywhere
    here, whatever the study: they could otherwise create studies through POST /api/studies/."""

    message = "The API is for researcher accounts."

    def has_permission(self, request, view):
        return super().has_permission(request, view) and request.user.is_staff


def visible_study(request, study_pk: int) -> Study:
    """The study, if the caller may see it; otherwise 404 (the same answer as for a study that does not
    exist)."""
    return get_object_or_404(studies_visible_to(request.user), pk=study_pk)
