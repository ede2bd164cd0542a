"""Property: the participant's forms (consent, questionnaire, start, post-task) answer any field values with a
page, a redirect or a 4xx that says why, never a 5xx: NUL, any script, huge numbers, odd times and ids. (A
form body is UTF-8: a lone surrogate cannot arrive through one; the events endpoints take those.)"""

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from studies.participation.way.form_steps import consent_record

from .conftest import cid

pytestmark = pytest.mark.django_db

ANY = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["\x00", "9" * 30, "²", "-1", "1e999", "nan", "", "0001-01-01T00:00:00+14:00", "x" * 5000]
    ),
)
FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "client_event_id": ANY,
        "sequence": ANY,
        "client_time": ANY,
        "decision": st.sampled_from(["accept", "decline"]),
        "consent_version": ANY,
        "search_engine_years": ANY,
        "domain_years": ANY,
        "search_skill": ANY,
        "assignment": ANY,
        "session": ANY,
        "search_went_well": ANY,
    },
)
EXAMPLES = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@EXAMPLES
@given(fields=FIELDS, form=st.sampled_from(["consent", "questionnaire", "start", "post-task"]))
def test_a_form_never_answers_5xx(participant, other_participant, form, fields):
    if form != "consent" and participant.consented_at is None:  # the later forms, reached
        consent_record(
            participant=participant, consent_version=participant.study.consent_version, client_event_id=cid()
        )
    response = Client().post(f"/p/{participant.access_token}/{form}/", fields)
    assert response.status_code < 500, response.content[:300]
