"""The demo's collection belongs to the demo researcher, and its assessor assesses the new demo study on every
reload, though the account outlives the study it first assessed (collection owners, assessors of
another lab accept first). The simulated sessions are left out here: tests/studies/test_demo_loading.py
plays them."""

import pytest
from django.core.management import call_command

from studies import demo
from studies.models import AssessorInvitation, Study, StudyAssessor

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_simulation(settings, tmp_path, monkeypatch):
    settings.INDEX_ROOT = tmp_path / "indexes"
    settings.DEMO_DATA = "generated"  # quick; the shipped default: test_the_demo_ships_cranfield_*
    monkeypatch.setattr(demo, "participants_simulate", lambda **kwargs: [])


def test_the_demo_researcher_owns_the_collection_and_the_assessor_stays_on_reload():
    for _load in range(2):
        call_command("load_demo", "--participants", "2")
        study = Study.objects.get(slug="demo-ecir-2008")
        assert study.collection.owner == study.owner and study.owner.username == demo.DEMO_USERNAME
        membership = StudyAssessor.objects.get(study=study)
        assert membership.user.username == demo.DEMO_ASSESSOR
    assert AssessorInvitation.objects.get().status == "accepted"  # the second load asked, the demo accepted
