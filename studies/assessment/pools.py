"""Assessment pools: building and growing each scenario's pool by a rule, adding documents by hand or from a
qrels file. Pool documents are dealt to assessors by studies.assessment.assessors.allocate."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from scoring.lib.errors import InputError
from scoring.lib.trec_io import parse_qrels_lines
from studies.assessment.assessors import allocate
from studies.errors import AssessmentError
from studies.models import (
    AssessmentPool,
    AssessorJudgment,
    Document,
    Judgment,
    PoolDocument,
    Scenario,
    ShownResult,
    Study,
)

DEFAULT_TOP_X = 10


@dataclass
class PoolChange:
    added: int = 0
    removed: int = 0
    kept_judged: int = 0  # no longer selected by the rule but kept because an assessor judged them


def _rule_documents(scenario: Scenario, rule: str, top_x: int) -> dict[int, str]:
    """{document id: why} for the documents the rule selects from the scenario's sessions so far."""
    sessions = {
        "session__assignment__scenario": scenario,
        "session__assignment__participant__withdrawn_at__isnull": True,
        "session__assignment__participant__preview_at__isnull": True,  # a preview never feeds a pool
    }
    why: dict[int, list[str]] = defaultdict(list)
    if rule in (AssessmentPool.Rule.RELEVANT, AssessmentPool.Rule.UNION):
        relevant = Judgment.objects.filter(grade__gte=1, **sessions).values_list("document_id", flat=True)
        for document_id in sorted(set(relevant)):
            why[document_id].append("judged relevant")
    if rule in (AssessmentPool.Rule.TOP_X, AssessmentPool.Rule.UNION):
        shown = ShownResult.objects.filter(
            rank__lte=top_x, **{f"query__{key}": value for key, value in sessions.items()}
        ).values_list("document_id", flat=True)
        for document_id in sorted(set(shown)):
            why[document_id].append(f"top {top_x}")
    return {document_id: " + ".join(reasons) for document_id, reasons in why.items()}


@transaction.atomic
def pool_build(
    *,
    study: Study,
    rule: str | None = None,
    top_x: int | None = None,
    scenarios: Iterable[Scenario] | None = None,
) -> dict[str, PoolChange]:
    """Build or grow each scenario's pool by `rule` (None: the pool's stored rule, "relevant" for a new pool).

    Run again when new sessions arrive: documents the rule now selects are added; documents an earlier rule
    added that it no longer selects are removed unless an assessor already judged them. Hand-added and
    qrels-imported documents always stay. Returns {scenario code: PoolChange}."""
    if rule is not None and rule not in AssessmentPool.Rule.values:
        raise AssessmentError(
            f"unknown pool rule {rule!r}; use one of {', '.join(AssessmentPool.Rule.values)}"
        )
    if top_x is not None and top_x < 1:
        raise AssessmentError("X of the top-X rule must be at least 1")
    changes: dict[str, PoolChange] = {}
    chosen = scenarios if scenarios is not None else study.scenarios.order_by("id")
    # A practice task is never scored: its documents are not pooled.
    for scenario in (scenario for scenario in chosen if not scenario.practice):
        pool, _ = AssessmentPool.objects.get_or_create(scenario=scenario)
        pool.rule = rule or pool.rule
        pool.top_x = top_x or pool.top_x
        pool.built_at = timezone.now()
        pool.save(update_fields=["rule", "top_x", "built_at"])
        wanted = _rule_documents(scenario, pool.rule, pool.top_x)
        existing = {pd.document_id: pd for pd in pool.documents.all()}
        change = changes[scenario.code] = PoolChange()
        fresh = [
            PoolDocument(
                pool=pool, document_id=document_id, source=PoolDocument.Source.RULE, source_detail=why
            )
            for document_id, why in wanted.items()
            if document_id not in existing
        ]
        PoolDocument.objects.bulk_create(fresh)
        change.added = len(fresh)
        stale = [
            pd.id
            for doc, pd in existing.items()
            if pd.source == PoolDocument.Source.RULE and doc not in wanted
        ]
        judged = set(
            AssessorJudgment.objects.filter(pool_document_id__in=stale).values_list(
                "pool_document_id", flat=True
            )
        )
        change.kept_judged = len(judged)
        change.removed, _ = PoolDocument.objects.filter(id__in=set(stale) - judged).delete()
        change.removed = len(set(stale) - judged)
    allocate(study)
    return changes


def documents_by_external_id(study: Study, external_ids: Iterable[str]) -> dict[str, Document]:
    ids = set(external_ids)
    documents = Document.objects.filter(external_id__in=ids)
    if study.collection_id is not None:
        documents = documents.filter(collection_id=study.collection_id)
    else:
        # No collection yet: only those its owner may use, so naming another lab's documents reads exactly
        # like naming documents that do not exist.
        from studies.design.selectors import collections_visible_to

        documents = documents.filter(collection__in=collections_visible_to(study.owner))
    found: dict[str, Document] = {}
    for document in documents:
        if document.external_id in found:
            raise AssessmentError(
                f"document {document.external_id!r} exists in several collections; "
                "give the study its collection"
            )
        found[document.external_id] = document
    return found


