"""`study_archive`: a whole study as one JSON-ready dict, section by section (docs/file-formats.md). Rows
refer to each other by codes, positions and document ids; the documents section holds every document another
section names."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from django.db.models import F, Prefetch, Q
from django.utils import timezone

from sessionlab.rounds import in_rounds, pk_rounds
from studies.errors import ExportError
from studies.interchange.archive.layout import FORMAT, VERSION
from studies.interchange.archive.participant_state import participant_state_exported, recruitment_exported
from studies.interchange.downloads import encoded
from studies.kernel.event_log import events_read
from studies.models import (
    AssessmentPlan,
    AssessmentPool,
    AttentionSpan,
    AuditEntry,
    Document,
    Event,
    Judgment,
    PageExposure,
    Participant,
    PoolDocument,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    SearchSession,
    ShownResult,
    Study,
)


def _doc(row) -> str:
    """The external id of the row's document, which its query annotated as `doc` (the document's text is
    not read with the row)."""
    return row.doc


def _t(value) -> str | None:
    return value.isoformat() if value is not None else None


# Participants, and documents, read per round: memory holds one round's rows whatever the size of the study.
PARTICIPANTS_PER_CHUNK = 100
DOCUMENTS_PER_CHUNK = 500
# The audit trail grows with the participants (each state change is an entry): it is read in rounds too.
AUDIT_ENTRIES_PER_CHUNK = 2000


def _named_documents(study: Study) -> list[tuple[str, str, int]]:
    """(collection name, external id, pk) of every document another section names, in the documents
    section's order; an ExportError when one id names documents of two collections."""
    exported = {"assignment__participant__study": study, "assignment__participant__preview_at__isnull": True}
    sessions = SearchSession.objects.filter(**exported).values("pk")
    named = Document.objects.filter(
        Q(pk__in=ShownResult.objects.filter(query__session__in=sessions).values("document_id"))
        | Q(pk__in=Judgment.objects.filter(session__in=sessions).values("document_id"))
        | Q(pk__in=ReferenceJudgment.objects.filter(version__study=study).values("document_id"))
        | Q(pk__in=PoolDocument.objects.filter(pool__scenario__study=study).values("document_id"))
    ).values_list("collection__name", "external_id", "pk")
    rows = sorted(named)
    by_external: dict[str, int] = {}
    for _collection, external_id, pk in rows:
        if by_external.setdefault(external_id, pk) != pk:
            raise ExportError(
                f"document id {external_id!r} names documents of two collections; "
                "an archive refers to documents by id"
            )
    return rows


def _documents_section(named: list[tuple[str, str, int]]) -> Iterator[dict]:
    for start in range(0, len(named), DOCUMENTS_PER_CHUNK):
        chunk = named[start : start + DOCUMENTS_PER_CHUNK]
        documents = Document.objects.in_bulk([pk for _c, _e, pk in chunk])
        for collection, _external_id, pk in chunk:
            d = documents[pk]
            yield {
                "collection": collection,
                "id": d.pk,
                "external_id": d.external_id,
                "title": d.title,
                "text": d.text,
                "extra": d.extra,
            }


class _Lazy(list):
    """A list the JSON encoder writes item by item, made as it asks (json's Python encoder, which `indent`
    selects, iterates a list and asks only whether it is empty)."""

    def __init__(self, items: Callable[[], Iterator], empty: bool):
        super().__init__()
        self.items, self.empty = items, empty

    def __iter__(self):
        return iter(self.items())

    def __bool__(self) -> bool:
        return not self.empty


def study_archive(*, study: Study, panel_ids: bool = False) -> dict:
    """The study as a JSON-ready dict (see the package docstring), whole in memory; deterministic for the
    same rows. The participants' panel ids only when `panel_ids` (studies/interchange/panel_ids.py)."""
    archive = _archive(study, panel_ids)
    return {key: list(value) if isinstance(value, _Lazy) else value for key, value in archive.items()}


