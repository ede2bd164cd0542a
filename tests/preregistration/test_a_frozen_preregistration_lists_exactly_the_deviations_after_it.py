"""A pre-registration frozen from the study lists exactly the changes made after the freeze (the primary
measure's parameters, the exclusion rule, the reference version, the sample size) and none made before it;
the page, the scoring pages and both downloads say the same; nothing changes a frozen record."""

import json

import pytest
from django.urls import reverse

from scoring.models import Preregistration
from scoring.preregistration import services
from scoring.services import scoring_run_create
from studies.assessment.references import reference_version_import_qrels
from studies.design import services as study_services

pytestmark = pytest.mark.django_db

ANSWERS = {
    "hypotheses": "B's sessions gain more than A's.",
    "analysis": "Paired t-test of participant means.",
    "other": "",
    "primary_summary": "normalized_final",
    "planned_participants": 8,
    "power_plan": None,
}

FORM = {name: "" if value is None else value for name, value in ANSWERS.items()}


def _changes_after(study, alice, capture):
    study.exclusion_min_agreement = 0.3
    study.save(update_fields=["exclusion_min_agreement"])
    with capture(execute=True):
        scoring_run_create(study=study, created_by=alice, b=3.0, make_default=True)
    qrels = [f"{s.topic_id} 0 d1 2\n" for s in study.scenarios.all()]
    with capture(execute=True):
        reference_version_import_qrels(study=study, lines=qrels, path="later.qrels", created_by=alice)
    study_services.participants_enrol(study=study, count=1)


def test_only_the_changes_after_the_freeze_are_deviations(scored, alice, django_capture_on_commit_callbacks):
    built, _run = scored
    study = built.study
    study.exclusion_min_agreement = 0.2  # before the freeze: part of the plan
    study.save(update_fields=["exclusion_min_agreement"])
    prereg = services.preregistration_freeze(study=study, by=alice, answers=ANSWERS)
    assert prereg.frozen_at is not None and len(prereg.digest) == 64
    assert services.preregistration_digest_holds(prereg)
    assert services.preregistration_deviations(study) == []
    version_before = prereg.frozen["facts"]["reference_version"]

    _changes_after(study, alice, django_capture_on_commit_callbacks)

    found = {(d.part, d.planned, d.now) for d in services.preregistration_deviations(study)}
    assert found == {
        ("primary measure, parameters", *_b_words(prereg.frozen, study)),
        ("exclusion rules, min agreement", "0.2", "0.3"),
        ("reference version", str(version_before), str(version_before + 1)),
        ("sample size", "8 participants", "9 enrolled"),
    }


def _b_words(frozen, study):
    from scoring.preregistration.facts import _words, study_facts

    now = study_facts(study, primary_summary="normalized_final")["primary_measure"]["parameters"]
    planned = frozen["facts"]["primary_measure"]["parameters"]
    assert (planned["b"], now["b"]) == (2.0, 3.0) and {k for k in planned if planned[k] != now[k]} == {"b"}
    return _words(planned), _words(now)


def test_the_pages_and_downloads_list_the_deviations(
    scored, alice, client, django_capture_on_commit_callbacks
):
    built, _run = scored
    study = built.study
    client.force_login(alice)
    page = reverse("scoring:preregistration", args=[study.slug])
    response = client.post(page, {**FORM, "action": "freeze"})
    assert response.status_code == 302
    _changes_after(study, alice, django_capture_on_commit_callbacks)
    html = client.get(page).content.decode()
    assert "Frozen on" in html and "exclusion rules, min agreement: planned 0.2" not in html
    assert "exclusion rules, min agreement: planned none, now 0.3" in html
    runs = client.get(reverse("scoring:runs", args=[study.slug])).content.decode()
    assert "4 deviations since" in runs and "sample size: planned 8 participants, now 9 enrolled" in runs
    markdown = client.get(reverse("scoring:preregistration_markdown", args=[study.slug])).content.decode()
    assert "## AsPredicted" in markdown and "**7) Sample Size." in markdown
    assert "- sample size: planned 8 participants, now 9 enrolled" in markdown
    assert "B's sessions gain more than A's." in markdown
    data = json.loads(client.get(reverse("scoring:preregistration_json", args=[study.slug])).content)
    assert set(data) == {"form", "specs", "sessionlab"}
    assert set(data["specs"]) == set(data["form"]["items"])
    assert data["specs"]["sample_size"].startswith("8 participants.")
    assert len(data["sessionlab"]["deviations"]) == 4
    assert data["sessionlab"]["sha256"] == Preregistration.objects.get(study=study).digest


def test_a_frozen_record_changes_no_more(scored, alice, bob, client):
    built, _run = scored
    study = built.study
    with pytest.raises(services.PreregistrationError, match="^preregistration: only the study's owner"):
        services.preregistration_freeze(study=study, by=bob, answers=ANSWERS)
    frozen = services.preregistration_freeze(study=study, by=alice, answers=ANSWERS)
    with pytest.raises(services.PreregistrationError, match="^preregistration: frozen already"):
        services.preregistration_freeze(study=study, by=alice, answers=ANSWERS)
    with pytest.raises(services.PreregistrationError, match="^preregistration: it is frozen"):
        services.preregistration_answers_save(study=study, answers={**ANSWERS, "hypotheses": "another"})
    client.force_login(alice)
    response = client.post(reverse("scoring:preregistration", args=[study.slug]), {**FORM, "action": "save"})
    assert response.status_code == 400
    again = Preregistration.objects.get(study=study)
    assert (again.digest, again.frozen, again.answers) == (frozen.digest, frozen.frozen, frozen.answers)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("planned_participants", "many", "planned_participants: a whole number"),
        ("planned_participants", "0", "planned_participants: between 1 and 100000"),
        ("hypotheses", "x" * 5001, "hypotheses: at most 5000 characters"),
        ("analysis", "a\x00b", "analysis: a NUL character"),
        ("primary_summary", "median", "primary_summary: one of"),
        ("power_plan", "99999", "power_plan: no power plan 99999"),
    ],
)
def test_a_bad_answer_is_refused_by_field_and_changes_nothing(scored, alice, client, field, value, message):
    built, _run = scored
    study = built.study
    services.preregistration_answers_save(study=study, answers=ANSWERS)
    client.force_login(alice)
    response = client.post(
        reverse("scoring:preregistration", args=[study.slug]), {**FORM, field: value, "action": "save"}
    )
    assert response.status_code == 400 and message in response.content.decode()
    stored = Preregistration.objects.get(study=study)
    assert stored.frozen_at is None and stored.answers["hypotheses"] == ANSWERS["hypotheses"]


def test_the_tables_zip_carries_the_preregistration_once_there_is_one(
    scored, alice, django_capture_on_commit_callbacks
):
    import io
    import zipfile

    from studies.interchange.downloads import study_csv_zip

    built, _run = scored
    study = built.study

    def members():
        with zipfile.ZipFile(io.BytesIO(study_csv_zip(study=study))) as tables:
            return {name: tables.read(name) for name in tables.namelist()}

    assert "preregistration.json" not in members()
    services.preregistration_freeze(study=study, by=alice, answers=ANSWERS)
    _changes_after(study, alice, django_capture_on_commit_callbacks)
    shipped = json.loads(members()["preregistration.json"])
    assert shipped["sessionlab"]["sha256"] == Preregistration.objects.get(study=study).digest
    assert {d["part"] for d in shipped["sessionlab"]["deviations"]} == {
        "primary measure, parameters",
        "exclusion rules, min agreement",
        "reference version",
        "sample size",
    }
