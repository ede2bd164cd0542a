"""The demo study of `make demo`: shaped like the ECIR 2008 study, with simulated participants.

30 participants work 4 scenarios, two on each of 2 systems (two real configurations of the built-in engine),
in a balanced Latin square order. The collection is the Cranfield collection shipped in
studies/demo_data/cranfield (SOURCE.md there: its origin and terms), or the Cranfield folder DEMO_DATA names,
or, with DEMO_DATA=generated, a small collection generated here (quick, for tests). Simulated participants
(studies/simulation/participants.py) search, scan, judge and stop through the same services as people do; the
reference judgments come with the collection. Two more participants are enrolled and left for the researcher
to try the study as a participant, and an assessor account is made for the assessment pages.
"""

from __future__ import annotations

import random
import secrets
import textwrap
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from studies.accounts.services import researcher_create
from studies.assessment import assessors, pools, references
from studies.design import lifecycle, services
from studies.library.collection_import import collection_import
from studies.library.collections import collection_create
from studies.models import AssessorInvitation, Participant, ReferenceJudgment, Study
from studies.search.engines.formats import Document as ParsedDocument
from studies.search.engines.formats import read_cranfield
from studies.search.systems import collection_index_build
from studies.simulation.participants import participants_simulate

DEMO_SLUG = "demo-ecir-2008"
DEMO_USERNAME = "researcher"
DEMO_ASSESSOR = "assessor"
SIMULATED = 30
FOR_THE_RESEARCHER = 2  # 32 enrolled = four complete Latin square blocks of 8
# The Cranfield collection ships with the project (1.7 MB, freely redistributed for research; SOURCE.md).
SHIPPED_CRANFIELD = Path(__file__).resolve().parent / "demo_data" / "cranfield"
GENERATED = "generated"  # DEMO_DATA=generated: the word-salad collection below instead of real documents

DEMO_SYSTEMS = [
    ("A", "Title and text, stemmed (BM25)", {"configuration": "bm25_title_text"}),
    ("B", "Text only, unstemmed (BM25)", {"configuration": "bm25_text"}),
]
CONSENT = (
    "You are invited to take part in a study of how people search. We record your queries, the results you "
    "see and the judgments you make, under a pseudonymous code. You may stop or withdraw at any time."
)


@dataclass
class DemoLoaded:
    study: Study
    username: str
    password: str
    assessor_password: str | None
    try_links: list[str]
    collection_source: str
    sessions: int
    researcher: Any  # the researcher's account, for the scoring run the loader creates (created_by)


def _researcher() -> tuple[Any, str]:
    """The demo's researcher: a researcher as `create_researcher` makes one (studies/accounts/services.py:
    is_staff, no superuser flag, no model permissions), who sees the demo study because they own it. An
    account left by an earlier demo (earlier demos made it a superuser) is made a plain researcher again."""
    user = get_user_model().objects.filter(username=DEMO_USERNAME).first()
    if user is None:
        return researcher_create(username=DEMO_USERNAME)
    password = secrets.token_urlsafe(9)
    user.is_staff, user.is_superuser, user.is_active = True, False, True
    user.set_password(password)
    user.save(update_fields=["is_staff", "is_superuser", "is_active", "password"])
    user.user_permissions.clear()
    user.groups.clear()
    return user, password


def _remove_previous_demo() -> None:
    old = Study.objects.filter(slug=DEMO_SLUG).first()
    if old is None:
        return
    collection = old.collection
    old.delete()
    if collection is not None and not collection.studies.exists():
        collection.delete()


def _cranfield_topics(folder: Path, count: int = 4) -> list[str]:
    """The Cranfield topics with the most highly relevant documents: scenarios with something to find."""
    parsed = read_cranfield(folder)
    strong: defaultdict[str, int] = defaultdict(int)
    for judgment in parsed.judgments:
        if judgment.grade >= 2:
            strong[judgment.topic_id] += 1
    ranked = sorted(strong, key=lambda topic: (-strong[topic], int(topic)))
    return sorted(ranked[:count], key=int)


