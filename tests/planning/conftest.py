"""The dashboards' constructed study (tests/dashboards/conftest.py): four scenarios, systems A and B, eight
participants in the study's own Latin square, scored by a default run."""

import random  # noqa: E402

import pytest  # noqa: E402

from tests.dashboards.conftest import (  # noqa: F401  (fixtures, re-exported for pytest)
    _fresh_chart_cache,
    collection_docs,
    constructed,
    scored,
)

TOPICS = {
    "1": (
        "Wing flutter",
        "Flutter of a swept wing at transonic speed: wing flutter boundaries and damping.",
        "wing flutter swept transonic damping",
    ),
    "2": (
        "Boundary layer heat",
        "Heat transfer through a laminar boundary layer on a heated flat plate.",
        "boundary layer heat laminar plate",
    ),
    "3": (
        "Shell buckling",
        "Buckling of thin cylindrical shells under axial compression and pressure.",
        "buckling shell cylindrical axial compression",
    ),
    "4": (
        "Nozzle flow",
        "Supersonic flow in a convergent divergent nozzle with shock waves.",
        "nozzle supersonic shock divergent convergent",
    ),
}
FILLER = "analysis method results theory model conditions effect range parameters general linear".split()


@pytest.fixture
def searchable_study(study, settings, tmp_path):
    """Alice's study with four real-text scenarios, systems A and B over a 120-document collection indexed in
    a temporary INDEX_ROOT, and a reference version grading 12 documents
    per topic (3 highly, 3 fairly, 3 marginally relevant, 3 not)."""
    from scoring.planning.simulate import studies_services
    from studies.models import Collection, Document, ReferenceJudgment
    from studies.search.systems import collection_index_build

    services, reference_version_create = studies_services()

    settings.INDEX_ROOT = tmp_path / "indexes"
    rng = random.Random(21)
    collection = Collection.objects.create(name="Planning test collection", owner=study.owner)
    documents, grades = [], {}
    for topic, (_title, _text, words) in TOPICS.items():
        vocabulary = words.split()
        for n in range(30):
            share = 0.5 if n < 12 else 0.1
            body = [rng.choice(vocabulary) if rng.random() < share else rng.choice(FILLER) for _ in range(40)]
            external = f"T{topic}-{n:02d}"
            documents.append(
                Document(
                    collection=collection, external_id=external, title=" ".join(body[:4]), text=" ".join(body)
                )
            )
            if n < 12:
                grades[(topic, external)] = 3 - n // 3
    Document.objects.bulk_create(documents)
    study.collection = collection
    study.save(update_fields=["collection"])
    for topic, (title, text, _words) in TOPICS.items():
        services.scenario_add(study=study, code=f"S{topic}", title=title, text=text, topic_id=topic)
    services.system_add(
        study=study, code="A", name="Title and text", config={"configuration": "bm25_title_text"}
    )
    services.system_add(study=study, code="B", name="Text only", config={"configuration": "bm25_text"})
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=collection, configuration=configuration)
    pk_of = dict(collection.documents.values_list("external_id", "pk"))
    reference_version_create(
        study=study,
        note="test",
        judgments=[
            ReferenceJudgment(topic_id=topic, document_id=pk_of[doc], grade=grade, source="test")
            for (topic, doc), grade in grades.items()
        ],
    )
    return study


def reference_of(study):
    from scoring.planning.simulate import reference_grades

    return reference_grades(study)[0]
