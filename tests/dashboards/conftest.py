"""A constructed study for the dashboards: the paper's design (four scenarios, systems A and B), participants
enrolled by the study's own Latin square, every assignment worked as a session of 1-5 queries over a small
collection, and a reference version. Everything random is seeded, so the numbers are the same every run."""

from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from studies.design import services as study_services
from studies.models import (
    Collection,
    Document,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    SearchSession,
    ShownResult,
)

END_REASONS = ["satisfied", "gave_up", "timed_out"]


def make_session(assignment, result_lists, *, end_reason="satisfied", scan_marks=None, docs):
    """A finished session of `assignment` whose query q
    showed the documents result_lists[q] (external ids)."""
    start = timezone.now() - timedelta(hours=1)
    session = SearchSession.objects.create(
        assignment=assignment, started_at=start, ended_at=start + timedelta(minutes=5), end_reason=end_reason
    )
    for position, ranked in enumerate(result_lists, start=1):
        mark = None if scan_marks is None else scan_marks[position - 1]
        query = Query.objects.create(
            session=session,
            position=position,
            text=f"query {position}",
            issued_at=start + timedelta(seconds=position),
            scan_mark_rank=mark,
        )
        ShownResult.objects.bulk_create(
            ShownResult(query=query, rank=rank, document=docs[ext], shown_at=start)
            for rank, ext in enumerate(ranked, 1)
        )
    return session


def reference_version(study, grades_by_topic, *, docs, number=None):
    number = number or (study.reference_versions.count() + 1)
    version = ReferenceVersion.objects.create(study=study, number=number, note=f"v{number}")
    ReferenceJudgment.objects.bulk_create(
        ReferenceJudgment(version=version, topic_id=topic, document=docs[ext], grade=grade)
        for topic, grades in grades_by_topic.items()
        for ext, grade in grades.items()
    )
    return version


def random_grades(rng, n_docs=30):
    """Per topic 1..4: twelve judged documents of the collection with grades 0..3."""
    return {
        str(topic): {f"d{i}": int(rng.integers(0, 4)) for i in rng.choice(n_docs, size=12, replace=False)}
        for topic in range(1, 5)
    }


@pytest.fixture(autouse=True)
def _fresh_chart_cache():
    """Charts are cached under (run id, generation, query): a rolled-back test's run id comes back in the next
    test (SQLite), and its cached chart with it."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def collection_docs(designed_study):
    collection = Collection.objects.create(name="Dashboard test collection")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=f"d{i}", title=f"Doc {i}") for i in range(30)
    )
    designed_study.collection = collection
    designed_study.save(update_fields=["collection"])
    return {doc.external_id: doc for doc in collection.documents.all()}


@dataclass
class Constructed:
    """The study and what was put in it, for computing the expected numbers with the library directly."""

    study: object
    sessions: list = field(
        default_factory=list
    )  # dicts: id, topic, lists, marks, system, scenario, participant, end
    grades: dict = field(default_factory=dict)  # topic -> {external id: grade}


def build_study(study, docs, *, participants=8, seed=2008, skip=()):
    rng = np.random.default_rng(seed)
    built = Constructed(study)
    enrolled = study_services.participants_enrol(study=study, count=participants)
    for index, participant in enumerate(enrolled):
        participant.questionnaire_answers = {
            "search_engine_years": int(rng.integers(1, 15)),
            "domain_years": int(rng.integers(1, 30)),
            "search_skill": int(rng.integers(1, 6)),
        }
        participant.consent_version, participant.consented_at = "1", timezone.now()
        participant.save(update_fields=["questionnaire_answers", "consent_version", "consented_at"])
        for assignment in participant.assignments.select_related("scenario", "system").order_by("position"):
            n_queries = int(rng.integers(1, 6))
            lists = [
                [f"d{i}" for i in rng.choice(30, size=int(rng.integers(3, 15)), replace=False)]
                for _ in range(n_queries)
            ]
            marks = [int(rng.integers(1, len(ranked) + 1)) for ranked in lists]
            end = END_REASONS[(index + assignment.position) % 3]
            record = {
                "topic": assignment.scenario.topic_id,
                "lists": lists,
                "marks": marks,
                "system": assignment.system.code,
                "scenario": assignment.scenario.code,
                "participant": participant.code,
                "end": end,
                "assignment": assignment,
            }
            if (participant.code, assignment.position) in skip:
                record["id"] = None
            else:
                record["id"] = make_session(assignment, lists, end_reason=end, scan_marks=marks, docs=docs).pk
            built.sessions.append(record)
    built.grades = random_grades(rng)
    reference_version(study, built.grades, docs=docs)
    return built


@pytest.fixture
def constructed(designed_study, collection_docs):
    """8 participants x 4 scenarios = 32 sessions of 1-5 queries, 3-14 results each; reference v1."""
    return build_study(designed_study, collection_docs)


@pytest.fixture
def constructed_study(constructed):
    return constructed.study


@pytest.fixture
def scored(constructed, django_capture_on_commit_callbacks):
    """The constructed study with its default run scored (eager Celery, on-commit callbacks run;
    tests/factories.py, study_scored)."""
    from tests.factories import study_scored

    return constructed, study_scored(constructed.study, django_capture_on_commit_callbacks)


def library_scores(built, params=None, *, sessions=None, curves=True):
    """score_sessions on the constructed sessions (document external ids, the reference grades)."""
    from scoring.lib.session import SessionParams, encode_sessions, score_sessions

    sessions = [s for s in (sessions or built.sessions) if s["id"] is not None]
    params = params or SessionParams()
    batch = encode_sessions(
        [s["topic"] for s in sessions],
        [s["lists"] for s in sessions],
        built.grades,
        depth=100,
        scanned_to=[s["marks"] for s in sessions],
    )
    return sessions, batch, score_sessions(batch, params, curves=curves)