def _load_cranfield(study: Study, folder: Path, user) -> str:
    topics = _cranfield_topics(folder)
    collection_import(
        name=f"Cranfield 1400 (demo {study.pk})",
        format="cranfield",
        paths=[folder],
        study=study,
        scenario_topics=topics,
        created_by=user,
        description="The Cranfield collection, for the demo study.",
    )
    # Cranfield topics are questions; give the scenarios short titles of their own.
    for scenario in study.scenarios.all():
        question = " ".join(scenario.text.split("?")[0].split()).rstrip(" .")
        scenario.title = textwrap.shorten(question, 70, placeholder="…").capitalize() or scenario.title
        scenario.save(update_fields=["title"])
    if folder.resolve() == SHIPPED_CRANFIELD:
        return "the Cranfield collection shipped in studies/demo_data/cranfield"
    return f"Cranfield ({folder})"


# The generated collection: four topics, each with its own words, among background documents.
GENERATED_TOPICS = [
    (
        "1",
        "Boundary layer transition",
        "You are preparing a design review and need studies of what makes a laminar boundary layer become "
        "turbulent on a flat plate or wing.",
        "boundary layer laminar turbulent transition flat plate wing reynolds instability roughness",
    ),
    (
        "2",
        "Heat transfer at high speed",
        "A colleague asks what is known about heat transfer to surfaces in hypersonic flow. Find work that "
        "measures or predicts it.",
        "heat transfer hypersonic surface temperature flow stagnation wall convective mach",
    ),
    (
        "3",
        "Buckling of thin shells",
        "You need experimental results on the buckling of thin cylindrical shells under axial compression "
        "for a structures course.",
        "buckling thin cylindrical shells axial compression load experiments stiffened",
    ),
    (
        "4",
        "Slender wings",
        "Find theory or experiments on the lift and pressure distribution of slender wings at incidence.",
        "slender wings lift pressure distribution incidence vortex delta leading edge",
    ),
]
BACKGROUND = (
    "analysis approximate solution equations numerical theory measured values model conditions effect "
    "investigation range parameters results method experimental general linear nonlinear flow body surface "
    "pressure velocity boundary shock plate cylinder structure stress"
).split()


def _load_generated(study: Study) -> str:
    rng = random.Random(2008)
    documents, grades = [], {}
    number = 0
    for topic_id, _title, _text, words in GENERATED_TOPICS:
        vocabulary = words.split()
        # Few highly relevant documents among many partial matches, so that searchers must work for them.
        for strength in (3,) * 3 + (2,) * 6 + (1,) * 20:
            number += 1
            share = {3: 0.35, 2: 0.25, 1: 0.15}[strength]
            body = [
                rng.choice(vocabulary) if rng.random() < share else rng.choice(BACKGROUND) for _ in range(60)
            ]
            title = " ".join(rng.sample(vocabulary, 3 if strength > 1 else 1) + rng.sample(BACKGROUND, 2))
            external_id = f"G{number:04d}"
            documents.append(ParsedDocument(external_id, title.capitalize(), " ".join(body) + "."))
            grades[(topic_id, external_id)] = strength
    for _ in range(500):
        number += 1
        external_id = f"G{number:04d}"
        body = [rng.choice(BACKGROUND) for _ in range(60)]
        # Background documents mention topic words now and then: near misses judged not relevant.
        topic_id, _t, _x, words = rng.choice(GENERATED_TOPICS)
        for _ in range(rng.randint(2, 8)):
            body[rng.randrange(60)] = rng.choice(words.split())
        documents.append(
            ParsedDocument(
                external_id, " ".join(rng.sample(BACKGROUND, 4)).capitalize(), " ".join(body) + "."
            )
        )
        if rng.random() < 0.3:
            grades[(topic_id, external_id)] = 0
    collection = collection_create(
        name=f"Generated demo collection ({study.pk})",
        owner=study.owner,
        description="Made by studies/demo.py for the demo study.",
        documents=documents,
    )
    study.collection = collection
    study.save(update_fields=["collection"])
    for topic_id, title, text, _words in GENERATED_TOPICS:
        services.scenario_add(study=study, code=f"S{topic_id}", title=title, text=text, topic_id=topic_id)
    pk_of = dict(collection.documents.values_list("external_id", "pk"))
    references.reference_version_create(
        study=study,
        note="generated with the demo collection",
        judgments=(
            ReferenceJudgment(topic_id=topic_id, document_id=pk_of[doc], grade=grade, source="demo")
            for (topic_id, doc), grade in grades.items()
        ),
    )
    return "a generated collection (DEMO_DATA=generated; unset it for the shipped Cranfield documents)"


