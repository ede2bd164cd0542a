"""The agreement exclusion rule ("Checks") is re-applied on its own when its inputs change: a new
reference version committed marks those who now fall below the minimum and unmarks those who rise above it, a
finished session re-applies it for its study, each change is audited with what triggered it, the dashboards
never serve a chart cached under the old marks, and with the rule off nothing runs."""

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from studies.assessment import exclusion
from studies.assessment.references import reference_version_create
from studies.models import AuditEntry, Judgment, Participant, ReferenceJudgment, SearchSession
from studies.participation.events.rules import sessions_changed
from tests.dashboards.conftest import (  # noqa: F401  (fixtures)
    _fresh_chart_cache,
    collection_docs,
    constructed,
    scored,
)

pytestmark = pytest.mark.django_db

DISAGREEING = ("P001", "P002")  # judge every reference document at the opposite end of the scale


@pytest.fixture
def judged(scored, collection_docs):  # noqa: F811  (the imported fixture)
    """Every participant judges, in each session, the reference's documents of its topic: as the reference
    does, except DISAGREEING (3 - grade)."""
    built, run = scored
    now = timezone.now()
    rows = []
    for record in built.sessions:
        for ext, grade in sorted(built.grades[record["topic"]].items()):
            own = 3 - grade if record["participant"] in DISAGREEING else grade
            rows.append(
                Judgment(
                    session_id=record["id"],
                    document=collection_docs[ext],
                    grade=own,
                    created_at=now,
                    updated_at=now,
                )
            )
    Judgment.objects.bulk_create(rows)
    built.docs = collection_docs
    return built, run


def _rule_on(study, minimum=0.5):
    study.exclusion_min_agreement = minimum
    study.save(update_fields=["exclusion_min_agreement"])
    return exclusion.exclusion_apply(study=study)


def _marked(study):
    return sorted(
        Participant.objects.filter(study=study, excluded_at__isnull=False).values_list("code", flat=True)
    )


def _publish_flipped(study, built, callbacks, docs):
    """A new reference version grading every document at the opposite end of the scale (3 - grade)."""
    rows = [
        ReferenceJudgment(topic_id=topic, document=docs[ext], grade=3 - grade)
        for topic, grades in built.grades.items()
        for ext, grade in grades.items()
    ]
    with callbacks(execute=True):
        with transaction.atomic():
            return reference_version_create(study=study, judgments=rows, note="flipped")


def test_a_new_reference_version_marks_those_below_and_unmarks_those_above(
    judged, django_capture_on_commit_callbacks
):
    built, _run = judged
    study = built.study
    assert _rule_on(study).excluded == DISAGREEING
    everyone = sorted(
        Participant.objects.filter(study=study, preview_at__isnull=True).values_list("code", flat=True)
    )
    first_marked = {
        p.code: p.excluded_at for p in Participant.objects.filter(study=study, code__in=DISAGREEING)
    }

    version = _publish_flipped(study, built, django_capture_on_commit_callbacks, built.docs)

    # Under the flipped reference the disagreeing two agree (unmarked) and everyone else falls below (marked).
    now_marked = [code for code in everyone if code not in DISAGREEING]
    assert _marked(study) == now_marked
    for person in Participant.objects.filter(study=study, code__in=now_marked):
        assert person.excluded_agreement < 0.5
        assert f"reference version {version.number}" in person.excluded_reason
    trigger = f"reference version {version.number} committed"
    marks = AuditEntry.objects.filter(study=study, action="exclusion_marked", detail__trigger=trigger)
    clears = AuditEntry.objects.filter(study=study, action="exclusion_cleared", detail__trigger=trigger)
    assert sorted(marks.values_list("participant_code", flat=True)) == now_marked
    assert sorted(clears.values_list("participant_code", flat=True)) == list(DISAGREEING)

    # Publishing the original grades again flips them back;
    # the marks set first by "rule saved" were audited too.
    rows = [
        ReferenceJudgment(topic_id=topic, document=built.docs[ext], grade=grade)
        for topic, grades in built.grades.items()
        for ext, grade in grades.items()
    ]
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            reference_version_create(study=study, judgments=rows, note="original again")
    assert _marked(study) == list(DISAGREEING)
    assert (
        AuditEntry.objects.filter(
            study=study, action="exclusion_marked", detail__trigger="rule saved"
        ).count()
        == 2
    )
    assert all(
        first_marked[p.code] != p.excluded_at
        for p in Participant.objects.filter(study=study, code__in=DISAGREEING)
    )  # marked anew


