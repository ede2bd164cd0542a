"""Fixtures for the assessment tests: a study with a small collection, participants enrolled with the
balanced plan, and sessions built row by row, so every pool rule has a known answer.

Documents d1..d12. In scenario S1, P001 saw d1..d5 (query 1, ranks 1-5) and d6 at rank 1, d7 at rank 12
(query 2), judging d2 = 2 and d4 = 0; P002 saw d3 at rank 1 and judged d3 = 1 and d8 = 3. So for S1:
relevant = {d2, d3, d8}; top 10 = {d1..d6}; union = {d1..d6, d8}.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from studies.assessment import assessors, pools
from studies.models import Collection, Document, Judgment, Query, SearchSession, ShownResult


def record_session(participant, scenario_code, queries, judgments):
    """A session of `participant` on the scenario: `queries` is a list of {rank: external_id} (one per
    query), `judgments` {external_id: grade}."""
    assignment = participant.assignments.get(scenario__code=scenario_code, retake_of__isnull=True)
    collection = participant.study.collection
    start = timezone.now() - timedelta(minutes=30)
    session = SearchSession.objects.create(assignment=assignment, started_at=start)
    for position, shown in enumerate(queries, start=1):
        query = Query.objects.create(
            session=session, position=position, text=f"query {position}", issued_at=start
        )
        for rank, external_id in shown.items():
            ShownResult.objects.create(
                query=query,
                rank=rank,
                document=collection.documents.get(external_id=external_id),
                shown_at=start,
            )
    for external_id, grade in judgments.items():
        Judgment.objects.create(
            session=session,
            document=collection.documents.get(external_id=external_id),
            grade=grade,
            created_at=start,
            updated_at=start,
        )
    return session


@pytest.fixture
def collection(db):
    collection = Collection.objects.create(name="Test collection")
    Document.objects.bulk_create(
        Document(
            collection=collection, external_id=f"d{n}", title=f"Title {n}", text=f"Full text of document {n}."
        )
        for n in range(1, 13)
    )
    return collection


@pytest.fixture
def assessed_study(designed_study, collection):
    """Alice's designed study with the collection and two participants (P001, P002)."""
    from studies.design import services

    designed_study.collection = collection
    designed_study.save(update_fields=["collection"])
    services.participants_enrol(study=designed_study, count=2)
    return designed_study


@pytest.fixture
def sessions_study(assessed_study):
    p1, p2 = assessed_study.participants.order_by("enrolment_index")
    record_session(
        p1, "S1", [{1: "d1", 2: "d2", 3: "d3", 4: "d4", 5: "d5"}, {1: "d6", 12: "d7"}], {"d2": 2, "d4": 0}
    )
    record_session(p2, "S1", [{1: "d3"}], {"d3": 1, "d8": 3})
    return assessed_study


def pool_ids(study, code="S1"):
    scenario = study.scenarios.get(code=code)
    return set(scenario.assessment_pool.documents.values_list("document__external_id", flat=True))


@pytest.fixture
def make_assessors(db):
    """make_assessors(study, "ann", "ben", per_document=2) -> list of users, invited in that order."""

    def make(study, *names, per_document=None):
        users = []
        for name in names:
            membership, _password = assessors.assessor_invite(
                study=study, username=name, invited_by=study.owner
            )
            users.append(membership.user)
        if per_document is not None:
            assessors.assessment_plan_set(study=study, assessors_per_document=per_document)
        return users

    return make


def grade_all(study, grades_by_document, users, code="S1"):
    """Pool the documents of `grades_by_document` ({external_id: [grade per user]}) in `code` by hand, in
    that order, and record each user's grade."""
    scenario = study.scenarios.get(code=code)
    pools.pool_add_documents(scenario=scenario, external_ids=list(grades_by_document), added_by=study.owner)
    pool = scenario.assessment_pool
    for external_id, grades in grades_by_document.items():
        pool_document = pool.documents.get(document__external_id=external_id)
        for user, grade in zip(users, grades, strict=True):
            if grade is not None:
                assessors.assessor_judgment_record(assessor=user, pool_document=pool_document, grade=grade)
    return pool


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # assessor_invite hashes a fresh password per assessor; the production hasher is slow by design.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def practice_study(designed_study, collection):
    """Alice's designed study with a practice task P (topic 9) besides S1..S4, two participants; P001 worked
    P (shown d9 first, judged it 3) and S1 (shown d1, judged it 2)."""
    from studies.design import services

    designed_study.collection = collection
    designed_study.save(update_fields=["collection"])
    services.scenario_add(
        study=designed_study, code="P", title="Warm-up", text="Practice.", topic_id="9", practice=True
    )
    services.participants_enrol(study=designed_study, count=2)
    p1 = designed_study.participants.order_by("enrolment_index").first()
    record_session(p1, "P", [{1: "d9"}], {"d9": 3})
    record_session(p1, "S1", [{1: "d1"}], {"d1": 2})
    return designed_study


def practice_pool_from_before(study, *external_ids):
    """The practice task's pool as the pool rules built it before practice tasks were left out of pools
    (rows written directly)."""
    from studies.models import AssessmentPool, PoolDocument

    pool = AssessmentPool.objects.create(scenario=study.scenarios.get(code="P"))
    PoolDocument.objects.bulk_create(
        PoolDocument(
            pool=pool,
            document=study.collection.documents.get(external_id=external_id),
            source=PoolDocument.Source.RULE,
            source_detail="judged relevant",
        )
        for external_id in external_ids
    )
    return pool
