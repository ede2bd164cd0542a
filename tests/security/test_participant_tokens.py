"""Participant tokens: 256 random bits, looked up by their SHA-256 digest (an indexed column) and compared in
constant time; every way of creating a participant fills the digest, and the links keep working."""

import hmac

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from studies.design import services
from studies.kernel import tokens
from studies.models import Participant, access_token_digest, new_access_token


def test_a_new_token_carries_at_least_128_bits():
    tokens = {new_access_token() for _ in range(1000)}
    assert len(tokens) == 1000
    assert all(len(t) == 43 for t in tokens)  # 32 bytes of secrets.token_urlsafe: 256 bits
    assert {c for t in tokens for c in t} <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    )


@pytest.mark.django_db
def test_enrolment_and_save_fill_the_digest(designed_study):
    enrolled = services.participants_enrol(study=designed_study, count=3)
    made = Participant.objects.create(study=designed_study, code="X1", enrolment_index=99)
    for participant in [*enrolled, made]:
        participant.refresh_from_db()
        assert participant.access_token_digest == access_token_digest(participant.access_token)


@pytest.mark.django_db
def test_the_lookup_asks_the_database_for_the_digest_never_the_token(designed_study):
    participant = services.participants_enrol(study=designed_study, count=1)[0]
    with CaptureQueriesContext(connection) as queries:
        assert tokens.participant_by_token(participant.access_token) == participant
    sql = " ".join(q["sql"] for q in queries.captured_queries)
    assert access_token_digest(participant.access_token) in sql or "access_token_digest" in sql
    assert participant.access_token not in sql


@pytest.mark.django_db
def test_the_token_is_compared_in_constant_time(designed_study, monkeypatch):
    participant = services.participants_enrol(study=designed_study, count=1)[0]
    calls = []
    original = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return original(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", spy)
    assert tokens.participant_by_token(participant.access_token) == participant
    assert calls == [(participant.access_token.encode(), participant.access_token.encode())]


@pytest.mark.django_db
@pytest.mark.parametrize("token", ["", "x", "é" * 43, "a" * 129, None, 12])
def test_malformed_tokens_are_unknown_without_an_error(token):
    assert tokens.participant_by_token(token) is None


@pytest.mark.django_db
def test_the_private_link_and_the_api_header_still_work(designed_study, client):
    participant = services.participants_enrol(study=designed_study, count=1)[0]
    assert client.get(f"/p/{participant.access_token}/").status_code == 200
    response = client.get("/api/participant/", HTTP_AUTHORIZATION=f"Participant {participant.access_token}")
    assert response.status_code == 200 and response.json()["code"] == participant.code


@pytest.mark.django_db
def test_the_migration_fills_the_digest_of_existing_rows(designed_study):
    from importlib import import_module

    from django.apps import apps

    participant = services.participants_enrol(study=designed_study, count=1)[0]
    Participant.objects.filter(pk=participant.pk).update(access_token_digest=None)
    import_module("studies.migrations.0004_token_digest").fill_digests(apps, None)
    participant.refresh_from_db()
    assert participant.access_token_digest == access_token_digest(participant.access_token)
