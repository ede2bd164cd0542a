"""A running study for the participant's way: Alice's designed study (S1-S4, systems A and B) over a small
generated collection, both indexes built into a temporary INDEX_ROOT, two participants enrolled."""

import random
import shutil
import uuid

import pytest

from studies.models import Collection, Document
from studies.participation.way.form_steps import consent_record, questionnaire_save, session_start
from studies.search.engines.formats import Document as ParsedDocument
from studies.search.engines.search import build_index
from studies.search.systems import collection_index_dir
from tests.factories import study_enrolled

WORDS = (
    "wing",
    "flow",
    "boundary",
    "layer",
    "shock",
    "heat",
    "transfer",
    "panel",
    "buckling",
    "shell",
    "pressure",
    "supersonic",
    "laminar",
    "turbulent",
    "nozzle",
    "jet",
    "drag",
    "lift",
    "vortex",
    "plate",
)


def make_documents(count=40, seed=7):
    """`count` documents; the first 25 mention "wing", so a search for it has three pages."""
    rng = random.Random(seed)
    documents = []
    for n in range(1, count + 1):
        words = [rng.choice(WORDS[1:]) for _ in range(30)]
        if n <= 25:
            words.insert(rng.randrange(len(words)), "wing")
        documents.append((str(n), f"Document {n}: {' '.join(words[:3])}", " ".join(words)))
    return documents


@pytest.fixture(scope="session")
def prebuilt_indexes(tmp_path_factory):
    """The generated collection's two indexes, built once
    per test run and copied into each test's INDEX_ROOT."""
    root = tmp_path_factory.mktemp("prebuilt-indexes")
    documents = [ParsedDocument(i, t, x) for i, t, x in make_documents()]
    for configuration in ("bm25_title_text", "bm25_text"):
        build_index(documents, root / configuration, configuration)
    return root


@pytest.fixture
def index_root(settings, tmp_path):
    settings.INDEX_ROOT = tmp_path / "indexes"
    return settings.INDEX_ROOT


@pytest.fixture
def small_collection(db):
    collection = Collection.objects.create(name="Generated 40")
    Document.objects.bulk_create(
        Document(collection=collection, external_id=i, title=t, text=x) for i, t, x in make_documents()
    )
    return collection


@pytest.fixture
def running_study(designed_study, small_collection, index_root, prebuilt_indexes):
    for configuration in ("bm25_title_text", "bm25_text"):
        shutil.copytree(
            prebuilt_indexes / configuration,
            collection_index_dir(collection=small_collection, configuration=configuration),
        )
    return study_enrolled(designed_study, 2, collection=small_collection)


@pytest.fixture
def participant(running_study):
    return running_study.participants.order_by("enrolment_index")[0]


@pytest.fixture
def other_participant(running_study):
    return running_study.participants.order_by("enrolment_index")[1]


def cid():
    return uuid.uuid4().hex


def ready(participant):
    """Consented, questionnaire answered."""
    consent_record(
        participant=participant, consent_version=participant.study.consent_version, client_event_id=cid()
    )
    questionnaire_save(
        participant=participant,
        client_event_id=cid(),
        answers={"search_engine_years": 7, "domain_years": 21, "search_skill": 2},
    )
    return participant


def start(participant):
    """A started session of the participant's first assignment."""
    ready(participant)
    assignment = participant.assignments.order_by("position").first()
    return session_start(participant=participant, assignment=assignment, client_event_id=cid())


@pytest.fixture
def session(participant):
    return start(participant)


@pytest.fixture
def other_session(other_participant):
    return start(other_participant)


# The simulated searchers' reference (simulated_study): topics 1-4, documents 1-25, every third graded 3.
SIMULATED_REFERENCE = {str(n): {str(d): 3 if d % 3 == 0 else 1 for d in range(1, 26)} for n in range(1, 5)}


@pytest.fixture
def simulated_study(running_study):
    """The running study, every participant played by the demo's simulated searchers (seed 7)."""
    from studies.models import Scenario
    from studies.simulation.participants import participants_simulate

    Scenario.objects.filter(study=running_study).update(text="wing flow boundary layer heat transfer shock")
    participants_simulate(
        participants=list(running_study.participants.order_by("enrolment_index")),
        reference=SIMULATED_REFERENCE,
        seed=7,
    )
    return running_study
