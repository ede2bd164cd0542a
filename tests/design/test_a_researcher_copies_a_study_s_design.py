"""Copy this study: a new draft with the original's design and settings (scale, collection and its judgments,
scenarios, systems, questionnaires, settings, recruitment settings), and none of its participants or data;
from the study page, for the study's researchers only; a refused copy leaves nothing."""

import pytest

from studies.design import lifecycle
from studies.errors import DesignError
from studies.library.copying import study_copy
from studies.models import (
    AuditEntry,
    CollectionJudgment,
    Participant,
    Recruitment,
    ReferenceVersion,
    SearchSession,
    Study,
)
from studies.participation.recruitment.panels import recruitment_of, recruitment_update
from tests.participation.conftest import (  # noqa: F401  (fixtures)
    index_root,
    prebuilt_indexes,
    running_study,
    small_collection,
    start,
)

pytestmark = pytest.mark.django_db

QUESTIONS = [{"name": "age", "label": "Your age", "kind": "integer", "min": 18, "max": 99}]


@pytest.fixture
def worked(running_study, alice):  # noqa: F811
    """Alice's running study with its settings changed from the defaults, a session started, a recruitment
    set up, and the collection's own judgments."""
    study = running_study
    document = study.collection.documents.first()
    CollectionJudgment.objects.create(collection=study.collection, topic_id="1", document=document, grade=2)
    Study.objects.filter(pk=study.pk).update(
        description="Two engines compared.",
        questionnaire=QUESTIONS,
        pre_task_questionnaire=QUESTIONS,
        time_limit_minutes=12,
        record_attention=False,
        exclusion_min_agreement=0.4,
    )
    recruitment_of(study)
    recruitment_update(
        study=study, panel="generic", time_limit_minutes=45, closed_cells=[["S1", "A"]], effort_preset="light"
    )
    start(study.participants.order_by("enrolment_index").first())
    study.refresh_from_db()
    return study


def test_the_copy_is_a_draft_with_the_design_and_settings(worked, alice):
    copy = study_copy(study=worked, by=alice, name="Second run")
    assert (copy.name, copy.slug, copy.owner, copy.status) == ("Second run", "second-run", alice, "draft")
    assert copy.design_locked_at is None and worked.design_locked_at is not None
    for field in (
        "description",
        "consent_text",
        "consent_version",
        "questionnaire",
        "post_task_questionnaire",
        "pre_task_questionnaire",
        "time_limit_minutes",
        "record_exposure",
        "record_attention",
        "exclusion_min_agreement",
        "collection_id",
    ):
        assert getattr(copy, field) == getattr(worked, field), field
    assert list(copy.grade_levels.values_list("value", "label")) == list(
        worked.grade_levels.values_list("value", "label")
    )

    def rows(study, related, *fields):
        return list(getattr(study, related).order_by("id").values_list(*fields))

    assert rows(copy, "scenarios", "code", "title", "text", "topic_id") == rows(
        worked, "scenarios", "code", "title", "text", "topic_id"
    )
    assert rows(copy, "systems", "code", "name", "backend", "config") == rows(
        worked, "systems", "code", "name", "backend", "config"
    )
    assert lifecycle.study_missing_to_open(study=copy) == []  # ready to open as it was


def test_the_copy_takes_no_participants_or_data(worked, alice):
    versions_before = worked.reference_versions.count()
    copy = study_copy(study=worked, by=alice, name="Second run")
    assert not Participant.objects.filter(study=copy).exists()
    assert not SearchSession.objects.filter(assignment__participant__study=copy).exists()
    assert list(copy.researchers.all()) == [alice]
    # Only the collection's own judgments, as a new study built on it gets them.
    [version] = ReferenceVersion.objects.filter(study=copy)
    assert list(version.judgments.values_list("topic_id", "grade")) == [("1", 2)]
    assert worked.participants.count() == 2 and worked.reference_versions.count() == versions_before
    assert AuditEntry.objects.get(study=copy, action="study_copied").detail == {
        "from": worked.slug,
        "by": "alice",
    }


def test_the_copy_takes_the_recruitment_settings_with_fresh_codes_and_link(worked, alice):
    copy = study_copy(study=worked, by=alice, name="Second run")
    original, copied = Recruitment.objects.get(study=worked), Recruitment.objects.get(study=copy)
    for name in (
        "panel",
        "time_limit_minutes",
        "closed_cells",
        "effort_min_queries",
        "effort_min_active_seconds",
    ):
        assert getattr(copied, name) == getattr(original, name), name
    for name in (
        "public_token",
        "status_secret",
        "code_completed",
        "code_screened_out",
        "code_failed_checks",
    ):
        assert getattr(copied, name) != getattr(original, name), name


def test_a_copy_without_a_name_is_refused_and_leaves_nothing(worked, alice):
    before = Study.objects.count()
    with pytest.raises(DesignError, match="name: the copy needs a name"):
        study_copy(study=worked, by=alice, name="  ")
    assert Study.objects.count() == before


def test_the_study_page_copies_through_its_form(client, alice, worked):
    client.force_login(alice)
    assert f'href="/studies/{worked.slug}/copy/"' in client.get(f"/studies/{worked.slug}/").content.decode()
    form = client.get(f"/studies/{worked.slug}/copy/").content.decode()
    assert f'value="Copy of {worked.name}"' in form.replace("&#x27;", "'")
    response = client.post(f"/studies/{worked.slug}/copy/", {"name": "Replication"})
    copy = Study.objects.get(name="Replication")
    assert response.status_code == 302 and response.url == f"/studies/{copy.slug}/"
    page = client.get(response.url).content.decode()
    assert "is a copy of" in page and '<span id="study-status">Draft</span>' in page
    refused = client.post(f"/studies/{worked.slug}/copy/", {"name": ""})
    assert refused.status_code == 200 and "This field is required" in refused.content.decode()
    assert Study.objects.filter(name="").count() == 0


def test_a_researcher_of_another_study_cannot_copy_it(client, charlie, worked):
    client.force_login(charlie)
    before = Study.objects.count()
    assert client.get(f"/studies/{worked.slug}/copy/").status_code == 404
    assert client.post(f"/studies/{worked.slug}/copy/", {"name": "Mine now"}).status_code == 404
    assert Study.objects.count() == before


def test_the_copy_keeps_the_assessors_guidelines(worked, alice):
    from studies.assessment import assessor_work

    scenario = worked.scenarios.order_by("id").last()
    assessor_work.guidelines_set(study=worked, scenario=None, text="Study rule.\n", by=alice)
    assessor_work.guidelines_set(study=worked, scenario=scenario, text="Only this topic.", by=alice)
    copy = study_copy(study=worked, by=alice, name="Copy with guidelines")
    assert sorted(copy.assessment_guidelines.values_list("scenario__code", "text"), key=str) == sorted(
        [(None, "Study rule.\n"), (scenario.code, "Only this topic.")], key=str
    )
    assert copy.assessment_guidelines.get(scenario__isnull=False).scenario.study_id == copy.pk
