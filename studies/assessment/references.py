"""Reference versions: `reference_version_create` is the one creator of ReferenceVersion rows (publishing,
qrels import, collection import, archive import, the demo and the planner all come through it); publishing
the adjudicated grades (merge or replace), and qrels export and import of versions."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Max

from scoring.lib.errors import InputError
from sessionlab.plurals import counted
from studies.assessment.machine import (
    BREAK_TIES,
    FILL_UNJUDGED,
    MACHINE_SOURCE_PREFIX,
    document_key,
    machine_fills,
    machine_grades,
    machine_rules_checked,
    machine_rules_provenance,
    machine_ties_broken,
)
from studies.assessment.pools import qrels_entries
from studies.assessment.selectors import document_grades
from studies.errors import AssessmentError
from studies.models import (
    AdjudicationDecision,
    AuditAction,
    AuditEntry,
    ReferenceJudgment,
    ReferenceVersion,
    Study,
    StudyAssessor,
    reference_grade_allowed,
)
from studies.signals import reference_version_committed


@transaction.atomic
def reference_version_create(
    *,
    study: Study,
    judgments: Iterable[ReferenceJudgment],
    note: str = "",
    created_by=None,
    created_by_name: str | None = None,
    number: int | None = None,
    created_at=None,
    provenance: dict | None = None,
) -> ReferenceVersion:
    """The one writer of reference versions: a new version (number + 1 unless `number` is given, as an archive
    import does) holding `judgments` (unsaved ReferenceJudgment rows; their version is set here).

    The version is announced (studies.signals.reference_version_committed, which re-scores the default run)
    only once the transaction has committed: announced earlier, the re-score compared the old version with a
    new one that had no rows yet, and left stale scores behind a "Done".

    The creator's user name is recorded beside the account (`created_by_name`: the account's, or the name
    given when there is no account, as an archive import gives an unknown creator's), so it outlives both.
    `provenance` says how the version was made where its grades cannot (a machine assessor's rule, issue
    30)."""
    Study.objects.select_for_update().filter(pk=study.pk).first()  # one new number at a time
    if number is None:
        number = (ReferenceVersion.objects.filter(study=study).aggregate(top=Max("number"))["top"] or 0) + 1
    version = ReferenceVersion.objects.create(
        study=study,
        number=number,
        note=note[:300],
        created_by=created_by,
        created_by_name=created_by.get_username() if created_by is not None else created_by_name,
        provenance=provenance or {},
        **({"created_at": created_at} if created_at else {}),
    )
    # Stored 2000 at a time, as `judgments` yields them (an archive import reads them as it goes).
    judgments = iter(judgments)
    while rows := list(islice(judgments, 2000)):
        # Each judge's name beside the account (judged_by_name), in one query for the rows that lack it.
        unnamed = {
            row.judged_by_id for row in rows if row.judged_by_id is not None and not row.judged_by_name
        }
        names = (
            dict(get_user_model().objects.filter(pk__in=unnamed).values_list("pk", "username"))
            if unnamed
            else {}
        )
        for row in rows:
            row.version = version
            if row.judged_by_id is not None and not row.judged_by_name:
                row.judged_by_name = names.get(row.judged_by_id)
        ReferenceJudgment.objects.bulk_create(rows)
    study_id = study.pk

    def announce() -> None:  # what the listeners answer is not ours to read
        reference_version_committed.send(sender=ReferenceVersion, version=version, study_id=study_id)

    # robust: the version is committed whatever a listener does; a failure is logged
    transaction.on_commit(announce, robust=True)
    return version


PUBLISH_MODES = {
    "merge": "Merge into a version: the adjudicated grades override its grades, its other judgments are kept",
    "replace": "Replace: the new version holds only the adjudicated grades",
}


@dataclass
class TopicChange:
    """How one topic's judgments differ between the latest version and the version a publication makes."""

    topic_id: str
    scenario: str  # the scenario's code, "" for a topic that is no scenario's
    added: int = 0
    changed: int = 0
    removed: int = 0
    kept: int = 0  # same grade in both


