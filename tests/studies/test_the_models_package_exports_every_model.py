"""studies.models is a package whose __init__ names every model explicitly (no star import), so
`from studies.models import X` keeps working for each one, wherever its module lives."""

import ast
from pathlib import Path

from django.apps import apps

import studies.models

STUDIES = Path(studies.models.__file__).resolve().parents[1]


def test_every_model_of_the_app_is_exported_by_name():
    for model in apps.get_app_config("studies").get_models():
        assert model.__name__ in studies.models.__all__, model
        assert getattr(studies.models, model.__name__) is model


def test_no_module_of_studies_star_imports():
    for path in STUDIES.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                assert all(alias.name != "*" for alias in node.names), f"{path}: from {node.module} import *"
