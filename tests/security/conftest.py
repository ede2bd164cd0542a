"""The cast of the security tests, around Alice's study (after tests/conftest.py):

- participant (P001) and other_participant (P002), both enrolled in it; P001 has consented, answered the
  questionnaire and started, searched and judged in its first scenario;
- ann, an assessor of it; zoe, an assessor of Charlie's study only;
- bob, a researcher on it; charlie, a researcher with a study of his own and no access to Alice's;
- a reference version, a scoring run, a pool document.
"""

from dataclasses import dataclass

import pytest

from studies.assessment import assessors, pools, references
from studies.design import services
from studies.models import Collection, Document, Participant, ReferenceVersion, SearchSession, Study
from tests.factories import study_judged

ROLES = (
    "anonymous",
    "participant",
    "other_participant",
    "assessor",
    "other_assessor",
    "other_researcher",
    "researcher",
)


@pytest.fixture(autouse=True)
def _fresh_cache():
    # Rate-limit counters and chart data live in the cache: no test sees another's.
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@dataclass
class World:
    study: Study
    other_study: Study
    participant: Participant
    other_participant: Participant
    session: SearchSession
    version: ReferenceVersion
    run: object
    pool_document: object
    users: dict
    invitation: object = None  # zoe, an assessor of Charlie's lab, asked to assess Alice's study (pending)


def cid():
    import uuid

    return uuid.uuid4().hex


@pytest.fixture
def world(designed_study, alice, bob, charlie, django_user_model):
    from scoring import services as scoring_services

    study = designed_study
    collection = Collection.objects.create(name="security")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{n}", title=f"Title {n}", text=f"Text {n} wing")
        for n in range(1, 9)
    )
    participant, other_participant, session = study_judged(study, collection)

    other_study = services.study_create(owner=charlie, name="Charlie's study", consent_text="Other consent.")
    ann = django_user_model.objects.create_user("ann", password="ann-password")
    zoe = django_user_model.objects.create_user("zoe", password="zoe-password")
    from studies.models import StudyAssessor

    StudyAssessor.objects.create(study=study, user=ann, invited_by=alice)
    StudyAssessor.objects.create(study=other_study, user=zoe, invited_by=charlie)
    invitation, _ = assessors.assessor_invite(study=study, username="zoe", invited_by=alice)

    version = references.reference_version_import_qrels(
        study=study, lines=["1 0 d1 2", "1 0 d2 0"], path="ref.qrels", created_by=alice, note="v1"
    )
    pools.pool_build(study=study)
    from studies.models import PoolDocument

    pool_document = PoolDocument.objects.filter(pool__scenario__study=study).first()
    run = scoring_services.scoring_run_create(study=study, created_by=alice)
    _llm_assessor_with_a_run(study, alice)
    return World(
        study=study,
        other_study=other_study,
        participant=participant,
        other_participant=other_participant,
        session=session,
        version=version,
        run=run,
        pool_document=pool_document,
        invitation=invitation,
        users={"alice": alice, "bob": bob, "charlie": charlie, "ann": ann, "zoe": zoe},
    )


def _llm_assessor_with_a_run(study, alice):
    """An LLM assessor of Alice's study with a finished run and audit, for its pages' rows (llm_path). Its
    endpoint is a documentation address (192.0.2.1), which the outbound rules refuse without a packet."""
    from studies.assessment.llm.setup import llm_assessor_create
    from studies.models import LLMAudit, LLMRun

    assessor = llm_assessor_create(
        study=study, created_by=alice, endpoint_url="http://192.0.2.1/v1", model_name="matrix-model"
    )
    LLMRun.objects.create(assessor=assessor, created_by=alice, status=LLMRun.Status.DONE)
    LLMAudit.objects.create(assessor=assessor, created_by=alice, seed=1, status=LLMAudit.Status.DONE)