@dataclass
class PublishPlan:
    """What `reference_version_publish` would write: the rows of the new version and how they differ from
    the latest version (the one scores use now). `digest` names the plan, so a publication confirmed from a
    preview is refused if anything changed since."""

    mode: str
    base: ReferenceVersion | None  # merged into (None: replace, or no version yet)
    latest: ReferenceVersion | None
    number: int  # the new version's
    decisions: int  # adjudicated documents in the new version
    pending: int  # completely judged, undecided: left out (a merge keeps the base's grade)
    rows: dict[tuple[str, int], ReferenceJudgment]
    topics: list[TopicChange]
    digest: str
    # The machine assessor's rules (studies/assessment/machine.py): none chosen, no machine grade enters.
    rules: tuple[str, ...] = ()
    filled: int = 0
    ties_broken: int = 0
    provenance: dict | None = None

    def total(self, what: str) -> int:
        return sum(getattr(change, what) for change in self.topics)

    @property
    def totals(self) -> dict[str, int]:
        return {what: self.total(what) for what in ("added", "changed", "removed", "kept")}


def reference_version_publish_plan(
    *,
    study: Study,
    mode: str = "merge",
    base_number: int | None = None,
    allow_pending: bool = False,
    machine: StudyAssessor | None = None,
    rules: Sequence[str] = (),
) -> PublishPlan:
    """Plan a publication of the adjudicated grades (nothing is written). `mode` "merge": the version
    `base_number` (default: the latest) with the adjudicated grades overriding its grades for the same topic
    and document, every other judgment kept; "replace": the adjudicated grades alone. Refuses while
    completely judged disagreements wait for the researcher, unless `allow_pending` (they are left out).

    `rules` (machine.MACHINE_RULES) let the `machine` assessor's grades in, and only they do: "break_ties"
    settles the undecided disagreements it graded (before the pending check, so they no longer wait),
    "fill_unjudged" grades the documents with no decision that people have not completely judged and the
    version holds no grade for. A decided document never takes a machine grade."""
    rules = machine_rules_checked(study=study, machine=machine, rules=rules)
    base, latest = _base_and_latest(study, mode, base_number)
    decisions = list(
        AdjudicationDecision.objects.filter(pool_document__pool__scenario__study=study).select_related(
            "pool_document__pool__scenario"
        )
    )
    if not decisions and not rules:
        raise AssessmentError("nothing is adjudicated yet: run a preset or decide by hand first")
    decided = {decision.pool_document_id for decision in decisions}
    undecided = [row for row in document_grades(study) if row.pool_document.id not in decided]
    number = (latest.number if latest else 0) + 1
    grades = machine_grades(machine=machine) if rules and machine is not None else {}
    ties = (
        machine_ties_broken(undecided=undecided, machine=machine, grades=grades, number=number)
        if BREAK_TIES in rules and machine is not None
        else {}
    )
    # A tie broken waits no longer.
    pending = [row for row in undecided if row.complete and document_key(row) not in ties]
    if pending and not allow_pending:
        raise AssessmentError(f"{len(pending)} judged documents have no decision yet; decide them first")
    rows = _base_and_decided_rows(base, decisions, number)
    rows.update(ties)  # ties broken override the base's grade: the people's grades are newer
    fills = (
        machine_fills(undecided=undecided, held=set(rows), machine=machine, grades=grades, number=number)
        if FILL_UNJUDGED in rules and machine is not None
        else {}
    )
    rows.update(fills)
    now = {key: row.grade for key, row in rows.items()}
    fingerprint = repr(
        (
            mode,
            base and base.number,
            latest and latest.number,
            sorted(now.items()),
            rules,
            machine.pk if rules and machine is not None else None,
        )
    )
    return PublishPlan(
        mode=mode,
        base=base,
        latest=latest,
        number=number,
        decisions=len(decisions),
        pending=len(pending),
        rows=rows,
        topics=_topic_changes(study, now, latest),
        digest=hashlib.sha256(fingerprint.encode()).hexdigest()[:16],
        rules=rules,
        filled=len(fills),
        ties_broken=len(ties),
        provenance=_provenance(rows, base, machine, rules, len(fills), len(ties)),
    )


