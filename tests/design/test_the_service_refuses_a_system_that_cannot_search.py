"""A system's configuration is checked by the design services themselves (services.system_check_config), so
every caller (the API, the pages, the admin, the archive import, the demo loader) meets the one rule, and a
system that cannot search is refused when it is saved, not when a participant first searches."""

import pytest

from studies.design import services, setup_services
from studies.errors import DesignError, SystemConfigError
from studies.models import System

from ..interchange.api_helpers import client_for

pytestmark = pytest.mark.django_db

BAD = {
    "an HTTP system with no config": ("http", {}, "config", "has no {query} placeholder"),
    "a misspelt configuration name": (
        "builtin",
        {"configuration": "bm25_titel_text"},
        "config",
        "bm25_titel_text",
    ),
    "an ftp template": ("http", {"url_template": "ftp://engine/{bogus}"}, "config", "bogus"),
    "an ftp template with a query": ("http", {"url_template": "ftp://engine/?q={query}"}, "config", "http"),
    "a setting a built-in system has not": (
        "builtin",
        {"configuraton": "bm25_text"},
        "config",
        "configuraton",
    ),
    "an external system with settings": ("external", {"url_template": "x"}, "config", "no settings"),
    "an unknown kind": ("gopher", {}, "backend", "gopher"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_service_refuses_a_bad_config_naming_the_field(study, case):
    backend, config, field, words = BAD[case]
    with pytest.raises(SystemConfigError) as refusal:
        services.system_add(study=study, code="A", name="A", backend=backend, config=config)
    assert isinstance(refusal.value, DesignError)
    assert refusal.value.field == field
    assert f"system A: {field}: " in str(refusal.value) and words in str(refusal.value), str(refusal.value)
    assert not System.objects.exists()


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_change_to_a_bad_config_is_refused_and_the_row_kept(study, case):
    backend, config, field, words = BAD[case]
    system = services.system_add(study=study, code="A", name="A", config={"configuration": "bm25_text"})
    with pytest.raises(SystemConfigError, match=words):
        services.design_row_update(study=study, row=system, backend=backend, config=config)
    system = System.objects.get()
    assert (system.backend, system.config) == ("builtin", {"configuration": "bm25_text"})


def test_the_set_up_pages_service_says_the_same(study):
    with pytest.raises(SystemConfigError, match="system A: config: .*bm25_titel_text"):
        setup_services.system_save(
            study=study, code="A", name="A", backend="builtin", config={"configuration": "bm25_titel_text"}
        )
    assert not System.objects.exists()


@pytest.mark.parametrize(
    ("backend", "config"),
    [
        ("builtin", None),  # the default configuration, as the factories and the demo loader add it
        ("builtin", {}),
        ("builtin", {"configuration": "bm25_title_text"}),
        ("http", {"url_template": "https://engine.example/search?q={query}", "timeout": 3}),
        ("external", {}),
    ],
)
def test_a_config_that_can_search_is_stored(study, backend, config):
    system = services.system_add(study=study, code="A", name="A", backend=backend, config=config)
    assert System.objects.get().pk == system.pk and system.config == (config or {})


@pytest.mark.parametrize("case", sorted(c for c in BAD if BAD[c][0] != "gopher"))
def test_the_api_refuses_a_bad_config_with_a_400_naming_the_field(alice, study, case):
    backend, config, field, words = BAD[case]
    response = client_for(alice).post(
        f"/api/studies/{study.pk}/systems/",
        {"code": "A", "name": "A", "backend": backend, "config": config},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert any(words in message for message in response.json()[field]), response.json()
    assert not System.objects.exists()


def test_the_api_answers_the_service_s_refusal_as_a_400(alice, study, monkeypatch):
    # Should a serializer ever let a bad config by, the service still refuses it and the API says which field.
    from studies.api.serializers import design as serializers

    monkeypatch.setattr(serializers, "system_config_error", lambda backend, config: None)
    response = client_for(alice).post(
        f"/api/studies/{study.pk}/systems/",
        {"code": "A", "name": "A", "backend": "http", "config": {"url_template": "ftp://engine/{bogus}"}},
        format="json",
    )
    assert response.status_code == 400, response.content
    assert "bogus" in response.json()["config"][0]
    assert not System.objects.exists()
