"""Property-based fuzzing of every importer: a valid file, mutated (lines replaced by random text, inserted,
deleted, duplicated, the file cut short or replaced by random bytes). Whatever comes out, the importer either
accepts it or raises the error type it documents, naming the file (and a line within it when it names one),
and an import into the database that fails changes no row. Bounded: MAX_EXAMPLES cases per importer."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from django.apps import apps
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.lib import session_io, trec_io
from scoring.lib.errors import InputError
from studies.assessment import pools, references
from studies.errors import AssessmentError
from studies.interchange import ImportFailure
from studies.interchange.archive import study_archive_import, study_archive_json
from studies.interchange.session_track import session_track_import
from studies.library.collection_import import CollectionImportError, collection_import
from studies.search.engines import formats

from ..samples import SESSION_TRACK_XML

MAX_EXAMPLES = 50
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# Text that looks like the formats' own pieces, so mutations reach past the first syntax check.
PIECES = st.sampled_from(
    [
        "<DOC>",
        "</DOC>",
        "<DOCNO>",
        "<top>",
        "</top>",
        "<num>",
        ".I 3",
        ".W",
        ".T",
        "{",
        "}",
        '"id":',
        "[",
        "]",
        "0",
        "-1",
        "9",
        "1 0 d1 2",
        "<session",
        "</session>",
        "<query>",
        "\t",
        " ",
        "\x00",
        "\ufeff",
        "é",
        "&amp;",
        "&bogus;",
        '"',
        ",",
        ":",
        "null",
        "true",
        "99999999999999999999",
        "1e309",
        "NaN",
    ]
)
LINE = st.one_of(st.text(max_size=40), st.lists(PIECES, max_size=6).map(" ".join))


@st.composite
def mutated(draw, valid: str) -> bytes:
    """`valid` with a few random edits, as bytes (sometimes not UTF-8 at all)."""
    if draw(st.integers(0, 19)) == 0:
        return draw(st.binary(max_size=200))
    lines = valid.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["replace", "insert", "delete", "duplicate", "edit", "cut"]))
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        if kind == "replace" and lines:
            lines[at] = draw(LINE)
        elif kind == "insert":
            lines.insert(at, draw(LINE))
        elif kind == "delete" and lines:
            del lines[at]
        elif kind == "duplicate" and lines:
            lines.insert(at, lines[at])
        elif kind == "edit" and lines and lines[at]:
            cut = draw(st.integers(0, len(lines[at])))
            lines[at] = lines[at][:cut] + draw(LINE) + lines[at][cut + draw(st.integers(0, 3)) :]
        elif kind == "cut":
            lines = lines[:at]
    data = "\n".join(lines).encode("utf-8", "surrogatepass") + b"\n"
    if draw(st.integers(0, 9)) == 0:
        data = data.replace(b"e", b"\xff", 1)  # invalid UTF-8 somewhere
    return data


def _write(data: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fuzz-"))
    path = folder / name
    path.write_bytes(data)
    return path


def _check_error(error: Exception, path: Path, data: bytes, expected: tuple[type, ...], others=()):
    """The documented type, naming the file (or, for a problem that shows in another input of the same
    import, one of `others`), and a line within the file when it names one."""
    assert isinstance(error, expected), f"{type(error).__name__}: {error}"
    named = [p for p in (path, *others) if str(p) in str(error) or p.name in str(error)]
    assert named, f"the error does not name the file: {error}"
    line = getattr(error, "line", None)
    if line is not None:
        assert 1 <= line <= data.count(b"\n") + 1, f"line {line} is outside the file: {error}"


WATCHED = [
    ("studies", m)
    for m in (
        "Collection",
        "Document",
        "Study",
        "GradeLevel",
        "Scenario",
        "System",
        "Participant",
        "Assignment",
        "SearchSession",
        "Query",
        "ShownResult",
        "Judgment",
        "JudgmentChange",
        "Event",
        "ReferenceVersion",
        "ReferenceJudgment",
        "AssessmentPool",
        "PoolDocument",
        "AuditEntry",
    )
]


def _counts() -> dict:
    return {m: apps.get_model(a, m).objects.count() for a, m in WATCHED}


def _in_database(run, path: Path, data: bytes, expected: tuple[type, ...], others=()):
    """Run an import inside a savepoint that is always rolled back (so each example starts from the same
    rows); a failure must leave the counts as they were."""
    with transaction.atomic():
        before = _counts()
        try:
            run()
        except Exception as error:  # noqa: BLE001 - the type is what is checked
            _check_error(error, path, data, expected, others)
            assert _counts() == before, "a failed import changed the database"
        transaction.set_rollback(True)


# --- files read without the database ---------------------------------------------------------------------

QRELS = "1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n2 0 d1 3\n"
RUN = "1 Q0 d1 1 12.5 tag\n1 Q0 d2 2 11.0 tag\n2 Q0 d3 1 3.25 tag\n"
SESSIONS = (
    "\n".join(
        json.dumps(s)
        for s in [
            {
                "id": "s1",
                "system": "A",
                "scenario": "1",
                "participant": "p1",
                "queries": [{"text": "wing", "results": ["d1", "d2"], "scanned_to": 2}],
            },
            {
                "id": "s2",
                "system": "B",
                "scenario": "2",
                "participant": "p2",
                "queries": [{"text": "x", "results": ["d3"]}],
            },
        ]
    )
    + "\n"
)
TREC_DOCS = (
    "<DOC>\n<DOCNO> FT-1 </DOCNO>\n<HEADLINE>Wing flutter</HEADLINE>\n<TEXT>Flutter &amp; <P>x</P>.</TEXT>\n"
    "</DOC>\n<DOC>\n<DOCNO> FT-2 </DOCNO>\n<TITLE>Heat</TITLE>\n<TEXT>Ablation.</TEXT>\n</DOC>\n"
)
TOPICS = (
    "<top>\n<num> Number: 301\n<title> wing flutter\n<desc> Description: How?\n<narr> Narrative: Ways.\n"
    "</top>\n"
)
JSONL = '{"id": 1, "title": "One", "text": "x", "year": 1999}\n{"id": "2", "text": "y"}\n'
CRAN_DOCS = ".I 1\n.T\nfirst title\n.W\nfirst text\n.I 2\n.T\nsecond\n.W\nmore text\n"
CRAN_QRY = ".I 001\n.W\nwhat is first\n"
CRANQREL = "1 1 1\n1 2 -1\n"


@pytest.mark.parametrize(
    "reader, valid, name",
    [
        (trec_io.read_qrels, QRELS, "qrels"),
        (trec_io.read_run, RUN, "run.txt"),
        (session_io.read_sessions, SESSIONS, "sessions.jsonl"),
        (formats.read_trec_documents, TREC_DOCS, "docs.trec"),
        (formats.read_trec_topics, TOPICS, "topics.txt"),
        (formats.read_jsonl_documents, JSONL, "docs.jsonl"),
    ],
    ids=["qrels", "trec-run", "sessions-jsonl", "trec-docs", "trec-topics", "jsonl-docs"],
)
def test_a_file_reader_accepts_or_names_file_and_line(reader, valid, name):
    reader(_write(valid.encode(), name))  # the seed itself is valid

    @FUZZ
    @given(data=mutated(valid))
    def check(data):
        path = _write(data, name)
        try:
            reader(path)
        except Exception as error:  # noqa: BLE001
            _check_error(error, path, data, (InputError,))

    check()


@pytest.mark.parametrize("which", ["cran.all.1400", "cran.qry", "cranqrel"])
def test_the_cranfield_reader_accepts_or_names_file_and_line(which):
    valid = {"cran.all.1400": CRAN_DOCS, "cran.qry": CRAN_QRY, "cranqrel": CRANQREL}

    @settings(FUZZ, max_examples=MAX_EXAMPLES // 3)
    @given(data=mutated(valid[which]))
    def check(data):
        folder = Path(tempfile.mkdtemp(prefix="fuzz-cran-"))
        for name, text in valid.items():
            (folder / name).write_bytes(data if name == which else text.encode())
        try:
            formats.read_cranfield(folder)
        except Exception as error:  # noqa: BLE001
            _check_error(error, folder / which, data, (formats.FormatError,))

    check()


# --- imports into the database ---------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("kind", ["reference-version", "pool"])
def test_a_qrels_upload_into_a_study_accepts_or_changes_nothing(world, kind):
    valid = "1 0 d1 2\n1 0 d2 0\n2 0 d3 1\n"

    def run(lines, path):
        if kind == "pool":
            return pools.pool_import_qrels(
                study=world.study, lines=lines, path=path, added_by=world.users["alice"]
            )
        return references.reference_version_import_qrels(
            study=world.study, lines=lines, path=path, created_by=world.users["alice"]
        )

    @FUZZ
    @given(data=mutated(valid))
    def check(data):
        path = Path("uploaded.qrels")
        lines = data.decode("utf-8", "replace").splitlines()
        _in_database(lambda: run(lines, str(path)), path, data, (InputError, AssessmentError))

    check()


@pytest.mark.django_db
def test_the_collection_import_accepts_or_changes_nothing(alice, study):
    @FUZZ
    @given(which=st.sampled_from(["docs", "topics", "qrels"]), data=st.data())
    def check(which, data):
        valid = {"docs": TREC_DOCS, "topics": TOPICS, "qrels": "301 0 FT-1 2\n301 0 FT-2 0\n"}
        content = data.draw(mutated(valid[which]))
        folder = Path(tempfile.mkdtemp(prefix="fuzz-collection-"))
        for name, text in valid.items():
            (folder / name).write_bytes(content if name == which else text.encode())
        _in_database(
            lambda: collection_import(
                name="Fuzzed",
                format="trec",
                paths=[folder / "docs"],
                topics_path=folder / "topics",
                qrels_path=folder / "qrels",
                study=study,
                scenario_topics=["301"],
                created_by=alice,
            ),
            folder / which,
            content,
            (CollectionImportError,),
            others=[folder / n for n in valid if n != which],
        )

    check()


@pytest.mark.django_db
def test_the_session_track_import_accepts_or_changes_nothing(alice):
    @FUZZ
    @given(data=mutated(SESSION_TRACK_XML))
    def check(data):
        path = _write(data, "log.xml")
        _in_database(
            lambda: session_track_import(path=path, owner=alice, name="Fuzzed log"),
            path,
            data,
            (ImportFailure, InputError),
        )

    check()


@pytest.mark.django_db
def test_the_study_archive_import_accepts_or_changes_nothing(world):
    valid = study_archive_json(study=world.study)

    @settings(FUZZ, max_examples=MAX_EXAMPLES // 2)  # the archive is long: each case parses all of it
    @given(data=mutated(valid))
    def check(data):
        path = _write(data, "study.json")
        _in_database(
            lambda: study_archive_import(path=path, owner=world.users["charlie"], name="Fuzzed"),
            path,
            data,
            (ImportFailure,),
        )

    check()