def _archive(study: Study, panel_ids: bool) -> dict:
    """The archive with its documents and participants as _Lazy lists."""
    named = _named_documents(study)
    exported = study.participants.filter(preview_at__isnull=True).order_by("enrolment_index")
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _t(timezone.now()),
        "study": _study_settings(study),
        "grade_levels": [{"value": g.value, "label": g.label} for g in study.grade_levels.order_by("value")],
        "documents": _Lazy(lambda: _documents_section(named), not named),
        "scenarios": [
            {"code": s.code, "title": s.title, "text": s.text, "topic_id": s.topic_id, "practice": s.practice}
            for s in study.scenarios.order_by("id")
        ],
        "systems": [
            {"code": s.code, "name": s.name, "backend": s.backend, "config": s.config}
            for s in study.systems.order_by("id")
        ],
        "recruitment": recruitment_exported(study),  # the participants' panel
        "participants": _Lazy(lambda: _participants_section(exported, panel_ids), not exported.exists()),
        "reference_versions": _reference_versions(study),
        "assessment": _assessment(study),
        "audit": _Lazy(lambda: _audit_section(study), not study.audit_entries.exists()),
    }


def _audit_section(study: Study) -> Iterator[dict]:
    chosen = study.audit_entries.order_by("at", "id")
    for entries in in_rounds(chosen, AuditEntry.objects.all(), AUDIT_ENTRIES_PER_CHUNK):
        for a in entries:
            yield {
                "participant_code": a.participant_code,
                "action": a.action,
                "detail": a.detail,
                "at": _t(a.at),
            }


def study_archive_json(*, study: Study, panel_ids: bool = False) -> str:
    """The archive's JSON whole in memory."""
    return "".join(_archive_texts(study, panel_ids))


def study_archive_stream(*, study: Study, panel_ids: bool = False) -> Iterator[bytes]:
    """The archive's JSON (the same text as study_archive_json) as UTF-8 chunks, a round of participants
    read at a time; an ExportError (a document id naming two collections) is raised here, before the first
    byte. The panel ids only when `panel_ids`."""
    return encoded(_archive_texts(study, panel_ids))


def _archive_texts(study: Study, panel_ids: bool) -> Iterator[str]:
    archive = _archive(study, panel_ids)  # the checks run here, before the first piece of text

    def texts() -> Iterator[str]:
        yield from json.JSONEncoder(indent=1, ensure_ascii=False, sort_keys=False).iterencode(archive)
        yield "\n"

    return texts()


def _participants_section(exported, panel_ids: bool) -> Iterator[dict]:
    for pks in pk_rounds(exported, PARTICIPANTS_PER_CHUNK):
        yield from _Participants(pks, panel_ids).section()


def _study_settings(study: Study) -> dict:
    return {
        "name": study.name,
        "slug": study.slug,
        "description": study.description,
        "collection": study.collection.name if study.collection is not None else None,
        "consent_text": study.consent_text,
        "consent_version": study.consent_version,
        "questionnaire": study.questionnaire,
        "post_task_questionnaire": study.post_task_questionnaire,
        "pre_task_questionnaire": study.pre_task_questionnaire,
        "time_limit_minutes": study.time_limit_minutes,
        "record_exposure": study.record_exposure,
        "record_attention": study.record_attention,
        "design": study.design,  # null: within-subject (docs/latin-square.md)
        "analysis_population": study.analysis_population,  # studies/population.py; null: the default
        "design_locked_at": _t(study.design_locked_at),
        "created_at": _t(study.created_at),
    }


