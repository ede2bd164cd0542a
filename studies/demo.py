"""The demo study of `make demo`: shaped like the ECIR 2008 study (30 participants, 4 scenarios, 2 systems)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from . import services
from .models import Study

DEMO_SLUG = "demo-ecir-2008"
DEMO_USERNAME = "researcher"

DEMO_SCENARIOS = [
    ("S1", "Boundary layer transition", "You are preparing a design review and need studies of what makes a "
     "laminar boundary layer become turbulent on a flat plate or wing.", "1"),
    ("S2", "Heat transfer at high speed", "A colleague asks what is known about heat transfer to surfaces in "
     "hypersonic flow. Find work that measures or predicts it.", "2"),
    ("S3", "Buckling of thin shells", "You need experimental results on the buckling of thin cylindrical shells "
     "under axial compression for a structures course.", "3"),
    ("S4", "Slender wings", "Find theory or experiments on the lift and pressure distribution of slender wings "
     "at incidence.", "4"),
]
DEMO_SYSTEMS = [
    ("A", "Title and text, stemmed (BM25)", {"configuration": "bm25_title_text"}),
    ("B", "Text only, unstemmed (BM25)", {"configuration": "bm25_text"}),
]


@dataclass
class DemoLoaded:
    study: Study
    username: str
    password: str


@transaction.atomic
def demo_study_load(*, participants: int = 30) -> DemoLoaded:
    """Create (or re-create) the demo study and a researcher login with a fresh password."""
    user_model = get_user_model()
    password = secrets.token_urlsafe(9)
    user, _ = user_model.objects.get_or_create(username=DEMO_USERNAME, defaults={"is_staff": True})
    user.is_staff = True
    user.is_superuser = True
    user.set_password(password)
    user.save()
    Study.objects.filter(slug=DEMO_SLUG).delete()
    study = services.study_create(
        owner=user,
        name="Demo: two systems, four scenarios",
        description="A study shaped like Järvelin et al. (ECIR 2008): each participant works four scenarios, "
        "two on each system, in a balanced Latin square order.",
        consent_text="You are invited to take part in a study of how people search. We record your queries, "
        "the results you see and the judgments you make, under a pseudonymous code. You may stop at any time.",
    )
    study.slug = DEMO_SLUG
    study.save(update_fields=["slug"])
    for code, title, text, topic in DEMO_SCENARIOS:
        services.scenario_add(study=study, code=code, title=title, text=text, topic_id=topic)
    for code, name, config in DEMO_SYSTEMS:
        services.system_add(study=study, code=code, name=name, config=config)
    services.participants_enrol(study=study, count=participants)
    return DemoLoaded(study=study, username=user.username, password=password)
