"""TREC Session Track logs, 2011-2014 (the 2012 layout; the other years differ in details this reader keeps).

    sessiontrack2012 > session(num, starttime?)
        > topic(num, product?, goal?, tasktype?) > subject(num)?, desc, narr?
        > interaction(num, starttime) > query, results > result(rank) > url, clueweb09id, title, snippet
                                      , clicked? > click(num, starttime, endtime) > rank
        > currentquery(starttime)? > query

Import (`session_track_import`) builds a new study from a log: one scenario per topic (topic_id = the topic
num), one system (the track's search engine), one participant per session (code ST<num>) with one assignment,
and the session with its queries, shown results (documents created in a collection by ClueWeb id, the url in
Document.extra) and its clicks as document_open/document_close events with the click times. The topic's
attributes, the session and interaction numbers and attributes, each time as written and the current query
are kept in the session's events, so `session_track_export` writes the same log back. Texts are kept byte for
byte (whitespace included).

Times: 2011-2012 write times of day without a date, placed on `day` (UTC), a time more than 12 hours earlier
than the one before it moving to the next day; 2013-2014 write seconds from the session's start (counted from
midnight of `day`), and "NA" for a time not recorded (placed at the time known before it; a click's NA end
gives no document_close).

Its qrels become the study's first reference version. The track grades -2..4 (-2: spam); the study's scale
is 0..max grade (participants judge on it) and negative grades are treated by `negative_grades`:
"keep" (default: kept as judged in the reference version, -9..-1, and each scoring formulation applies its
own rule: kanoulas2011's 2^g - 1 gives -2 a gain of -0.75, the weighted forms a gain of 0),
"clip" (-2 becomes 0, judged not relevant: this changes kanoulas2011 scores), "drop" (left out: unjudged) or
"refuse" (the import fails, naming the first such line).

The reader uses expat directly so every error names the file, the line and the element or attribute.
"""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from django.db import transaction
from django.utils import timezone

from scoring.lib.errors import InputError
from scoring.lib.trec_io import parse_qrels_lines
from studies.assessment.references import reference_version_import_qrels
from studies.design import services
from studies.design.selectors import collection_usable_by, events_read
from studies.interchange import ImportFailure
from studies.interchange.archive import stored_timestamps
from studies.models import (
    NEGATIVE_REFERENCE_GRADES,
    Assignment,
    Collection,
    Document,
    Event,
    Participant,
    Query,
    ReferenceVersion,
    Scenario,
    SearchSession,
    ShownResult,
    Study,
    System,
)
from studies.participation.clock import on_timeline

# The TREC 2012 Web/Session Track relevance levels, 0..4 (-2, spam, is kept: see the module docstring).
TRACK_GRADE_LABELS = ("not relevant", "relevant", "highly relevant", "key", "navigational")
NEGATIVE_GRADES = ("keep", "clip", "drop", "refuse")
DOC_ID_TAGS = ("clueweb09id", "clueweb12id", "docno")
DEFAULT_DAY = dt.date(2012, 1, 1)
EVENT_PREFIX = "st."


# --- reading the XML ------------------------------------------------------------------------------------


@dataclass
class Node:
    tag: str
    attrs: dict
    line: int
    children: list[Node] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The element's text as written: leading and trailing whitespace is part of a query or a title."""
        return "".join(self.parts)

    def all(self, tag: str) -> list[Node]:
        return [child for child in self.children if child.tag == tag]

    def one(self, tag: str, path: str, required: bool = True) -> Node | None:
        found = self.all(tag)
        if len(found) > 1:
            raise ImportFailure(path, found[1].line, tag, f"<{self.tag}> has more than one <{tag}>")
        if not found and required:
            raise ImportFailure(path, self.line, tag, f"<{self.tag}> has no <{tag}>")
        return found[0] if found else None


