"""Small helpers for the API tests."""

from rest_framework.test import APIClient


def client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def participant_client(participant) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Participant {participant.access_token}")
    return client
