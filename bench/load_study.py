"""The load benchmark's study (bench/load.py): its database, a generated collection with both built-in
indexes, and N participants who have consented, answered the questionnaire and started their first
scenario."""

from __future__ import annotations

import random
import uuid

ANSWERS = {
    "search_engine_years": 5,
    "domain_years": 3,
    "search_skill": 3,
}  # the questionnaire, as each answers it
VOCABULARY = (
    "wing flow boundary layer shock heat transfer panel buckling shell pressure supersonic laminar turbulent "
    "nozzle jet drag lift vortex plate cylinder cone blunt body hypersonic wake separation stagnation point "
    "skin friction compressible viscous inviscid airfoil aspect ratio sweep delta thin thick transition "
    "reynolds mach number stability oscillation flutter load stress strain beam column creep fatigue crack "
    "temperature ablation radiation convection conduction injection cooling film porous wall slip rarefied "
    "gas kinetic molecule density velocity profile similarity solution integral method numerical experiment "
    "tunnel measurement probe gauge theory linear nonlinear perturbation small disturbance approximation"
).split()


def database_recreate(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    return f"{server_url}/{name}"


def study_build(n_participants: int, n_documents: int, seed: int = 2008) -> list[dict]:
    """The study, its collection and indexes, N participants each in their first scenario's search."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from studies.design import services
    from studies.models import Collection, Document
    from studies.search.systems import collection_index_build
    from studies.simulation.participants import first_search_start

    call_command("migrate", verbosity=0)
    rng = random.Random(seed)
    owner = get_user_model().objects.create_user("load-owner", password=uuid.uuid4().hex, is_staff=True)
    collection = Collection.objects.create(name=f"Generated {n_documents}", owner=owner)
    Document.objects.bulk_create(
        Document(
            collection=collection,
            external_id=f"d{n}",
            title=" ".join(rng.choices(VOCABULARY, k=6)),
            text=" ".join(rng.choices(VOCABULARY, k=120)),
        )
        for n in range(1, n_documents + 1)
    )
    study = services.study_create(  # open at once: a measured set-up, not a researcher's draft
        owner=owner, name="Load study", consent_text="Consent.", collection=collection, status="open"
    )
    for n in range(1, 5):
        services.scenario_add(
            study=study, code=f"S{n}", title=f"Scenario {n}", text=f"Find {n}", topic_id=str(n)
        )
    services.system_add(study=study, code="A", name="System A", config={"configuration": "bm25_title_text"})
    services.system_add(study=study, code="B", name="System B", config={"configuration": "bm25_text"})
    for configuration in ("bm25_title_text", "bm25_text"):
        collection_index_build(collection=collection, configuration=configuration)
    participants = services.participants_enrol(study=study, count=n_participants)
    grades = study.grade_values()
    players = []
    for participant in participants:
        session = first_search_start(participant=participant, answers=ANSWERS)
        players.append(
            {"pk": participant.pk, "token": participant.access_token, "session": session.pk, "grades": grades}
        )
    return players


def database_drop(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(f"{server_url}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
