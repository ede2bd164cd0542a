"""TREC qrels and runs out of a study, for trec_eval, ir_measures and `python -m scoring eval`.

- qrels: a reference version as `topic 0 docid grade` (studies.assessment.reference_version_qrels).
- runs: what participants were shown, as TREC runs `topic Q0 docid rank score tag`: the topic is the scenario's
  topic_id (so the study's qrels apply), the tag is the system's code. A run file holds one ranking per topic,
  and a participant works a scenario once, so each ranking is its own file:
  unit "query" (default): one file per query of each session, `<participant>_<position>_<scenario>_<system>_q<k>.run`;
  unit "session": one file per session, the session's results in the order met, each document at its first
  showing (the session as one list).
  The score is n - rank + 1, so trec_eval (which orders by score, not by the rank column) reads the ranking as
  shown. Queries that showed nothing produce no file (trec_eval refuses an empty run).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from ..assessment import reference_version_qrels
from ..errors import ExportError
from ..models import Query, ReferenceVersion, SearchSession, ShownResult, Study

UNITS = ("query", "session")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _word(text: str) -> str:
    """A TREC field has no whitespace: runs of it become '_'."""
    return "_".join(str(text).split()) or "_"


def reference_version_for(*, study: Study, number: int | None = None) -> ReferenceVersion:
    versions = ReferenceVersion.objects.filter(study=study)
    version = versions.filter(number=number).first() if number is not None else versions.order_by("-number").first()
    if version is None:
        raise ExportError(f"study {study.slug!r} has no reference version" + (f" {number}" if number else ""))
    return version


def study_qrels(*, study: Study, number: int | None = None) -> tuple[ReferenceVersion, str]:
    """The reference version `number` (default: the latest) as qrels text."""
    version = reference_version_for(study=study, number=number)
    return version, reference_version_qrels(version=version)


@dataclass
class RunFile:
    name: str
    topic: str
    tag: str
    text: str


def _lines(topic: str, docs: list[str], tag: str) -> str:
    n = len(docs)
    return "".join(f"{topic} Q0 {doc} {rank} {n - rank + 1} {tag}\n" for rank, doc in enumerate(docs, start=1))


def study_runs(*, study: Study, unit: str = "query", system: str | None = None) -> list[RunFile]:
    """The study's runs (see the module docstring), in order of participant, position and query."""
    if unit not in UNITS:
        raise ExportError(f"unit is one of {', '.join(UNITS)}")
    sessions = (SearchSession.objects.filter(assignment__participant__study=study)
                .select_related("assignment__participant", "assignment__scenario", "assignment__system")
                .order_by("assignment__participant__enrolment_index", "assignment__position"))
    if system is not None:
        sessions = sessions.filter(assignment__system__code=system)
    scope = sessions.values("pk")  # a subquery, not a list of ids (SQLite caps parameters)
    sessions = list(sessions)
    docs = defaultdict(list)
    rows = (ShownResult.objects.filter(query__session__in=scope)
            .order_by("query__session_id", "query__position", "rank")
            .values_list("query_id", "document__external_id"))
    for query_id, doc in rows:
        docs[query_id].append(doc)
    queries = defaultdict(list)
    for query in Query.objects.filter(session__in=scope).order_by("position").only("id", "session_id", "position"):
        queries[query.session_id].append(query)
    runs = []
    for session in sessions:
        assignment = session.assignment
        topic, tag = _word(assignment.scenario.topic_id), _word(assignment.system.code)
        stem = "_".join(_UNSAFE.sub("-", part) for part in (
            assignment.participant.code, str(assignment.position), assignment.scenario.code, assignment.system.code))
        if unit == "session":
            seen = dict.fromkeys(doc for query in queries[session.pk] for doc in docs[query.pk])
            if seen:
                runs.append(RunFile(f"{stem}.run", topic, tag, _lines(topic, [_word(d) for d in seen], tag)))
            continue
        for query in queries[session.pk]:
            ranked = list(dict.fromkeys(docs[query.pk]))  # a document shown twice keeps its first rank
            if ranked:
                runs.append(RunFile(f"{stem}_q{query.position}.run", topic, tag,
                                    _lines(topic, [_word(d) for d in ranked], tag)))
    return runs


def write_runs(*, runs: list[RunFile], directory: str | Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for run in runs:
        path = directory / run.name
        path.write_text(run.text, encoding="utf-8")
        paths.append(path)
    return paths
