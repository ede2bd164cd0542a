import pytest
from django.forms import modelform_factory

from studies.admin import SystemAdminForm
from studies.models import System

# As the admin's inline builds it.
Form = modelform_factory(System, form=SystemAdminForm, fields=["code", "name", "backend", "config"])


@pytest.mark.parametrize(
    ("backend", "config", "reason"),
    [
        ("builtin", '{"configuration": "bm25_titel_text"}', "configuration must be one of"),
        ("http", '{"url_template": "ftp://engine/{bogus}"}', "unknown placeholder {bogus}"),
        ("http", '{"url_template": "ftp://engine/?q={query}"}', "not an http:// or https:// URL"),
    ],
)
def test_the_admin_refuses_a_system_that_cannot_search(designed_study, backend, config, reason):
    form = Form(data={"code": "C", "name": "C", "backend": backend, "config": config})
    form.instance.study = designed_study
    assert not form.is_valid()
    assert reason in " ".join(form.errors["config"])


def test_the_admin_accepts_a_built_in_system_with_the_default(designed_study):
    form = Form(data={"code": "C", "name": "C", "backend": "builtin", "config": "{}"})
    form.instance.study = designed_study
    form.is_valid()
    assert "config" not in form.errors