def test_a_re_apply_that_changes_nothing_audits_nothing_and_keeps_the_first_mark(judged):
    built, _run = judged
    study = built.study
    _rule_on(study)
    first = dict(
        Participant.objects.filter(study=study, code__in=DISAGREEING).values_list("code", "excluded_at")
    )
    entries = AuditEntry.objects.filter(study=study).count()
    assert exclusion.exclusion_reapply(study_id=study.pk, trigger="test").excluded == DISAGREEING
    assert AuditEntry.objects.filter(study=study).count() == entries
    assert (
        dict(Participant.objects.filter(study=study, code__in=DISAGREEING).values_list("code", "excluded_at"))
        == first
    )


def test_a_finished_session_re_applies_the_rule_for_its_study(judged, django_capture_on_commit_callbacks):
    built, _run = judged
    study = built.study
    _rule_on(study)
    # P004 now disagrees on every judgment (as if the judgments came in with their sessions' events).
    sessions = [record["id"] for record in built.sessions if record["participant"] == "P004"]
    for judgment in Judgment.objects.filter(session_id__in=sessions):
        judgment.grade = 3 - judgment.grade
        judgment.save(update_fields=["grade"])
    assert _marked(study) == list(DISAGREEING)  # not re-applied yet: nothing finished

    session = SearchSession.objects.select_related("assignment").get(pk=sessions[0])
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            sessions_changed(study.pk, [session.pk], [session.assignment.scenario_id])
            assert _marked(study) == list(DISAGREEING)  # read once the transaction has committed
    assert _marked(study) == [*DISAGREEING, "P004"]
    entry = AuditEntry.objects.get(study=study, participant_code="P004", action="exclusion_marked")
    assert entry.detail["trigger"] == "1 session(s) finished" and "below" in entry.detail["reason"]


def test_with_the_rule_off_nothing_runs(judged, django_capture_on_commit_callbacks, monkeypatch):
    built, _run = judged
    study = built.study
    assert study.exclusion_min_agreement is None
    calls = []
    monkeypatch.setattr(exclusion, "exclusion_apply", lambda **kwargs: calls.append(kwargs))
    _publish_flipped(study, built, django_capture_on_commit_callbacks, built.docs)
    record = built.sessions[0]
    session = SearchSession.objects.select_related("assignment").get(pk=record["id"])
    with django_capture_on_commit_callbacks(execute=True) as queued:
        with transaction.atomic():
            sessions_changed(study.pk, [session.pk], [session.assignment.scenario_id])
    assert calls == []
    assert not any("exclusion" in getattr(callback, "__qualname__", "") for callback in queued)
    assert _marked(study) == [] and not AuditEntry.objects.filter(study=study, action__startswith="exclusion")


def test_the_dashboards_never_serve_a_chart_cached_under_the_old_marks(client, judged):
    built, run = judged
    study = built.study
    client.force_login(study.owner)
    url = reverse("scoring:chart_json", args=[study.slug, run.pk, "curves"])
    before = client.get(url).json()
    assert any("the study has no agreement rule" in note for note in before["notes"])
    generation = run.generation
    _rule_on(study)  # the marks change, the run's generation does not
    run.refresh_from_db()
    assert run.generation == generation
    after = client.get(url).json()
    assert any("Excluded participants (P001, P002)" in note for note in after["notes"])
    # Clearing the marks (the rule still on) is not served from the cache either.
    Participant.objects.filter(study=study).update(
        excluded_at=None, excluded_reason=None, excluded_agreement=None
    )
    cleared = client.get(url).json()
    assert not any("P001, P002" in note for note in cleared["notes"])
