"""A whole study as one JSON archive, and its import into another SessionLab (docs/file-formats.md).

The archive holds the study's settings and grade scale, the collection documents it uses (shown, judged,
in a reference version or a pool), scenarios, systems, participants with their assignments, sessions,
queries, shown results, judgments with their history, the raw event log, reference versions with their
judgments, assessment pools, and the audit trail. Rows refer to each other by codes, positions and document
ids, never by database ids; the raw event payloads keep the ids the exporting server wrote in its answers
(`session`, `query_id`, `open_document_id`), and the import rewrites them to the new rows.

Not carried: accounts (the importing user owns the study; `created_by` of a reference version is kept by
username when that account exists), participants' access tokens (new private links are issued: an archive
is not a bearer of old links), and assessors' memberships, judgments and adjudication decisions (they belong
to accounts; the reference versions they produced are carried).

`study_archive_import` reads the JSON with line numbers, checks every row before and while writing, and runs
in one transaction: an error names the file, the line of the object and the field (a JSON path).
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import math
from contextlib import contextmanager
from json import scanner
from json.decoder import JSONObject
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from studies.assessment.references import reference_version_create
from studies.design.questionnaires import questionnaire_errors
from studies.design.selectors import collection_usable_by, events_read
from studies.design.services import study_slug_free, system_check_config
from studies.errors import ExportError, SystemConfigError
from studies.interchange import ImportFailure
from studies.models import (
    AssessmentPlan,
    AssessmentPool,
    Assignment,
    AuditEntry,
    Collection,
    Document,
    Event,
    GradeLevel,
    Judgment,
    JudgmentChange,
    Participant,
    PoolDocument,
    Query,
    ReferenceJudgment,
    ReferenceVersion,
    Scenario,
    SearchSession,
    ShownResult,
    Study,
    System,
    reference_grade_allowed,
)
from studies.participation.event_checks import MAX_SEQUENCE, TOO_FAR, client_time_checked

FORMAT = "sessionlab-study-archive"
VERSION = 1
# Ids the server writes into an event's acknowledgement, and the table each points to.
ACK_IDS = {"session": "session", "query_id": "query", "open_document_id": "document"}


def _t(value) -> str | None:
    return value.isoformat() if value is not None else None


# --- export ---------------------------------------------------------------------------------------------


def study_archive(*, study: Study) -> dict:
    """The study as a JSON-ready dict (see the module docstring); deterministic for the same rows."""
    sessions = {
        s.assignment_id: s
        for s in SearchSession.objects.filter(
            assignment__participant__study=study, assignment__participant__preview_at__isnull=True
        )
    }  # a preview's rows are never exported (studies/design/lifecycle.py)
    session_position = {s.pk: None for s in sessions.values()}
    queries: dict[int, list[Query]] = {}
    for query in Query.objects.filter(
        session__assignment__participant__study=study,
        session__assignment__participant__preview_at__isnull=True,
    ).order_by("session_id", "position"):
        queries.setdefault(query.session_id, []).append(query)
    shown: dict[int, list[ShownResult]] = {}
    for row in (
        ShownResult.objects.filter(
            query__session__assignment__participant__study=study,
            query__session__assignment__participant__preview_at__isnull=True,
        )
        .select_related("document")
        .order_by("query_id", "rank")
    ):
        shown.setdefault(row.query_id, []).append(row)
    judgments: dict[int, list[Judgment]] = {}
    for judgment in (
        Judgment.objects.filter(
            session__assignment__participant__study=study,
            session__assignment__participant__preview_at__isnull=True,
        )
        .select_related("document")
        .prefetch_related("history")
        .order_by("session_id", "document__external_id")
    ):
        judgments.setdefault(judgment.session_id, []).append(judgment)
    events: dict[int, list[Event]] = {}
    for event in events_read(
        Event.objects.filter(participant__study=study, participant__preview_at__isnull=True).order_by(
            "participant_id", "id"
        )
    ):
        events.setdefault(event.participant_id, []).append(event)
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
    pools = list(
        AssessmentPool.objects.filter(scenario__study=study)
        .select_related("scenario")
        .prefetch_related("documents__document")
        .order_by("scenario_id")
    )

    documents: dict[int, Document] = {}

    def doc(document: Document) -> str:
        known = documents.setdefault(document.pk, document)
        return known.external_id

    participants = []
    for participant in (
        study.participants.filter(preview_at__isnull=True)
        .order_by("enrolment_index")
        .prefetch_related("assignments__scenario", "assignments__system", "assignments__retake_of")
    ):
        assignments = []
        for assignment in sorted(participant.assignments.all(), key=lambda a: a.position):
            session = sessions.get(assignment.pk)
            session_data = None
            if session is not None:
                session_position[session.pk] = assignment.position
                session_data = {
                    "id": session.pk,
                    "started_at": _t(session.started_at),
                    "ended_at": _t(session.ended_at),
                    "end_reason": session.end_reason,
                    "post_task_answers": session.post_task_answers,
                    # The client's clock offset: an event's time on the timeline is client_time + it.
                    "clock_offset_ms": session.clock_offset_ms,
                    "clock_delay_ms": session.clock_delay_ms,
                    "queries": [
                        {
                            "id": query.pk,
                            "position": query.position,
                            "text": query.text,
                            "issued_at": _t(query.issued_at),
                            "scan_mark_rank": query.scan_mark_rank,
                            "system_message": query.system_message,
                            "shown_results": [
                                {
                                    "rank": row.rank,
                                    "doc": doc(row.document),
                                    "title": row.title,
                                    "snippet": row.snippet,
                                    "page": row.page,
                                    "shown_at": _t(row.shown_at),
                                }
                                for row in shown.get(query.pk, [])
                            ],
                        }
                        for query in queries.get(session.pk, [])
                    ],
                    "judgments": [
                        {
                            "doc": doc(judgment.document),
                            "grade": judgment.grade,
                            "created_at": _t(judgment.created_at),
                            "updated_at": _t(judgment.updated_at),
                            "history": [
                                {"grade": change.grade, "changed_at": _t(change.changed_at)}
                                for change in judgment.history.all()
                            ],
                        }
                        for judgment in judgments.get(session.pk, [])
                    ],
                }
            assignments.append(
                {
                    "position": assignment.position,
                    "scenario": assignment.scenario.code,
                    "system": assignment.system.code,
                    "retake_of": assignment.retake_of.position if assignment.retake_of_id else None,
                    "retake_reason": assignment.retake_reason,
                    "pre_task_answers": assignment.pre_task_answers,
                    "session": session_data,
                }
            )
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
                "events": [
                    {
                        "type": event.type,
                        "client_event_id": event.client_event_id,
                        "sequence": event.sequence,
                        "client_time": _t(event.client_time),
                        "server_time": _t(event.server_time),
                        "session": session_position.get(event.session_id),
                        "payload": event.payload,
                    }
                    for event in events.get(participant.pk, [])
                ],
            }
        )
    reference_versions = [
        {
            "number": version.number,
            "note": version.note,
            "created_by": version.created_by.username if version.created_by else None,
            "created_at": _t(version.created_at),
            "judgments": [
                {
                    "topic_id": j.topic_id,
                    "doc": doc(j.document),
                    "grade": j.grade,
                    "source": j.source,
                    "judged_by": j.judged_by.username if j.judged_by else None,
                }
                for j in version_judgments.get(version.pk, [])
            ],
        }
        for version in versions
    ]
    plan = AssessmentPlan.objects.filter(study=study).first()
    assessment = {
        "assessors_per_document": plan.assessors_per_document if plan else None,
        "pools": [
            {
                "scenario": pool.scenario.code,
                "rule": pool.rule,
                "top_x": pool.top_x,
                "built_at": _t(pool.built_at),
                "documents": [
                    {
                        "doc": doc(d.document),
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
    by_external: dict[str, Document] = {}
    for document in documents.values():
        other = by_external.setdefault(document.external_id, document)
        if other.pk != document.pk:
            raise ExportError(
                f"document id {document.external_id!r} names documents of two collections; "
                "an archive refers to documents by id"
            )
    collections = dict(
        Collection.objects.filter(pk__in={d.collection_id for d in documents.values()}).values_list(
            "pk", "name"
        )
    )
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _t(timezone.now()),
        "study": {
            "name": study.name,
            "slug": study.slug,
            "description": study.description,
            "collection": study.collection.name if study.collection_id else None,
            "consent_text": study.consent_text,
            "consent_version": study.consent_version,
            "questionnaire": study.questionnaire,
            "post_task_questionnaire": study.post_task_questionnaire,
            "pre_task_questionnaire": study.pre_task_questionnaire,
            "time_limit_minutes": study.time_limit_minutes,
            "design_locked_at": _t(study.design_locked_at),
            "created_at": _t(study.created_at),
        },
        "grade_levels": [{"value": g.value, "label": g.label} for g in study.grade_levels.order_by("value")],
        "documents": [
            {
                "collection": collections[d.collection_id],
                "id": d.pk,
                "external_id": d.external_id,
                "title": d.title,
                "text": d.text,
                "extra": d.extra,
            }
            for d in sorted(documents.values(), key=lambda d: (collections[d.collection_id], d.external_id))
        ],
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


# --- reading with line numbers --------------------------------------------------------------------------


class LinedDict(dict):
    """A JSON object that knows the line it starts on."""

    line: int | None = None


def load_json_with_lines(text: str, path: str):
    """json.loads, except that every object is a LinedDict carrying its line (the pure-Python scanner, with
    the object parser wrapped); a syntax error names the file and line."""
    newlines = [i for i, ch in enumerate(text) if ch == "\n"]

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None, _w=None):
        start = s_and_end[1]
        value, end = JSONObject(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo)
        lined = LinedDict(value)
        lined.line = bisect.bisect_left(newlines, start) + 1
        return lined, end

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object
    decoder.scan_once = scanner.py_make_scanner(decoder)
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as error:
        raise ImportFailure(
            path, error.lineno, None, f"invalid JSON: {error.msg} (column {error.colno})"
        ) from None
    except RecursionError:
        raise ImportFailure(path, None, None, "invalid JSON: nested too deeply") from None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "a NUL character (\\u0000), which the database cannot store"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:  # only a lone surrogate: a valid pair was decoded into one character
        code, at = ord(text[error.start]), error.start + 1
        return f"a lone UTF-16 surrogate (U+{code:04X}, half a character such as an emoji) at character {at}"
    return None


def refuse_unstorable_text(data, path: str) -> None:
    """Every key and string of the archive must be text the database can store: a lone surrogate (a JSON
    escape such as \\ud83d without its pair) or a NUL is refused naming file, line and field, before anything
    is written (it was a traceback from the database driver, half-way through the import)."""
    stack = [(data, "$", getattr(data, "line", None))]
    while stack:
        value, where, line = stack.pop()
        if isinstance(value, dict):
            line = getattr(value, "line", line)
            for key, item in value.items():
                problem = _text_problem(key)
                if problem:
                    raise ImportFailure(path, line, where, f"a key holds {problem}")
                stack.append((item, f"{where}.{key}", line))
        elif isinstance(value, list):
            stack.extend((item, f"{where}[{i}]", line) for i, item in enumerate(value))
        elif isinstance(value, str):
            problem = _text_problem(value)
            if problem:
                raise ImportFailure(path, line, where, f"the text holds {problem}")


# --- import ---------------------------------------------------------------------------------------------


class _Reader:
    """Typed access to the archive's objects; every complaint names file, line and JSON path."""

    def __init__(self, path: str):
        self.path = path
        self.notes: list[str] = []  # what was kept but changed (a client time kept as text), by file and line

    def fail(self, obj, where: str, reason: str):
        raise ImportFailure(self.path, getattr(obj, "line", None), where, reason)

    def obj(self, value, where: str, parent=None) -> LinedDict:
        if not isinstance(value, dict):
            self.fail(parent, where, "expected an object")
        return value

    def list(self, obj, key: str, where: str) -> list:
        value = obj.get(key) if isinstance(obj, dict) else None
        if not isinstance(value, list):
            self.fail(obj, f"{where}.{key}", "expected a list")
        return value

    def get(self, obj, key: str, where: str, kind, *, null: bool = False, default=...):
        if key not in obj:
            if default is not ...:
                return default
            self.fail(obj, f"{where}.{key}", "missing")
        value = obj[key]
        if value is None and null:
            return None
        if kind == "time":
            moment = parse_datetime(value) if isinstance(value, str) else None
            if moment is None:
                self.fail(obj, f"{where}.{key}", f"{value!r} is not an ISO 8601 date and time")
            try:  # PostgreSQL would store it, and every later read of the row would fail
                (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).astimezone(dt.UTC)
            except OverflowError:
                self.fail(obj, f"{where}.{key}", f"{value!r} is outside years 1-9999 in UTC")
            return moment
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(obj, f"{where}.{key}", f"{value!r} is not an integer")
        if kind is not int and not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            self.fail(obj, f"{where}.{key}", f"{value!r} is not of type {names}")
        return value


