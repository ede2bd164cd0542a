"""A view function and the service (or selector) it calls have different names (the views end in `_page`),
so a grep for `collection_delete` finds the one writer, not the page that asks it. URL names stay."""

import ast
from pathlib import Path

from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]


def _top_level_functions():
    for folder in ("studies", "scoring"):
        for path in (ROOT / folder).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                    yield path, node


def _views_and_services():
    views, services = set(), set()
    for path, node in _top_level_functions():
        is_view = bool(node.args.args) and node.args.args[0].arg == "request"
        if is_view:
            views.add(node.name)
        elif "view" not in path.name and path.parent.name != "views":
            services.add(node.name)
    return views, services


def test_no_view_shares_its_name_with_a_service():
    views, services = _views_and_services()
    assert sorted(views & services) == []


def test_the_renamed_views_keep_their_url_names():
    assert reverse("library:collection_delete", args=[1]).endswith("/1/delete/")
    assert reverse("assessment:adjudicate", args=["s"]).endswith("/s/adjudicate/")
    assert reverse("copying:study_copy", args=["s"]).endswith("/copy/")
