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


def body(response) -> bytes:
    """The response's bytes, whether it streams (the exports) or not."""
    return b"".join(response.streaming_content) if response.streaming else response.content
