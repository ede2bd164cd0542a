"""Importing an archive's reference versions (with their judgments), its assessment plan and pools, and its
audit trail. Each checks its rows as it reads them (reader.py)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice

from django.utils import timezone

from studies.assessment.references import reference_version_create
from studies.interchange.archive.reader import Imported
from studies.models import (
    AssessmentGuidelines,
    AssessmentPlan,
    AssessmentPool,
    AuditEntry,
    PoolDocument,
    ReferenceJudgment,
)
from studies.models.references import IMPORTED, SOURCE_MAX_LENGTH, claimed_source

SOURCE_LENGTH = SOURCE_MAX_LENGTH
POOL_BATCH = 2000


def reference_versions_imported(done: Imported, data) -> None:
    """The reference versions (`$.reference_versions`), each through the one service that publishes one;
    an account named as creator or judge is linked when it exists here. A creator or judge with no account
    here is kept by name (created_by_name, judged_by_name: exported again as it came), never mapped to the
    importing researcher; the import notes a creator's by file and line."""
    r = done.r
    owner = done.study.owner
    numbers: set[int] = set()
    judges: dict = {}  # user name -> account here, or None: one query per name, not per judgment
    for item, where in r.items(data, "reference_versions", "$"):
        number = r.get(item, "number", where, int)
        r.once(
            numbers,
            number,
            item,
            f"{where}.number",
            f"version {number} is below 1 or given twice",
            allowed=number >= 1,
        )
        creator = r.get(item, "created_by", where, str, null=True, default=None)
        if creator is not None and not 0 < len(creator) <= 150:
            r.fail(item, f"{where}.created_by", "a user name is 1-150 characters")
        account = _own_account(owner, creator)
        if creator and account is None:
            r.notes.append(
                f"{r.path}:{getattr(item, 'line', None)}: {where}.created_by: {creator!r} is not the "
                f"importing account; reference version {number} keeps the name without an account"
            )
        note = r.get(item, "note", where, str, default="")
        # An older archive has none; kept as written (it records how the version was made), but
        # marked as the archive's claim: nothing here ran that model or that prompt.
        provenance = r.get(item, "provenance", where, dict, null=True, default=None)
        if provenance:
            provenance = provenance | {IMPORTED: True}
        created_at = r.get(item, "created_at", where, "time", null=True, default=None) or timezone.now()
        reference_version_create(
            study=done.study,
            judgments=_judgments_read(done, item, where, judges),
            note=note,
            number=number,
            created_at=created_at,
            created_by=account,
            created_by_name=creator,
            provenance=provenance,
        )


def _judgments_read(done: Imported, item, where: str, judges: dict) -> Iterator[ReferenceJudgment]:
    """A version's judgments (`.judgments`) as unsaved rows, read as the service stores them. Each source is
    kept as the archive's claim ("imported (claimed): ..."), as the version's provenance is: nothing here
    saw that person or that model judge."""
    r = done.r
    owner = done.study.owner
    seen: set[tuple[str, int]] = set()
    for j_item, j_where in r.items(item, "judgments", where):
        topic = r.get(j_item, "topic_id", j_where, str)
        document_id, external_id = done.document_of(j_item, j_where)
        r.once(
            seen,
            (topic, document_id),
            j_item,
            j_where,
            f"topic {topic!r} judges document {external_id!r} twice",
        )
        judge = r.get(j_item, "judged_by", j_where, str, null=True, default=None)
        if judge is not None and not 0 < len(judge) <= 150:
            r.fail(j_item, f"{j_where}.judged_by", "a user name is 1-150 characters")
        if judge is not None and judge not in judges:
            judges[judge] = _own_account(owner, judge)
        source = r.get(j_item, "source", j_where, str, default="")
        if len(source) > SOURCE_LENGTH:
            r.fail(j_item, f"{j_where}.source", f"longer than {SOURCE_LENGTH} characters")
        yield ReferenceJudgment(
            topic_id=topic,
            document_id=document_id,
            grade=done.grade_of(j_item, j_where, reference=True),
            source=claimed_source(source),
            judged_by=judges[judge] if judge is not None else None,
            judged_by_name=judge,
        )