class _Participants:
    """A round of participants for the participants section: each with their assignments, sessions (queries,
    shown results, judgments with history) and raw events, their rows read in one query per kind. A
    preview's rows are never exported (studies/design/lifecycle.py): the caller passes none."""

    def __init__(self, ids: list[int], panel_ids: bool):
        self.ids, self.panel_ids = ids, panel_ids
        self.sessions = {
            s.assignment_id: s for s in SearchSession.objects.filter(assignment__participant__in=ids)
        }
        self.session_position: dict[int | None, int | None] = {s.pk: None for s in self.sessions.values()}
        self.queries: dict[int, list[Query]] = {}
        for query in Query.objects.filter(session__assignment__participant__in=ids).order_by(
            "session_id", "position"
        ):
            self.queries.setdefault(query.session_id, []).append(query)
        # Documents by their id only: their texts are the documents section's, read a round at a time.
        self.shown: dict[int, list[ShownResult]] = {}
        for row in (
            ShownResult.objects.filter(query__session__assignment__participant__in=ids)
            .annotate(doc=F("document__external_id"))
            .select_related("exposure")
            .order_by("query_id", "rank")
        ):
            self.shown.setdefault(row.query_id, []).append(row)
        # What was on screen and when the participant was away.
        self.scrolls: dict[int, list[PageExposure]] = {}
        for scroll in PageExposure.objects.filter(query__session__assignment__participant__in=ids).order_by(
            "query_id", "page"
        ):
            self.scrolls.setdefault(scroll.query_id, []).append(scroll)
        self.spans: dict[int, list[AttentionSpan]] = {}
        for span in AttentionSpan.objects.filter(session__assignment__participant__in=ids).order_by(
            "session_id", "start_ms", "id"
        ):
            self.spans.setdefault(span.session_id, []).append(span)
        self.judgments: dict[int, list[Judgment]] = {}
        for judgment in (
            Judgment.objects.filter(session__assignment__participant__in=ids)
            .annotate(doc=F("document__external_id"))
            .prefetch_related("history")
            .order_by("session_id", "document__external_id")
        ):
            self.judgments.setdefault(judgment.session_id, []).append(judgment)
        self.events: dict[int, list[Event]] = {}
        for event in events_read(Event.objects.filter(participant__in=ids).order_by("participant_id", "id")):
            self.events.setdefault(event.participant_id, []).append(event)

    def section(self) -> list[dict]:
        participants = []
        for participant in (
            Participant.objects.filter(pk__in=self.ids)
            .order_by("enrolment_index")
            .select_related("reissue_of")
            .prefetch_related("assignments__scenario", "assignments__system", "assignments__retake_of")
        ):
            # The assignments first: they number the sessions the events name.
            assignments = [
                self._assignment(assignment)
                for assignment in sorted(participant.assignments.all(), key=lambda a: a.position)
            ]
            participants.append(
                {
                    "code": participant.code,
                    "enrolment_index": participant.enrolment_index,
                    "questionnaire_answers": participant.questionnaire_answers,
                    "consent_version": participant.consent_version,
                    "consented_at": _t(participant.consented_at),
                    "declined_at": _t(participant.declined_at),
                    "withdrawn_at": _t(participant.withdrawn_at),
                    "created_at": _t(participant.created_at),
                    # State, plan row, panel and exclusion: participant_state.py.
                    **participant_state_exported(participant, panel_ids=self.panel_ids),
                    "assignments": assignments,
                    "events": [self._event(event) for event in self.events.get(participant.pk, [])],
                }
            )
        return participants

    def _assignment(self, assignment) -> dict:
        session = self.sessions.get(assignment.pk)
        session_data = None
        if session is not None:
            self.session_position[session.pk] = assignment.position
            session_data = self._session(session)
        return {
            "position": assignment.position,
            "scenario": assignment.scenario.code,
            "system": assignment.system.code,
            "retake_of": assignment.retake_of.position if assignment.retake_of_id else None,
            "retake_reason": assignment.retake_reason,
            "pre_task_answers": assignment.pre_task_answers,
            "session": session_data,
        }

    def _session(self, session: SearchSession) -> dict:
        return {
            "id": session.pk,
            "started_at": _t(session.started_at),
            "ended_at": _t(session.ended_at),
            "end_reason": session.end_reason,
            "post_task_answers": session.post_task_answers,
            # The client's clock offset: an event's time on the timeline is client_time + it.
            "clock_offset_ms": session.clock_offset_ms,
            "clock_delay_ms": session.clock_delay_ms,
            "queries": [self._query(query) for query in self.queries.get(session.pk, [])],
            "attention_spans": [
                [span.kind, span.start_ms, span.duration_ms] for span in self.spans.get(session.pk, [])
            ],
            "judgments": [
                {
                    "doc": _doc(judgment),
                    "grade": judgment.grade,
                    "created_at": _t(judgment.created_at),
                    "updated_at": _t(judgment.updated_at),
                    "history": [
                        {"grade": change.grade, "changed_at": _t(change.changed_at)}
                        for change in judgment.history.all()
                    ],
                }
                for judgment in self.judgments.get(session.pk, [])
            ],
        }

    def _query(self, query: Query) -> dict:
        return {
            "id": query.pk,
            "position": query.position,
            "text": query.text,
            "issued_at": _t(query.issued_at),
            "scan_mark_rank": query.scan_mark_rank,
            "system_message": query.system_message,
            "first_key_ms": query.first_key_ms,
            "formulation_ms": query.formulation_ms,
            "shown_results": [
                {
                    "rank": row.rank,
                    "doc": _doc(row),
                    "title": row.title,
                    "snippet": row.snippet,
                    "page": row.page,
                    "shown_at": _t(row.shown_at),
                    "exposure": _exposure(row),
                }
                for row in self.shown.get(query.pk, [])
            ],
            "page_exposures": [
                {"page": scroll.page, "scroll_permille": scroll.scroll_permille}
                for scroll in self.scrolls.get(query.pk, [])
            ],
        }

    def _event(self, event: Event) -> dict:
        return {
            "type": event.type,
            "client_event_id": event.client_event_id,
            "sequence": event.sequence,
            "client_time": _t(event.client_time),
            "server_time": _t(event.server_time),
            "session": self.session_position.get(event.session_id),
            "payload": event.payload,
            "origin": event.origin,
        }