def _reference(study: Study) -> dict[str, dict[str, int]]:
    version = study.reference_versions.order_by("-number").first()
    reference: dict[str, dict[str, int]] = defaultdict(dict)
    for topic_id, doc, grade in ReferenceJudgment.objects.filter(version=version).values_list(
        "topic_id", "document__external_id", "grade"
    ):
        reference[topic_id][doc] = grade
    return reference


def demo_study_load(*, participants: int = SIMULATED, data_dir: str | None = None) -> DemoLoaded:
    """Create (or re-create) the demo study and simulate its sessions; print-ready logins. Scoring it is the
    caller's (scoring/management/commands/load_demo.py): studies never imports the scoring app."""
    data_dir = (settings.DEMO_DATA if data_dir is None else data_dir) or str(SHIPPED_CRANFIELD)
    with transaction.atomic():
        user, password = _researcher()
        _remove_previous_demo()
        study = services.study_create(
            owner=user,
            name="Demo: two systems, four scenarios",
            description="A study shaped like Järvelin et al. (ECIR 2008): each participant works four "
            "scenarios, two on each system, in a balanced Latin square order. The sessions are simulated.",
            consent_text=CONSENT,
        )
        study.slug = DEMO_SLUG
        study.save(update_fields=["slug"])
        if data_dir != GENERATED:
            folder = Path(data_dir)
            if not (folder / "cran.all.1400").is_file():
                raise ValueError(
                    f"DEMO_DATA={data_dir!r} does not hold the Cranfield files (cran.all.1400, ...)"
                )
            source = _load_cranfield(study, folder, user)
        else:
            source = _load_generated(study)
        study.refresh_from_db()  # the import wrote the collection through its own instance
        for code, name, config in DEMO_SYSTEMS:
            services.system_add(study=study, code=code, name=name, config=config)
        collection = study.collection
        assert collection is not None  # the import above gave the study its collection
        for _code, _name, config in DEMO_SYSTEMS:
            collection_index_build(collection=collection, configuration=config["configuration"])
        # Opened as a researcher would, once the set-up checklist passes (a draft enrols nobody).
        lifecycle.study_status_change(study=study, status=lifecycle.OPEN, by=user)
        enrolled = services.participants_enrol(study=study, count=participants + FOR_THE_RESEARCHER)
        sessions = participants_simulate(participants=enrolled[:participants], reference=_reference(study))
        membership, assessor_password = assessors.assessor_invite(
            study=study, username=DEMO_ASSESSOR, invited_by=user
        )
        if isinstance(membership, AssessorInvitation):  # the account outlived the previous demo study
            accepted = assessors.assessor_invitation_answer(
                invitation=membership, user=membership.user, accept=True
            )
            assert accepted is not None  # accepting makes the membership
            membership = accepted
        if assessor_password is None:  # the account existed: give it a fresh password to print
            assessor_password = secrets.token_urlsafe(9)
            membership.user.set_password(assessor_password)
            membership.user.save(update_fields=["password"])
    # After the commit, so the pools are built once rather than grown after every simulated session.
    pools.pool_build(study=study)
    try_links = [
        f"/p/{p.access_token}/"
        for p in Participant.objects.filter(pk__in=[p.pk for p in enrolled[participants:]]).order_by(
            "enrolment_index"
        )
    ]
    return DemoLoaded(
        study=study,
        username=user.username,
        password=password,
        assessor_password=assessor_password,
        try_links=try_links,
        collection_source=source,
        sessions=sessions,
        researcher=user,
    )
