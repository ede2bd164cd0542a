"""The design services check a system's kind and config once more when they store it (SystemConfigError,
naming "backend" or "config"). When they refuse what the page's form let through, the set-up pages show the
reason inside that field's block of the form (its error
list, the input marked invalid), not above the form."""

import re

import pytest

from studies.design import services
from studies.errors import SystemConfigError


def add(client, study, **fields):
    data = {
        "system-code": "A",
        "system-name": "System A",
        "system-backend": "builtin",
        "system-configuration": "bm25_text",
        "system-url_template": "",
        "system-timeout": "5",
    }
    data.update({f"system-{k}": v for k, v in fields.items()})
    return client.post(f"/studies/{study.slug}/setup/systems/", data)


def field_block(page: str, field: str) -> str:
    """The field's block as form.as_p renders it: its error list, then the paragraph with its input."""
    match = re.search(
        rf'<ul class="errorlist" id="id_system-{field}_error">(.*?)</ul>\s*<p[^>]*>(.*?)</p>', page, re.S
    )
    assert match, f"no error block for {field}"
    return match.group(0)


def service_refuses(monkeypatch):
    """The services' config rule refusing what the form's (same) rule accepted: a rule changed in between."""

    def refusing(backend, config):
        return f"these {backend} settings are refused by the service"

    monkeypatch.setattr(services, "system_config_problem", refusing)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({}, "configuration"),
        ({"backend": "http", "url_template": "https://engine/?q={query}"}, "url_template"),
    ],
)
def test_a_config_refusal_is_shown_at_the_config_s_field(alice_client, study, monkeypatch, fields, field):
    service_refuses(monkeypatch)
    response = add(alice_client, study, **fields)
    assert response.status_code == 400
    form = response.context["form"]
    assert not form.non_field_errors() and list(form.errors) == [field]
    page = response.content.decode()
    block = field_block(page, field)
    assert "system A: config:" in block and "refused by the service" in block
    assert 'aria-invalid="true"' in block
    assert 'class="message error"' not in page  # nothing above the form
    assert not study.systems.exists()


def test_a_kind_refusal_is_shown_at_the_kind(alice_client, study, monkeypatch):
    def refusing(*, code, backend, config):
        raise SystemConfigError(f"system {code}: backend: {backend!r} is not one we run", field="backend")

    monkeypatch.setattr(services, "system_check_config", refusing)
    response = add(alice_client, study)
    assert response.status_code == 400
    assert list(response.context["form"].errors) == ["backend"]
    assert "is not one we run" in field_block(response.content.decode(), "backend")


def test_the_edit_page_shows_it_at_the_field_too(alice_client, study, monkeypatch):
    system = services.system_add(
        study=study, code="A", name="System A", config={"configuration": "bm25_text"}
    )
    service_refuses(monkeypatch)
    response = alice_client.post(
        f"/studies/{study.slug}/setup/systems/{system.pk}/",
        {
            "system-code": "A",
            "system-name": "System A",
            "system-backend": "http",
            "system-configuration": "bm25_text",
            "system-url_template": "https://engine/?q={query}",
            "system-timeout": "5",
        },
    )
    assert response.status_code == 400
    assert "refused by the service" in field_block(response.content.decode(), "url_template")


def test_other_refusals_stay_above_the_form(alice_client, study):
    add(alice_client, study)
    response = add(alice_client, study)  # the same code again
    assert response.status_code == 400
    assert "already has a system with code 'A'" in " ".join(response.context["form"].non_field_errors())