def _exposure(row: ShownResult) -> dict | None:
    exposure = getattr(row, "exposure", None)  # none when nothing reported it
    if exposure is None:
        return None
    return exposure.figures()


def _reference_versions(study: Study) -> list[dict]:
    versions = list(
        ReferenceVersion.objects.filter(study=study).select_related("created_by").order_by("number")
    )
    version_judgments: dict[int, list[ReferenceJudgment]] = {}
    for judgment in (
        ReferenceJudgment.objects.filter(version__study=study)
        .select_related("judged_by")
        .annotate(doc=F("document__external_id"))
        .order_by("version_id", "topic_id", "document__external_id")
    ):
        version_judgments.setdefault(judgment.version_id, []).append(judgment)
    return [
        {
            "number": version.number,
            "note": version.note,
            "created_by": version.creator_name,  # kept when the account is not
            "created_at": _t(version.created_at),
            "provenance": version.provenance or None,  # the machine rules that let grades in
            "judgments": [
                {
                    "topic_id": j.topic_id,
                    "doc": _doc(j),
                    "grade": j.grade,
                    "source": j.source,
                    "judged_by": j.judge_name,  # kept when the account is not
                }
                for j in version_judgments.get(version.pk, [])
            ],
        }
        for version in versions
    ]


def _assessment(study: Study) -> dict:
    pools = list(
        AssessmentPool.objects.filter(scenario__study=study)
        .select_related("scenario")
        .prefetch_related(
            Prefetch("documents", PoolDocument.objects.annotate(doc=F("document__external_id")))
        )
        .order_by("scenario_id")
    )
    plan = AssessmentPlan.objects.filter(study=study).first()
    guidelines = study.assessment_guidelines.select_related("scenario").order_by("id")
    return {
        "assessors_per_document": plan.assessors_per_document if plan else None,
        # The double-judged share, the highlighting of participants' queries, the guidelines.
        "double_judged_percent": plan.double_judged_percent if plan else None,
        "highlight_participant_queries": plan.highlight_participant_queries if plan else None,
        "guidelines": [
            {"scenario": g.scenario.code if g.scenario else None, "text": g.text} for g in guidelines
        ],
        "pools": [
            {
                "scenario": pool.scenario.code,
                "rule": pool.rule,
                "top_x": pool.top_x,
                "built_at": _t(pool.built_at),
                "documents": [
                    {
                        "doc": _doc(d),
                        "source": d.source,
                        "source_detail": d.source_detail,
                        "added_at": _t(d.added_at),
                    }
                    for d in sorted(pool.documents.all(), key=lambda d: d.pk)
                ],
            }
            for pool in pools
        ],
    }
