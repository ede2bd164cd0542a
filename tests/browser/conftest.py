"""The participant browser tests' study: two scenarios on two systems, one participant enrolled."""

import random

import pytest

from studies.design import lifecycle, services
from studies.models import Collection, Document
from studies.search.systems import collection_index_build

WORDS = (
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


@pytest.fixture
def token(settings, tmp_path, django_user_model):
    """A study of two scenarios on two systems over 40 generated documents, one participant enrolled."""
    settings.INDEX_ROOT = tmp_path / "indexes"
    rng = random.Random(3)
    owner = django_user_model.objects.create_user("alice", password="x", is_staff=True)
    collection = Collection.objects.create(name="Browser test", owner=owner)
    documents = []
    for n in range(1, 41):
        words = [rng.choice(WORDS) for _ in range(30)]
        if n <= 25:
            words.insert(5, "wing")
        documents.append(
            Document(collection=collection, external_id=str(n), title=f"Report {n}", text=" ".join(words))
        )
    Document.objects.bulk_create(documents)
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=collection, configuration=configuration)
    study = services.study_create(
        owner=owner, name="Browser study", consent_text="Consent text.", collection=collection
    )
    services.scenario_add(study=study, code="S1", title="Wings", text="Find reports on wings.", topic_id="1")
    services.scenario_add(
        study=study, code="S2", title="Heat", text="Find reports on heat transfer.", topic_id="2"
    )
    services.system_add(study=study, code="A", name="A", config={"configuration": "bm25_title_text"})
    services.system_add(study=study, code="B", name="B", config={"configuration": "bm25_text"})
    lifecycle.study_status_change(study=study, status=lifecycle.OPEN, by=owner)  # its checklist passes
    (participant,) = services.participants_enrol(study=study, count=1)
    return participant.access_token
