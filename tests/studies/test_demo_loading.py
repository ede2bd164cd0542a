"""`make demo`'s loading step works on an empty database, and again on a loaded one."""

import shutil
from collections import Counter

import pytest
from django.core.management import call_command

from studies.models import Query, SearchSession, Study

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _indexes_in_tmp(settings, tmp_path):
    settings.INDEX_ROOT = tmp_path / "indexes"


def test_load_demo_builds_a_simulated_study_like_the_papers_on_an_empty_database(capsys, settings):
    settings.DEMO_DATA = "generated"  # the quick generated collection (the default is the shipped Cranfield)
    assert Study.objects.count() == 0
    call_command("load_demo")
    out = capsys.readouterr().out
    study = Study.objects.get(slug="demo-ecir-2008")
    assert study.scenarios.count() == 4 and study.systems.count() == 2
    assert study.participants.count() == 32  # 30 simulated, 2 left for the researcher to try
    sessions = SearchSession.objects.filter(assignment__participant__study=study)
    assert sessions.count() == 120 and not sessions.filter(ended_at__isnull=True).exists()
    pairs = Counter(sessions.values_list("assignment__scenario__code", "assignment__system__code"))
    assert set(pairs.values()) == {15}
    queries_per_session = Counter(s.queries.count() for s in sessions.prefetch_related("queries"))
    assert queries_per_session[1] > 0 and max(queries_per_session) > 2  # spread like the paper's Table 2
    assert Query.objects.filter(session__in=sessions, shown_results__isnull=False).exists()
    assert "Login       researcher / " in out and "assessor / " in out and "/p/" in out
    call_command("load_demo", "--participants", "2")
    assert Study.objects.filter(slug="demo-ecir-2008").count() == 1


def test_load_demo_uses_cranfield_when_demo_data_names_it(cranfield_folder, settings, capsys, tmp_path):
    named = tmp_path / "elsewhere"  # another copy than the shipped default, so DEMO_DATA is what is read
    shutil.copytree(cranfield_folder, named)
    settings.DEMO_DATA = str(named)
    call_command("load_demo", "--participants", "4")
    study = Study.objects.get(slug="demo-ecir-2008")
    assert study.collection.documents.count() == 1400
    assert "Cranfield" in capsys.readouterr().out
