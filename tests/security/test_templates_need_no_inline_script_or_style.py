"""What the Content-Security-Policy refuses (sessionlab/csp.py) appears in no template of ours: no inline
<script> (a JSON data block is not a script), no on* handler attribute, no javascript: URL, no <style>
element and no style attribute. The browser tests check the pages themselves; this names the file at once."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))

SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
HANDLER = re.compile(r"<[^>]*\son[a-z]+\s*=", re.IGNORECASE)
STYLE = re.compile(r"<style\b|<[^>]*\sstyle\s*=", re.IGNORECASE)


def _problems(text: str) -> list[str]:
    problems = []
    for match in SCRIPT.finditer(text):
        attributes = match.group(1)
        if "src=" not in attributes and "application/json" not in attributes:
            problems.append("an inline <script>")
    if HANDLER.search(text):
        problems.append("an on* handler attribute")
    if "javascript:" in text.lower():
        problems.append("a javascript: URL")
    if STYLE.search(re.sub(r"{% comment %}.*?{% endcomment %}", "", text, flags=re.DOTALL)):
        problems.append("a <style> element or style attribute")
    return problems


def test_no_template_has_what_the_policy_refuses():
    assert TEMPLATES
    found = {str(path.relative_to(ROOT)): _problems(path.read_text()) for path in TEMPLATES}
    assert {path: problems for path, problems in found.items() if problems} == {}


def test_the_check_finds_each_kind():
    assert _problems("<script>alert(1)</script>") == ["an inline <script>"]
    assert _problems('<script id="x" type="application/json">{}</script><script src="/a.js"></script>') == []
    assert _problems('<img src="x" onerror="alert(1)">') == ["an on* handler attribute"]
    assert _problems('<a href="javascript:go()">') == ["a javascript: URL"]
    assert _problems('<span style="width: 5%">') == ["a <style> element or style attribute"]
    assert _problems("<style>p {}</style>") == ["a <style> element or style attribute"]
