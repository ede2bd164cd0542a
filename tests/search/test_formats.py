"""Collection, topic and judgment readers: real Cranfield, small TREC/JSONL inputs, malformed inputs."""

from collections import Counter

import pytest

from scoring.lib.errors import InputError
from scoring.lib.trec_io import read_qrels as scoring_read_qrels
from studies.search.engines.formats import (
    DEFAULT_CRANFIELD_GRADES,
    Document,
    FormatError,
    Judgment,
    judgments_from_qrels,
    read_cranfield,
    read_jsonl_documents,
    read_qrels,
    read_trec_documents,
    read_trec_topics,
)

# --- Cranfield (real data: the shipped copy, tests/conftest.py's cranfield_folder) --------------------------


@pytest.fixture(scope="session")
def cranfield(cranfield_folder):
    return read_cranfield(cranfield_folder)


def test_cranfield_counts(cranfield, cranfield_folder):
    assert len(cranfield.documents) == 1400
    assert len(cranfield.topics) == 225
    raw_lines = [line for line in (cranfield_folder / "cranqrel").read_bytes().split(b"\n") if line.strip()]
    assert len(cranfield.judgments) == len(raw_lines) == 1837
    assert [d.external_id for d in cranfield.documents] == [str(i) for i in range(1, 1401)]
    assert {j.topic_id for j in cranfield.judgments} == {str(i) for i in range(1, 226)}


def test_cranfield_crlf_is_handled(cranfield, cranfield_folder):
    assert b"\r\n" in (cranfield_folder / "cran.all.1400").read_bytes()
    for item in [*cranfield.documents, *cranfield.topics]:
        for value in (item.title, item.text, *[v for v in item.extra.values() if isinstance(v, str)]):
            assert "\r" not in value
    first = cranfield.documents[0]
    assert first.title == "experimental investigation of the aerodynamics of a wing in a slipstream ."
    assert first.text.startswith("experimental investigation of the aerodynamics")
    assert first.extra == {"author": "brenckman,m.", "bibliography": "j. ae. scs. 25, 1958, 324."}


def test_cranfield_empty_w_documents_are_kept(cranfield):
    empty = [d.external_id for d in cranfield.documents if not d.text]
    assert empty == ["471", "995"]
    assert cranfield.documents[470].title == ""


def test_cranfield_repeated_fields_are_joined_and_flagged(cranfield):
    flagged = {
        d.external_id: d.extra["repeated_fields"] for d in cranfield.documents if "repeated_fields" in d.extra
    }
    assert flagged == {"240": ["A", "B"], "576": ["W"], "578": ["W"]}
    assert "compressor operation with one or more blade rows stalled" in cranfield.documents[577].text


def test_cranfield_query_ids_are_positions(cranfield):
    topics = cranfield.topics
    assert [t.topic_id for t in topics] == [str(i) for i in range(1, 226)]
    assert [t.extra["original_id"] for t in topics[:4]] == ["001", "002", "004", "008"]
    assert topics[2].text == "what problems of heat conduction in composite slabs have been solved so far ."
    # cranqrel's query 3 is cran.qry's .I 004: heat conduction in composite slabs (judged docs are on it).
    judged_for_3 = {j.doc_id for j in cranfield.judgments if j.topic_id == "3"}
    assert "5" in judged_for_3  # doc 5: "one-dimensional transient heat conduction into a double-layer slab"
    assert "slab" in next(d for d in cranfield.documents if d.external_id == "5").title


def test_cranfield_default_grade_mapping(cranfield, cranfield_folder):
    codes = Counter(
        int(line.split()[2])
        for line in (cranfield_folder / "cranqrel").read_text().splitlines()
        if line.strip()
    )
    grades = Counter(j.grade for j in cranfield.judgments)
    assert dict(DEFAULT_CRANFIELD_GRADES) == {1: 3, 2: 2, 3: 1, 4: 1, -1: 0}
    assert grades == Counter({3: codes[1], 2: codes[2], 1: codes[3] + codes[4], 0: codes[-1]})
    assert Judgment("1", "184", 2) in cranfield.judgments  # "1 184 2" in cranqrel


def test_cranfield_grade_mapping_is_overridable(cranfield_folder):
    binary = read_cranfield(cranfield_folder, grade_map={1: 1, 2: 1, 3: 1, 4: 0, -1: 0})
    assert Counter(j.grade for j in binary.judgments).keys() == {0, 1}
    assert Judgment("1", "184", 1) in binary.judgments


def test_cranfield_grade_mapping_missing_code_is_an_error(cranfield_folder):
    with pytest.raises(FormatError, match="relevance code -1 has no grade") as info:
        read_cranfield(cranfield_folder, grade_map={1: 3, 2: 2, 3: 1, 4: 1})
    assert info.value.path.endswith("cranqrel") and info.value.line is not None


