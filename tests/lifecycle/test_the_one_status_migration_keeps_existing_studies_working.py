"""Migration 0027 (one study status) over an existing database: a study with no status becomes a draft only
if it could take nobody anyway (no participant, no design); a study with participants is never a draft; a
public link its researcher had closed pauses the study (audited), one never used leaves it open. Run
backwards to before it and forwards again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from studies.models import AuditEntry, Study

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = ("studies", "0025_read_depth")


def _migrate(targets):
    MigrationExecutor(connection).migrate(targets)


def _old_studies(apps, owner_id):
    """Six studies as the database held them before the draft state; returns their slugs by expectation."""
    OldStudy = apps.get_model("studies", "Study")
    Scenario = apps.get_model("studies", "Scenario")
    System = apps.get_model("studies", "System")
    Participant = apps.get_model("studies", "Participant")
    Recruitment = apps.get_model("studies", "Recruitment")

    def study(slug, *, status=None, design=False, participants=0, panel=False, link_open=None, closed=False):
        made = OldStudy.objects.create(name=slug, slug=slug, owner_id=owner_id, status=status)
        if design:
            Scenario.objects.create(study=made, code="S1", title="t", text="t", topic_id="1")
            System.objects.create(study=made, code="A", name="A")
        for n in range(participants):
            Participant.objects.create(
                study=made, code=f"P{n}", enrolment_index=n, panel_id=f"pid{n}" if panel else None
            )
        if link_open is not None:
            Recruitment.objects.create(
                study=made, public_link_open=link_open, closed_at=timezone.now() if closed else None
            )

    study("empty")  # -> draft
    study("designed", design=True)  # -> open: it could take participants before
    study("enrolled", participants=1)  # -> open, never a draft
    study("link-closed-box", design=True, participants=2, link_open=True, closed=True)  # -> paused
    study("link-off-after-panel", design=True, participants=2, panel=True, link_open=False)  # -> paused
    study("link-never-used", design=True, participants=2, link_open=False)  # -> open
    study("was-closed", design=True, participants=1, status="closed")  # -> closed


def test_existing_studies_get_a_status_that_keeps_them_working(alice):
    leaves = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        _migrate([BEFORE])
        old_apps = MigrationExecutor(connection).loader.project_state([BEFORE]).apps
        _old_studies(old_apps, alice.pk)
        _migrate(leaves)
    finally:
        _migrate(leaves)
    assert dict(Study.objects.values_list("slug", "status")) == {
        "empty": "draft",
        "designed": "open",
        "enrolled": "open",
        "link-closed-box": "paused",
        "link-off-after-panel": "paused",
        "link-never-used": "open",
        "was-closed": "closed",
    }
    audited = AuditEntry.objects.filter(action="study_status_changed").values_list("study__slug", "detail")
    assert sorted(slug for slug, _ in audited) == ["link-closed-box", "link-off-after-panel"]
    assert all(detail["to"] == "paused" and "migration 0027" in detail["why"] for _, detail in audited)
