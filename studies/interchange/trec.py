"""TREC qrels and runs out of a study, for trec_eval, ir_measures and `python -m scoring eval`.

- qrels: a reference version as `topic 0 docid grade`
  (studies.assessment.references.reference_version_qrels); with `repeats`, also a line for each repeated
  showing the runs write (below), with its document's grade.
- runs: what participants were shown, as TREC runs `topic Q0 docid rank score tag`: the topic is the
  scenario's topic_id (so the study's qrels apply), the tag is the system's code. A run file holds one
  ranking per topic, and a participant works a scenario once, so each ranking is its own file:
  unit "query" (default): one file per query of each session,
  `<participant>_<position>_<scenario>_<system>_q<k>.run`;
  unit "session": one file per session, the session's queries' results one after the other.
  The score is n - rank + 1, so trec_eval (which orders by score, not by the rank column) reads the ranking as
  shown. Queries that showed nothing produce no file (trec_eval refuses an empty run).
  Practice tasks (worked first, never scored; docs/latin-square.md) are left out, as the scores leave them
  out; practice "mark" writes them too, as `<participant>_<position>_<scenario>_<system>_practice_q<k>.run`.

  trec_eval keeps one line per document of a topic, so a document shown twice in one list cannot be written
  twice as itself. repeats "keep" (default): every shown position is written, the k-th showing of a document
  (k >= 2) as `<docid>#<k>`; the qrels written with `repeats=<unit>` give `<docid>#<k>` the grade of
  `<docid>`, so trec_eval scores the list that was shown, each showing gaining its grade. repeats "first":
  each document at its first showing only, later ones moving up (a list nobody saw; the session as a set of
  documents).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sessionlab.rounds import in_rounds
from studies.assessment.references import reference_version_qrels
from studies.errors import ExportError
from studies.models import Query, ReferenceVersion, SearchSession, ShownResult, Study
from studies.population import Population, population_q

UNITS = ("query", "session")
REPEATS = ("keep", "first")
PRACTICE = ("leave", "mark")  # practice tasks' runs: left out (default), or written with a marked name
REPEAT_MARK = "#"  # <docid>#<k>: the k-th showing of a document in one list
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _word(text: str) -> str:
    """A TREC field has no whitespace: runs of it become '_'."""
    return "_".join(str(text).split()) or "_"


def reference_version_for(*, study: Study, number: int | None = None) -> ReferenceVersion:
    versions = ReferenceVersion.objects.filter(study=study)
    version = (
        versions.filter(number=number).first() if number is not None else versions.order_by("-number").first()
    )
    if version is None:
        raise ExportError(f"study {study.slug!r} has no reference version" + (f" {number}" if number else ""))
    return version


def study_qrels(
    *, study: Study, number: int | None = None, repeats: str | None = None
) -> tuple[ReferenceVersion, str]:
    """The reference version `number` (default: the latest) as qrels text; with `repeats` (a unit), a line for
    each repeated showing the study's runs of that unit write (`<docid>#<k>`), with its document's grade. Only
    that unit's: a copy judged relevant enters trec_eval's ideal for its topic, in every run of the topic."""
    version = reference_version_for(study=study, number=number)
    text = reference_version_qrels(version=version)
    if repeats is None:
        return version, text
    # (topic, doc) -> the most showings of doc in one list of the unit
    copies: defaultdict[tuple[str, str], int] = defaultdict(int)
    for run in study_runs_iter(study=study, unit=repeats, practice="mark"):
        for line in run.text.splitlines():
            topic, _q0, doc = line.split()[:3]
            base, mark, k = doc.rpartition(REPEAT_MARK)
            if mark and k.isdigit():
                copies[(topic, base)] = max(copies[(topic, base)], int(k))
    grades = {
        (_word(t), _word(d)): g
        for t, d, g in version.judgments.values_list("topic_id", "document__external_id", "grade")
    }
    lines = [
        f"{topic} 0 {doc}{REPEAT_MARK}{k} {grades[(topic, doc)]}\n"
        for (topic, doc), most in copies.items()
        if (topic, doc) in grades
        for k in range(2, most + 1)
    ]
    return version, "".join(
        sorted([*text.splitlines(keepends=True), *lines], key=lambda line: tuple(line.split()[0:3:2]))
    )


@dataclass
class RunFile:
    name: str
    topic: str
    tag: str
    text: str


def _lines(topic: str, docs: list[str], tag: str) -> str:
    n = len(docs)
    return "".join(
        f"{topic} Q0 {doc} {rank} {n - rank + 1} {tag}\n" for rank, doc in enumerate(docs, start=1)
    )


def _showings(docs: list[str]) -> list[str]:
    """Every position of the list, the k-th showing of a document written <docid>#<k>."""
    seen: defaultdict[str, int] = defaultdict(int)
    out = []
    for doc in docs:
        seen[doc] += 1
        out.append(doc if seen[doc] == 1 else f"{doc}{REPEAT_MARK}{seen[doc]}")
    return out