def _milliseconds(r: _Reader, item, key: str, where: str) -> float | None:
    """A session's clock figure (docs/time-model.md): a finite number of milliseconds, or null (older archives
    have none: the client's times are then taken as they are)."""
    value = r.get(item, key, where, (int, float), null=True, default=None)
    if value is not None and (isinstance(value, bool) or not math.isfinite(value) or abs(value) > 1e12):
        r.fail(item, f"{where}.{key}", f"{value!r} is not a number of milliseconds")
    return None if value is None else float(value)


@contextmanager
def stored_timestamps():
    """Let the import write the archive's creation times into auto_now_add fields (the event log refuses
    UPDATE, so they cannot be fixed afterwards). Process-wide while it lasts: commands and tests only."""
    fields = [
        Study._meta.get_field("created_at"),
        Participant._meta.get_field("created_at"),
        Event._meta.get_field("server_time"),
        ReferenceVersion._meta.get_field("created_at"),
        AuditEntry._meta.get_field("at"),
        PoolDocument._meta.get_field("added_at"),
    ]
    for f in fields:
        f.auto_now_add = False
    try:
        yield
    finally:
        for f in fields:
            f.auto_now_add = True


def study_archive_import(*, path: str | Path, owner, name: str | None = None) -> Study:
    """Import the archive at `path` as a new study owned by `owner` (all or nothing)."""
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ImportFailure(path, None, None, f"cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ImportFailure(path, None, None, "not UTF-8 text") from None
    data = load_json_with_lines(text, path)
    refuse_unstorable_text(data, path)
    try:
        with transaction.atomic(), stored_timestamps():
            return _import(data, path, owner, name)
    except ImportFailure:
        raise
    except (IntegrityError, DatabaseError) as error:
        raise ImportFailure(path, None, None, f"the database refused the archive: {error}") from None


def _collection_for(r: _Reader, obj, where: str, name: str, owner) -> Collection:
    """The archive's collection by name: one the owner may use, or a new one they own. Another lab's
    collection of that name is refused: its documents (and which ids it holds) are not the archive's to take."""
    collection = Collection.objects.filter(name=name).first()
    if collection is None:
        return Collection.objects.create(name=name, owner=owner)
    if not collection_usable_by(user=owner, collection=collection):
        r.fail(
            obj,
            where,
            f"a collection named {name!r} exists and is not shared with {owner.username!r}; "
            "ask its owner to share it, or rename the collection in the archive",
        )
    return collection


def _client_time_imported(r: _Reader, e_item, e_where: str, server_time, payload: dict):
    """An event's client time, by the rule the events endpoints apply (event_checks.client_time_checked, with
    the archived server time as the receive time). A text that is no time, or one outside years 1-9999 in UTC,
    fails the import (an export never writes one); a time too far from its server time is kept as text in
    the payload's data only, as the endpoints keep it, and the import notes file, line and field."""
    value = e_item.get("client_time")
    where = f"{e_where}.client_time"
    if value is not None and not isinstance(value, str):
        r.fail(e_item, where, f"{value!r} is not an ISO 8601 date and time")
    aware = server_time if server_time.tzinfo else server_time.replace(tzinfo=dt.UTC)
    moment, text, why = client_time_checked(
        value, received_at=aware, window=dt.timedelta(seconds=settings.CLIENT_TIME_WINDOW_SECONDS)
    )
    if why is not None and why != TOO_FAR:
        r.fail(e_item, where, f"{value!r} is {why}")
    if text is not None:
        data = payload.get("data")
        (data if isinstance(data, dict) else payload)["client_time_raw"] = text
        r.notes.append(
            f"{r.path}:{getattr(e_item, 'line', None)}: {where}: {text!r} is {why}; kept as text in"
            " payload.data.client_time_raw"
        )
    return moment


def _questionnaire(r: _Reader, info, key: str, where: str) -> list:
    """A questionnaire as the API takes it (studies/design/questionnaires.py): a malformed one broke the pages."""
    value = r.get(info, key, where, list, default=[])
    errors = questionnaire_errors(value)
    if errors:
        r.fail(info, f"{where}.{key}", "; ".join(errors))
    return value


def _import(data, path: str, owner, name: str | None) -> Study:
    r = _Reader(path)
    r.obj(data, "$")
    if data.get("format") != FORMAT:
        r.fail(data, "$.format", f"expected {FORMAT!r}, found {data.get('format')!r}")
    if data.get("version") != VERSION:
        r.fail(data, "$.version", f"this SessionLab reads version {VERSION}, found {data.get('version')!r}")
    info = r.obj(data.get("study"), "$.study", data)
    W = "$.study"
    study = Study.objects.create(
        name=name or r.get(info, "name", W, str),
        slug=study_slug_free(r.get(info, "slug", W, str), info["name"]),
        description=r.get(info, "description", W, str, default=""),
        owner=owner,
        consent_text=r.get(info, "consent_text", W, str, default=""),
        consent_version=r.get(info, "consent_version", W, str, default="1"),
        questionnaire=_questionnaire(r, info, "questionnaire", W),
        post_task_questionnaire=_questionnaire(r, info, "post_task_questionnaire", W),
        pre_task_questionnaire=_questionnaire(r, info, "pre_task_questionnaire", W),
        time_limit_minutes=r.get(info, "time_limit_minutes", W, int, null=True, default=None),
        design_locked_at=r.get(info, "design_locked_at", W, "time", null=True, default=None),
        created_at=r.get(info, "created_at", W, "time", null=True, default=None) or timezone.now(),
    )
    study.researchers.add(owner)

    scale = set()
    levels = []
    for i, level in enumerate(r.list(data, "grade_levels", "$")):
        where = f"$.grade_levels[{i}]"
        r.obj(level, where, data)
        value = r.get(level, "value", where, int)
        if not 0 <= value <= 9 or value in scale:
            r.fail(level, f"{where}.value", f"{value} is outside 0..9 or given twice")
        scale.add(value)
        levels.append(GradeLevel(study=study, value=value, label=r.get(level, "label", where, str)))
    if len(levels) < 2:
        r.fail(data, "$.grade_levels", "a grade scale needs at least two grades")
    GradeLevel.objects.bulk_create(levels)

    # Documents: reuse what the named collection already holds, create the rest.
    collections: dict[str, Collection] = {}
    wanted: dict[str, tuple] = {}
    old_document_ids: dict[int, str] = {}
    for i, item in enumerate(r.list(data, "documents", "$")):
        where = f"$.documents[{i}]"
        r.obj(item, where, data)
        external_id = r.get(item, "external_id", where, str)
        if external_id in wanted:
            r.fail(item, f"{where}.external_id", f"document {external_id!r} is listed twice")
        collection_name = r.get(item, "collection", where, str)
        if collection_name not in collections:
            collections[collection_name] = _collection_for(
                r, item, f"{where}.collection", collection_name, owner
            )
        wanted[external_id] = (collections[collection_name], item, where)
        if isinstance(item.get("id"), int):
            old_document_ids[item["id"]] = external_id
    study_collection = r.get(info, "collection", W, str, null=True, default=None)
    if study_collection is not None:
        if study_collection not in collections:
            collections[study_collection] = _collection_for(
                r, info, f"{W}.collection", study_collection, owner
            )
        study.collection = collections[study_collection]
        study.save(update_fields=["collection"])
    documents: dict[str, Document] = {}
    for collection in collections.values():
        ids = [e for e, (c, _i, _w) in wanted.items() if c.pk == collection.pk]
        for start in range(0, len(ids), 5000):
            for document in collection.documents.filter(external_id__in=ids[start : start + 5000]):
                documents[document.external_id] = document
    fresh = []
    for external_id, (collection, item, where) in wanted.items():
        if external_id not in documents:
            fresh.append(
                Document(
                    collection=collection,
                    external_id=external_id,
                    title=r.get(item, "title", where, str, default=""),
                    text=r.get(item, "text", where, str, default=""),
                    extra=r.get(item, "extra", where, dict, default={}),
                )
            )
    for document in Document.objects.bulk_create(fresh, batch_size=2000):
        documents[document.external_id] = document

    def document_of(obj, where: str) -> Document:
        external_id = r.get(obj, "doc", where, str)
        if external_id not in documents:
            r.fail(obj, f"{where}.doc", f"document {external_id!r} is not in the archive's documents")
        return documents[external_id]

    def grade_of(obj, where: str, *, reference: bool = False) -> int:
        grade = r.get(obj, "grade", where, int)
        if not (reference_grade_allowed(grade, scale) if reference else grade in scale):
            r.fail(obj, f"{where}.grade", f"grade {grade} is not in the study's scale {sorted(scale)}")
        return grade

    scenarios: dict[str, Scenario] = {}
    for i, item in enumerate(r.list(data, "scenarios", "$")):
        where = f"$.scenarios[{i}]"
        r.obj(item, where, data)
        code = r.get(item, "code", where, str)
        if code in scenarios:
            r.fail(item, f"{where}.code", f"scenario {code!r} is listed twice")
        scenarios[code] = Scenario(
            study=study,
            code=code,
            title=r.get(item, "title", where, str),
            text=r.get(item, "text", where, str),
            topic_id=r.get(item, "topic_id", where, str),
        )
    topics = [s.topic_id for s in scenarios.values()]
    if len(set(topics)) != len(topics):
        r.fail(data, "$.scenarios", "two scenarios share a topic_id")
    Scenario.objects.bulk_create(scenarios.values())
    systems: dict[str, System] = {}
    for i, item in enumerate(r.list(data, "systems", "$")):
        where = f"$.systems[{i}]"
        r.obj(item, where, data)
        code = r.get(item, "code", where, str)
        if code in systems:
            r.fail(item, f"{where}.code", f"system {code!r} is listed twice")
        backend = r.get(item, "backend", where, str)
        config = r.get(item, "config", where, dict, default={})
        if backend == System.Backend.HTTP and set(config) == {"source"}:
            # A Session Track log's system as imports before November 2026 stored it: the log holds the results
            # shown, which is what an external system is.
            r.notes.append(
                f"{r.path}:{getattr(item, 'line', None)}: {where}: an HTTP system with only a "
                "source (a Session Track log's) imported as an external system"
            )
            backend, config = System.Backend.EXTERNAL, {}
        try:
            system_check_config(code=code, backend=backend, config=config)  # the services' one rule
        except SystemConfigError as error:
            r.fail(item, f"{where}.{error.field}", str(error))
        systems[code] = System(
            study=study, code=code, name=r.get(item, "name", where, str), backend=backend, config=config
        )
    System.objects.bulk_create(systems.values())

    old_ids: dict[str, dict[int, int]] = {"session": {}, "query": {}, "document": {}}
    for old, external_id in old_document_ids.items():
        old_ids["document"][old] = documents[external_id].pk
    codes, indexes = set(), set()
    pending_events = []
    for i, item in enumerate(r.list(data, "participants", "$")):
        where = f"$.participants[{i}]"
        r.obj(item, where, data)
        code = r.get(item, "code", where, str)
        index = r.get(item, "enrolment_index", where, int)
        if code in codes or index in indexes:
            r.fail(item, where, f"participant code {code!r} or enrolment index {index} is used twice")
        codes.add(code)
        indexes.add(index)
        participant = Participant.objects.create(
            study=study,
            code=code,
            enrolment_index=index,
            questionnaire_answers=r.get(item, "questionnaire_answers", where, dict, default={}),
            consent_version=r.get(item, "consent_version", where, str, default=""),
            consented_at=r.get(item, "consented_at", where, "time", null=True, default=None),
            declined_at=r.get(item, "declined_at", where, "time", null=True, default=None),
            withdrawn_at=r.get(item, "withdrawn_at", where, "time", null=True, default=None),
            created_at=r.get(item, "created_at", where, "time", null=True, default=None) or timezone.now(),
        )
        by_position: dict[int, Assignment] = {}
        sessions_by_position: dict[int, SearchSession] = {}
        for j, a_item in enumerate(r.list(item, "assignments", where)):
            a_where = f"{where}.assignments[{j}]"
            r.obj(a_item, a_where, item)
            position = r.get(a_item, "position", a_where, int)
            scenario_code, system_code = (
                r.get(a_item, "scenario", a_where, str),
                r.get(a_item, "system", a_where, str),
            )
            if scenario_code not in scenarios:
                r.fail(a_item, f"{a_where}.scenario", f"no scenario {scenario_code!r} in the archive")
            if system_code not in systems:
                r.fail(a_item, f"{a_where}.system", f"no system {system_code!r} in the archive")
            retake_of = r.get(a_item, "retake_of", a_where, int, null=True, default=None)
            if retake_of is not None and retake_of not in by_position:
                r.fail(a_item, f"{a_where}.retake_of", f"no earlier assignment at position {retake_of}")
            if position in by_position or position < 1:
                r.fail(a_item, f"{a_where}.position", f"position {position} is used twice or below 1")
            assignment = Assignment.objects.create(
                participant=participant,
                position=position,
                scenario=scenarios[scenario_code],
                system=systems[system_code],
                retake_of=by_position.get(retake_of) if retake_of else None,
                retake_reason=r.get(a_item, "retake_reason", a_where, str, default=""),
                pre_task_answers=r.get(a_item, "pre_task_answers", a_where, dict, default={}),
            )
            by_position[position] = assignment
            s_item = a_item.get("session")
            if s_item is None:
                continue
            s_where = f"{a_where}.session"
            r.obj(s_item, s_where, a_item)
            session = SearchSession.objects.create(
                assignment=assignment,
                started_at=r.get(s_item, "started_at", s_where, "time"),
                ended_at=r.get(s_item, "ended_at", s_where, "time", null=True, default=None),
                end_reason=r.get(s_item, "end_reason", s_where, str, default=""),
                post_task_answers=r.get(s_item, "post_task_answers", s_where, dict, default={}),
                clock_offset_ms=_milliseconds(r, s_item, "clock_offset_ms", s_where),
                clock_delay_ms=_milliseconds(r, s_item, "clock_delay_ms", s_where),
            )
            sessions_by_position[position] = session
            if isinstance(s_item.get("id"), int):
                old_ids["session"][s_item["id"]] = session.pk
            _import_session_rows(r, s_item, s_where, session, document_of, grade_of, old_ids)
        for j, e_item in enumerate(r.list(item, "events", where)):
            e_where = f"{where}.events[{j}]"
            r.obj(e_item, e_where, item)
            position = r.get(e_item, "session", e_where, int, null=True, default=None)
            if position is not None and position not in sessions_by_position:
                r.fail(e_item, f"{e_where}.session", f"no session at assignment position {position}")
            pending_events.append((participant, sessions_by_position.get(position), e_item, e_where))
    events = []
    client_ids = set()
    for participant, session, e_item, e_where in pending_events:
        client_id = r.get(e_item, "client_event_id", e_where, str)
        if (participant.pk, client_id) in client_ids:
            r.fail(e_item, f"{e_where}.client_event_id", f"client event id {client_id!r} is used twice")
        client_ids.add((participant.pk, client_id))
        payload = _remapped(r.get(e_item, "payload", e_where, dict, default={}), old_ids)
        sequence = r.get(e_item, "sequence", e_where, int, null=True, default=None)
        if sequence is not None and not 0 <= sequence <= MAX_SEQUENCE:
            r.fail(e_item, f"{e_where}.sequence", f"{sequence} is outside 0..{MAX_SEQUENCE}")
        server_time = r.get(e_item, "server_time", e_where, "time", null=True, default=None) or timezone.now()
        client_time = _client_time_imported(r, e_item, e_where, server_time, payload)
        events.append(
            Event(
                participant=participant,
                session=session,
                type=r.get(e_item, "type", e_where, str),
                client_event_id=client_id,
                sequence=sequence,
                client_time=client_time,
                server_time=server_time,
                payload=payload,
            )
        )
    Event.objects.bulk_create(events, batch_size=2000)

    users = get_user_model().objects
    numbers = set()
    for i, item in enumerate(r.list(data, "reference_versions", "$")):
        where = f"$.reference_versions[{i}]"
        r.obj(item, where, data)
        number = r.get(item, "number", where, int)
        if number < 1 or number in numbers:
            r.fail(item, f"{where}.number", f"version {number} is below 1 or given twice")
        numbers.add(number)
        creator = r.get(item, "created_by", where, str, null=True, default=None)
        note = r.get(item, "note", where, str, default="")
        created_at = r.get(item, "created_at", where, "time", null=True, default=None) or timezone.now()
        rows, seen = [], set()
        for j, j_item in enumerate(r.list(item, "judgments", where)):
            j_where = f"{where}.judgments[{j}]"
            r.obj(j_item, j_where, item)
            topic = r.get(j_item, "topic_id", j_where, str)
            document = document_of(j_item, j_where)
            if (topic, document.pk) in seen:
                r.fail(j_item, j_where, f"topic {topic!r} judges document {document.external_id!r} twice")
            seen.add((topic, document.pk))
            judge = r.get(j_item, "judged_by", j_where, str, null=True, default=None)
            rows.append(
                ReferenceJudgment(
                    topic_id=topic,
                    document=document,
                    grade=grade_of(j_item, j_where, reference=True),
                    source=r.get(j_item, "source", j_where, str, default=""),
                    judged_by=users.filter(username=judge).first() if judge else None,
                )
            )
        reference_version_create(
            study=study,
            judgments=rows,
            note=note,
            number=number,
            created_at=created_at,
            created_by=users.filter(username=creator).first() if creator else None,
        )

    assessment = data.get("assessment") or {}
    r.obj(assessment, "$.assessment", data)
    per_document = r.get(assessment, "assessors_per_document", "$.assessment", int, null=True, default=None)
    if per_document is not None:
        AssessmentPlan.objects.create(study=study, assessors_per_document=per_document)
    for i, item in enumerate(r.list(assessment, "pools", "$.assessment") if "pools" in assessment else []):
        where = f"$.assessment.pools[{i}]"
        r.obj(item, where, assessment)
        code = r.get(item, "scenario", where, str)
        if code not in scenarios:
            r.fail(item, f"{where}.scenario", f"no scenario {code!r} in the archive")
        pool = AssessmentPool.objects.create(
            scenario=scenarios[code],
            rule=r.get(item, "rule", where, str),
            top_x=r.get(item, "top_x", where, int),
            built_at=r.get(item, "built_at", where, "time", null=True, default=None),
        )
        PoolDocument.objects.bulk_create(
            PoolDocument(
                pool=pool,
                document=document_of(d, f"{where}.documents[{k}]"),
                source=r.get(d, "source", f"{where}.documents[{k}]", str),
                source_detail=r.get(d, "source_detail", f"{where}.documents[{k}]", str, default=""),
                added_at=r.get(d, "added_at", f"{where}.documents[{k}]", "time", null=True, default=None)
                or timezone.now(),
            )
            for k, d in enumerate(r.list(item, "documents", where))
        )
    for i, item in enumerate(r.list(data, "audit", "$") if "audit" in data else []):
        where = f"$.audit[{i}]"
        r.obj(item, where, data)
        AuditEntry.objects.create(
            study=study,
            participant_code=r.get(item, "participant_code", where, str, default=""),
            action=r.get(item, "action", where, str),
            detail=r.get(item, "detail", where, dict, default={}),
            at=r.get(item, "at", where, "time", null=True, default=None) or timezone.now(),
        )
    study.import_notes = r.notes  # the command prints them
    return study


def _import_session_rows(r: _Reader, s_item, s_where, session, document_of, grade_of, old_ids) -> None:
    queries, shown_rows = [], []
    for k, q_item in enumerate(r.list(s_item, "queries", s_where)):
        q_where = f"{s_where}.queries[{k}]"
        r.obj(q_item, q_where, s_item)
        position = r.get(q_item, "position", q_where, int)
        if position != k + 1:
            r.fail(
                q_item,
                f"{q_where}.position",
                f"expected position {k + 1} (queries are numbered 1..n in order)",
            )
        query = Query(
            session=session,
            position=position,
            text=r.get(q_item, "text", q_where, str),
            issued_at=r.get(q_item, "issued_at", q_where, "time"),
            scan_mark_rank=r.get(q_item, "scan_mark_rank", q_where, int, null=True, default=None),
            system_message=r.get(q_item, "system_message", q_where, str, default=""),
        )
        queries.append((query, q_item, q_where))
    Query.objects.bulk_create([q for q, _i, _w in queries])
    for query, q_item, q_where in queries:
        if isinstance(q_item.get("id"), int):
            old_ids["query"][q_item["id"]] = query.pk
        ranks = set()
        for m, row in enumerate(r.list(q_item, "shown_results", q_where)):
            where = f"{q_where}.shown_results[{m}]"
            r.obj(row, where, q_item)
            rank = r.get(row, "rank", where, int)
            if rank < 1 or rank in ranks:
                r.fail(row, f"{where}.rank", f"rank {rank} is below 1 or shown twice")
            ranks.add(rank)
            shown_rows.append(
                ShownResult(
                    query=query,
                    rank=rank,
                    document=document_of(row, where),
                    title=r.get(row, "title", where, str),
                    snippet=r.get(row, "snippet", where, str),
                    page=r.get(row, "page", where, int, default=1),
                    shown_at=r.get(row, "shown_at", where, "time"),
                )
            )
    ShownResult.objects.bulk_create(shown_rows, batch_size=2000)
    changes = []
    judged = set()
    for k, j_item in enumerate(r.list(s_item, "judgments", s_where)):
        where = f"{s_where}.judgments[{k}]"
        r.obj(j_item, where, s_item)
        document = document_of(j_item, where)
        if document.pk in judged:
            r.fail(
                j_item, f"{where}.doc", f"document {document.external_id!r} is judged twice in this session"
            )
        judged.add(document.pk)
        judgment = Judgment.objects.create(
            session=session,
            document=document,
            grade=grade_of(j_item, where),
            created_at=r.get(j_item, "created_at", where, "time"),
            updated_at=r.get(j_item, "updated_at", where, "time"),
        )
        for n, change in enumerate(r.list(j_item, "history", where)):
            c_where = f"{where}.history[{n}]"
            r.obj(change, c_where, j_item)
            changes.append(
                JudgmentChange(
                    judgment=judgment,
                    grade=r.get(change, "grade", c_where, int),
                    changed_at=r.get(change, "changed_at", c_where, "time"),
                )
            )
    JudgmentChange.objects.bulk_create(changes, batch_size=2000)


def _remapped(payload: dict, old_ids: dict[str, dict[int, int]]) -> dict:
    """The payload with the exporting server's row ids in its acknowledgement replaced by the new rows' ids."""
    ack = payload.get("ack")
    if not isinstance(ack, dict):
        return payload
    ack = dict(ack)
    for key, table in ACK_IDS.items():
        if isinstance(ack.get(key), int) and not isinstance(ack.get(key), bool):
            ack[key] = old_ids[table].get(ack[key], ack[key])
    return {**payload, "ack": ack}