def parse_tree(data: bytes, path: str) -> Node:
    """The XML as Nodes with the line each element starts on; a syntax error names file and line."""
    parser = expat.ParserCreate()
    stack: list[Node] = []
    root: list[Node] = []

    def start(tag, attrs):
        node = Node(tag, attrs, parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(node)
        stack.append(node)

    def end(tag):
        stack.pop()

    def chars(text):
        if stack:
            stack[-1].parts.append(text)

    parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, chars
    try:
        parser.Parse(data, True)
    except expat.ExpatError as error:
        raise ImportFailure(
            path,
            error.lineno,
            None,
            f"not well-formed XML: {expat.errors.messages[error.code]} (column {error.offset + 1})",
        ) from None
    return root[0]


@dataclass(frozen=True)
class Stamp:
    """A time as the log wrote it (`raw`, written back as read) and what it means: a time of day (2011-2012),
    seconds from the session's start (2013-2014), or neither ("NA": not recorded)."""

    raw: str
    clock: dt.time | None = None
    seconds: float | None = None

    @property
    def notation(self) -> str | None:
        return "clock" if self.clock is not None else "seconds" if self.seconds is not None else None


@dataclass
class Click:
    num: int
    start: Stamp
    end: Stamp
    rank: int
    line: int
    attrs: dict = field(default_factory=dict)  # attributes other than num, starttime, endtime
    extra: list = field(default_factory=list)  # (tag, text) of children other than <rank> (e.g. <docno>)


@dataclass
class Result:
    rank: int
    url: str
    docid: str
    title: str
    snippet: str
    line: int


@dataclass
class Interaction:
    num: int
    start: Stamp
    query: str
    results: list[Result]
    clicks: list[Click]
    line: int
    attrs: dict = field(default_factory=dict)  # attributes other than num and starttime (e.g. 2014's type)


@dataclass
class Topic:
    num: str
    attrs: dict  # the <topic> attributes other than num (product, goal, tasktype)
    subject: str | None
    subject_num: str | None
    desc: str
    narr: str | None


@dataclass
class LogSession:
    num: int
    start: Stamp | None
    topic: Topic
    interactions: list[Interaction]
    current_query: tuple[str, Stamp | None] | None
    line: int
    attrs: dict = field(default_factory=dict)  # attributes other than num and starttime (e.g. userid)


@dataclass
class Log:
    root: str
    id_tag: str
    sessions: list[LogSession]
    notation: str = "clock"  # "clock" (times of day) or "seconds" (from the session's start)


_NOTATION_NAMES = {"clock": "times of day", "seconds": "seconds from the session's start"}


def _int(node: Node, name: str, path: str, minimum: int = 1) -> int:
    raw = node.attrs.get(name) if name in node.attrs else None
    if raw is None:
        raise ImportFailure(path, node.line, f"{node.tag}@{name}", "missing")
    try:
        value = int(raw)
    except ValueError:
        raise ImportFailure(path, node.line, f"{node.tag}@{name}", f"{raw!r} is not an integer") from None
    if value < minimum:
        raise ImportFailure(path, node.line, f"{node.tag}@{name}", f"{value} is below {minimum}")
    return value


def _int_text(node: Node, path: str) -> int:
    try:
        value = int(node.text)
    except ValueError:
        raise ImportFailure(path, node.line, node.tag, f"{node.text!r} is not an integer") from None
    if value < 1:
        raise ImportFailure(path, node.line, node.tag, f"{value} is below 1")
    return value


_SECONDS = re.compile(r"[0-9]+(\.[0-9]+)?")


def _time(node: Node, name: str, path: str, required: bool = True) -> Stamp | None:
    raw = node.attrs.get(name)
    if raw is None:
        if required:
            raise ImportFailure(path, node.line, f"{node.tag}@{name}", "missing")
        return None
    if raw == "NA":
        return Stamp(raw)
    if _SECONDS.fullmatch(raw):
        return Stamp(raw, seconds=float(raw))
    for pattern in ("%H:%M:%S.%f", "%H:%M:%S"):
        try:
            return Stamp(raw, clock=dt.datetime.strptime(raw, pattern).time())
        except ValueError:
            continue
    raise ImportFailure(
        path,
        node.line,
        f"{node.tag}@{name}",
        f"{raw!r} is not a time of day (HH:MM:SS.ffffff), "
        "seconds from the session's start (143.512957) or NA",
    )


def _others(node: Node, *known: str) -> dict:
    return {k: v for k, v in node.attrs.items() if k not in known}


def _text(node: Node, tag: str, path: str, required: bool = True) -> str | None:
    child = node.one(tag, path, required)
    return None if child is None else child.text


def read_log(data: bytes, path: str) -> Log:
    """Parse and check a whole Session Track log; raises ImportFailure (file, line, element/attribute)."""
    root = parse_tree(data, path)
    sessions = []
    id_tag = None
    seen_sessions: dict[int, int] = {}
    notation: tuple[str, int] | None = None  # the log's time notation and the line that set it

    def timed(node: Node, name: str, required: bool = True) -> Stamp | None:
        nonlocal notation
        stamp = _time(node, name, path, required)
        kind = stamp.notation if stamp is not None else None
        if kind is not None:
            if notation is None:
                notation = (kind, node.line)
            elif kind != notation[0]:
                raise ImportFailure(
                    path,
                    node.line,
                    f"{node.tag}@{name}",
                    f"{stamp.raw!r} mixes notations: line {notation[1]} set {_NOTATION_NAMES[notation[0]]}",
                )
        return stamp

    for session_node in root.all("session"):
        num = _int(session_node, "num", path)
        if num in seen_sessions:
            raise ImportFailure(
                path,
                session_node.line,
                "session@num",
                f"session {num} already appears on line {seen_sessions[num]}",
            )
        seen_sessions[num] = session_node.line
        session_start = timed(session_node, "starttime", required=False)
        topic_node = session_node.one("topic", path)
        topic_num = topic_node.attrs.get("num", "").strip()
        if not topic_num or len(topic_num) > 100 or any(ch.isspace() for ch in topic_num):
            raise ImportFailure(path, topic_node.line, "topic@num", "missing, or not a single word")
        subject = topic_node.one("subject", path, required=False)
        topic = Topic(
            num=topic_num,
            attrs={k: v for k, v in topic_node.attrs.items() if k != "num"},
            subject=None if subject is None else subject.text,
            subject_num=None if subject is None else subject.attrs.get("num"),
            desc=_text(topic_node, "desc", path),
            narr=_text(topic_node, "narr", path, required=False),
        )
        interactions = []
        for interaction_node in session_node.all("interaction"):
            interaction_start = timed(interaction_node, "starttime")
            results = []
            results_node = interaction_node.one("results", path, required=False)
            for result_node in [] if results_node is None else results_node.all("result"):
                tags = [tag for tag in DOC_ID_TAGS if result_node.all(tag)]
                if not tags:
                    raise ImportFailure(
                        path,
                        result_node.line,
                        "clueweb09id",
                        f"<result> has no document id ({', '.join(DOC_ID_TAGS)})",
                    )
                id_tag = id_tag or tags[0]
                docid = _text(result_node, tags[0], path).strip()  # an id, not a text
                if not docid or len(docid) > 200:
                    raise ImportFailure(
                        path, result_node.line, tags[0], "empty or longer than 200 characters"
                    )
                results.append(
                    Result(
                        rank=_int(result_node, "rank", path),
                        url=_text(result_node, "url", path, False) or "",
                        docid=docid,
                        title=_text(result_node, "title", path, False) or "",
                        snippet=_text(result_node, "snippet", path, False) or "",
                        line=result_node.line,
                    )
                )
            # Ranks run on one by one in file order; a later page of results may start after 1 (11, 12, ...).
            for before, result in zip(results, results[1:], strict=False):
                if result.rank != before.rank + 1:
                    raise ImportFailure(
                        path,
                        result.line,
                        "result@rank",
                        "ranks must run 1..n in order (a later "
                        f"page's from its first): expected {before.rank + 1}, found {result.rank}",
                    )
            shown_ranks = {result.rank for result in results}
            clicks = []
            clicked = interaction_node.one("clicked", path, required=False)
            for click_node in [] if clicked is None else clicked.all("click"):
                rank_node = click_node.one("rank", path)
                rank = _int_text(rank_node, path)
                if rank not in shown_ranks:
                    raise ImportFailure(
                        path,
                        rank_node.line,
                        "rank",
                        f"click on rank {rank}, but only "
                        f"{len(results)} results were shown"
                        + (f" (ranks {results[0].rank}-{results[-1].rank})" if results else ""),
                    )
                clicks.append(
                    Click(
                        _int(click_node, "num", path),
                        timed(click_node, "starttime"),
                        timed(click_node, "endtime"),
                        rank,
                        click_node.line,
                        _others(click_node, "num", "starttime", "endtime"),
                        [(child.tag, child.text) for child in click_node.children if child.tag != "rank"],
                    )
                )
            query_node = interaction_node.one("query", path)
            query = query_node.text
            if not query.strip():
                raise ImportFailure(path, query_node.line, "query", "empty query")
            interactions.append(
                Interaction(
                    _int(interaction_node, "num", path),
                    interaction_start,
                    query,
                    results,
                    clicks,
                    interaction_node.line,
                    _others(interaction_node, "num", "starttime"),
                )
            )
        current = session_node.one("currentquery", path, required=False)
        current_query = None
        if current is not None:
            current_query = (_text(current, "query", path), timed(current, "starttime", required=False))
        sessions.append(
            LogSession(
                num,
                session_start,
                topic,
                interactions,
                current_query,
                session_node.line,
                _others(session_node, "num", "starttime"),
            )
        )
    if not sessions:
        raise ImportFailure(path, root.line, "session", f"<{root.tag}> holds no <session>")
    return Log(root.tag, id_tag or DOC_ID_TAGS[0], sessions, notation[0] if notation else "clock")


def _read_bytes(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ImportFailure(str(path), None, None, f"cannot read: {error.strerror}") from None


# --- import ---------------------------------------------------------------------------------------------


def _values_in(queryset, field: str, values: list, columns: tuple) -> list[tuple]:
    """values_list(*columns) of the rows whose `field` is in `values`, a few thousand at a time (SQLite caps
    the number of parameters of a statement)."""
    rows = []
    for start in range(0, len(values), 5000):
        rows.extend(queryset.filter(**{f"{field}__in": values[start : start + 5000]}).values_list(*columns))
    return rows


class _Clock:
    """A session's times on one timeline. Times of day are placed on a running date: one more than 12 hours
    earlier than the latest so far is on the next day (a smaller step back is two overlapping clicks, not
    midnight). Seconds from the session's start count from midnight of `day`. NA (not recorded) is placed
    later, at the latest time known before it (`settle`)."""

    def __init__(self, day: dt.date):
        self.day = day
        self.midnight = dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)
        self.last: dt.datetime | None = None

    def at(self, stamp: Stamp | None) -> dt.datetime | None:
        if stamp is None or stamp.notation is None:
            return None
        if stamp.seconds is not None:
            moment = self.midnight + dt.timedelta(seconds=stamp.seconds)
        else:
            moment = dt.datetime.combine(self.day, stamp.clock, tzinfo=dt.UTC)
            if self.last is not None and moment < self.last - dt.timedelta(hours=12):
                self.day += dt.timedelta(days=1)
                moment += dt.timedelta(days=1)
        self.last = moment if self.last is None else max(self.last, moment)
        return moment


def _session_timeline(session: LogSession, day: dt.date):
    """(started, [(issued, [(click, opened, closed or None)])], current query's time or None, ended). A session
    without a start time starts at its first time; a start or an open that is NA is placed at the time known
    before it; a close that is NA stays None (the dwell time was not recorded)."""
    clock = _Clock(day)
    started = clock.at(session.start)
    placed = []
    for interaction in session.interactions:
        issued = clock.at(interaction.start)
        placed.append(
            (issued, [(click, clock.at(click.start), clock.at(click.end)) for click in interaction.clicks])
        )
    current = session.current_query[1] if session.current_query is not None else None
    current_at = clock.at(current)
    if started is None:
        known = [t for issued, clicks in placed for t in (issued, *(c[1] for c in clicks)) if t is not None]
        started = known[0] if known else (current_at or clock.midnight)
    latest = started
    inter = []
    for issued, clicks in placed:
        latest = issued = issued or latest
        settled = []
        for click, opened, closed in clicks:
            opened = opened or latest
            latest = max(latest, opened)
            settled.append((click, opened, closed))
        inter.append((issued, settled))
    ended = max([started, *(t for t in (clock.last, current_at) if t is not None)])
    return started, inter, current_at, ended


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
    log = read_log(_read_bytes(path), path)
    qrels_lines: list[str] = []
    negatives = 0
    top_grade = len(TRACK_GRADE_LABELS) - 1
    if qrels_path is not None:
        qrels_path = str(qrels_path)
        raw = _read_bytes(qrels_path)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ImportFailure(
                qrels_path, raw[: error.start].count(b"\n") + 1, None, "not UTF-8 text"
            ) from None
        qrels_lines, negatives = _mapped_qrels(text.splitlines(), qrels_path, negative_grades)
        grades = [int(line.split()[3]) for line in qrels_lines if line.strip()]
        top_grade = max([top_grade, *grades])
        if top_grade > 9:
            number = next(
                n for n, line in enumerate(qrels_lines, 1) if line.strip() and int(line.split()[3]) > 9
            )
            raise ImportFailure(qrels_path, number, "grade", "grades above 9 do not fit a SessionLab scale")
    labels = list(TRACK_GRADE_LABELS) + [f"grade {g}" for g in range(len(TRACK_GRADE_LABELS), top_grade + 1)]

    collection = Collection.objects.filter(name=collection_name).first()
    if collection is None:
        collection = Collection.objects.create(
            name=collection_name, owner=owner, description="Documents named by TREC Session Track logs."
        )
    elif not collection_usable_by(user=owner, collection=collection):
        # Another lab's documents are not this log's to reuse (nor which ids they hold to learn).
        raise ImportFailure(
            path,
            None,
            "collection",
            f"a collection named {collection_name!r} exists and is not "
            f"shared with {owner.username!r}; ask its owner to share it, or name another",
        )
    study = services.study_create(
        owner=owner,
        name=name,
        grade_labels=labels,
        collection=collection,
        description=f"Imported from the TREC Session Track log {Path(path).name}.",
    )

    # Documents: reuse the collection's, create the others (from results first, so they get titles and urls).
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
        Document(
            collection=collection,
            external_id=docid,
            title=info["title"],
            extra={"url": info["url"]} if info["url"] is not None else {},
        )
        for docid, info in wanted.items()
        if docid not in existing
    ]
    Document.objects.bulk_create(fresh, batch_size=2000)
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

    # Design: a scenario per topic (first session's text), one system, a participant per session.
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

    # Every time of a session placed on one timeline, in file order.
    timeline = [_session_timeline(session, day) for session in log.sessions]
    search_sessions = SearchSession.objects.bulk_create(
        SearchSession(
            assignment=assignment,
            started_at=started,
            ended_at=ended,
            end_reason=SearchSession.EndReason.SATISFIED,
        )
        for assignment, (started, _inter, _current, ended) in zip(assignments, timeline, strict=True)
    )

    queries = []
    for search_session, session, (_s, inter, _c, _e) in zip(
        search_sessions, log.sessions, timeline, strict=True
    ):
        for position, (interaction, (issued, _clicks)) in enumerate(
            zip(session.interactions, inter, strict=True), 1
        ):
            queries.append(
                Query(session=search_session, position=position, text=interaction.query, issued_at=issued)
            )
    queries = Query.objects.bulk_create(queries)
    query_of = {(q.session_id, q.position): q for q in queries}

    shown, events = [], []
    counts = defaultdict(int)
    for participant, search_session, session, (started, inter, current_at, ended) in zip(
        participants, search_sessions, log.sessions, timeline, strict=True
    ):
        sequence = iter(range(1, 10**6))

        def event(
            kind,
            cid,
            moment,
            data,
            ack,
            _participant=participant,
            _session=search_session,
            _seq=sequence,
            _ended=ended,
        ):
            # The log is the only record of when an event happened: its server time is the log's time too,
            # as the sessions' and queries' are, so the two clocks agree (and an archive keeps them).
            events.append(
                Event(
                    participant=_participant,
                    session=_session,
                    type=kind,
                    client_event_id=EVENT_PREFIX + cid,
                    sequence=next(_seq),
                    client_time=moment,
                    server_time=moment or _ended,
                    payload={"data": data, "ack": ack},
                )
            )

        topic = session.topic
        event(
            "session_start",
            "session",
            started,
            {
                "assignment": 1,
                "session_track": {
                    "root": log.root,
                    "id_tag": log.id_tag,
                    "notation": log.notation,
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
            },
            {"ok": True, "session": search_session.pk},
        )
        for position, (interaction, (issued, clicks)) in enumerate(
            zip(session.interactions, inter, strict=True), 1
        ):
            query = query_of[(search_session.pk, position)]
            other_urls = {}
            for result in interaction.results:
                document_id = documents[result.docid]
                if result.url != (urls.get(document_id) or ""):
                    other_urls[str(result.rank)] = result.url
                shown.append(
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
            counts["results"] += len(interaction.results)
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
                counts["clicks"] += 1
            counts["interactions"] += 1
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
    ShownResult.objects.bulk_create(shown, batch_size=2000)
    with stored_timestamps():
        Event.objects.bulk_create(events, batch_size=2000)

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
    return ImportSummary(
        study,
        len(log.sessions),
        counts["interactions"],
        counts["results"],
        counts["clicks"],
        len(fresh),
        version,
        judged,
        negative_grades,
        negatives,
    )


# --- export ---------------------------------------------------------------------------------------------


def _clock_text(moment: dt.datetime | None) -> str:
    return moment.astimezone(dt.UTC).strftime("%H:%M:%S.%f") if moment is not None else ""


class _TimeWriter:
    """A time in the log's notation: as read when the import kept it (`raw`), else from the timeline (a time of
    day, or seconds from midnight of the session's first day, the zero the import placed them on)."""

    def __init__(self, notation: str, started: dt.datetime | None):
        self.notation = notation
        self.midnight = (
            None
            if started is None
            else dt.datetime.combine(started.astimezone(dt.UTC).date(), dt.time(), tzinfo=dt.UTC)
        )

    def text(self, moment: dt.datetime | None, raw: str | None = None) -> str:
        if raw is not None:
            return raw
        if moment is None:
            return "NA"
        if self.notation == "seconds" and self.midnight is not None:
            return f"{(moment - self.midnight).total_seconds():.6f}"
        return _clock_text(moment)


def _sub(parent, tag: str, text: str | None = None, /, **attrs) -> ET.Element:
    element = ET.SubElement(parent, tag, {k: str(v) for k, v in attrs.items()})
    if text is not None:
        element.text = text
    return element


def _when(event: Event, offset_ms: float | None) -> dt.datetime:
    """The event's time on its session's timeline (docs/time-model.md), as queries' issued_at are."""
    return on_timeline(event.client_time, event.server_time, offset_ms)


def session_track_export(*, study: Study) -> bytes:
    """The study's sessions as a Session Track log (UTF-8 XML). Sessions imported from a log are written as
    they were read (texts, attributes and each time in the log's own notation, NA kept); others get session
    numbers in order of participant and position, topic = the scenario (topic_id, title as subject, text as
    desc), clicks from document_open events (end time from the matching document_close, NA without one)."""
    # Related rows are selected by a subquery on the study, not a list of ids (SQLite caps parameters).
    scope = SearchSession.objects.filter(
        assignment__participant__study=study,  # never a preview's
        assignment__participant__preview_at__isnull=True,
    ).values("pk")
    sessions = list(
        SearchSession.objects.filter(pk__in=scope)
        .select_related("assignment__participant", "assignment__scenario")
        .order_by("assignment__participant__enrolment_index", "assignment__position")
    )
    queries = defaultdict(list)
    for query in Query.objects.filter(session__in=scope).order_by("session_id", "position"):
        queries[query.session_id].append(query)
    results = defaultdict(list)
    for row in (
        ShownResult.objects.filter(query__session__in=scope)
        .select_related("document")
        .order_by("query_id", "rank")
    ):
        results[row.query_id].append(row)
    events = defaultdict(list)
    for event in events_read(Event.objects.filter(session__in=scope).order_by("id")):  # old rows' times
        events[event.session_id].append(event)

    start_info = {}
    for session in sessions:
        for event in events[session.pk]:
            if event.type == "session_start" and "session_track" in (event.payload.get("data") or {}):
                start_info[session.pk] = event.payload["data"]["session_track"]
    first = next(iter(start_info.values()), {})
    root = ET.Element(first.get("root", "sessiontrack2012"))
    id_tag = first.get("id_tag", "clueweb09id")
    for number, session in enumerate(sessions, start=1):
        info = start_info.get(session.pk, {})
        times = _TimeWriter(info.get("notation", "clock"), session.started_at)
        scenario = session.assignment.scenario
        attrs = {"num": info.get("session", number)}
        if "starttime" not in info or info["starttime"] is not None:
            attrs["starttime"] = times.text(session.started_at, info.get("starttime"))
        session_element = _sub(root, "session", **attrs, **info.get("attrs", {}))
        topic = info.get("topic") or {
            "num": scenario.topic_id,
            "attrs": {},
            "subject": scenario.title,
            "subject_num": None,
            "desc": scenario.text,
            "narr": None,
        }
        topic_element = _sub(session_element, "topic", num=topic["num"], **topic.get("attrs", {}))
        if topic.get("subject") is not None:
            attrs = {"num": topic["subject_num"]} if topic.get("subject_num") is not None else {}
            _sub(topic_element, "subject", topic["subject"], **attrs)
        _sub(topic_element, "desc", topic["desc"])
        if topic.get("narr") is not None:
            _sub(topic_element, "narr", topic["narr"])
        query_events = {}
        opens, closes = defaultdict(list), {}
        current = None
        for event in events[session.pk]:
            data = event.payload.get("data") or {}
            ack = event.payload.get("ack") or {}
            if event.type == "query" and ack.get("ok"):
                query_events[ack.get("query")] = data
            elif event.type == "document_open" and ack.get("ok"):
                opens[data.get("query")].append(event)
            elif event.type == "document_close" and ack.get("ok"):
                closes.setdefault((data.get("query"), data.get("doc"), data.get("click")), []).append(event)
            elif event.type == "current_query":
                current = event
        for query in queries[session.pk]:
            data = query_events.get(query.position, {})
            other_urls = data.get("urls", {})
            interaction = _sub(
                session_element,
                "interaction",
                num=data.get("interaction", query.position),
                starttime=times.text(query.issued_at, (data.get("times") or {}).get("start")),
                **data.get("attrs", {}),
            )
            _sub(interaction, "query", query.text)
            results_element = _sub(interaction, "results")
            ranks = {}
            for row in results[query.pk]:
                ranks.setdefault(row.document.external_id, row.rank)
                result = _sub(results_element, "result", rank=row.rank)
                _sub(
                    result, "url", other_urls.get(str(row.rank), (row.document.extra or {}).get("url") or "")
                )
                _sub(result, id_tag, row.document.external_id)
                _sub(result, "title", row.title)
                _sub(result, "snippet", row.snippet)
            clicked = _sub(interaction, "clicked")
            for index, opened in enumerate(opens.get(query.position, []), start=1):
                data = opened.payload["data"]
                rank = data.get("rank") if isinstance(data.get("rank"), int) else ranks.get(data.get("doc"))
                if rank is None:
                    continue
                raw = data.get("times") or {}
                pending = closes.get((query.position, data.get("doc"), data.get("click")), [])
                offset = session.clock_offset_ms
                closed = next((c for c in pending if _when(c, offset) >= _when(opened, offset)), None)
                if closed is not None:
                    pending.remove(closed)
                click = _sub(
                    clicked,
                    "click",
                    num=data.get("click", index),
                    starttime=times.text(_when(opened, offset), raw.get("start")),
                    endtime=times.text(_when(closed, offset) if closed is not None else None, raw.get("end")),
                    **data.get("attrs", {}),
                )
                _sub(click, "rank", str(rank))
                for tag, text in data.get("extra", []):
                    _sub(click, tag, text)
        if current is not None:
            data = current.payload.get("data") or {}
            attrs = {}
            if data.get("has_time", True):
                attrs["starttime"] = times.text(current.client_time, data.get("starttime"))
            _sub(_sub(session_element, "currentquery", **attrs), "query", data.get("text", ""))
    ET.indent(root, space="   ")
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def read_log_file(path: str | Path) -> Log:
    return read_log(_read_bytes(path), str(path))


__all__ = [
    "InputError",
    "ImportSummary",
    "read_log",
    "read_log_file",
    "session_track_export",
    "session_track_import",
]