def _cranfield_copy(tmp_path, docs="", queries="", qrels=""):
    (tmp_path / "cran.all.1400").write_bytes(docs.replace("\n", "\r\n").encode())
    (tmp_path / "cran.qry").write_bytes(queries.replace("\n", "\r\n").encode())
    (tmp_path / "cranqrel").write_bytes(qrels.replace("\n", "\r\n").encode())
    return tmp_path


DOCS = ".I 1\n.T\nfirst title\n.A\nsomeone\n.B\njournal\n.W\nfirst text\n.I 2\n.T\nsecond\n.A\n.B\n.W\n"
QUERIES = ".I 001\n.W\nfirst query\n.I 004\n.W\nsecond query\n"


def test_cranfield_small_valid(tmp_path):
    parsed = read_cranfield(_cranfield_copy(tmp_path, DOCS, QUERIES, "1 2 1\n2 1 -1\n"))
    assert parsed.documents[1] == Document("2", "second", "", {"author": "", "bibliography": ""})
    assert [(t.topic_id, t.extra["original_id"]) for t in parsed.topics] == [("1", "001"), ("2", "004")]
    assert parsed.judgments == [Judgment("1", "2", 3), Judgment("2", "1", 0)]


@pytest.mark.parametrize(
    "docs, queries, qrels, file, line, reason",
    [
        (DOCS + ".I 1\n.W\nagain\n", QUERIES, "", "cran.all.1400", 16, "duplicate record id '1'"),
        ("stray\n" + DOCS, QUERIES, "", "cran.all.1400", 1, "text before the first .I"),
        (DOCS + ".X\n", QUERIES, "", "cran.all.1400", 16, "unknown field marker .X"),
        (".I\n" + DOCS, QUERIES, "", "cran.all.1400", 1, ".I without a record id"),
        (DOCS, QUERIES + ".I 005\n.W\n", "", "cran.qry", 7, "has no text"),
        (DOCS, QUERIES, "1 2 1\n1 2\n", "cranqrel", 2, "expected 3 fields"),
        (DOCS, QUERIES, "1 2 x\n", "cranqrel", 1, "not an integer"),
        (DOCS, QUERIES, "1 2 1\n1 2 3\n", "cranqrel", 2, "judged twice"),
        (DOCS, QUERIES, "3 1 1\n", "cranqrel", 1, "not a position 1..2"),
        (DOCS, QUERIES, "1 9 1\n", "cranqrel", 1, "document '9' is not in"),
        (DOCS, QUERIES, "1 1 5\n", "cranqrel", 1, "relevance code 5"),
    ],
)
def test_cranfield_malformed(tmp_path, docs, queries, qrels, file, line, reason):
    folder = _cranfield_copy(tmp_path, docs, queries, qrels)
    with pytest.raises(FormatError, match=reason) as info:
        read_cranfield(folder)
    assert info.value.path == str(folder / file)
    assert info.value.line == line
    assert str(info.value).startswith(f"{folder / file}:{line}: ")


def test_missing_file_is_a_format_error(tmp_path):
    with pytest.raises(FormatError, match="cannot read") as info:
        read_cranfield(tmp_path)
    assert info.value.line is None
    assert isinstance(info.value, InputError) and isinstance(info.value, ValueError)


# --- TREC documents ----------------------------------------------------------------------------------------

TREC_DOCS = """<DOC>
<DOCNO> FT911-1 </DOCNO>
<HEADLINE>Wings &amp; things</HEADLINE>
<DATE>1991</DATE>
<TEXT>
<P>First paragraph.</P>
<P>Second
paragraph.</P>
</TEXT>
</DOC>
<doc><docno>LA-2</docno><title>Title two</title><text>one</text><TEXT>two</TEXT></doc>

<DOC>
<DOCNO>NO-TITLE-3</DOCNO>
</DOC>
"""


def test_trec_documents(tmp_path):
    path = tmp_path / "docs.trec"
    path.write_text(TREC_DOCS)
    docs = read_trec_documents(path)
    assert docs == [
        Document("FT911-1", "Wings & things", "First paragraph. Second paragraph.", {"date": "1991"}),
        Document("LA-2", "Title two", "one\n\ntwo", {}),
        Document("NO-TITLE-3", "", "", {}),
    ]


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("<DOC>\n<DOCNO>A</DOCNO>\n<TEXT>x\n</DOC>\n", 3, "<TEXT> is not closed"),
        ("<DOC>\n<TEXT>x</TEXT>\n</DOC>\n", 1, "without a <DOCNO>"),
        ("<DOC><DOCNO>A</DOCNO></DOC>\n<DOC>\n<DOCNO>A</DOCNO></DOC>\n", 2, "duplicate document id 'A'"),
        ("<DOC><DOCNO>A</DOCNO>\n", 1, "<doc> is never closed"),
        ("<DOC><DOCNO>A</DOCNO></DOC>\nstray words\n", 2, "text outside <doc>"),
        ("<DOC><DOCNO>A</DOCNO>\n<DOC><DOCNO>B</DOCNO></DOC>\n", 2, "inside the <doc> opened at line 1"),
        ("<DOC><DOCNO>A</DOCNO>\nloose text\n</DOC>\n", 2, "text outside any element"),
        ("<DOC><DOCNO>A</DOCNO><DOCNO>B</DOCNO></DOC>", 1, "2 <DOCNO> elements"),
    ],
)
def test_trec_documents_malformed(tmp_path, text, line, reason):
    path = tmp_path / "docs.trec"
    path.write_text(text)
    with pytest.raises(FormatError, match=reason) as info:
        read_trec_documents(path)
    assert info.value.line == line