# Sessions read per round (their queries and shown results with them): memory holds one round's rows.
SESSIONS_PER_CHUNK = 200


def study_runs(
    *,
    study: Study,
    unit: str = "query",
    system: str | None = None,
    repeats: str = "keep",
    practice: str = "leave",
) -> list[RunFile]:
    """The study's runs (see the module docstring), in order of participant, position and query."""
    return list(study_runs_iter(study=study, unit=unit, system=system, repeats=repeats, practice=practice))


def study_runs_iter(
    *,
    study: Study,
    unit: str = "query",
    system: str | None = None,
    repeats: str = "keep",
    chunk_size: int = SESSIONS_PER_CHUNK,
    population: Population | None = None,
    practice: str = "leave",
) -> Iterator[RunFile]:
    """As study_runs, one run at a time, reading `chunk_size` sessions per round, the population's sessions
    only if one is given (studies/population.py); an ExportError for a bad unit, repeats or practice is
    raised here, before the first run."""
    if unit not in UNITS:
        raise ExportError(f"unit is one of {', '.join(UNITS)}")
    if repeats not in REPEATS:
        raise ExportError(f"repeats is one of {', '.join(REPEATS)}")
    if practice not in PRACTICE:
        raise ExportError(f"practice is one of {', '.join(PRACTICE)}")
    chosen = SearchSession.objects.filter(
        assignment__participant__study=study,  # never a preview's
        assignment__participant__preview_at__isnull=True,
    ).order_by("assignment__participant__enrolment_index", "assignment__position")
    if system is not None:
        chosen = chosen.filter(assignment__system__code=system)
    if population is not None:
        chosen = chosen.filter(population_q(population, "assignment__participant__"))
    if practice == "leave":
        chosen = chosen.filter(assignment__scenario__practice=False)
    return _runs(chosen, unit, _showings if repeats == "keep" else _first_showings, chunk_size)


def _first_showings(docs: list[str]) -> list[str]:
    return list(dict.fromkeys(docs))


def _runs(chosen, unit: str, listed, chunk_size: int) -> Iterator[RunFile]:
    rows = SearchSession.objects.select_related(
        "assignment__participant", "assignment__scenario", "assignment__system"
    )
    for chunk in in_rounds(chosen, rows, chunk_size):
        yield from _chunk_runs(chunk, unit, listed)


def _chunk_runs(sessions: list[SearchSession], unit: str, listed) -> Iterator[RunFile]:
    """The runs of a round of sessions, their shown results read in one query."""
    ids = [session.pk for session in sessions]
    docs = defaultdict(list)
    rows = (
        ShownResult.objects.filter(query__session__in=ids)
        .order_by("query__session_id", "query__position", "rank")
        .values_list("query_id", "document__external_id")
    )
    for query_id, doc in rows:
        docs[query_id].append(_word(doc))
    queries = defaultdict(list)
    for query in (
        Query.objects.filter(session__in=ids).order_by("position").only("id", "session_id", "position")
    ):
        queries[query.session_id].append(query)
    for session in sessions:
        assignment = session.assignment
        topic, tag = _word(assignment.scenario.topic_id), _word(assignment.system.code)
        stem = "_".join(
            _UNSAFE.sub("-", part)
            for part in (
                assignment.participant.code,
                str(assignment.position),
                assignment.scenario.code,
                assignment.system.code,
                *(("practice",) if assignment.scenario.practice else ()),
            )
        )
        if unit == "session":
            ranked = listed([doc for query in queries[session.pk] for doc in docs[query.pk]])
            if ranked:
                yield RunFile(f"{stem}.run", topic, tag, _lines(topic, ranked, tag))
            continue
        for query in queries[session.pk]:
            ranked = listed(docs[query.pk])
            if ranked:
                yield RunFile(f"{stem}_q{query.position}.run", topic, tag, _lines(topic, ranked, tag))


def write_runs(*, runs: list[RunFile], directory: str | Path) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for run in runs:
        path = directory / run.name
        path.write_text(run.text, encoding="utf-8")
        paths.append(path)
    return paths