def _pool_for(scenario: Scenario) -> AssessmentPool:
    pool, _ = AssessmentPool.objects.get_or_create(scenario=scenario)
    return pool


@transaction.atomic
def pool_add_documents(*, scenario: Scenario, external_ids: Iterable[str], added_by) -> int:
    """Add documents to a scenario's pool by hand (all or none: an unknown id adds nothing). Returns how many
    were new to the pool."""
    wanted = [external_id.strip() for external_id in external_ids if external_id.strip()]
    if not wanted:
        raise AssessmentError("give at least one document id")
    if scenario.practice:
        raise AssessmentError(
            f"scenario: {scenario.code} is a practice task: never scored, so its documents are not assessed"
        )
    found = documents_by_external_id(scenario.study, wanted)
    unknown = [external_id for external_id in wanted if external_id not in found]
    if unknown:
        raise AssessmentError(
            f"unknown document ids: {', '.join(unknown[:10])}" + (" …" if len(unknown) > 10 else "")
        )
    pool = _pool_for(scenario)
    present = set(pool.documents.values_list("document_id", flat=True))
    detail = f"added by {getattr(added_by, 'username', 'unknown')}"
    fresh = {
        found[external_id].id: PoolDocument(
            pool=pool, document=found[external_id], source=PoolDocument.Source.MANUAL, source_detail=detail
        )
        for external_id in wanted
        if found[external_id].id not in present
    }
    PoolDocument.objects.bulk_create(fresh.values())
    allocate(scenario.study)
    return len(fresh)


@dataclass
class QrelsEntry:
    line: int
    topic: str
    docid: str
    grade: int


def qrels_entries(
    study: Study, lines: Iterable[str], path: str, *, other_topics: bool = False
) -> tuple[list[QrelsEntry], dict[str, Document]]:
    """Check a qrels file against the study: format (scoring.lib.trec_io's rules), topics that are the study's
    scenarios, documents of its collection. Raises InputError naming file and line; returns the entries in
    file order (each topic+document once) and the documents by external id.

    `other_topics`: keep lines whose topic is no scenario's (a collection's qrels judge all its topics), but
    refuse a file none of whose topics is a scenario's when the study has scenarios (the wrong file)."""
    lines = list(lines)
    parse_qrels_lines(lines, path)
    entries: dict[tuple[str, str], QrelsEntry] = {}
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if fields:
            entries.setdefault(
                (fields[0], fields[2]), QrelsEntry(number, fields[0], fields[2], int(fields[3]))
            )
    if not entries:
        raise InputError(path, None, "no qrels lines")
    topics = set(study.scenarios.values_list("topic_id", flat=True))
    found = documents_by_external_id(study, [entry.docid for entry in entries.values()])
    if other_topics and topics and not any(entry.topic in topics for entry in entries.values()):
        raise InputError(
            path, None, f"none of its topics is a scenario topic of this study ({', '.join(sorted(topics))})"
        )
    for entry in entries.values():
        if entry.topic not in topics and not other_topics:
            raise InputError(
                path,
                entry.line,
                f"topic {entry.topic!r} is not a scenario topic of this study ({', '.join(sorted(topics))})",
            )
        if entry.docid not in found:
            raise InputError(path, entry.line, f"document {entry.docid!r} is not in the study's collection")
    return list(entries.values()), found


@transaction.atomic
def pool_import_qrels(*, study: Study, lines: Iterable[str], path: str, added_by) -> int:
    """Add every document of a qrels file to the pool of its topic's scenario, all or nothing (InputError
    with file:line). The grades are not used: the pool only says what experts judge. Returns how many
    documents were new to their pools."""
    entries, found = qrels_entries(study, lines, path)
    # The scored scenarios' pools: a practice task is never scored, so nothing is pooled for it.
    pools = {scenario.topic_id: _pool_for(scenario) for scenario in study.scenarios.filter(practice=False)}
    present = set(
        PoolDocument.objects.filter(pool__scenario__study=study).values_list("pool_id", "document_id")
    )
    fresh = []
    for entry in entries:
        if entry.topic not in pools:
            raise InputError(
                path,
                entry.line,
                f"topic {entry.topic!r} is a practice task's: never scored, so its documents are not "
                "assessed",
            )
        pool, document = pools[entry.topic], found[entry.docid]
        if (pool.id, document.id) not in present:
            present.add((pool.id, document.id))
            fresh.append(
                PoolDocument(
                    pool=pool,
                    document=document,
                    source=PoolDocument.Source.QRELS,
                    source_detail=f"{path}:{entry.line}",
                )
            )
    PoolDocument.objects.bulk_create(fresh)
    allocate(study)
    return len(fresh)
