"""A signal only announces (docs/architecture.md, "One direction of imports"): no sender reads what its
receivers return. Every `send` of a studies signal stands alone as a statement: its value is never assigned,
returned, passed on or made a lambda's result (which `transaction.on_commit` would be handed)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _signal_names() -> set[str]:
    tree = ast.parse((ROOT / "studies" / "signals.py").read_text())
    return {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "id", "") == "Signal"
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _sends_whose_answer_is_read(source: str, signals: set[str]) -> list[int]:
    """The lines of `source` where a signal's send is anything but a statement of its own."""
    tree = ast.parse(source)
    standing = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    read = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr not in ("send", "send_robust"):
            continue
        owner = node.func.value
        name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
        if name in signals and id(node) not in standing:
            read.append(node.lineno)
    return sorted(read)


def test_no_sender_reads_what_a_signal_s_receivers_return():
    signals = _signal_names()
    assert {"reference_version_committed", "sessions_finished", "participant_withdrawn"} <= signals
    found = {}
    for package in ("studies", "scoring", "sessionlab"):
        for path in sorted((ROOT / package).rglob("*.py")):
            lines = _sends_whose_answer_is_read(path.read_text(), signals)
            if lines:
                found[str(path.relative_to(ROOT))] = lines
    assert found == {}


def test_a_send_handed_on_as_a_lambda_s_result_is_found():
    # How references.py once announced a version: on_commit was handed the receivers' answers.
    source = (
        "transaction.on_commit(\n"
        "    lambda: reference_version_committed.send(sender=None, study_id=1), robust=True\n"
        ")\n"
        "answers = sessions_finished.send_robust(sender=None)\n"
        "sessions_finished.send(sender=None)\n"
    )
    assert _sends_whose_answer_is_read(source, {"reference_version_committed", "sessions_finished"}) == [2, 4]
