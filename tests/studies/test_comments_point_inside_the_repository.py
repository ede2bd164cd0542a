"""A comment or docstring of the app's code says its why itself or points to a doc or test in the repository:
never "issue 30" (a tracker a reader of the code may not have) nor a file outside it ("../shared/...")."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
APP = ("studies", "scoring", "sessionlab", "static", "templates")
SUFFIXES = {".py", ".js", ".html", ".css"}
VENDORED = ROOT / "static" / "vendor"

TRACKER = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)
OUTSIDE = re.compile(r"(?<!\.)\.\./shared(?![-\w])|\bSPEC-metrics\.md\b|/work/")


def _app_files():
    for folder in APP:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and VENDORED not in path.parents:
                yield path


def _hits(pattern: re.Pattern) -> list[str]:
    hits = []
    for path in _app_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    return hits


def test_no_comment_names_an_issue_of_the_tracker():
    assert _hits(TRACKER) == []


def test_no_comment_points_at_a_file_outside_the_repository():
    assert _hits(OUTSIDE) == []


def test_the_patterns_find_what_they_look_for():
    assert TRACKER.search("the form's studies had none (issue 37)")
    assert TRACKER.search("# Issue 30's settings") and TRACKER.search("see issues 28")
    assert not TRACKER.search("an issue with the 2 grades")
    assert OUTSIDE.search("See ../shared/SPEC-metrics.md") and OUTSIDE.search(
        "defaults as in SPEC-metrics.md"
    )
    assert not OUTSIDE.search("docs/scoring-eval.md, DELETE .../shared-with/<username>/")
    assert len(list(_app_files())) > 300  # the folders were read
