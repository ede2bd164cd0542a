"""`make demo`'s loading step works on an empty database, and again on a loaded one."""

import pytest
from django.core.management import call_command

from studies.models import Study

pytestmark = pytest.mark.django_db


def test_load_demo_builds_the_papers_design_on_an_empty_database(capsys):
    assert Study.objects.count() == 0
    call_command("load_demo")
    out = capsys.readouterr().out
    study = Study.objects.get(slug="demo-ecir-2008")
    assert study.participants.count() == 30
    assert study.scenarios.count() == 4 and study.systems.count() == 2
    assert "Login  researcher / " in out
    call_command("load_demo")
    assert Study.objects.filter(slug="demo-ecir-2008").count() == 1
