"""docs/deploy/compose.yaml is the cluster docs/deploying.md describes ("Topology"), and every SessionLab
variable it sets is a setting sessionlab/settings.py reads: renaming a setting breaks this test, not a lab's
deployment. Parsed with PyYAML; no Docker is needed."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docs" / "deploy" / "compose.yaml"
SETTINGS = ROOT / "sessionlab" / "settings.py"
TOPOLOGY = {"balancer", "web1", "web2", "worker", "beat", "postgres", "redis", "minio", "migrate"}
# Read by boto3 for the uploads' bucket, not by settings.py (whose comment on UPLOAD_STORAGE_URL names them).
BOTO3_NAMES = {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}


def _services() -> dict:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def _sessionlab_services() -> dict:
    return {
        name: service
        for name, service in _services().items()
        if service.get("build", {}).get("dockerfile") == "docs/deploy/Dockerfile"
    }


def _settings_read_from_environment() -> set[str]:
    return set(
        re.findall(r'\benv(?:bool|int|str|url|hosts|networks)\(\s*"([A-Z0-9_]+)"', SETTINGS.read_text())
    )


def test_the_topology_s_services_exist():
    assert TOPOLOGY <= set(_services())


def test_the_app_services_are_the_web_nodes_the_workers_the_beat_and_the_migration():
    assert set(_sessionlab_services()) == {"web1", "web2", "worker", "llm-worker", "beat", "migrate"}


def test_scoring_and_language_model_runs_have_workers_of_their_own():
    services = _sessionlab_services()
    queue = {
        name: services[name]["command"][services[name]["command"].index("-Q") + 1]
        for name in ("worker", "llm-worker")
    }
    assert queue == {"worker": "celery", "llm-worker": "llm"}


def test_the_reader_finds_the_settings_it_should():
    names = _settings_read_from_environment()
    assert {"SECRET_KEY", "DATABASE_URL", "CACHE_URL", "TRUSTED_PROXY_COUNT", "OUTBOUND_ALLOW"} <= names


def test_every_variable_an_app_service_sets_is_a_setting_settings_py_reads():
    settings_text = SETTINGS.read_text()
    assert all(name in settings_text for name in BOTO3_NAMES)
    known = _settings_read_from_environment() | BOTO3_NAMES
    for name, service in _sessionlab_services().items():
        unknown = set(service["environment"]) - known
        assert not unknown, f"{name} sets {sorted(unknown)}, which sessionlab/settings.py does not read"


def test_every_node_shares_the_cluster_s_settings():
    shared = {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CELERY_RESULT_BACKEND", "CACHE_URL"}
    shared |= {"UPLOAD_STORAGE_URL", "ALLOWED_HOSTS"}
    services = _sessionlab_services()
    for name, service in services.items():
        assert shared <= set(service["environment"]), name
    for setting in shared:
        assert len({str(s["environment"][setting]) for s in services.values()}) == 1, setting


def test_web_nodes_trust_the_one_balancer_in_front():
    for name in ("web1", "web2"):
        assert _services()[name]["environment"]["TRUSTED_PROXY_COUNT"] == "1"
    nginx = (COMPOSE.parent / "nginx.conf").read_text()
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in nginx


def test_exactly_one_beat_runs():
    beats = [name for name, s in _services().items() if "beat" in (s.get("command") or [])]
    assert beats == ["beat"]


def test_healthchecks_probe_the_health_endpoints():
    services = _services()
    for name in ("web1", "web2"):
        assert "http://127.0.0.1:8000/health/ready" in " ".join(services[name]["healthcheck"]["test"])
    assert "http://127.0.0.1/health/live" in services["balancer"]["healthcheck"]["test"]
