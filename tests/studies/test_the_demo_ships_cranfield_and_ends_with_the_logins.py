"""`make demo` on real documents by default: the Cranfield collection ships in studies/demo_data,
and load_demo uses it when DEMO_DATA is unset; its output ends with the logins and links, with no eager Celery
"Task ... succeeded" chatter before them; `make demo` installs only requirements.txt and takes PORT."""

import logging
import subprocess
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command

from studies import demo
from studies.models import Study

pytestmark = pytest.mark.django_db
ROOT = Path(django_settings.BASE_DIR)


def test_the_cranfield_collection_ships_with_its_source_and_terms():
    folder = ROOT / "studies" / "demo_data" / "cranfield"
    assert demo.SHIPPED_CRANFIELD == folder
    for name in ("cran.all.1400", "cran.qry", "cranqrel", "cranqrel.readme"):
        assert (folder / name).is_file(), name
    source = (folder / "SOURCE.md").read_text()
    assert "Cleverdon" in source and "Glasgow" in source and "ir_datasets" in source
    assert "redistributed" in source
    readme = (ROOT / "README.md").read_text()
    assert "studies/demo_data/cranfield" in readme and "SOURCE.md" in readme


def test_load_demo_without_demo_data_uses_the_shipped_cranfield_and_ends_with_the_logins(
    settings, tmp_path, capsys, caplog
):
    settings.INDEX_ROOT = tmp_path / "indexes"
    settings.DEMO_DATA = ""
    caplog.set_level(logging.INFO)
    call_command("load_demo", "--participants", "2", "--port", "8765")
    out = capsys.readouterr().out
    study = Study.objects.get(slug="demo-ecir-2008")
    documents = study.collection.documents
    assert documents.count() == 1400
    assert documents.get(external_id="1").title.startswith(
        "experimental investigation of the aerodynamics of a"
    )
    assert "studies/demo_data/cranfield" in out
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[-7].strip().startswith("Study       http://127.0.0.1:8765/studies/demo-ecir-2008/")
    assert lines[-5].strip().startswith("Login       researcher / ")
    assert lines[-3].strip() == "Take part as a participant (private links):"
    assert all(line.strip().startswith("http://127.0.0.1:8765/p/") for line in lines[-2:])
    # Eager Celery's per-task INFO lines are off: the logins are not buried under them.
    assert not [r for r in caplog.records if "succeeded" in r.getMessage()]


def test_make_demo_installs_only_the_app_and_takes_the_port():
    plan = subprocess.run(
        ["make", "-n", "-B", "demo", "PORT=8765"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "-r requirements.txt" in plan and "requirements-dev" not in plan
    assert "load_demo --port 8765 --serve" in plan
