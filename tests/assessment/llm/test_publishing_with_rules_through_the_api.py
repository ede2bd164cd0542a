"""POST /api/studies/<id>/reference-versions/publish/ publishes the adjudicated grades as the page does (the
one service, references.reference_version_publish): an LLM assessor's grades enter only by the rules named,
the version comes back with its provenance, and a refusal (400 naming the field, or 409) writes nothing."""

import pytest

from studies.assessment import adjudication
from studies.models import AuditEntry, ReferenceVersion

from .conftest import API_KEY


def publish(api, study, body):
    return api.post(
        f"/api/studies/{study.pk}/reference-versions/publish/", body, content_type="application/json"
    )


@pytest.fixture
def graded(pooled_study, llm_assessor, model_server, run_llm, alice):
    """The people: d1 agreed, d2 (1, 3) and d3 (0, 1) undecided; the model grades d2 3, d3 2."""
    adjudication.adjudicate(study=pooled_study, preset="majority", decided_by=alice)
    model_server.grade_for = lambda prompt: 0 if "Title 1" in prompt else (3 if "Title 2" in prompt else 2)
    assert run_llm(llm_assessor).done == 3
    return pooled_study


def test_a_version_published_with_break_ties_carries_its_provenance(api, graded, llm_assessor):
    answer = publish(api, graded, {"mode": "replace", "machine": llm_assessor.pk, "rules": ["break_ties"]})
    assert answer.status_code == 201, answer.json()
    data = answer.json()
    version = ReferenceVersion.objects.get(pk=data["id"])
    assert dict(version.judgments.values_list("document__external_id", "grade")) == {
        "d1": 2,
        "d2": 3,
        "d3": 1,
    }
    assert data["judgment_count"] == 3 and data["created_by"] == "alice"
    facts = data["provenance"]
    assert facts["machine_rules"] == ["break_ties"] and facts["ties_broken"] == 2
    assert facts["machine_assessor"]["model"] == "llama3.1:8b"
    assert facts["machine_assessor"]["assessor_id"] == llm_assessor.membership_id
    assert API_KEY not in answer.content.decode()
    entry = AuditEntry.objects.get(study=graded, action="reference_published_with_rules")
    assert entry.detail == {
        "version": version.number,
        "rules": ["break_ties"],
        "machine": llm_assessor.membership.user.username,
        "filled": 0,
        "ties_broken": 2,
        "by": "alice",
    }


def test_without_rules_no_machine_grade_enters_and_nothing_is_audited(api, graded, llm_assessor):
    answer = publish(api, graded, {"allow_pending": True, "machine": llm_assessor.pk})
    assert answer.status_code == 201 and answer.json()["provenance"] == {}
    version = ReferenceVersion.objects.get(pk=answer.json()["id"])
    assert dict(version.judgments.values_list("document__external_id", "grade")) == {"d1": 2}
    assert not AuditEntry.objects.filter(action="reference_published_with_rules").exists()


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"rules": ["break_ties"]}, "machine", "need the LLM assessor"),
        ({"rules": ["guess"], "machine": 0}, "rules", "not a valid choice"),
        ({"rules": ["fill_unjudged"], "machine": 999999}, "machine", "no LLM assessor 999999"),
        ({"mode": "append"}, "mode", "not a valid choice"),
        ({"base": 7}, "base", "no reference version 7"),
        ({"mode": "replace", "base": 1}, "base", "merges into no version"),
        ({"allow_pending": "perhaps"}, "allow_pending", "valid boolean"),
    ],
)
def test_a_bad_value_is_a_400_naming_the_field(api, graded, body, field, words):
    answer = publish(api, graded, body)
    assert answer.status_code == 400, answer.json()
    assert field in answer.json() and words in str(answer.json()[field])
    assert not ReferenceVersion.objects.filter(study=graded).exists()


def test_a_refusal_of_the_service_is_a_409_and_writes_nothing(api, graded, llm_assessor):
    pending = publish(api, graded, {"machine": llm_assessor.pk, "rules": ["fill_unjudged"]})
    assert pending.status_code == 409 and "have no decision yet" in pending.json()["detail"]
    assert not ReferenceVersion.objects.filter(study=graded).exists()
    assert not AuditEntry.objects.filter(action="reference_published_with_rules").exists()


def test_another_study_s_llm_assessor_is_a_400(api, graded, alice, model_server):
    from studies.assessment.llm import setup
    from studies.design import services

    other = services.study_create(owner=alice, name="Alice's second", consent_text="Consent.")
    elsewhere = setup.llm_assessor_create(
        study=other, created_by=alice, endpoint_url=model_server.endpoint, model_name="m"
    )
    answer = publish(api, graded, {"machine": elsewhere.pk, "rules": ["break_ties"], "allow_pending": True})
    assert answer.status_code == 400 and f"no LLM assessor {elsewhere.pk}" in str(answer.json()["machine"])
    assert not ReferenceVersion.objects.filter(study=graded).exists()