def _own_account(owner, name: str | None):
    """The account an archive's user name links to: only the importing owner's own (the study has no lab
    model, so another lab's account of the same name is never made an archive's creator or judge);
    any other name is kept as text."""
    return owner if name is not None and name == owner.get_username() else None


def assessment_imported(done: Imported, data) -> None:
    """The assessment plan and pools (`$.assessment`, optional)."""
    r = done.r
    assessment = data.get("assessment") or {}
    r.obj(assessment, "$.assessment", data)
    per_document = r.get(assessment, "assessors_per_document", "$.assessment", int, null=True, default=None)
    # The assessment settings (double-judged share, highlighting): absent from older archives, which
    # import with none.
    double = r.get(assessment, "double_judged_percent", "$.assessment", int, null=True, default=None)
    if double is not None and not 0 <= double <= 100:
        r.fail(assessment, "$.assessment.double_judged_percent", f"{double!r} is not a percent from 0 to 100")
    highlight = r.get(
        assessment, "highlight_participant_queries", "$.assessment", bool, null=True, default=None
    )
    if per_document is not None:
        AssessmentPlan.objects.create(
            study=done.study,
            assessors_per_document=per_document,
            double_judged_percent=double,
            highlight_participant_queries=highlight,
        )
    guidelines_imported(done, assessment)
    for item, where in r.items(assessment, "pools", "$.assessment", optional=True):
        code = r.get(item, "scenario", where, str)
        if code not in done.scenarios:
            r.fail(item, f"{where}.scenario", f"no scenario {code!r} in the archive")
        pool = AssessmentPool.objects.create(
            scenario=done.scenarios[code],
            rule=r.get(item, "rule", where, str),
            top_x=r.get(item, "top_x", where, int),
            built_at=r.get(item, "built_at", where, "time", null=True, default=None),
        )
        rows = (
            PoolDocument(
                pool=pool,
                document_id=done.document_of(d, d_where)[0],
                source=r.get(d, "source", d_where, str),
                source_detail=r.get(d, "source_detail", d_where, str, default=""),
                added_at=r.get(d, "added_at", d_where, "time", null=True, default=None) or timezone.now(),
            )
            for d, d_where in r.items(item, "documents", where)
        )
        while batch := list(islice(rows, POOL_BATCH)):  # stored as read, not held whole
            PoolDocument.objects.bulk_create(batch)


def guidelines_imported(done: Imported, assessment) -> None:
    """The assessors' guidelines (`$.assessment.guidelines`, optional): the study's (scenario null) and each
    scenario's, at most one each, the text as written."""
    r = done.r
    seen: set[str | None] = set()
    now = timezone.now()
    for item, where in r.items(assessment, "guidelines", "$.assessment", optional=True):
        code = r.get(item, "scenario", where, str, null=True)
        if code is not None and code not in done.scenarios:
            r.fail(item, f"{where}.scenario", f"no scenario {code!r} in the archive")
        if code in seen:
            r.fail(item, f"{where}.scenario", f"guidelines for {code or 'the study'} given twice")
        seen.add(code)
        AssessmentGuidelines.objects.create(
            study=done.study,
            scenario=done.scenarios[code] if code is not None else None,
            text=r.get(item, "text", where, str),
            updated_at=now,
        )


def audit_imported(done: Imported, data) -> None:
    """The audit trail (`$.audit`, optional), its actions as written."""
    r = done.r
    for item, where in r.items(data, "audit", "$", optional=True):
        AuditEntry.objects.create(
            study=done.study,
            participant_code=r.get(item, "participant_code", where, str, default=""),
            action=r.get(item, "action", where, str),
            detail=r.get(item, "detail", where, dict, default={}),
            at=r.get(item, "at", where, "time", null=True, default=None) or timezone.now(),
        )
