"""With DEBUG off, collectstatic writes hashed copies of the static files and pages name them, so a rolling
deploy never serves a new page with an old script (docs/deploying.md, "Static files"); the ES modules'
imports name the hashed modules too. Development and the test suite keep plain names and need no
collectstatic."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.test import Client

from studies.models import CollectionUpload

ROOT = Path(__file__).resolve().parents[2]
HASHED = {"BACKEND": "sessionlab.staticfiles.HashedStaticFilesStorage"}


def _storage_backend(debug: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(
        DJANGO_SETTINGS_MODULE="sessionlab.settings", PYTHONPATH=str(ROOT), DEBUG=debug, SECRET_KEY="k" * 50
    )
    code = (
        "import django; from django.conf import settings; print(settings.STORAGES['staticfiles']['BACKEND'])"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_production_hashes_and_development_does_not():
    assert _storage_backend("0") == HASHED["BACKEND"]
    assert _storage_backend("1") == "django.contrib.staticfiles.storage.StaticFilesStorage"


@pytest.fixture
def collected(settings, tmp_path):
    """collectstatic with the production storage into a temporary STATIC_ROOT, WhiteNoise reading only it."""
    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {**settings.STORAGES, "staticfiles": HASHED}
    settings.WHITENOISE_USE_FINDERS = settings.WHITENOISE_AUTOREFRESH = False
    call_command("collectstatic", "--noinput", verbosity=0)
    return settings.STATIC_ROOT


@pytest.mark.django_db
def test_a_page_names_its_script_by_hash_and_the_node_serves_it(collected, alice):
    upload = CollectionUpload.objects.create(owner=alice, name="Mine", format="jsonl", files={})
    client = Client()  # a new client: WhiteNoise reads the collected folder when its middleware loads
    client.force_login(alice)
    page = client.get(f"/collections/uploads/{upload.pk}/").content.decode()

    [script] = re.findall(r'<script type="module" src="([^"]+)"', page)
    assert re.fullmatch(r"/static/js/collection-upload\.[0-9a-f]{12}\.js", script), script
    [stylesheet] = re.findall(r'<link rel="stylesheet" href="([^"]+)"', page)
    assert re.fullmatch(r"/static/css/sessionlab\.[0-9a-f]{12}\.css", stylesheet), stylesheet

    served = client.get(script)
    assert served.status_code == 200
    assert "immutable" in served["Cache-Control"]  # WhiteNoise: a hashed name may be cached for ever
    assert b"".join(served.streaming_content) == (collected / script.removeprefix("/static/")).read_bytes()


def test_module_imports_name_the_hashed_modules(collected):
    manifest = json.loads((collected / "staticfiles.json").read_text())["paths"]
    entry = (collected / manifest["js/participant.js"]).read_text()
    imports = re.findall(r'from "(\./participant/[^"]+)"', entry)
    assert imports and all(re.fullmatch(r"\./participant/[\w-]+\.[0-9a-f]{12}\.js", i) for i in imports)
    assert (collected / manifest["js/participant.js"]).with_suffix(".js.gz").exists()  # compressed beside it
