"""Exports as downloads that stream: each is a generator of byte chunks, built from the study a round of rows
at a time, so a download's memory does not grow with the study (docs/deploying.md, "Exports"). The study
page's downloads (studies/interchange/views.py), the API and the commands serve the same bytes.

Zips are written member by member to an unseekable pipe (zipfile then puts each member's sizes in a data
descriptor after its data, and zip64 fields so a member may pass 4 GiB); a member's content is the same as
the whole-in-memory zip had, with the same names and a fixed date (no timestamps of the moment).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator

from sessionlab import export_members
from studies.interchange.population_note import population_note
from studies.interchange.tidy_csv import TABLE_NAMES, table_csv_lines, table_rows
from studies.interchange.trec import study_runs_iter
from studies.models import Study
from studies.population import Population

CHUNK_BYTES = 64 * 1024  # what one yield of a download holds, about


class _Pipe(io.RawIOBase):
    """A write-only, unseekable file: what zipfile writes, taken out in chunks."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        self.size += len(data)
        return len(data)

    def take(self) -> bytes:
        out = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        return out


def encoded(texts: Iterable[str]) -> Iterator[bytes]:
    """Texts as UTF-8 chunks of about CHUNK_BYTES."""
    pending: list[str] = []
    size = 0
    for text in texts:
        pending.append(text)
        size += len(text)
        if size >= CHUNK_BYTES:
            yield "".join(pending).encode("utf-8")
            pending.clear()
            size = 0
    if pending:
        yield "".join(pending).encode("utf-8")


def zip_stream(members: Iterable[tuple[str, Iterable[bytes]]]) -> Iterator[bytes]:
    """The members (name, content chunks) as one zip, yielded as it is written."""
    pipe = _Pipe()
    with zipfile.ZipFile(pipe, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, chunks in members:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with zipped.open(info, "w", force_zip64=True) as member:
                for chunk in chunks:
                    member.write(chunk)
                    if pipe.size >= CHUNK_BYTES:
                        yield pipe.take()
        yield pipe.take()
    yield pipe.take()  # the central directory


def _note(study: Study, population: Population | None) -> tuple[str, Iterable[bytes]]:
    """The zip's last member: population.txt, which population's sessions it holds (written when reached)."""
    return ("population.txt", (part.encode("utf-8") for part in [population_note(study, population)]))


def tables_zip_stream(
    *, study: Study, raw: bool = False, population: Population | None = None, panel_ids: bool = False
) -> Iterator[bytes]:
    """The tidy tables (tidy_csv.TABLE_NAMES: participants.csv, sessions.csv ... attention.csv) of the
    population's sessions (every session if None) as one zip, streamed, population.txt last; the panel ids
    only when `panel_ids` (the owner asked: studies/interchange/panel_ids.py)."""
    members = [
        (
            f"{name}.csv",
            encoded(
                table_csv_lines(
                    table_rows(study=study, name=name, population=population, panel_ids=panel_ids), raw=raw
                )
            ),
        )
        for name in TABLE_NAMES
    ]
    # What other apps know of the study (sessionlab/export_members.py), e.g. its pre-registration.
    extras = [(name, [text.encode("utf-8")]) for name, text in export_members.members_for(study)]
    return zip_stream([*members, *extras, _note(study, population)])


def runs_zip_stream(
    *, study: Study, unit: str = "query", population: Population | None = None, practice: str = "leave"
) -> Iterator[bytes]:
    """One TREC run file per ranking shown to the population (trec.study_runs_iter) as one zip, streamed,
    population.txt last; practice tasks' runs left out unless `practice` is "mark". An ExportError for a bad
    unit or practice is raised here, before the first byte."""
    runs = study_runs_iter(study=study, unit=unit, population=population, practice=practice)
    members = ((run.name, [run.text.encode("utf-8")]) for run in runs)
    return zip_stream(_then(members, lambda: _note(study, population)))


def _then(members, last):
    yield from members
    yield last()


def study_csv_zip(
    *, study: Study, raw: bool = False, population: Population | None = None, panel_ids: bool = False
) -> bytes:
    """The tables' zip whole in memory (tables_zip_stream joined)."""
    return b"".join(tables_zip_stream(study=study, raw=raw, population=population, panel_ids=panel_ids))


def study_runs_zip(
    *, study: Study, unit: str = "query", population: Population | None = None, practice: str = "leave"
) -> bytes:
    """The runs' zip whole in memory (runs_zip_stream joined)."""
    return b"".join(runs_zip_stream(study=study, unit=unit, population=population, practice=practice))