def judgment_copied(judgment: ReferenceJudgment) -> ReferenceJudgment:
    """An unsaved copy of a version's judgment for a new version: its grade, who judged it (an account, or the
    name an archive gave) and its source."""
    return ReferenceJudgment(
        topic_id=judgment.topic_id,
        document_id=judgment.document_id,
        grade=judgment.grade,
        judged_by_id=judgment.judged_by_id,
        judged_by_name=judgment.judged_by_name,
        source=judgment.source,
    )


def _base_and_decided_rows(
    base: ReferenceVersion | None, decisions: list[AdjudicationDecision], number: int
) -> dict[tuple[str, int], ReferenceJudgment]:
    """The base version's judgments (none for a replacement), the decisions overriding them, by (topic,
    document)."""
    rows: dict[tuple[str, int], ReferenceJudgment] = {}
    if base is not None:
        for judgment in base.judgments.all():
            rows[(judgment.topic_id, judgment.document_id)] = judgment_copied(judgment)
    for decision in decisions:
        topic, document_id = decision.pool_document.pool.scenario.topic_id, decision.pool_document.document_id
        rows[(topic, document_id)] = ReferenceJudgment(
            topic_id=topic,
            document_id=document_id,
            grade=decision.grade,
            judged_by_id=decision.judged_by_id,
            source=f"adjudication v{number} ({decision.method})",
        )
    return rows


def _base_and_latest(
    study: Study, mode: str, base_number: int | None
) -> tuple[ReferenceVersion | None, ReferenceVersion | None]:
    """The version a publication merges into (None: a replacement, or no version yet) and the latest."""
    if mode not in PUBLISH_MODES:
        raise AssessmentError(f"unknown publishing mode {mode!r}; use one of {', '.join(PUBLISH_MODES)}")
    versions = ReferenceVersion.objects.filter(study=study)
    latest = versions.order_by("-number").first()
    base = None
    if mode == "merge":
        base = versions.filter(number=base_number).first() if base_number is not None else latest
        if base_number is not None and base is None:
            raise AssessmentError(f"the study has no reference version {base_number} to merge into")
    elif base_number is not None:
        raise AssessmentError("a replacement merges into no version; leave the version out")
    return base, latest


def _topic_changes(
    study: Study, now: dict[tuple[str, int], int], latest: ReferenceVersion | None
) -> list[TopicChange]:
    """Per topic, how the new version's grades (`now`) differ from the latest version's."""
    before = dict(
        ((topic, document_id), grade)
        for topic, document_id, grade in (
            latest.judgments.values_list("topic_id", "document_id", "grade") if latest else []
        )
    )
    scenarios = dict(study.scenarios.values_list("topic_id", "code"))
    changes: dict[str, TopicChange] = {}
    for key in now.keys() | before.keys():
        change = changes.setdefault(key[0], TopicChange(key[0], scenarios.get(key[0], "")))
        if key not in before:
            change.added += 1
        elif key not in now:
            change.removed += 1
        elif now[key] != before[key]:
            change.changed += 1
        else:
            change.kept += 1
    return sorted(changes.values(), key=lambda change: (change.scenario == "", change.topic_id))


def _provenance(rows, base, machine, rules, filled: int, ties_broken: int) -> dict | None:
    """The rules' record, and, when a merge carries machine grades over from its base, how many and from
    which version: a version made without a rule still says that machine grades are in it."""
    provenance = (
        machine_rules_provenance(machine=machine, rules=rules, filled=filled, ties_broken=ties_broken)
        if rules and machine is not None
        else {}
    )
    in_version = sum(1 for row in rows.values() if row.source.startswith(MACHINE_SOURCE_PREFIX))
    kept = in_version - filled - ties_broken
    if kept > 0 and base is not None:
        provenance["machine_grades_kept"] = kept
        provenance["machine_grades_kept_from"] = base.number
    return provenance or None


