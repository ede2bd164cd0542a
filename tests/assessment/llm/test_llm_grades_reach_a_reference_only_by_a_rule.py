"""End to end, across the parts: a language model grades the pool through the fake server (the real
Celery task, eager), its grades change nothing the people published, enter a new version only by the rule
chosen at publication (with the model, endpoint host and prompt hash in the version's provenance, never the
key), and the conclusion-change page compares the people-only version with the one holding machine grades."""

from studies.assessment import adjudication, references
from studies.assessment.llm.prompts import prompt_hash
from studies.models import ReferenceVersion

from .conftest import API_KEY


def _grades(version):
    return dict(version.judgments.values_list("document__external_id", "grade"))


def test_a_models_grades_enter_only_by_the_rule_chosen(
    client, pooled_study, llm_assessor, model_server, run_llm, alice
):
    # The people: d1 agreed (2, 2); d2 (1, 3) and d3 (0, 1) undecided under the majority preset.
    adjudication.adjudicate(study=pooled_study, preset="majority", decided_by=alice)
    people = references.reference_version_publish(study=pooled_study, created_by=alice, allow_pending=True)
    assert _grades(people) == {"d1": 2} and people.facts == {}

    model_server.grade_for = lambda prompt: {"Title 1": 0, "Title 2": 3, "Title 3": 2}[
        next(t for t in ("Title 1", "Title 2", "Title 3") if t in prompt)
    ]
    run = run_llm(llm_assessor)
    assert (run.status, run.done) == ("done", 3)
    assert ReferenceVersion.objects.filter(study=pooled_study).count() == 1  # a run publishes nothing

    # Without a rule, a new version holds the people's grades only.
    plain = references.reference_version_publish(
        study=pooled_study, created_by=alice, allow_pending=True, mode="replace"
    )
    assert _grades(plain) == {"d1": 2} and not plain.facts.get("machine_rules")

    # "Break ties": d2 takes 3 (a person gave it); d3 takes 1 (the people's grade nearest the model's 2);
    # d1, decided, keeps 2 though the model said 0.
    membership = llm_assessor.membership
    ruled = references.reference_version_publish(
        study=pooled_study,
        created_by=alice,
        allow_pending=True,
        mode="replace",
        machine=membership,
        rules=["break_ties"],
    )
    assert _grades(ruled) == {"d1": 2, "d2": 3, "d3": 1}
    facts = ruled.facts
    assert facts["machine_rules"] == ["break_ties"] and facts["ties_broken"] == 2
    assert facts["machine_assessor"]["model"] == "llama3.1:8b"
    assert facts["machine_assessor"]["endpoint_host"] == "127.0.0.1"
    assert facts["machine_assessor"]["prompt_hash"] == prompt_hash(
        llm_assessor.prompt_template, "llama3.1:8b"
    )
    assert API_KEY not in str(facts)
    by_machine = ruled.judgments.filter(judged_by=membership.user)
    assert sorted(by_machine.values_list("document__external_id", "source")) == [
        ("d2", f"machine tie-break v{ruled.number}"),
        ("d3", f"machine tie-break v{ruled.number}"),
    ]
    assert _grades(people) == {"d1": 2}  # the earlier versions are untouched

    # The researcher compares the two references; the versions and the rule are named on the page.
    client.force_login(alice)
    page = client.get(f"/scoring/{pooled_study.slug}/reference-change/?from={plain.number}&to={ruled.number}")
    assert page.status_code == 200
    html = page.content.decode()
    assert f"v{plain.number}" in html and f"v{ruled.number}" in html
    hash_shown = facts["machine_assessor"]["prompt_hash"][:12]
    shown = f"model llama3.1:8b, prompt {hash_shown}, never audited for robustness: 2 ties broken"
    assert shown in html and API_KEY not in html
    # This pool has no scored sessions: the page says what it needs rather than failing.
    assert 'id="reference-change-missing"' in html and "no default scoring run" in html
