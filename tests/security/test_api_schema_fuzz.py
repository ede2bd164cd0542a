"""Schemathesis against the API's own OpenAPI schema (/api/schema/), in-process through the WSGI app:
every operation, called as a researcher of a study with data in it (and the participant endpoints as a
participant), answers without a server error and as its schema says. Bounded: a few cases per operation."""

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from rest_framework.authtoken.models import Token
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

EXAMPLES_PER_OPERATION = 25
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """The WSGI app closes "old" connections at each request's start and end; inside the test's transaction
    that would close the test's own PostgreSQL connection. Django's test client unhooks this the same way."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def schema(world):
    return schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())


def _headers(world, path: str) -> dict:
    if path.startswith("/api/participant/"):
        return {"Authorization": f"Participant {world.participant.access_token}"}
    key = Token.objects.get_or_create(user=world.users["bob"])[0].key
    return {"Authorization": f"Token {key}"}


def _fuzz(strategy, headers):
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def call(case):
        response = case.call(headers=headers)
        case.validate_response(response, checks=CHECKS)

    return call


@pytest.mark.django_db
def test_every_api_operation_answers_without_5xx_and_as_its_schema_says(world, schema):
    failures = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        names = {p.name for p in operation.path_parameters}
        fixed = {"study_pk": world.study.pk} if "study_pk" in names else None
        strategy = operation.as_strategy(path_parameters=fixed) if fixed else operation.as_strategy()
        headers = _headers(world, operation.path)

        call = _fuzz(strategy, headers)
        try:
            call()
        except (
            Exception,
            BaseExceptionGroup,
        ) as error:  # gathered: one run reports every operation's failure
            failures.append(
                f"{operation.method.upper()} {operation.path}: {type(error).__name__}: {error}"[:2000]
            )
    assert operations >= 25
    assert not failures, "\n\n".join(failures)