@transaction.atomic
def reference_version_publish(
    *,
    study: Study,
    created_by,
    note: str = "",
    allow_pending: bool = False,
    mode: str = "merge",
    base_number: int | None = None,
    expected_digest: str | None = None,
    machine: StudyAssessor | None = None,
    rules: Sequence[str] = (),
) -> ReferenceVersion:
    """Publish the adjudicated grades as a new reference version (see reference_version_publish_plan for
    `mode`, `base_number`, `allow_pending`, `machine` and `rules`; the rules, the machine assessor and the
    counts go into the version's provenance). With `expected_digest` (the digest of the plan the researcher
    previewed) it refuses if the plan changed since: a grade decided or a version published meanwhile."""
    Study.objects.select_for_update().filter(pk=study.pk).first()  # the plan and the number stay true
    plan = reference_version_publish_plan(
        study=study,
        mode=mode,
        base_number=base_number,
        allow_pending=allow_pending,
        machine=machine,
        rules=rules,
    )
    if expected_digest is not None and expected_digest != plan.digest:
        raise AssessmentError(
            "the adjudication or the reference versions changed since the preview; look again"
        )
    if not note:
        into = f" merged into v{plan.base.number}" if plan.base else ""
        note = f"adjudication of {counted(plan.decisions, 'document')}{into}"
        if plan.rules:
            note += (
                f", {plan.filled} filled and {counted(plan.ties_broken, 'tie')} broken by a machine assessor"
            )
    version = reference_version_create(
        study=study,
        judgments=plan.rows.values(),
        note=note,
        created_by=created_by,
        number=plan.number,
        provenance=plan.provenance,
    )
    if plan.rules and machine is not None:  # machine grades entered: the audit trail says by which rules
        AuditEntry.objects.create(
            study=study,
            action=AuditAction.REFERENCE_PUBLISHED_WITH_RULES,
            detail={
                "version": version.number,
                "rules": list(plan.rules),
                "machine": machine.user.get_username(),
                "filled": plan.filled,
                "ties_broken": plan.ties_broken,
                "by": getattr(created_by, "username", ""),
            },
        )
    return version


def reference_version_qrels(*, version: ReferenceVersion) -> str:
    """The version as TREC qrels: `topic 0 docid grade`, sorted by topic then document id."""
    rows = version.judgments.values_list("topic_id", "document__external_id", "grade")
    return "".join(f"{topic} 0 {docid} {grade}\n" for topic, docid, grade in sorted(rows))


@transaction.atomic
def reference_version_import_qrels(
    *, study: Study, lines: Iterable[str], path: str, created_by, note: str = ""
) -> ReferenceVersion:
    """A new reference version from a qrels file, all or nothing: InputError names file and line for a bad
    line, an unknown document or a grade outside the study's scale. Judgments of topics that are no
    scenario's are kept as they are (they score nothing), so a version exported as qrels, which may hold a
    whole collection's topics, imports again unchanged; a file with no scenario topic at all is refused."""
    entries, found = qrels_entries(study, lines, path, other_topics=True)
    scale = set(study.grade_values())
    for entry in entries:
        if not reference_grade_allowed(entry.grade, scale):  # negative grades are kept as judged
            raise InputError(
                path,
                entry.line,
                f"grade {entry.grade} is not in the study's scale {sorted(scale)} (or -9..-1)",
            )
    return reference_version_create(
        study=study,
        judgments=(
            ReferenceJudgment(
                topic_id=entry.topic,
                document=found[entry.docid],
                grade=entry.grade,
                judged_by=None,
                source=f"qrels {path}"[:200],
            )
            for entry in entries
        ),
        note=note or f"imported from {path}",
        created_by=created_by,
    )
