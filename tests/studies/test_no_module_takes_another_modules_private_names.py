"""A leading underscore means "this module's own": no module of the apps or the project imports another's
(ingest took participation's checks that way, scoring took studies' view helpers). Public names are the
interface; a module may change its private ones freely."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_import_names_a_private_name():
    taken = []
    for folder in ("studies", "scoring", "sessionlab"):
        for path in (ROOT / folder).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                    taken += [
                        f"{path.relative_to(ROOT)}:{node.lineno}: {alias.name} from {node.module}"
                        for alias in node.names
                        if alias.name.startswith("_") and not alias.name.startswith("__")
                    ]
    assert taken == []
