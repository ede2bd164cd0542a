"""A participant's step kinds are one enumeration (studies.kernel.steps.StepKind), the API's schema lists
them in its order, and no module compares a step's kind with a bare string: a misspelt kind is then a
NameError at import, not a branch that is never taken."""

import ast
from pathlib import Path

from studies.api.serializers.participant_way import STEP_KINDS
from studies.kernel.steps import StepKind

ROOT = Path(__file__).resolve().parents[2]
KINDS = {kind.value for kind in StepKind}


def _bare_kind_compares(source: str) -> list[int]:
    """Lines where `<x>.kind` is compared with a string that is a step kind (==, !=, in, not in)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if not any(isinstance(side, ast.Attribute) and side.attr == "kind" for side in sides):
            continue
        strings = [
            element.value
            for side in sides
            for element in (side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side])
            if isinstance(element, ast.Constant) and isinstance(element.value, str)
        ]
        if any(value in KINDS for value in strings):
            found.append(node.lineno)
    return found


def test_the_api_lists_every_step_kind_in_the_enumeration_s_order():
    assert STEP_KINDS == [
        "consent",
        "declined",
        "withdrawn",
        "questionnaire",
        "checks",
        "pre_task",
        "scenario",
        "search",
        "gold",
        "post_task",
        "done",
        "no_assignments",
        "ended",
        "paused",
    ]


def test_no_module_compares_a_step_s_kind_with_a_bare_string():
    found = {}
    for path in sorted((ROOT / "studies").rglob("*.py")):
        lines = _bare_kind_compares(path.read_text())
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def test_a_bare_compare_is_found():
    source = 'if step.kind == "search" or where.kind in ("pre_task", "scenario"):\n    pass\n'
    assert _bare_kind_compares(source) == [1, 1]  # both compares of the line