# --- TREC topics --------------------------------------------------------------------------------------------

TREC_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num>302</num><title>Poliomyelitis and Post-Polio</title>
<desc>Is the disease under control?</desc>
</top>
"""


def test_trec_topics(tmp_path):
    path = tmp_path / "topics.txt"
    path.write_text(TREC_TOPICS)
    first, second = read_trec_topics(path)
    assert first.topic_id == "301"
    assert first.title == "International Organized Crime"
    assert first.text == "Identify organizations that participate in international criminal activity."
    assert first.extra == {"narrative": "A relevant document must as a minimum identify the organization."}
    assert (second.topic_id, second.title, second.text) == (
        "302",
        "Poliomyelitis and Post-Polio",
        "Is the disease under control?",
    )


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ("<top>\n<title> t\n</top>\n", 1, "without a <num>"),
        ("<top><num>1<title>a</top>\n\n<top>\n<num>1<title>b</top>\n", 3, "duplicate topic number '1'"),
        ("<top>\n<num> Number: 7\n<desc> d\n</top>\n", 1, "topic 7 has no <title>"),
        ("<top>\n<num>1<title>a\n", 1, "<top> is never closed"),
        ("<top><num>1<title>a</top>\njunk\n", 2, "text outside <top>"),
        ("<top>\n<num>1<title>a<title>b</top>", 2, "<title> appears twice"),
    ],
)
def test_trec_topics_malformed(tmp_path, text, line, reason):
    path = tmp_path / "topics.txt"
    path.write_text(text)
    with pytest.raises(FormatError, match=reason) as info:
        read_trec_topics(path)
    assert info.value.line == line


# --- JSON lines and qrels ---------------------------------------------------------------------------------


def test_jsonl_documents(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": "d1", "title": "T", "text": "body", "year": 1999, "tags": ["a"]}\n\n'
        '{"id": 2, "text": "only text"}\r\n'
    )
    assert read_jsonl_documents(path) == [
        Document("d1", "T", "body", {"year": 1999, "tags": ["a"]}),
        Document("2", "", "only text", {}),
    ]


@pytest.mark.parametrize(
    "text, line, reason",
    [
        ('{"id": "a"}\n{"id": "b", \n', 2, "not valid JSON"),
        ('{"id": "a"}\n\n[1, 2]\n', 3, "expected a JSON object, found list"),
        ('{"title": "x"}\n', 1, 'without an "id"'),
        ('{"id": true}\n', 1, '"id" must be a string or an integer'),
        ('{"id": "  "}\n', 1, '"id" is empty'),
        ('{"id": "a", "text": 3}\n', 1, '"text" must be a string'),
        ('{"id": "a"}\n{"id": "b"}\n{"id": "a"}\n', 3, "duplicate document id 'a' \\(first at line 1\\)"),
    ],
)
def test_jsonl_malformed(tmp_path, text, line, reason):
    path = tmp_path / "docs.jsonl"
    path.write_text(text)
    with pytest.raises(FormatError, match=reason) as info:
        read_jsonl_documents(path)
    assert info.value.line == line


def test_not_utf8_is_a_format_error(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(FormatError, match="not UTF-8"):
        read_jsonl_documents(path)


def test_qrels_reader_is_the_scoring_one(tmp_path):
    assert read_qrels is scoring_read_qrels
    path = tmp_path / "qrels"
    path.write_text("301 0 FT-1 2\n301 0 FT-2 0\n302 0 LA-9 1\n")
    assert judgments_from_qrels(read_qrels(path)) == [
        Judgment("301", "FT-1", 2),
        Judgment("301", "FT-2", 0),
        Judgment("302", "LA-9", 1),
    ]


def test_engines_package_does_not_import_django():
    import subprocess
    import sys

    code = (
        "import sys, studies.search.engines.formats, studies.search.engines.search, "
        "studies.search.engines.http; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "", "PYTHONPATH": "."},
    )
    assert out.stdout.strip() == "[]"
