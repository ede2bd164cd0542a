"""Who reaches what in the admin (staff with model permissions only), and that every URL pattern of the
project has its row here, in test_permission_matrix_pages.py or in test_permission_matrix_api.py
(tests/security/permission_matrix.py says how a row reads)."""

from __future__ import annotations

import pytest
from django.contrib import admin

from .conftest import ROLES
from .permission_matrix import (
    ADMIN_LOGIN,
    LOGIN,
    OK,
    PUBLIC,
    Row,
    check_each_role,
    fixed,
    routes,
)
from .test_permission_matrix_api import API_ROWS
from .test_permission_matrix_pages import PAGE_ROWS

# --- the admin: staff with model permissions only (researchers are staff without any) --------------------

ADMIN_STAFF = {**dict.fromkeys(ROLES, ADMIN_LOGIN), "other_researcher": OK, "researcher": OK}
ADMIN_MODEL = {**ADMIN_STAFF, "other_researcher": 403, "researcher": 403}
ADMIN_HISTORY = {**ADMIN_MODEL, "other_researcher": (403, OK), "researcher": (403, OK)}
ADMIN_ROUTES = {
    ("admin:index", "GET"): Row("GET", fixed("/admin/"), ADMIN_STAFF),
    ("admin:login", "GET"): Row("GET", fixed("/admin/login/"), PUBLIC),
    ("admin:logout", "POST"): Row(
        "POST", fixed("/admin/logout/"), {**PUBLIC, "other_researcher": LOGIN, "researcher": LOGIN}
    ),
    ("admin:password_change", "GET"): Row("GET", fixed("/admin/password_change/"), ADMIN_STAFF),
    ("admin:password_change_done", "GET"): Row("GET", fixed("/admin/password_change/done/"), ADMIN_STAFF),
    ("admin:autocomplete", "GET"): Row("GET", fixed("/admin/autocomplete/"), ADMIN_MODEL),
    ("admin:jsi18n", "GET"): Row("GET", fixed("/admin/jsi18n/"), ADMIN_STAFF),
    ("admin:view_on_site", "GET"): Row(
        "GET",
        lambda w, r: f"/admin/r/1/{w.study.pk}/",
        {**ADMIN_STAFF, "other_researcher": 404, "researcher": 404},
    ),
    ("admin:app_list", "GET"): Row(
        "GET", fixed("/admin/studies/"), {**ADMIN_STAFF, "other_researcher": 404, "researcher": 404}
    ),
    ("admin:auth_user_password_change", "GET"): Row(
        "GET", lambda w, r: f"/admin/auth/user/{w.users['alice'].pk}/password/", ADMIN_MODEL
    ),
    # Anything else under /admin/ (the catch-all).
    ("admin/(?P<url>.*)$", "GET"): Row(
        "GET", fixed("/admin/no-such-page/"), {**ADMIN_STAFF, "other_researcher": 404, "researcher": 404}
    ),
}


def _admin_model_rows():
    rows = {}
    for model in admin.site._registry:
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        name = f"admin:{model._meta.app_label}_{model._meta.model_name}"

        def obj(w, r, model=model, base=base):
            row = model._default_manager.order_by("pk").first()
            return f"{base}{row.pk if row else 1}/"

        rows[(name + "_changelist", "GET")] = Row("GET", fixed(base), ADMIN_MODEL)
        rows[(name + "_add", "GET")] = Row("GET", fixed(base + "add/"), ADMIN_MODEL)
        rows[(name + "_change", "GET")] = Row("GET", lambda w, r, o=obj: o(w, r) + "change/", ADMIN_MODEL)
        rows[(name + "_delete", "GET")] = Row("GET", lambda w, r, o=obj: o(w, r) + "delete/", ADMIN_MODEL)
        # Django's history page redirects staff away from an id that does not exist before it checks the
        # model permission (an admin oracle, docs/security.md): 403 or that redirect.
        rows[(name + "_history", "GET")] = Row("GET", lambda w, r, o=obj: o(w, r) + "history/", ADMIN_HISTORY)
        # The unnamed admin/<app>/<model>/<id>/ redirect to the change page.
        rows[(base.removeprefix("/") + "<path:object_id>/", "GET")] = Row("GET", obj, ADMIN_STAFF)
    return rows


ADMIN_ROWS = {**ADMIN_ROUTES, **_admin_model_rows()}
ALL_ROWS = {**PAGE_ROWS, **API_ROWS, **ADMIN_ROWS}


# --- the tests --------------------------------------------------------------------------------------------


def test_every_route_is_in_the_matrix():
    covered = {name for name, _method in ALL_ROWS}
    missing = sorted(f"{name} ({pattern})" for name, pattern in routes() if name not in covered)
    assert not missing, "routes without a row in tests/security/test_permission_matrix*.py:\n" + "\n".join(
        missing
    )


def test_the_matrix_names_only_routes_that_exist():
    names = {name for name, _pattern in routes()}
    assert not sorted({name for name, _m in ALL_ROWS} - names)


@pytest.mark.parametrize("key", sorted(ADMIN_ROWS, key=str), ids=lambda k: f"{k[1]} {k[0]}")
def test_each_role_gets_exactly_its_share(key, world):
    check_each_role(key, ADMIN_ROWS[key], world)
