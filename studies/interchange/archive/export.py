"""`study_archive`: a whole study as one JSON-ready dict, section by section (docs/file-formats.md). Rows
refer to each other by codes, positions and document ids; the documents section holds every document another
section names."""

from __future__ import annotations

import json

from django.utils import timezone

from studies.design.selectors import events_read
from studies.errors import ExportError
from studies.interchange.archive.layout import FORMAT, VERSION
from studies.models import (
    AssessmentPlan,
    AssessmentPool,
    Collection,
    Document,
    Event,
    Judgment,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    SearchSession,
    ShownResult,
    Study,
)


def _t(value) -> str | None:
    return value.isoformat() if value is not None else None


class _Documents:
    """The documents the sections name, gathered as they are named; written last, as the documents section."""

    def __init__(self):
        self.named: dict[int, Document] = {}

    def id_of(self, document: Document) -> str:
        known = self.named.setdefault(document.pk, document)
        return known.external_id

    def section(self) -> list[dict]:
        by_external: dict[str, Document] = {}
        for document in self.named.values():
            other = by_external.setdefault(document.external_id, document)
            if other.pk != document.pk:
                raise ExportError(
                    f"document id {document.external_id!r} names documents of two collections; "
                    "an archive refers to documents by id"
                )
        collections = dict(
            Collection.objects.filter(pk__in={d.collection_id for d in self.named.values()}).values_list(
                "pk", "name"
            )
        )
        return [
            {
                "collection": collections[d.collection_id],
                "id": d.pk,
                "external_id": d.external_id,
                "title": d.title,
                "text": d.text,
                "extra": d.extra,
            }
            for d in sorted(self.named.values(), key=lambda d: (collections[d.collection_id], d.external_id))
        ]


def study_archive(*, study: Study) -> dict:
    """The study as a JSON-ready dict (see the package docstring); deterministic for the same rows."""
    documents = _Documents()
    participants = _Participants(study, documents).section()
    reference_versions = _reference_versions(study, documents)
    assessment = _assessment(study, documents)
    documents_section = documents.section()
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _t(timezone.now()),
        "study": _study_settings(study),
        "grade_levels": [{"value": g.value, "label": g.label} for g in study.grade_levels.order_by("value")],
        "documents": documents_section,
        "scenarios": [
            {"code": s.code, "title": s.title, "text": s.text, "topic_id": s.topic_id}
            for s in study.scenarios.order_by("id")
        ],
        "systems": [
            {"code": s.code, "name": s.name, "backend": s.backend, "config": s.config}
            for s in study.systems.order_by("id")
        ],
        "participants": participants,
        "reference_versions": reference_versions,
        "assessment": assessment,
        "audit": [
            {"participant_code": a.participant_code, "action": a.action, "detail": a.detail, "at": _t(a.at)}
            for a in study.audit_entries.order_by("at", "id")
        ],
    }


def study_archive_json(*, study: Study) -> str:
    return json.dumps(study_archive(study=study), indent=1, ensure_ascii=False, sort_keys=False) + "\n"


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
        "design_locked_at": _t(study.design_locked_at),
        "created_at": _t(study.created_at),
    }


class _Participants:
    """The participants section: each participant with their assignments, sessions (queries, shown results,
    judgments with history) and raw events. A preview's rows are never exported
    (studies/design/lifecycle.py)."""

    def __init__(self, study: Study, documents: _Documents):
        self.study = study
        self.doc = documents.id_of
        self.sessions = {
            s.assignment_id: s
            for s in SearchSession.objects.filter(
                assignment__participant__study=study, assignment__participant__preview_at__isnull=True
            )
        }
        self.session_position: dict[int | None, int | None] = {s.pk: None for s in self.sessions.values()}
        self.queries: dict[int, list[Query]] = {}
        for query in Query.objects.filter(
            session__assignment__participant__study=study,
            session__assignment__participant__preview_at__isnull=True,
        ).order_by("session_id", "position"):
            self.queries.setdefault(query.session_id, []).append(query)
        self.shown: dict[int, list[ShownResult]] = {}
        for row in (
            ShownResult.objects.filter(
                query__session__assignment__participant__study=study,
                query__session__assignment__participant__preview_at__isnull=True,
            )
            .select_related("document")
            .order_by("query_id", "rank")
        ):
            self.shown.setdefault(row.query_id, []).append(row)
        self.judgments: dict[int, list[Judgment]] = {}
        for judgment in (
            Judgment.objects.filter(
                session__assignment__participant__study=study,
                session__assignment__participant__preview_at__isnull=True,
            )
            .select_related("document")
            .prefetch_related("history")
            .order_by("session_id", "document__external_id")
        ):
            self.judgments.setdefault(judgment.session_id, []).append(judgment)
        self.events: dict[int, list[Event]] = {}
        for event in events_read(
            Event.objects.filter(participant__study=study, participant__preview_at__isnull=True).order_by(
                "participant_id", "id"
            )
        ):
            self.events.setdefault(event.participant_id, []).append(event)

    def section(self) -> list[dict]:
        participants = []
        for participant in (
            self.study.participants.filter(preview_at__isnull=True)
            .order_by("enrolment_index")
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
            "judgments": [
                {
                    "doc": self.doc(judgment.document),
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
            "shown_results": [
                {
                    "rank": row.rank,
                    "doc": self.doc(row.document),
                    "title": row.title,
                    "snippet": row.snippet,
                    "page": row.page,
                    "shown_at": _t(row.shown_at),
                }
                for row in self.shown.get(query.pk, [])
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


def _reference_versions(study: Study, documents: _Documents) -> list[dict]:
    versions = list(
        ReferenceVersion.objects.filter(study=study).select_related("created_by").order_by("number")
    )
    version_judgments: dict[int, list[ReferenceJudgment]] = {}
    for judgment in (
        ReferenceJudgment.objects.filter(version__study=study)
        .select_related("document", "judged_by")
        .order_by("version_id", "topic_id", "document__external_id")
    ):
        version_judgments.setdefault(judgment.version_id, []).append(judgment)
    return [
        {
            "number": version.number,
            "note": version.note,
            "created_by": version.created_by.username if version.created_by else None,
            "created_at": _t(version.created_at),
            "judgments": [
                {
                    "topic_id": j.topic_id,
                    "doc": documents.id_of(j.document),
                    "grade": j.grade,
                    "source": j.source,
                    "judged_by": j.judged_by.username if j.judged_by else None,
                }
                for j in version_judgments.get(version.pk, [])
            ],
        }
        for version in versions
    ]


def _assessment(study: Study, documents: _Documents) -> dict:
    pools = list(
        AssessmentPool.objects.filter(scenario__study=study)
        .select_related("scenario")
        .prefetch_related("documents__document")
        .order_by("scenario_id")
    )
    plan = AssessmentPlan.objects.filter(study=study).first()
    return {
        "assessors_per_document": plan.assessors_per_document if plan else None,
        "pools": [
            {
                "scenario": pool.scenario.code,
                "rule": pool.rule,
                "top_x": pool.top_x,
                "built_at": _t(pool.built_at),
                "documents": [
                    {
                        "doc": documents.id_of(d.document),
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
