"""Rooms stay small enough to read cold: no file over 600 lines outside migrations and vendored
files, no function over 80 lines outside the tests. A room that grows past that is cut by concept into a
package that re-exports its names (docs/architecture.md)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("studies", "scoring", "sessionlab", "bench", "static", "templates", "tests")
SUFFIXES = {".py", ".js", ".html", ".css"}
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80


def _files():
    for folder in FOLDERS:
        for path in (ROOT / folder).rglob("*"):
            parts = set(path.relative_to(ROOT).parts)
            if path.suffix in SUFFIXES and path.is_file() and not parts & {"migrations", "vendor"}:
                yield path


def test_no_file_is_over_600_lines():
    big = []
    for path in _files():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_FILE_LINES:
            big.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert big == []


def test_no_function_outside_the_tests_is_over_80_lines():
    long = []
    for path in _files():
        if path.suffix != ".py" or path.relative_to(ROOT).parts[0] == "tests":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {length} lines")
    assert long == []


def test_the_walk_sees_the_big_rooms_it_guards():
    # A walk that found nothing would pass the two checks above without looking at anything.
    seen = {path.relative_to(ROOT).as_posix() for path in _files()}
    assert {
        "studies/participation/events/ingest.py",
        "static/js/participant/outbox.js",
        "scoring/lib/metrics.py",
    } <= seen
