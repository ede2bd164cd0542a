"""`session_track_import`: a Session Track log (and optionally its qrels) as a new study, all or nothing
(the package docstring says what becomes what). The log is read and checked whole first (reader.py)."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from scoring.lib.trec_io import parse_qrels_lines
from studies.assessment.collection_reference import reference_version_from_collection
from studies.assessment.references import reference_version_import_qrels
from studies.design import services
from studies.errors import CollectionAccessError, CollectionImportError
from studies.interchange import ImportFailure
from studies.interchange.archive import stored_timestamps
from studies.interchange.session_track.log import (
    DEFAULT_DAY,
    EVENT_PREFIX,
    NEGATIVE_GRADES,
    TRACK_GRADE_LABELS,
    Interaction,
    Log,
    LogSession,
)
from studies.interchange.session_track.reader import read_bytes, read_log
from studies.interchange.session_track.timeline import session_timeline
from studies.library.collections import collection_named_or_created, documents_add
from studies.models import (
    NEGATIVE_REFERENCE_GRADES,
    Assignment,
    Collection,
    Event,
    EventOrigin,
    Participant,
    Query,
    ReferenceVersion,
    Scenario,
    SearchSession,
    ShownResult,
    Study,
    System,
)
from studies.participation.events.event_checks import SERVER_EVENT_TYPES
from studies.search.engines.formats import Document as ParsedDocument


def _values_in(queryset, field: str, values: list, columns: tuple) -> list[tuple]:
    """values_list(*columns) of the rows whose `field` is in `values`, a few thousand at a time (SQLite caps
    the number of parameters of a statement)."""
    rows = []
    for start in range(0, len(values), 5000):
        rows.extend(queryset.filter(**{f"{field}__in": values[start : start + 5000]}).values_list(*columns))
    return rows


@dataclass
class ImportSummary:
    study: Study
    sessions: int
    interactions: int
    results: int
    clicks: int
    documents_created: int
    reference_version: ReferenceVersion | None
    reference_judgments: int
    negative_grades: str
    negatives_mapped: int


def _participant_code(num: int) -> str:
    return f"ST{num:03d}"


def _mapped_qrels(lines: list[str], path: str, negative_grades: str) -> tuple[list[str], int]:
    """The qrels lines with negative grades kept, clipped to 0 or blanked (line numbers kept for errors), and
    how many negative grades there were."""
    parse_qrels_lines(lines, path)  # format errors first, with file:line
    out, mapped = [], 0
    for number, raw in enumerate(lines, start=1):
        fields = raw.split()
        if fields and int(fields[3]) < 0:
            if negative_grades == "refuse":
                raise ImportFailure(
                    path,
                    number,
                    "grade",
                    f"grade {fields[3]} is negative (choose --negative-grades keep, clip or drop)",
                )
            if negative_grades == "keep" and int(fields[3]) not in NEGATIVE_REFERENCE_GRADES:
                raise ImportFailure(
                    path,
                    number,
                    "grade",
                    f"grade {fields[3]} is below -9, the lowest a reference grade can be",
                )
            mapped += 1
            if negative_grades != "keep":
                raw = f"{fields[0]} {fields[1]} {fields[2]} 0" if negative_grades == "clip" else ""
        out.append(raw)
    return out, mapped


@transaction.atomic
def session_track_import(
    *,
    path: str | Path,
    owner,
    name: str,
    qrels_path: str | Path | None = None,
    negative_grades: str = "keep",
    day: dt.date = DEFAULT_DAY,
    collection_name: str = "ClueWeb09",
    system_code: str = "ST",
) -> ImportSummary:
    """Import a Session Track log (and optionally its qrels) as a new study owned by `owner`, all or nothing.
    Raises ImportFailure/InputError naming file, line and field; nothing is written then."""
    if negative_grades not in NEGATIVE_GRADES:
        raise ValueError(f"negative_grades is one of {', '.join(NEGATIVE_GRADES)}")
    path = str(path)
    log = read_log(read_bytes(path), path)
    qrels_lines: list[str] = []
    negatives = 0
    top_grade = len(TRACK_GRADE_LABELS) - 1
    if qrels_path is not None:
        qrels_path = str(qrels_path)
        qrels_lines, negatives, top_grade = _qrels_read(qrels_path, negative_grades)
    labels = list(TRACK_GRADE_LABELS) + [f"grade {g}" for g in range(len(TRACK_GRADE_LABELS), top_grade + 1)]
    collection = _collection_for(path, owner, collection_name)
    study = services.study_create(
        owner=owner,
        name=name,
        grade_labels=labels,
        collection=collection,
        description=f"Imported from the TREC Session Track log {Path(path).name}.",
        status="open",  # its sessions are imported with it: not a draft waiting for participants
    )
    reference_version_from_collection(study=study, by=owner)  # a reused collection's judgments, if any
    documents, urls, created = _documents_stored(path, collection, log, qrels_lines)
    participants, search_sessions, timeline = _design_stored(study, log, system_code, day)
    query_of = _queries_stored(log, search_sessions, timeline)
    logger = _EventLogger(log, documents, urls, query_of)
    for participant, search_session, session, placed in zip(
        participants, search_sessions, log.sessions, timeline, strict=True
    ):
        logger.session(participant, search_session, session, placed)
    ShownResult.objects.bulk_create(logger.shown, batch_size=2000)
    with stored_timestamps():
        Event.objects.bulk_create(logger.events, batch_size=2000)

    version, judged = None, 0
    if qrels_path is not None:
        version = reference_version_import_qrels(
            study=study,
            lines=qrels_lines,
            path=qrels_path,
            created_by=owner,
            note=f"qrels {Path(qrels_path).name} (negative grades: {negative_grades})",
        )
        judged = version.judgments.count()
    counts = logger.counts
    return ImportSummary(
        study,
        len(log.sessions),
        counts["interactions"],
        counts["results"],
        counts["clicks"],
        created,
        version,
        judged,
        negative_grades,
        negatives,
    )


def _qrels_read(qrels_path: str, negative_grades: str) -> tuple[list[str], int, int]:
    """The qrels lines with negative grades treated, how many there were, and the top grade of the scale
    (the track's, or higher when the qrels use higher grades, up to 9)."""
    top_grade = len(TRACK_GRADE_LABELS) - 1
    raw = read_bytes(qrels_path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ImportFailure(qrels_path, raw[: error.start].count(b"\n") + 1, None, "not UTF-8 text") from None
    qrels_lines, negatives = _mapped_qrels(text.splitlines(), qrels_path, negative_grades)
    grades = [int(line.split()[3]) for line in qrels_lines if line.strip()]
    top_grade = max([top_grade, *grades])
    if top_grade > 9:
        number = next(n for n, line in enumerate(qrels_lines, 1) if line.strip() and int(line.split()[3]) > 9)
        raise ImportFailure(qrels_path, number, "grade", "grades above 9 do not fit a SessionLab scale")
    return qrels_lines, negatives, top_grade


def _collection_for(path: str, owner, collection_name: str) -> Collection:
    """The collection by name: one the owner may use, or a new one they own
    (`studies.library.collections.collection_named_or_created`)."""
    try:
        return collection_named_or_created(
            name=collection_name, owner=owner, description="Documents named by TREC Session Track logs."
        )
    except CollectionAccessError:
        # Another lab's documents are not this log's to reuse (nor which ids they hold to learn).
        raise ImportFailure(
            path,
            None,
            "collection",
            f"a collection named {collection_name!r} exists and is not "
            f"shared with {owner.username!r}; ask its owner to share it, or name another",
        ) from None
    except CollectionImportError as error:
        raise ImportFailure(path, None, "collection", str(error)) from None


def _documents_stored(
    path: str, collection: Collection, log: Log, qrels_lines: list[str]
) -> tuple[dict[str, int], dict[int, str | None], int]:
    """{document id: row id} of every document the log and the qrels name, the collection's reused and the
    others created (from results first, so they get titles and urls); {row id: url}; how many were created."""
    wanted: dict[str, dict] = {}
    for session in log.sessions:
        for interaction in session.interactions:
            for result in interaction.results:
                wanted.setdefault(result.docid, {"title": result.title, "url": result.url})
    for line in qrels_lines:
        fields = line.split()
        if fields:
            wanted.setdefault(fields[2], {"title": "", "url": None})
    documents = dict(_values_in(collection.documents, "external_id", list(wanted), ("external_id", "pk")))
    existing = set(documents)
    fresh = [
        ParsedDocument(docid, info["title"], "", {"url": info["url"]} if info["url"] is not None else {})
        for docid, info in wanted.items()
        if docid not in existing
    ]
    try:
        documents_add(collection=collection, documents=fresh)
    except CollectionImportError as error:
        raise ImportFailure(path, None, "document", str(error)) from None
    documents.update(
        _values_in(collection.documents, "external_id", [d.external_id for d in fresh], ("external_id", "pk"))
    )
    urls = dict(
        _values_in(
            collection.documents,
            "pk",
            [documents[d] for d in wanted if wanted[d]["url"] is not None],
            ("pk", "extra__url"),
        )
    )
    return documents, urls, len(fresh)


def _design_stored(study: Study, log: Log, system_code: str, day: dt.date):
    """A scenario per topic (first session's text), one system, a participant per session with its
    assignment and session, every time placed on one timeline in file order. Returns the participants, the
    sessions and each session's timeline (timeline.session_timeline)."""
    scenarios: dict[str, Scenario] = {}
    for session in log.sessions:
        topic = session.topic
        if topic.num not in scenarios:
            scenarios[topic.num] = services.scenario_add(
                study=study,
                code=f"T{topic.num}"[:40],
                title=(topic.subject or f"Topic {topic.num}")[:200],
                text=topic.desc,
                topic_id=topic.num,
            )
    system = services.system_add(
        study=study,
        code=system_code,
        name="The Session Track's search engine",
        backend=System.Backend.EXTERNAL,
    )  # the log holds the results shown
    participants = Participant.objects.bulk_create(
        Participant(study=study, code=_participant_code(session.num), enrolment_index=index)
        for index, session in enumerate(log.sessions)
    )
    assignments = Assignment.objects.bulk_create(
        Assignment(participant=participant, position=1, scenario=scenarios[session.topic.num], system=system)
        for participant, session in zip(participants, log.sessions, strict=True)
    )
    Study.objects.filter(pk=study.pk).update(design_locked_at=timezone.now())
    timeline = [session_timeline(session, day) for session in log.sessions]
    search_sessions = SearchSession.objects.bulk_create(
        SearchSession(
            assignment=assignment,
            started_at=started,
            ended_at=ended,
            end_reason=SearchSession.EndReason.SATISFIED,
        )
        for assignment, (started, _inter, _current, ended) in zip(assignments, timeline, strict=True)
    )
    return participants, search_sessions, timeline


def _interactions_placed(session: LogSession, inter: list):
    """(position, interaction, issued, clicks placed) of each of a session's interactions, numbered from 1."""
    for position, (interaction, (issued, clicks)) in enumerate(
        zip(session.interactions, inter, strict=True), 1
    ):
        yield position, interaction, issued, clicks


def _queries_stored(log: Log, search_sessions: list, timeline: list) -> dict[tuple[int, int], Query]:
    """A query per interaction; returns them by (session row id, position)."""
    queries = []
    for search_session, session, (_s, inter, _c, _e) in zip(
        search_sessions, log.sessions, timeline, strict=True
    ):
        for position, interaction, issued, _clicks in _interactions_placed(session, inter):
            queries.append(
                Query(session=search_session, position=position, text=interaction.query, issued_at=issued)
            )
    queries = Query.objects.bulk_create(queries)
    return {(q.session_id, q.position): q for q in queries}


class _EventLogger:
    """Each session's shown results and events as the events endpoints would have recorded them. The topic's
    attributes, the session and interaction numbers and attributes, each time as written and the current
    query are kept in the events, so the export writes the same log back."""

    def __init__(self, log: Log, documents: dict[str, int], urls: dict, query_of: dict):
        self.log = log
        self.documents = documents
        self.urls = urls
        self.query_of = query_of
        self.shown: list[ShownResult] = []
        self.events: list[Event] = []
        self.counts: defaultdict[str, int] = defaultdict(int)

    def session(self, participant: Participant, search_session: SearchSession, session: LogSession, placed):
        started, inter, current_at, ended = placed
        sequence = iter(range(1, 10**6))

        def event(kind, cid, moment, data, ack):
            # The log is the only record of when an event happened: its server time is the log's time too,
            # as the sessions' and queries' are, so the two clocks agree (and an archive keeps them).
            self.events.append(
                Event(
                    participant=participant,
                    session=search_session,
                    type=kind,
                    client_event_id=EVENT_PREFIX + cid,
                    sequence=next(sequence),
                    client_time=moment,
                    server_time=moment or ended,
                    payload={"data": data, "ack": ack},
                    # the session's start is the server's record, the log's interactions the searcher's
                    origin=EventOrigin.SERVER if kind in SERVER_EVENT_TYPES else EventOrigin.CLIENT,
                )
            )

        event(
            "session_start",
            "session",
            started,
            self._start(session),
            {"ok": True, "session": search_session.pk},
        )
        for position, interaction, issued, clicks in _interactions_placed(session, inter):
            query = self.query_of[(search_session.pk, position)]
            self._interaction(event, position, interaction, issued, query)
            self._clicks(event, position, interaction, clicks)
            self.counts["interactions"] += 1
        if session.current_query is not None:
            text, stamp = session.current_query
            event(
                "current_query",
                "current",
                current_at,
                {
                    "text": text,
                    "has_time": stamp is not None,
                    "starttime": None if stamp is None else stamp.raw,
                },
                {"ok": True},
            )
        event(
            "session_end",
            "end",
            ended,
            {"reason": SearchSession.EndReason.SATISFIED},
            {"ok": True, "reason": "satisfied"},
        )

    def _start(self, session: LogSession) -> dict:
        """The session_start event's data: what the export needs to write the session and topic back."""
        topic = session.topic
        return {
            "assignment": 1,
            "session_track": {
                "root": self.log.root,
                "id_tag": self.log.id_tag,
                "notation": self.log.notation,
                "session": session.num,
                "attrs": session.attrs,
                "starttime": None if session.start is None else session.start.raw,
                "topic": {
                    "num": topic.num,
                    "attrs": topic.attrs,
                    "subject": topic.subject,
                    "subject_num": topic.subject_num,
                    "desc": topic.desc,
                    "narr": topic.narr,
                },
            },
        }

    def _interaction(self, event, position: int, interaction: Interaction, issued, query: Query) -> None:
        """The results an interaction showed, and its query event."""
        other_urls = {}
        for result in interaction.results:
            document_id = self.documents[result.docid]
            if result.url != (self.urls.get(document_id) or ""):
                other_urls[str(result.rank)] = result.url
            self.shown.append(
                ShownResult(
                    query=query,
                    rank=result.rank,
                    document_id=document_id,
                    title=result.title,
                    snippet=result.snippet,
                    page=(result.rank - 1) // 10 + 1,
                    shown_at=issued,
                )
            )
        self.counts["results"] += len(interaction.results)
        # The log's own notation of each time is kept, so the export writes it back as read.
        data = {
            "text": interaction.query,
            "interaction": interaction.num,
            "times": {"start": interaction.start.raw},
        }
        if interaction.attrs:
            data["attrs"] = interaction.attrs
        if other_urls:
            data["urls"] = other_urls
        event(
            "query",
            f"i{interaction.num}.query",
            issued,
            data,
            {
                "ok": True,
                "query": position,
                "query_id": query.pk,
                "page": 1,
                "total": None,
                "message": "",
                "query_used": interaction.query,
            },
        )

    def _clicks(self, event, position: int, interaction: Interaction, clicks: list) -> None:
        """An interaction's clicks as document_open events, and document_close ones where the end was
        recorded."""
        by_rank = {result.rank: result.docid for result in interaction.results}
        for click, opened, closed in clicks:
            doc = by_rank[click.rank]
            common = {"doc": doc, "query": position, "rank": click.rank, "click": click.num}
            opening = {**common, "times": {"start": click.start.raw, "end": click.end.raw}}
            if click.attrs:
                opening["attrs"] = click.attrs
            if click.extra:
                opening["extra"] = click.extra
            event(
                "document_open",
                f"i{interaction.num}.c{click.num}.open",
                opened,
                opening,
                {"ok": True, "doc": doc},
            )
            if closed is not None:  # an end time NA: the document was opened, its dwell time not recorded
                dwell = int((closed - opened).total_seconds() * 1000)
                event(
                    "document_close",
                    f"i{interaction.num}.c{click.num}.close",
                    closed,
                    {**common, "dwell_ms": dwell},
                    {"ok": True, "doc": doc},
                )
            self.counts["clicks"] += 1
